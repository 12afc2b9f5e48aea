use super::*;
use rustix::io::Errno;

fn os(errno: Errno) -> io::Error {
    io::Error::from_raw_os_error(errno.raw_os_error())
}

#[test]
fn a_connects_error_is_told_by_its_errno() {
    let kind = |e: Errno| FailureKind::of_connect(&os(e));
    assert_eq!(kind(Errno::CONNREFUSED), FailureKind::Refused);
    assert_eq!(kind(Errno::NETUNREACH), FailureKind::Unreachable);
    assert_eq!(kind(Errno::HOSTUNREACH), FailureKind::Unreachable);
    assert_eq!(kind(Errno::TIMEDOUT), FailureKind::TimedOut);
    assert_eq!(kind(Errno::ACCESS), FailureKind::Other);
    assert_eq!(
        FailureKind::of_connect(&io::Error::from(io::ErrorKind::ConnectionRefused)),
        FailureKind::Refused
    );
}

#[test]
fn a_timeout_is_504_and_everything_else_502() {
    let at = "127.0.0.1:9".parse().unwrap();
    assert_eq!(
        UpstreamFailure::timed_out(at).status(),
        StatusCode::GATEWAY_TIMEOUT
    );
    assert_eq!(
        UpstreamFailure::connect(at, &os(Errno::CONNREFUSED)).status(),
        StatusCode::BAD_GATEWAY
    );
    assert_eq!(
        UpstreamFailure::resolution(&io::Error::other("x")).status(),
        StatusCode::BAD_GATEWAY
    );
}

#[test]
fn each_failure_names_host_port_address_and_kind() {
    let at = "127.0.0.1:9".parse().unwrap();
    let refused = UpstreamFailure::connect(at, &os(Errno::CONNREFUSED));
    assert_eq!(refused.kind.name(), "connection-refused");
    assert_eq!(
        refused.summary_key("down.test", 443),
        "down.test:443 -> 127.0.0.1:9 (connection refused)"
    );
    assert!(refused
        .to_string()
        .starts_with("127.0.0.1:9: connection refused ("));
    let unresolved = UpstreamFailure::no_address();
    assert_eq!(unresolved.kind.name(), "name-not-resolved");
    assert_eq!(
        unresolved.summary_key("nx.test", 80),
        "nx.test:80 (name did not resolve)"
    );
    assert_eq!(unresolved.to_string(), "name did not resolve (no address)");
}
