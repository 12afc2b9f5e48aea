use super::*;

const ALL: [NetworkMode; 3] = [NetworkMode::Host, NetworkMode::None, NetworkMode::Allow];

#[test]
fn every_name_parses_back_to_its_mode() {
    for mode in ALL {
        assert_eq!(mode.name().parse::<NetworkMode>().unwrap(), mode);
        assert!(
            NetworkMode::NAMES.contains(&mode.name()),
            "{mode} not in NAMES"
        );
    }
    assert_eq!(NetworkMode::NAMES.len(), ALL.len());
    assert!("open".parse::<NetworkMode>().is_err());
}

#[test]
fn the_table_says_what_each_mode_asks_of_a_cage() {
    let asked: Vec<(bool, bool, bool)> = ALL
        .iter()
        .map(|m| {
            (
                m.closes_host_network(),
                m.through_proxy(),
                m.loopback_only(),
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            (false, false, false),
            (true, false, true),
            (true, true, false)
        ]
    );
    // A proxy is only ever asked for with the host's network closed: an open network
    // would let a client go round it.
    for mode in ALL {
        assert!(
            !mode.through_proxy() || mode.closes_host_network(),
            "{mode}"
        );
    }
}

#[test]
fn notices_fill_in_the_counts_and_host_says_nothing() {
    assert_eq!(NetworkMode::Host.start_notice(3), None);
    let allow = NetworkMode::Allow.start_notice(3).unwrap();
    assert!(allow.contains("for 3 allowed name pattern(s)"), "{allow}");
    assert!(!allow.contains('{'), "{allow}");
    assert!(allow.contains("ignores the proxy"), "{allow}");
    let none = NetworkMode::None.start_notice(3).unwrap();
    assert!(none.starts_with("jaula: network none:"), "{none}");
    // Each says how to open the network further.
    assert!(none.contains("--network host") && none.contains("--network allow"));
    for line in [none, allow] {
        assert!(!line.contains('\n'), "one line: {line}");
    }
    assert_eq!(
        NetworkMode::Allow.summary(2, 1),
        "allow (only jaula's proxy; 2 allow and 1 deny patterns)"
    );
    assert_eq!(
        NetworkMode::Host.summary(2, 1),
        "host (the host's network, unrestricted)"
    );
}
