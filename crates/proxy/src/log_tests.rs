use super::*;

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
