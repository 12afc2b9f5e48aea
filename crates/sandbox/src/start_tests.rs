use super::*;

/// The refusals users and launchers match on, word for word.
#[test]
fn start_refusals_read_as_before() {
    let cases = [
        (
            StartError::AllowNeedsNamespace {
                bwrap: "b".into(),
                landlock: "; l".into(),
            },
            "refusing to run: --network allow needs a network namespace; bwrap: b; l",
        ),
        (
            StartError::NoCage { reason: "r".into() },
            "refusing to run: r",
        ),
        (
            StartError::PrivateTmp(crate::window_tmp::PrivateTmpError::BadWindowName(
                "..".into(),
            )),
            "refusing to run: cannot make the cage's private /tmp: window name \"..\" cannot \
             name a directory (empty, '.', '..' or contains '/' or NUL)",
        ),
    ];
    for (error, text) in cases {
        assert_eq!(error.to_string(), text);
    }
}

/// The view's namespaces follow the network mode: only `host` keeps the host's network,
/// and only `allow` lets the root stage bind the steering ports.
#[test]
fn the_views_network_follows_the_mode() {
    let host = bwrap_options(true, NetworkMode::Host);
    assert!(!host.unshare_net && !host.net_bind_service && host.proc_fs);
    let none = bwrap_options(true, NetworkMode::None);
    assert!(none.unshare_net && !none.net_bind_service);
    let allow = bwrap_options(false, NetworkMode::Allow);
    assert!(allow.unshare_net && allow.net_bind_service && !allow.proc_fs);
}
