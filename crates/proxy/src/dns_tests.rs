use super::*;

use crate::test_support::{assert_fields, log_lines};
use jaula_policy::network::{NetworkMode, NetworkSpec};

fn proxy_with_log(dir: &std::path::Path) -> (Proxy, std::path::PathBuf) {
    let rules = NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: vec!["example.test".into(), "*.allowed.test".into()],
        deny_domains: vec!["bad.allowed.test".into()],
        presets: vec![],
    }
    .resolve()
    .unwrap();
    let log = dir.join("net.jsonl");
    let mut config = crate::ProxyConfig::new(rules);
    config.log = Some(log.clone());
    (Proxy::new(config).unwrap(), log)
}

fn query(name: &str, qtype: u16) -> Vec<u8> {
    let mut q = vec![0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&CLASS_IN.to_be_bytes());
    q
}

fn rcode(answer: &[u8]) -> u8 {
    answer[3] & 0x0f
}

fn ancount(answer: &[u8]) -> u16 {
    u16::from_be_bytes([answer[6], answer[7]])
}

#[test]
fn an_allowed_name_gets_the_steering_address_and_an_empty_aaaa() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, log) = proxy_with_log(dir.path());
    let a = answer(&proxy, &query("Example.TEST", TYPE_A)).unwrap();
    assert_eq!(rcode(&a), 0);
    assert_eq!(ancount(&a), 1);
    assert_eq!(&a[a.len() - 4..], &STEERING_ADDRESS.octets());
    assert_eq!(&a[a.len() - 10..a.len() - 6], &ANSWER_TTL.to_be_bytes());
    let aaaa = answer(&proxy, &query("x.allowed.test", 28)).unwrap();
    assert_eq!((rcode(&aaaa), ancount(&aaaa)), (0, 0));
    // An allowed lookup is logged, not counted as a request or a refusal.
    let summary = proxy.summary();
    assert_eq!(summary.allowed, 0);
    assert!(summary.is_empty());
    assert_fields(
        &log_lines(&log)[0],
        serde_json::json!({
            "method": "DNS",
            "host": "example.test",
            "port": 53,
            "decision": "allow",
            "rule": "allow-domain example.test",
            "qtype": "A",
        }),
    );
}

#[test]
fn a_refused_name_gets_refused_and_is_logged_and_summarised_with_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, log) = proxy_with_log(dir.path());
    for (name, rule) in [
        ("refused.test", "not in the allow list"),
        ("bad.allowed.test", "deny-domain bad.allowed.test"),
    ] {
        let r = answer(&proxy, &query(name, TYPE_A)).unwrap();
        assert_eq!(rcode(&r), 5, "{name}");
        assert_eq!(ancount(&r), 0);
        let lines = log_lines(&log);
        let last = lines.last().unwrap();
        assert_fields(
            last,
            serde_json::json!({"host": name, "decision": "deny", "rule": rule}),
        );
    }
    let summary = proxy.summary();
    assert_eq!(summary.blocked.get("refused.test"), Some(&1));
    assert_eq!(summary.blocked.get("bad.allowed.test"), Some(&1));
}

#[test]
fn a_name_that_is_no_host_is_refused_and_garbage_is_not_answered() {
    let dir = tempfile::tempdir().unwrap();
    let (proxy, _log) = proxy_with_log(dir.path());
    let mut odd = query("example.test", TYPE_A);
    odd[13] = 0x1b;
    let r = answer(&proxy, &odd).unwrap();
    assert_eq!(rcode(&r), 5);
    assert!(proxy.summary().blocked.contains_key("\\027xample.test"));
    assert_eq!(answer(&proxy, &[1, 2, 3]), None);
}
