use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn class(s: &str) -> Option<AddressClass> {
    classify(ip(s))
}

#[test]
fn every_refused_ipv4_range_is_classified_at_its_edges() {
    use AddressClass::*;
    let cases: &[(&str, Option<AddressClass>)] = &[
        ("0.0.0.0", Some(Unspecified)),
        ("0.255.255.255", Some(Unspecified)),
        ("1.0.0.0", None),
        ("9.255.255.255", None),
        ("10.0.0.0", Some(Private)),
        ("10.255.255.255", Some(Private)),
        ("11.0.0.0", None),
        ("100.63.255.255", None),
        ("100.64.0.0", Some(SharedAddressSpace)),
        ("100.127.255.255", Some(SharedAddressSpace)),
        ("100.128.0.0", None),
        ("126.255.255.255", None),
        ("127.0.0.1", Some(Loopback)),
        ("127.255.255.254", Some(Loopback)),
        ("128.0.0.0", None),
        ("169.253.255.255", None),
        ("169.254.0.0", Some(LinkLocal)),
        ("169.254.169.254", Some(LinkLocal)),
        ("169.254.255.255", Some(LinkLocal)),
        ("169.255.0.0", None),
        ("172.15.255.255", None),
        ("172.16.0.0", Some(Private)),
        ("172.31.255.255", Some(Private)),
        ("172.32.0.0", None),
        ("192.167.255.255", None),
        ("192.168.0.0", Some(Private)),
        ("192.168.255.255", Some(Private)),
        ("192.169.0.0", None),
        ("223.255.255.255", None),
        ("224.0.0.0", Some(Multicast)),
        ("239.255.255.255", Some(Multicast)),
        ("240.0.0.0", Some(Reserved)),
        ("255.255.255.254", Some(Reserved)),
        ("255.255.255.255", Some(Broadcast)),
        ("8.8.8.8", None),
        ("93.184.216.34", None),
    ];
    for (addr, want) in cases {
        assert_eq!(class(addr), *want, "{addr}");
    }
}

#[test]
fn every_refused_ipv6_range_is_classified() {
    use AddressClass::*;
    let cases: &[(&str, Option<AddressClass>)] = &[
        ("::", Some(Unspecified)),
        ("::1", Some(Loopback)),
        ("fe80::1", Some(LinkLocal)),
        ("febf:ffff::1", Some(LinkLocal)),
        ("fec0::1", Some(Private)),
        ("feff::1", Some(Private)),
        ("fc00::1", Some(Private)),
        ("fdff:ffff::1", Some(Private)),
        ("fe00::1", None),
        ("fbff::1", None),
        ("ff02::1", Some(Multicast)),
        ("ff0e::1", Some(Multicast)),
        ("64:ff9b:1::1", Some(Private)),
        ("2001:4860:4860::8888", None),
        ("2606:4700::1111", None),
    ];
    for (addr, want) in cases {
        assert_eq!(class(addr), *want, "{addr}");
    }
}

#[test]
fn ipv6_forms_that_carry_an_ipv4_address_are_judged_by_it() {
    use AddressClass::*;
    let cases: &[(&str, Option<AddressClass>)] = &[
        // IPv4-mapped: the kernel connects to the IPv4 address itself.
        ("::ffff:127.0.0.1", Some(Loopback)),
        ("::ffff:169.254.169.254", Some(LinkLocal)),
        ("::ffff:10.1.2.3", Some(Private)),
        ("::ffff:100.64.0.1", Some(SharedAddressSpace)),
        ("::ffff:0.0.0.0", Some(Unspecified)),
        ("::ffff:255.255.255.255", Some(Broadcast)),
        ("::ffff:8.8.8.8", None),
        // IPv4-compatible (deprecated).
        ("::127.0.0.1", Some(Loopback)),
        ("::169.254.169.254", Some(LinkLocal)),
        ("::192.168.1.1", Some(Private)),
        ("::8.8.8.8", None),
        // NAT64 well-known prefix: the translator connects to the IPv4 address.
        ("64:ff9b::127.0.0.1", Some(Loopback)),
        ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
        ("64:ff9b::172.16.0.1", Some(Private)),
        ("64:ff9b::8.8.8.8", None),
        // 6to4: the relay sends to the IPv4 address in bits 16..48.
        ("2002:7f00:1::1", Some(Loopback)),
        ("2002:a9fe:a9fe::", Some(LinkLocal)),
        ("2002:c0a8:0101::1", Some(Private)),
        ("2002:0808:0808::1", None),
    ];
    for (addr, want) in cases {
        assert_eq!(class(addr), *want, "{addr}");
    }
}

fn owner<'a>(host: &'a str, exact_entry: bool, allowed: &'a [AddressRange]) -> OwnerStatement<'a> {
    OwnerStatement {
        host,
        exact_entry,
        allowed,
    }
}

#[test]
fn public_addresses_pass_whatever_admitted_the_name() {
    for exact in [false, true] {
        assert_eq!(
            check(ip("93.184.216.34"), &owner("example.com", exact, &[])),
            Ok(())
        );
        assert_eq!(
            check(ip("2606:4700::1111"), &owner("example.com", exact, &[])),
            Ok(())
        );
    }
}

#[test]
fn an_allowed_name_resolving_to_a_refused_range_is_refused_with_the_class() {
    for (addr, class) in [
        ("127.0.0.1", AddressClass::Loopback),
        ("::1", AddressClass::Loopback),
        ("::ffff:127.0.0.1", AddressClass::Loopback),
        ("169.254.169.254", AddressClass::LinkLocal),
        ("fe80::1", AddressClass::LinkLocal),
        ("10.0.0.1", AddressClass::Private),
        ("fd00::1", AddressClass::Private),
        ("100.64.0.1", AddressClass::SharedAddressSpace),
        ("0.0.0.0", AddressClass::Unspecified),
    ] {
        let refusal = check(ip(addr), &owner("api.example.com", true, &[])).unwrap_err();
        assert_eq!(
            refusal,
            Refusal {
                address: ip(addr),
                class
            },
            "{addr}"
        );
    }
    assert_eq!(
        Refusal {
            address: ip("169.254.169.254"),
            class: AddressClass::LinkLocal
        }
        .rule(),
        "address 169.254.169.254 is link-local"
    );
}

#[test]
fn an_exact_entry_that_is_the_literal_itself_names_the_address() {
    assert_eq!(
        check(ip("127.0.0.1"), &owner("127.0.0.1", true, &[])),
        Ok(())
    );
    assert_eq!(
        check(ip("::ffff:127.0.0.1"), &owner("127.0.0.1", true, &[])),
        Ok(())
    );
    assert_eq!(check(ip("10.0.0.5"), &owner("10.0.0.5", true, &[])), Ok(()));
    // The literal names that address, not its neighbours.
    assert!(check(ip("127.0.0.2"), &owner("127.0.0.1", true, &[])).is_err());
}

#[test]
fn localhost_names_loopback_and_nothing_else() {
    assert_eq!(
        check(ip("127.0.0.1"), &owner("localhost", true, &[])),
        Ok(())
    );
    assert_eq!(check(ip("::1"), &owner("localhost", true, &[])), Ok(()));
    assert!(check(ip("169.254.169.254"), &owner("localhost", true, &[])).is_err());
    assert!(check(ip("10.0.0.1"), &owner("localhost", true, &[])).is_err());
    assert!(check(ip("0.0.0.0"), &owner("localhost", true, &[])).is_err());
}

#[test]
fn allow_address_opens_its_block_for_exact_entries_only() {
    let allowed = ["127.0.0.1".parse().unwrap(), "10.1.0.0/16".parse().unwrap()];
    assert_eq!(
        check(ip("127.0.0.1"), &owner("allowed.test", true, &allowed)),
        Ok(())
    );
    assert_eq!(
        check(ip("10.1.200.3"), &owner("allowed.test", true, &allowed)),
        Ok(())
    );
    assert!(check(ip("10.2.0.1"), &owner("allowed.test", true, &allowed)).is_err());
    assert!(check(
        ip("169.254.169.254"),
        &owner("allowed.test", true, &allowed)
    )
    .is_err());
    // A name admitted by `*.suffix` or a preset never reaches a non-public address, not
    // even one the owner listed.
    assert!(check(ip("127.0.0.1"), &owner("a.allowed.test", false, &allowed)).is_err());
    assert!(check(ip("127.0.0.1"), &owner("127.0.0.1", false, &[])).is_err());
    assert!(check(ip("::1"), &owner("localhost", false, &[])).is_err());
}

#[test]
fn unspecified_multicast_broadcast_and_reserved_can_never_be_opened() {
    let everything = [
        "0.0.0.0/8".parse().unwrap(),
        "224.0.0.0/8".parse().unwrap(),
        "255.0.0.0/8".parse().unwrap(),
        "240.0.0.0/8".parse().unwrap(),
    ];
    for addr in ["0.0.0.0", "224.0.0.1", "255.255.255.255", "240.0.0.1"] {
        assert!(
            check(ip(addr), &owner(addr, true, &everything)).is_err(),
            "{addr}"
        );
    }
    assert!(check(ip("::"), &owner("localhost", true, &[])).is_err());
}

#[test]
fn address_ranges_parse_strictly() {
    let r: AddressRange = "10.1.0.0/16".parse().unwrap();
    assert_eq!(r.to_string(), "10.1.0.0/16");
    assert!(r.contains(ip("10.1.255.255")));
    assert!(r.contains(ip("::ffff:10.1.0.1")));
    assert!(!r.contains(ip("10.2.0.0")));
    let one: AddressRange = " 127.0.0.1 ".parse().unwrap();
    assert_eq!(one.to_string(), "127.0.0.1");
    assert!(one.contains(ip("127.0.0.1")));
    assert!(!one.contains(ip("127.0.0.2")));
    let v6: AddressRange = "fd00::/8".parse().unwrap();
    assert!(v6.contains(ip("fd12::1")));
    assert!(!v6.contains(ip("fc00::1")));
    let mapped: AddressRange = "::ffff:127.0.0.1".parse().unwrap();
    assert_eq!(mapped.to_string(), "127.0.0.1");
    for bad in [
        "",
        "localhost",
        "10.0.0.0/",
        "10.0.0.0/x",
        "10.0.0.1/33",
        "::1/129",
    ] {
        assert!(bad.parse::<AddressRange>().is_err(), "{bad}");
    }
    assert!(matches!(
        "10.0.0.1/8".parse::<AddressRange>(),
        Err(AddressRangeError::HostBits { .. })
    ));
    assert!(matches!(
        "0.0.0.0/0".parse::<AddressRange>(),
        Err(AddressRangeError::TooWide { .. })
    ));
    assert!(matches!(
        "::/0".parse::<AddressRange>(),
        Err(AddressRangeError::TooWide { .. })
    ));
    assert!(matches!(
        "10.0.0.1/33".parse::<AddressRange>(),
        Err(AddressRangeError::Prefix { .. })
    ));
}
