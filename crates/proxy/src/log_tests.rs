use super::*;
use crate::test_support::{log_lines, scratch_log};

const NOT_ALLOWED: Verdict<'static> = Verdict::NameDenied {
    rule: "not in the allow list",
};

#[test]
fn civil_dates() {
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    assert_eq!(civil_from_days(19_723), (2024, 1, 1));
}

#[test]
fn summary_names_each_blocked_host_once_with_counts() {
    let mut s = Summary::default();
    s.blocked.insert("a.example".into(), 2);
    s.blocked.insert("b.example".into(), 1);
    assert_eq!(
        s.to_string(),
        "jaula: network: blocked 3 request(s) to 2 host(s): a.example (2) b.example (1)"
    );
}

#[test]
fn summary_tells_address_refusals_from_name_refusals() {
    let mut s = Summary::default();
    assert!(s.is_empty());
    s.refused_addresses
        .insert("allowed.test -> 127.0.0.1 (loopback)".into(), 2);
    assert!(!s.is_empty());
    assert_eq!(
        s.to_string(),
        "jaula: network: refused 2 connection(s) to non-public addresses (see \
         --allow-address): allowed.test -> 127.0.0.1 (loopback) (2)"
    );
    s.blocked.insert("b.example".into(), 1);
    assert_eq!(
        s.to_string(),
        "jaula: network: blocked 1 request(s) to 1 host(s): b.example (1)\n\
         jaula: network: refused 2 connection(s) to non-public addresses (see \
         --allow-address): allowed.test -> 127.0.0.1 (loopback) (2)"
    );
}

#[test]
fn an_address_refusal_is_logged_with_address_and_reason() {
    let (_dir, path) = scratch_log();
    let recorder = Recorder::open(Some(&path)).unwrap();
    let refusal = Refusal {
        address: "169.254.169.254".parse().unwrap(),
        class: jaula_policy::network::AddressClass::LinkLocal,
    };
    recorder.record(
        "GET",
        "meta.test",
        80,
        Via::Proxy,
        Verdict::AddressRefused { refusal },
    );
    recorder.record(
        "CONNECT",
        "ok.test",
        443,
        Via::Proxy,
        Verdict::Allowed {
            rule: "allow-domain ok.test",
            address: Some("93.184.216.34".parse().unwrap()),
        },
    );
    recorder.record("GET", "no.test", 80, Via::Proxy, NOT_ALLOWED);
    let lines = log_lines(&path);
    assert_eq!(lines[0]["decision"], "deny");
    assert_eq!(lines[0]["rule"], "address 169.254.169.254 is link-local");
    assert_eq!(lines[0]["address"], "169.254.169.254");
    assert_eq!(lines[0]["reason"], "link-local");
    assert_eq!(lines[1]["decision"], "allow");
    assert_eq!(lines[1]["address"], "93.184.216.34");
    assert!(lines[1].get("reason").is_none());
    assert_eq!(lines[2]["rule"], "not in the allow list");
    assert!(lines[2].get("address").is_none());
    assert!(lines[2].get("reason").is_none());
    let summary = recorder.summary();
    assert_eq!(summary.allowed, 1);
    assert_eq!(summary.blocked.len(), 1);
    assert_eq!(
        summary.refused_addresses.keys().collect::<Vec<_>>(),
        ["meta.test -> 169.254.169.254 (link-local)"]
    );
}

#[test]
fn a_steered_refusal_is_marked_in_the_log_and_the_summary() {
    let (_dir, path) = scratch_log();
    let recorder = Recorder::open(Some(&path)).unwrap();
    recorder.record("CONNECT", "refused.test", 443, Via::Steered, NOT_ALLOWED);
    recorder.record("GET", "mixed.test", 80, Via::Steered, NOT_ALLOWED);
    recorder.record("GET", "mixed.test", 80, Via::Proxy, NOT_ALLOWED);
    let lines = log_lines(&path);
    assert_eq!(lines[0]["via"], "steered");
    assert_eq!(lines[0]["rule"], "not in the allow list");
    assert_eq!(lines[1]["via"], "steered");
    assert!(lines[2].get("via").is_none(), "{}", lines[2]);
    assert_eq!(
        recorder.summary().to_string(),
        "jaula: network: blocked 3 request(s) to 2 host(s): mixed.test (2, 1 steered) \
         refused.test (1 steered)\n\
         jaula: network: the rules that blocked them: not in the allow list (mixed.test, refused.test)"
    );
}

#[test]
fn the_summary_names_the_rules_that_blocked() {
    let recorder = Recorder::open(None).unwrap();
    let deny = Verdict::NameDenied {
        rule: "deny-domain *.evil.test",
    };
    let sni = Verdict::NameDenied {
        rule: "steered TLS without a server name (SNI)",
    };
    recorder.record("CONNECT", "a.evil.test", 443, Via::Proxy, deny);
    recorder.record("CONNECT", "b.evil.test", 443, Via::Proxy, deny);
    recorder.record("CONNECT", "127.0.2.1", 443, Via::Steered, sni);
    assert_eq!(
        recorder.summary().to_string(),
        "jaula: network: blocked 3 request(s) to 3 host(s): 127.0.2.1 (1 steered) \
         a.evil.test (1) b.evil.test (1)\n\
         jaula: network: the rules that blocked them: deny-domain *.evil.test (a.evil.test, \
         b.evil.test); steered TLS without a server name (SNI) (127.0.2.1)"
    );
}

#[test]
fn an_upstream_failure_is_logged_and_summarised_apart_from_refusals() {
    let (_dir, path) = scratch_log();
    let recorder = Recorder::open(Some(&path)).unwrap();
    let refused = UpstreamFailure::connect(
        "127.0.0.1:9".parse().unwrap(),
        &std::io::Error::from_raw_os_error(rustix::io::Errno::CONNREFUSED.raw_os_error()),
    );
    let timed_out = UpstreamFailure::timed_out("127.0.0.1:10".parse().unwrap());
    let unresolved = UpstreamFailure::resolution(&std::io::Error::other("no such name"));
    let rule = "allow-domain down.test";
    for failure in [&refused, &refused, &timed_out, &unresolved] {
        recorder.record(
            "CONNECT",
            "down.test",
            443,
            Via::Proxy,
            Verdict::UpstreamFailed { rule, failure },
        );
    }
    recorder.record("CONNECT", "no.test", 443, Via::Proxy, NOT_ALLOWED);
    let lines = log_lines(&path);
    assert_eq!(lines[0]["decision"], "failed");
    assert_eq!(lines[0]["rule"], rule);
    assert_eq!(lines[0]["address"], "127.0.0.1");
    assert_eq!(lines[0]["reason"], "connection-refused");
    assert!(lines[0]["error"].as_str().unwrap().contains("refused"));
    assert_eq!(lines[2]["reason"], "timed-out");
    assert_eq!(lines[3]["reason"], "name-not-resolved");
    assert!(lines[3].get("address").is_none());
    assert_eq!(lines[3]["error"], "no such name");
    assert_eq!(lines[4]["decision"], "deny");
    assert!(lines[4].get("error").is_none());
    let summary = recorder.summary();
    assert_eq!(summary.allowed, 0);
    assert_eq!(
        summary.to_string(),
        "jaula: network: blocked 1 request(s) to 1 host(s): no.test (1)\n\
         jaula: network: the rules that blocked them: not in the allow list (no.test)\n\
         jaula: network: 4 allowed request(s) failed upstream (not refused by jaula): \
         down.test:443 (name did not resolve) (1) down.test:443 -> 127.0.0.1:10 (timed out) \
         (1) down.test:443 -> 127.0.0.1:9 (connection refused) (2)"
    );
}
