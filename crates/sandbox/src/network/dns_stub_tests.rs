use super::*;

#[test]
fn serves_every_ipv4_nameserver_and_only_the_loopback_ipv6_one() {
    let conf = "# generated\nsearch example.com\nnameserver 10.255.255.53\n\
                nameserver 127.0.0.53\nnameserver ::1\nnameserver 2001:db8::53\n\
                nameserver fe80::1%eth0\nnameserver 0.0.0.0\nnameserver 10.255.255.53\n\
                options edns0\n";
    let a = stub_addresses(conf);
    let v = |s: &str| s.parse::<IpAddr>().unwrap();
    assert_eq!(
        a.served,
        vec![v("10.255.255.53"), v("127.0.0.53"), v("::1")]
    );
    assert_eq!(a.skipped, vec![v("2001:db8::53"), v("0.0.0.0")]);
}

#[test]
fn no_nameserver_means_the_local_host_as_glibc_reads_it() {
    let a = stub_addresses("search example.com\n");
    assert_eq!(a.served, vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    assert!(a.skipped.is_empty());
    // Only unusable servers listed: nothing served, nothing invented.
    let a = stub_addresses("nameserver 2001:db8::1\n");
    assert!(a.served.is_empty());
}

#[test]
fn lookups_merge_types_and_are_bounded() {
    let mut l = Lookups::default();
    l.note("pypi.org", QType(dns::TYPE_A));
    l.note("pypi.org", QType(dns::TYPE_AAAA));
    l.note("pypi.org", QType(dns::TYPE_A));
    assert_eq!(l.kept["pypi.org"].len(), 2);
    for i in 0..(KEPT_NAMES + 5) {
        l.note(&format!("n{i}.test"), QType(dns::TYPE_A));
    }
    assert_eq!(l.kept.len(), KEPT_NAMES);
    assert_eq!(l.dropped, 6);
    // A name already kept still gains types when the set is full.
    l.note("pypi.org", QType(dns::TYPE_AAAA + 1));
    assert_eq!(l.kept["pypi.org"].len(), 3);
}

#[test]
fn the_none_stub_answers_nxdomain_and_records() {
    let mut q = vec![0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    q.extend_from_slice(&[12]);
    q.extend_from_slice(b"refused-unit");
    q.extend_from_slice(&[4]);
    q.extend_from_slice(b"test");
    q.extend_from_slice(&[0, 0, 28, 0, 1]);
    let answer = refuse_one(&q).unwrap();
    assert_eq!(answer[3] & 0x0f, 3, "NXDOMAIN: final, never retried");
    let seen = refused_lookups();
    assert!(seen.kept["refused-unit.test"].contains(&QType(dns::TYPE_AAAA)));
    // Not a query: no answer, nothing recorded.
    assert_eq!(refuse_one(&[0; 4]), None);
}
