use super::{
    run_prefix, write_profile, LineArgs, LineLaunchArgs, NetworkArgs, NetworkMode, TokenAgent,
};
use crate::test_support::scratch;
use jaula_sandbox::window_tmp::sanitize_window;
use std::os::unix::fs::PermissionsExt;

/// The macOS half of `line`, run on any host: the profile lands under the state home's
/// `.runtime/cage`, mode 0600, named after the sanitised window, replacing (never
/// following) whatever was planted at that name.
#[test]
fn the_profile_file_is_private_atomic_and_never_follows_a_planted_link() {
    let (_dir, root) = scratch("line-");
    let (home, repo) = (root.join("home"), root.join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(home.join(".agents-city/.runtime/cage")).unwrap();
    let victim = root.join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let target = home.join(".agents-city/.runtime/cage/my-win-1.sb");
    std::os::unix::fs::symlink(&victim, &target).unwrap();
    let policy = jaula_policy::PolicySpec::with_defaults(jaula_policy::Platform::MacOs, home, repo)
        .resolve()
        .unwrap();
    let path = write_profile(&policy, "my win:1").unwrap();
    assert_eq!(path, target);
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_file(), "the planted link was replaced");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    // The profile `jaula profile` prints for the same flags (host network).
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        jaula_sandbox::seatbelt::render_profile(&policy).unwrap()
    );
    let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1, "no temp file is left behind");
}

#[test]
fn window_names_are_sanitised_to_one_safe_file_name() {
    assert_eq!(sanitize_window("repo:1 main"), "repo-1-main");
    assert_eq!(sanitize_window("../../etc/x"), "------etc-x");
    assert_eq!(sanitize_window("ñ_ok-1"), "-_ok-1");
    assert_eq!(sanitize_window(""), "window");
}

/// The Linux prefix is `jaula run` with the policy, the window and `--no-pid-ns` (a pid the
/// window writes down must name it on the host, as under the seed's cage), and nothing
/// that would let the tmux server (or any host service) in: no kept TMUX, no uncaged
/// fallback.
#[test]
fn the_linux_prefix_names_the_window_shares_host_pids_and_hands_nothing_to_the_tmux_server() {
    let argv = linux_prefix("line-prefix-", LineLaunchArgs::default());
    assert_eq!(argv[1], "run");
    assert_eq!(argv.last().map(String::as_str), Some("--"));
    let w = argv.iter().position(|a| a == "--window").unwrap();
    assert_eq!(argv[w + 1], "w1");
    assert_eq!(
        argv.iter().filter(|a| *a == "--no-pid-ns").count(),
        1,
        "{argv:?}"
    );
    assert!(!argv.iter().any(|a| a == "--pid-ns"), "{argv:?}");
    for forbidden in ["--keep-env", "--allow-uncaged", "--backend"] {
        assert!(
            !argv.iter().any(|a| a == forbidden),
            "{forbidden} in {argv:?}"
        );
    }
    assert!(!argv.iter().any(|a| a.contains("TMUX")), "{argv:?}");
}

/// The Linux prefix `line` prints for window `w1` over a scratch home and repo, with the
/// window's `launch` options.
fn linux_prefix(scratch_prefix: &str, launch: LineLaunchArgs) -> Vec<String> {
    let (_dir, root) = scratch(scratch_prefix);
    let (home, repo) = (root.join("home"), root.join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let spec = jaula_policy::PolicySpec::with_defaults(jaula_policy::Platform::Linux, home, repo);
    let policy = spec.resolve().unwrap();
    let args = LineArgs {
        policy: policy_args(&policy),
        launch,
        json: false,
    };
    run_prefix(&policy, &spec, &args)
        .unwrap()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn policy_args(policy: &jaula_policy::Policy) -> crate::args::PolicyArgs {
    crate::args::PolicyArgs {
        repo: Some(policy.repo().to_path_buf()),
        window: "w1".into(),
        home: None,
        token_file: None,
        mounts: "".into(),
        deny: Vec::new(),
        allow_write: Vec::new(),
        state_home: None,
        config: None,
        allow_unix_socket: Vec::new(),
        allow_unix_preset: Vec::new(),
        unprotect: Vec::new(),
        protect_path_dirs: false,
    }
}

/// A window's network mode, domain lists, log and token hand-over ride in the prefix, so a
/// tmux launcher can give each window the cage `jaula run` would.
#[test]
fn the_linux_prefix_carries_the_windows_network_and_token_options() {
    let launch = LineLaunchArgs {
        net: NetworkArgs {
            network: Some(NetworkMode::Allow),
            allow_domain: vec!["example.org".into()],
            deny_domain: vec!["x.example.org".into()],
            allow_preset: vec!["github".into()],
            allow_address: vec!["10.1.2.3".into()],
            network_log: Some("/tmp/net.log".into()),
        },
        hand_access_token: vec![TokenAgent::Claude],
    };
    let argv = linux_prefix("line-launch-", launch);
    let pair = |flag: &str| {
        let at = argv
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("{flag} missing in {argv:?}"));
        argv[at + 1].clone()
    };
    assert_eq!(pair("--network"), "allow");
    assert_eq!(pair("--allow-domain"), "example.org");
    assert_eq!(pair("--deny-domain"), "x.example.org");
    assert_eq!(pair("--allow-preset"), "github");
    assert_eq!(pair("--allow-address"), "10.1.2.3");
    assert_eq!(pair("--log"), "/tmp/net.log");
    assert_eq!(pair("--hand-access-token"), "claude");
    assert_eq!(argv.last().map(String::as_str), Some("--"));
}
