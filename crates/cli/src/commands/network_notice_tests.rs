use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use jaula_sandbox::network::dns_stub::Lookups;

use super::*;

fn exited(code: i32) -> ExitStatus {
    ExitStatus::from_raw(code << 8)
}

#[test]
fn exit_notes_only_follow_a_failure_jaula_can_explain() {
    assert_eq!(after_none(exited(0)), None);
    assert!(after_none(exited(6)).unwrap().contains("exit 6"));
    assert!(after_none(ExitStatus::from_raw(9))
        .unwrap()
        .contains("signal 9"));
    assert_eq!(after_allow(exited(0), false), None);
    // The proxy saw requests: its own summary says what it refused.
    assert_eq!(after_allow(exited(1), true), None);
    assert!(after_allow(exited(1), false)
        .unwrap()
        .contains("sent no request through the proxy"));
    // A command that was not found or could not be executed never reached the network.
    assert_eq!(after_allow(exited(127), false), None);
    assert_eq!(after_allow(exited(126), false), None);
}

#[test]
fn the_refused_addresses_are_named_and_nothing_is_said_when_none_were() {
    assert_eq!(
        refused_under_none(&Lookups::default(), &Refused::default()),
        None
    );
    let mut refused = Refused::default();
    refused.kept.insert("151.101.0.223:443".parse().unwrap());
    refused.kept.insert("[2001:db8::1]:80".parse().unwrap());
    let line = refused_under_none(&Lookups::default(), &refused).unwrap();
    assert_eq!(
        line,
        "jaula: network none refused connections to: 151.101.0.223:443, [2001:db8::1]:80"
    );
    refused.dropped = 3;
    assert!(refused_under_none(&Lookups::default(), &refused)
        .unwrap()
        .ends_with("(and 3 more attempt(s) not listed)"));
}

#[test]
fn a_refused_dns_server_is_named_as_a_lookup() {
    let mut refused = Refused::default();
    refused.kept.insert("10.255.255.53:53".parse().unwrap());
    assert_eq!(
        refused_under_none(&Lookups::default(), &refused).unwrap(),
        "jaula: network none refused connections to: 10.255.255.53:53 (DNS server: a name \
         lookup)"
    );
}

#[test]
fn the_names_looked_up_come_first_with_their_types() {
    use jaula_policy::network::dns::QType;
    let mut lookups = Lookups::default();
    lookups.note("pypi.org", QType(28));
    lookups.note("pypi.org", QType(1));
    lookups.note("files.pythonhosted.org", QType(1));
    assert_eq!(
        refused_under_none(&lookups, &Refused::default()).unwrap(),
        "jaula: network none refused DNS lookups of files.pythonhosted.org (A), pypi.org (A, \
         AAAA)"
    );
    let mut refused = Refused::default();
    refused.kept.insert("151.101.0.223:443".parse().unwrap());
    lookups.dropped = 2;
    assert_eq!(
        refused_under_none(&lookups, &refused).unwrap(),
        "jaula: network none refused DNS lookups of files.pythonhosted.org (A), pypi.org (A, \
         AAAA) (and 2 more lookup(s) not listed); connections to: 151.101.0.223:443"
    );
}

#[test]
fn the_hosts_resolver_is_named_as_such_on_any_port() {
    let mut refused = Refused {
        stub_addresses: vec!["10.255.255.53".parse().unwrap()],
        ..Refused::default()
    };
    refused.kept.insert("10.255.255.53:443".parse().unwrap());
    refused.kept.insert("10.255.255.53:53".parse().unwrap());
    refused.kept.insert("192.0.2.1:443".parse().unwrap());
    assert_eq!(
        refused_under_none(&Lookups::default(), &refused).unwrap(),
        "jaula: network none refused connections to: 10.255.255.53:53 (DNS server: a name \
         lookup), 10.255.255.53:443 (the host's DNS server), 192.0.2.1:443"
    );
}
