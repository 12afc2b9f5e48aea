use super::*;
use crate::network::DomainPattern;

fn flags(mode: Option<NetworkMode>) -> NetworkFlags {
    NetworkFlags {
        mode,
        socket_gate: true,
        ..NetworkFlags::default()
    }
}

fn config_with_list(mode: Option<NetworkMode>) -> NetworkSection {
    NetworkSection {
        mode,
        allow_domain: vec![DomainPattern::parse("example.com").unwrap()],
        ..NetworkSection::default()
    }
}

#[test]
fn the_flag_wins_over_the_config_and_host_is_the_default() {
    let config = config_with_list(Some(NetworkMode::Allow));
    let settled = flags(None).settle(&config, Platform::Linux).unwrap();
    assert_eq!(settled.mode, NetworkMode::Allow);
    assert_eq!(settled.rules.allow().len(), 1);
    let settled = flags(Some(NetworkMode::None))
        .settle(&config, Platform::Linux)
        .unwrap();
    assert_eq!(settled.mode, NetworkMode::None);
    // The config's list is for `allow`: a run asking for `none` is not refused for it.
    assert!(settled.rules.allow().is_empty());
    let settled = flags(None)
        .settle(&NetworkSection::default(), Platform::Linux)
        .unwrap();
    assert_eq!(settled.mode, NetworkMode::Host);
}

#[test]
fn flags_that_do_not_fit_the_mode_are_refused() {
    let none = NetworkSection::default();
    let mut asked = flags(Some(NetworkMode::None));
    asked.allow_addresses = vec!["10.0.0.1".to_owned()];
    assert!(matches!(
        asked.settle(&none, Platform::Linux),
        Err(SettleError::AllowAddressWithoutAllow {
            mode: NetworkMode::None
        })
    ));
    let mut asked = flags(Some(NetworkMode::None));
    asked.log = true;
    asked.socket_gate = false;
    assert!(matches!(
        asked.settle(&none, Platform::Linux),
        Err(SettleError::LogNeedsGate { .. })
    ));
    let mut asked = flags(Some(NetworkMode::Host));
    asked.log = true;
    assert!(asked.settle(&none, Platform::Linux).is_ok());
    assert!(matches!(
        asked.settle(&none, Platform::MacOs),
        Err(SettleError::LogOffLinux {
            mode: NetworkMode::Host
        })
    ));
    let mut asked = flags(Some(NetworkMode::Host));
    asked.allow_domains = vec!["example.com".to_owned()];
    assert!(matches!(
        asked.settle(&none, Platform::Linux),
        Err(SettleError::Lists(NetworkError::ListsWithoutAllow { .. }))
    ));
}

#[test]
fn allow_gathers_addresses_and_sends_an_allowed_localhost_to_the_proxy() {
    let mut asked = flags(Some(NetworkMode::Allow));
    asked.allow_addresses = vec!["10.1.2.0/24".to_owned()];
    asked.allow_domains = vec!["localhost".to_owned()];
    let settled = asked
        .settle(&NetworkSection::default(), Platform::Linux)
        .unwrap();
    assert_eq!(settled.allow_addresses.len(), 1);
    assert!(settled.proxy_localhost);
    asked.allow_domains = vec!["example.com".to_owned()];
    let settled = asked
        .settle(&NetworkSection::default(), Platform::Linux)
        .unwrap();
    assert!(!settled.proxy_localhost);
    asked.allow_addresses = vec!["not-an-address".to_owned()];
    assert!(matches!(
        asked.settle(&NetworkSection::default(), Platform::Linux),
        Err(SettleError::AllowAddress(_))
    ));
}

#[test]
fn a_config_holding_an_allow_list_checks_clean_whatever_its_mode() {
    // `check` and `run` check the lists as `allow` would use them: a config whose mode is
    // `host` may still hold the list a single run turns on with `--network allow`.
    for mode in [None, Some(NetworkMode::Host), Some(NetworkMode::None)] {
        let config = config_with_list(mode);
        assert!(config.check_lists().is_ok(), "{mode:?}");
    }
}
