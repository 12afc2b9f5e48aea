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
