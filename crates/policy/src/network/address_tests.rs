use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn class(s: &str) -> Option<AddressClass> {
    classify(ip(s))
}

/// `table`: a class's name and a colon (`None:` for public addresses), then the
/// addresses `classify` puts in that class, up to the next name; as (address, class).
fn class_table(table: &str) -> Vec<(&str, Option<AddressClass>)> {
    use AddressClass::*;
    let named = |name: &str| match name {
        "None" => None,
        "Loopback" => Some(Loopback),
        "LinkLocal" => Some(LinkLocal),
        "Private" => Some(Private),
        "SharedAddressSpace" => Some(SharedAddressSpace),
        "Unspecified" => Some(Unspecified),
        "Multicast" => Some(Multicast),
        "Broadcast" => Some(Broadcast),
        "Reserved" => Some(Reserved),
        other => panic!("no class {other}"),
    };
    let mut out = Vec::new();
    let mut want: Option<Option<AddressClass>> = None;
    for word in table.split_whitespace() {
        // A name is letters only; an IPv6 address may end with a colon too (`2002::`).
        match word.strip_suffix(':') {
            Some(name) if name.chars().all(|c| c.is_ascii_alphabetic()) => {
                want = Some(named(name));
            }
            _ => out.push((word, want.expect("an address before any class"))),
        }
    }
    out
}

fn assert_classes(table: &str) {
    for (addr, want) in class_table(table) {
        assert_eq!(class(addr), want, "{addr}");
    }
}

/// What `check` says of `addr` for an owner statement of `host`.
fn verdict(addr: &str, host: &str, exact: bool, allowed: &[AddressRange]) -> Result<(), Refusal> {
    check(ip(addr), &owner(host, exact, allowed))
}

#[test]
fn every_refused_ipv4_range_is_classified_at_its_edges() {
    assert_classes(
        "
            Unspecified: 0.0.0.0 0.255.255.255
            None: 1.0.0.0 9.255.255.255 11.0.0.0 100.63.255.255 100.128.0.0 126.255.255.255
                128.0.0.0 169.253.255.255 169.255.0.0 172.15.255.255 172.32.0.0 192.167.255.255
                192.169.0.0 223.255.255.255 8.8.8.8 93.184.216.34
            Private: 10.0.0.0 10.255.255.255 172.16.0.0 172.31.255.255 192.168.0.0
                192.168.255.255
            SharedAddressSpace: 100.64.0.0 100.127.255.255
            Loopback: 127.0.0.1 127.255.255.254
            LinkLocal: 169.254.0.0 169.254.169.254 169.254.255.255
            Multicast: 224.0.0.0 239.255.255.255
            Reserved: 240.0.0.0 255.255.255.254
            Broadcast: 255.255.255.255",
    );
}

#[test]
fn every_refused_ipv6_range_is_classified() {
    assert_classes(
        "
            Unspecified: ::
            Loopback: ::1
            LinkLocal: fe80::1 febf:ffff::1
            Private: fec0::1 feff::1 fc00::1 fdff:ffff::1 64:ff9b:1::1
            None: fe00::1 fbff::1 2001:4860:4860::8888 2606:4700::1111
            Multicast: ff02::1 ff0e::1",
    );
}

#[test]
fn ipv6_forms_that_carry_an_ipv4_address_are_judged_by_it() {
    // IPv4-mapped: the kernel connects to the IPv4 address itself.
    assert_classes(
        "
            Loopback: ::ffff:127.0.0.1
            LinkLocal: ::ffff:169.254.169.254
            Private: ::ffff:10.1.2.3
            SharedAddressSpace: ::ffff:100.64.0.1
            Unspecified: ::ffff:0.0.0.0
            Broadcast: ::ffff:255.255.255.255
            None: ::ffff:8.8.8.8",
    );
    // IPv4-compatible (deprecated).
    assert_classes(
        "
            Loopback: ::127.0.0.1
            LinkLocal: ::169.254.169.254
            Private: ::192.168.1.1
            None: ::8.8.8.8",
    );
    // NAT64 well-known prefix: the translator connects to the IPv4 address.
    assert_classes(
        "
            Loopback: 64:ff9b::127.0.0.1
            LinkLocal: 64:ff9b::a9fe:a9fe
            Private: 64:ff9b::172.16.0.1
            None: 64:ff9b::8.8.8.8",
    );
    // 6to4: the relay sends to the IPv4 address in bits 16..48.
    assert_classes(
        "
            Loopback: 2002:7f00:1::1
            LinkLocal: 2002:a9fe:a9fe::
            Private: 2002:c0a8:0101::1
            None: 2002:0808:0808::1",
    );
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
        assert_eq!(verdict("93.184.216.34", "example.com", exact, &[]), Ok(()));
        assert_eq!(
            verdict("2606:4700::1111", "example.com", exact, &[]),
            Ok(())
        );
    }
}

#[test]
fn an_allowed_name_resolving_to_a_refused_range_is_refused_with_the_class() {
    let refused = class_table(
        "
            Loopback: 127.0.0.1 ::1 ::ffff:127.0.0.1
            LinkLocal: 169.254.169.254 fe80::1
            Private: 10.0.0.1 fd00::1
            SharedAddressSpace: 100.64.0.1
            Unspecified: 0.0.0.0",
    );
    for (addr, class) in refused {
        let class = class.unwrap();
        let refusal = verdict(addr, "api.example.com", true, &[]).unwrap_err();
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
    assert_eq!(verdict("127.0.0.1", "127.0.0.1", true, &[]), Ok(()));
    assert_eq!(verdict("::ffff:127.0.0.1", "127.0.0.1", true, &[]), Ok(()));
    assert_eq!(verdict("10.0.0.5", "10.0.0.5", true, &[]), Ok(()));
    // The literal names that address, not its neighbours.
    assert!(verdict("127.0.0.2", "127.0.0.1", true, &[]).is_err());
}

#[test]
fn localhost_names_loopback_and_nothing_else() {
    assert_eq!(verdict("127.0.0.1", "localhost", true, &[]), Ok(()));
    assert_eq!(verdict("::1", "localhost", true, &[]), Ok(()));
    assert!(verdict("169.254.169.254", "localhost", true, &[]).is_err());
    assert!(verdict("10.0.0.1", "localhost", true, &[]).is_err());
    assert!(verdict("0.0.0.0", "localhost", true, &[]).is_err());
}

#[test]
fn allow_address_opens_its_block_for_exact_entries_only() {
    let allowed = ["127.0.0.1".parse().unwrap(), "10.1.0.0/16".parse().unwrap()];
    assert_eq!(verdict("127.0.0.1", "allowed.test", true, &allowed), Ok(()));
    assert_eq!(
        verdict("10.1.200.3", "allowed.test", true, &allowed),
        Ok(())
    );
    assert!(verdict("10.2.0.1", "allowed.test", true, &allowed).is_err());
    assert!(verdict("169.254.169.254", "allowed.test", true, &allowed).is_err());
    // A name admitted by `*.suffix` or a preset never reaches a non-public address, not
    // even one the owner listed.
    assert!(verdict("127.0.0.1", "a.allowed.test", false, &allowed).is_err());
    assert!(verdict("127.0.0.1", "127.0.0.1", false, &[]).is_err());
    assert!(verdict("::1", "localhost", false, &[]).is_err());
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
        assert!(verdict(addr, addr, true, &everything).is_err(), "{addr}");
    }
    assert!(verdict("::", "localhost", true, &[]).is_err());
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
    let err = |text: &str| text.parse::<AddressRange>().unwrap_err();
    assert!(matches!(
        err("10.0.0.1/8"),
        AddressRangeError::HostBits { .. }
    ));
    assert!(matches!(
        err("0.0.0.0/0"),
        AddressRangeError::TooWide { .. }
    ));
    assert!(matches!(err("::/0"), AddressRangeError::TooWide { .. }));
    assert!(matches!(
        err("10.0.0.1/33"),
        AddressRangeError::Prefix { .. }
    ));
}
