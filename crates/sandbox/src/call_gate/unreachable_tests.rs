use super::*;

fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
    let mut a = (libc::AF_INET as u16).to_ne_bytes().to_vec();
    a.extend_from_slice(&port.to_be_bytes());
    a.extend_from_slice(&ip);
    a.extend_from_slice(&[0; 8]);
    a
}

#[test]
fn reads_inet_and_inet6_destinations_and_nothing_else() {
    assert_eq!(
        inet_destination(&v4([151, 101, 0, 223], 443)),
        Some("151.101.0.223:443".parse().unwrap())
    );
    let mut a = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
    a.extend_from_slice(&53u16.to_be_bytes());
    a.extend_from_slice(&[0; 4]);
    a.extend_from_slice(&"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets());
    a.extend_from_slice(&[0; 4]);
    assert_eq!(
        inet_destination(&a),
        Some("[2001:db8::1]:53".parse().unwrap())
    );
    let unix = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    assert_eq!(inet_destination(&unix), None);
    assert_eq!(inet_destination(&v4([1, 2, 3, 4], 80)[..6]), None);
    assert_eq!(inet_destination(&[]), None);
}

#[test]
fn records_only_the_closed_networks_refusal_and_bounds_the_set() {
    note(&v4([192, 0, 2, 1], 80), Err(libc::ECONNREFUSED));
    note(&v4([192, 0, 2, 2], 80), Ok(()));
    note(&v4([192, 0, 2, 3], 80), Err(libc::ENETUNREACH));
    note(&v4([192, 0, 2, 3], 80), Err(libc::ENETUNREACH));
    let r = unreachable_destinations();
    assert!(r.kept.contains(&"192.0.2.3:80".parse().unwrap()));
    assert!(!r.kept.contains(&"192.0.2.1:80".parse().unwrap()));
    assert!(!r.kept.contains(&"192.0.2.2:80".parse().unwrap()));
    for port in 0..(KEPT as u16 + 10) {
        note(&v4([198, 51, 100, 1], port), Err(libc::ENETUNREACH));
    }
    let r = unreachable_destinations();
    assert_eq!(r.kept.len(), KEPT);
    assert!(r.dropped >= 10);
}

/// The host's resolver at a private address (put on the namespace's `lo` by the stub),
/// a loopback resolver (systemd-resolved's), and `::1`. Decisions only: nothing is sent.
fn stub() -> Vec<IpAddr> {
    vec![
        "10.255.255.53".parse().unwrap(),
        "127.0.0.53".parse().unwrap(),
        "::1".parse().unwrap(),
    ]
}

#[test]
fn the_gate_answers_connects_to_the_stub_beyond_its_udp_port_53() {
    let stub = stub();
    let at = |s: &str| s.parse::<SocketAddr>().unwrap();
    // The lookup the stub exists for is made, at every stub address.
    for dest in ["10.255.255.53:53", "127.0.0.53:53", "[::1]:53"] {
        assert_eq!(
            stub_answer(at(dest), libc::SOCK_DGRAM, &stub),
            None,
            "{dest}"
        );
        // DNS over TCP: nothing serves it; refused as by an empty port.
        assert_eq!(
            stub_answer(at(dest), libc::SOCK_STREAM, &stub),
            Some(libc::ECONNREFUSED),
            "{dest}"
        );
    }
    // The host resolver's address on any other port: outside the cage, unreachable.
    for sock_type in [libc::SOCK_STREAM, libc::SOCK_DGRAM] {
        assert_eq!(
            stub_answer(at("10.255.255.53:443"), sock_type, &stub),
            Some(libc::ENETUNREACH)
        );
    }
    for dest in [
        // A loopback stub address's other ports are the cage's own loopback.
        "127.0.0.53:8080",
        "[::1]:8080",
        // Not a stub address: the kernel answers.
        "127.0.0.1:53",
        "10.255.255.54:443",
    ] {
        assert_eq!(
            stub_answer(at(dest), libc::SOCK_STREAM, &stub),
            None,
            "{dest}"
        );
    }
    // No stub: nothing is answered by the gate.
    assert_eq!(
        stub_answer(at("10.255.255.53:443"), libc::SOCK_STREAM, &[]),
        None
    );
}

#[test]
fn refusals_at_the_stubs_addresses_count_as_the_closed_networks() {
    let stub = stub();
    let at = |s: &str| s.parse::<SocketAddr>().unwrap();
    let refused = |dest, errno| refused_by_closed_network(at(dest), Err(errno), &stub);
    assert!(refused("192.0.2.1:80", libc::ENETUNREACH));
    assert!(refused("10.255.255.53:443", libc::ECONNREFUSED));
    assert!(refused("10.255.255.53:53", libc::ECONNREFUSED));
    assert!(refused("127.0.0.53:53", libc::ECONNREFUSED));
    assert!(refused("[::1]:53", libc::ECONNREFUSED));
    // The cage's own loopback refusing is not the network's doing.
    assert!(!refused("127.0.0.53:8080", libc::ECONNREFUSED));
    assert!(!refused("127.0.0.1:53", libc::ECONNREFUSED));
    assert!(!refused("10.255.255.53:443", libc::ETIMEDOUT));
    assert!(!refused_by_closed_network(
        at("10.255.255.53:443"),
        Ok(()),
        &stub
    ));
}
