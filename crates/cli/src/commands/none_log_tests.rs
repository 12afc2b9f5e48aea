use super::*;

use jaula_policy::network::dns::QType;

fn json(line: Vec<u8>) -> serde_json::Value {
    assert_eq!(line.last(), Some(&b'\n'));
    serde_json::from_slice(&line).unwrap()
}

#[test]
fn a_lookup_is_a_dns_line_with_its_type_and_rule() {
    let v = json(
        line(&NoneRefusal::Lookup {
            name: "pypi.org",
            qtype: QType(28),
        })
        .unwrap(),
    );
    assert_eq!(v["method"], "DNS");
    assert_eq!(v["host"], "pypi.org");
    assert_eq!(v["port"], 53);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["rule"], "network none");
    assert_eq!(v["qtype"], "AAAA");
    assert!(v.get("address").is_none());
}

#[test]
fn a_connect_is_a_line_with_its_address() {
    let v = json(line(&NoneRefusal::Connect("[2001:db8::1]:443".parse().unwrap())).unwrap());
    assert_eq!(v["method"], "connect");
    assert_eq!(v["host"], "2001:db8::1");
    assert_eq!(v["address"], "2001:db8::1");
    assert_eq!(v["port"], 443);
    assert_eq!(v["rule"], "network none");
    assert!(v.get("qtype").is_none());
}
