use super::*;

fn rule(text: &str) -> EgressRule {
    text.parse().unwrap()
}

fn ports(first: u16, last: Option<u16>, protocol: Protocol) -> Option<Ports> {
    Some(Ports {
        first,
        last,
        protocol,
    })
}

#[test]
fn cidrs_ports_and_protocols_parse() {
    assert_eq!(
        rule("10.0.0.0/8"),
        EgressRule {
            cidr: "10.0.0.0/8".into(),
            ports: None
        }
    );
    let r = rule("0.0.0.0/0:443");
    assert_eq!(r.cidr, "0.0.0.0/0");
    assert_eq!(r.ports, ports(443, None, Protocol::Tcp));
    let r = rule("192.168.1.7:5000-5010/UDP");
    assert_eq!(r.cidr, "192.168.1.7/32");
    assert_eq!(r.ports, ports(5000, Some(5010), Protocol::Udp));
    let r = rule("[2001:db8::/32]:443/sctp");
    assert_eq!(r.cidr, "2001:db8::/32");
    assert_eq!(r.ports.unwrap().protocol, Protocol::Sctp);
    assert_eq!(rule("[::1]").cidr, "::1/128");
}

#[test]
fn bad_rules_are_refused_with_a_reason() {
    for (text, reason) in [
        ("api.openai.com", "domain name"),
        ("api.openai.com:443", "domain name"),
        ("10.0.0.1/8", "host bits"),
        ("10.0.0.0/33", "prefix length"),
        ("10.0.0.0/+8", "prefix length"),
        ("10.0.0.0/8:0", "port"),
        ("10.0.0.0/8:70000", "port"),
        ("10.0.0.0/8:20-10", "ends before"),
        ("10.0.0.0/8:53/icmp", "protocol"),
        ("2001:db8::/32", "brackets"),
        ("[2001:db8::/32", "']'"),
        ("[2001:db8::/32]443", "':PORT'"),
        ("300.1.1.1", "not an IP"),
    ] {
        let err = text.parse::<EgressRule>().unwrap_err().to_string();
        assert!(
            err.contains(reason) && err.contains(&format!("{text:?}")),
            "{text}: {err}"
        );
    }
}
