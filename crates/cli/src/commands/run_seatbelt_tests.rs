//! The macOS launch, run on any host up to its exec, with a recorder in place of the exec.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Parser;
use jaula_sandbox::seatbelt::process::Hardening;
use jaula_sandbox::seatbelt::ProfileNetwork;
use jaula_sbpl::eval::{IpEndpoint, Profile, Request};

use super::*;
use crate::test_support::scratch;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
}

/// Keeps every launch it is handed; runs nothing.
#[derive(Default)]
struct Recorder {
    launches: Vec<Prepared>,
    /// Whether each launch was handed a proxy to serve.
    proxies: Vec<bool>,
    uncaged: Vec<Vec<OsString>>,
}

impl Executor for Recorder {
    fn launch(&mut self, launch: Prepared, proxy: Option<jaula_proxy::Proxy>) -> Outcome {
        self.launches.push(launch);
        self.proxies.push(proxy.is_some());
        Ok(crate::Report::status(0))
    }

    fn uncaged(&mut self, command: &[OsString]) -> Outcome {
        self.uncaged.push(command.to_vec());
        Ok(crate::Report::status(0))
    }
}

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

fn world() -> World {
    let (dir, root) = scratch("run-seatbelt-");
    let world = World {
        home: root.join("home"),
        repo: root.join("repo"),
        _dir: dir,
    };
    std::fs::create_dir_all(world.home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&world.repo).unwrap();
    world
}

fn os(s: &str) -> OsString {
    OsString::from(s)
}

fn parse(w: &World, extra: &[&str], command: &[&str]) -> RunArgs {
    let mut argv: Vec<OsString> = vec![os("jaula"), os("--repo"), w.repo.clone().into()];
    argv.extend([os("--home"), w.home.clone().into()]);
    argv.extend(extra.iter().map(|s| os(s)));
    argv.push(os("--"));
    argv.extend(command.iter().map(|s| os(s)));
    Cli::try_parse_from(argv).unwrap().run
}

/// The environment jaula is started with: credentials, the owner's tmux and agent, a
/// macOS TMPDIR, and ordinary variables.
fn inputs(w: &World) -> Inputs {
    Inputs {
        env: vec![
            (os("PATH"), os("/usr/bin:/bin")),
            (os("HOME"), w.home.clone().into()),
            (os("LANG"), os("en_US.UTF-8")),
            (os("GITHUB_TOKEN"), os("ghp_secret")),
            (os("AWS_SECRET_ACCESS_KEY"), os("aws-secret")),
            (os("ANTHROPIC_API_KEY"), os("sk-ant")),
            (
                os("SSH_AUTH_SOCK"),
                os("/private/tmp/com.apple.launchd.x/Listeners"),
            ),
            (os("TMUX"), os("/private/tmp/tmux-501/default,1,0")),
            (os("TMUX_PANE"), os("%1")),
            (os("TMPDIR"), os("/var/folders/zz/abc/T/")),
        ],
        cwd: w.repo.clone(),
        sandbox_exec: true,
    }
}

fn policy_args(w: &World, window: &str) -> crate::args::PolicyArgs {
    let cli = Cli::try_parse_from([
        os("jaula"),
        os("--repo"),
        w.repo.clone().into(),
        os("--home"),
        w.home.clone().into(),
        os("--window"),
        os(window),
        os("--"),
        os("x"),
    ])
    .unwrap();
    cli.run.policy
}

fn record(w: &World, extra: &[&str], command: &[&str]) -> Prepared {
    let args = parse(w, extra, command);
    let mut recorder = Recorder::default();
    assert_eq!(
        run_with(&args, &inputs(w), &mut recorder).unwrap(),
        crate::Report::status(0)
    );
    assert_eq!(recorder.launches.len(), 1);
    // A proxy to serve exactly when the cage has a listener for it.
    assert_eq!(recorder.proxies, [recorder.launches[0].proxy.is_some()]);
    recorder.launches.pop().unwrap()
}

/// The exact argv, environment and profile of a default (`host` network) launch: the
/// profile is the one `jaula profile` renders for the same flags, passed inline to the
/// absolute sandbox-exec; the credentials, the agent and tmux are scrubbed; TMPDIR is the
/// window's private directory, created 0700. (The agent's model key is not scrubbed.)
#[test]
fn the_recorded_launch_is_sandbox_exec_with_the_profile_of_jaula_profile() {
    let w = world();
    let launch = record(
        &w,
        &["--window", "w1", "--keep-fd", "7", "--max-procs", "512"],
        &["/bin/echo", "hi there"],
    );
    let expected_profile =
        crate::commands::profile::render(&policy_args(&w, "w1"), ProfileNetwork::Host).unwrap();
    assert_eq!(launch.profile, expected_profile);
    assert_eq!(
        launch.argv,
        vec![
            os("/usr/bin/sandbox-exec"),
            os("-p"),
            OsString::from(expected_profile.clone()),
            os("/bin/echo"),
            os("hi there"),
        ]
    );
    let tmpdir = w.home.join(".agents-city/.runtime/tmp/w1/tmp");
    assert_eq!(launch.tmpdir, tmpdir);
    assert_eq!(
        launch.env,
        vec![
            (os("PATH"), os("/usr/bin:/bin")),
            (os("HOME"), w.home.clone().into()),
            (os("LANG"), os("en_US.UTF-8")),
            // The agent's own model key is kept by default, as on Linux.
            (os("ANTHROPIC_API_KEY"), os("sk-ant")),
            (os("TMPDIR"), tmpdir.clone().into()),
        ]
    );
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(&tmpdir).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    assert_eq!(
        launch.hardening,
        Hardening {
            keep_fds: vec![7],
            max_processes: Some(512),
            max_data_bytes: None,
        }
    );
    assert!(launch.proxy.is_none());
    // Host sockets are refused, and so is a socket in the window's own directory: a host
    // socket could be renamed into it (deviation cage-socket-refused).
    let profile = Profile::parse(&launch.profile).unwrap();
    assert!(
        !profile
            .evaluate_request(Request::UnixConnect(&tmpdir.join("pymp-1/listener")))
            .allowed
    );
    assert!(
        !profile
            .evaluate_request(Request::UnixConnect(Path::new(
                "/private/tmp/tmux-501/default"
            )))
            .allowed
    );
}

/// `--network none`: the profile denies every IP destination; nothing else changes.
#[test]
fn network_none_is_a_seatbelt_network_deny() {
    let w = world();
    let launch = record(&w, &["--network", "none"], &["/usr/bin/true"]);
    let expected =
        crate::commands::profile::render(&policy_args(&w, "window"), ProfileNetwork::None).unwrap();
    assert_eq!(launch.profile, expected);
    assert_eq!(launch.argv[2], OsString::from(expected));
    let profile = Profile::parse(&launch.profile).unwrap();
    for loopback in [true, false] {
        let end = IpEndpoint {
            loopback,
            port: 443,
        };
        assert!(!profile.evaluate_request(Request::IpConnect(end)).allowed);
    }
    // Named after the repo, as `jaula run` names the bwrap view's /tmp.
    let name = jaula_sandbox::window_tmp::window_dir_name(None, &w.repo);
    assert_eq!(
        launch.tmpdir,
        w.home
            .join(".agents-city/.runtime/tmp")
            .join(name)
            .join("tmp")
    );
}

/// `--network allow`: the proxy is bound on a loopback port, the profile admits exactly
/// that port, and the proxy variables name it.
#[test]
fn network_allow_runs_the_proxy_on_loopback_and_the_profile_names_its_port() {
    let w = world();
    let launch = record(
        &w,
        &["--network", "allow", "--allow-domain", "example.com"],
        &["/usr/bin/true"],
    );
    let stage = launch.proxy.as_ref().expect("a proxy");
    let addr = stage.listener.local_addr().unwrap();
    assert!(addr.ip().is_loopback());
    assert_eq!(addr.port(), stage.port);
    let expected = crate::commands::profile::render(
        &policy_args(&w, "window"),
        ProfileNetwork::Proxy { port: stage.port },
    )
    .unwrap();
    assert_eq!(launch.profile, expected);
    let profile = Profile::parse(&launch.profile).unwrap();
    let reach = |loopback, port| {
        profile
            .evaluate_request(Request::IpConnect(IpEndpoint { loopback, port }))
            .allowed
    };
    assert!(reach(true, stage.port));
    assert!(!reach(true, stage.port.wrapping_add(1)));
    assert!(!reach(false, stage.port));
    let url = format!("http://127.0.0.1:{}", stage.port);
    for name in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY"] {
        assert!(
            launch.env.contains(&(os(name), os(&url))),
            "{name} in {:?}",
            launch.env
        );
    }
}

/// Flags whose layer only Linux has are refused (exit 126), never silently ignored, and
/// nothing reaches the executor.
#[test]
fn linux_only_flags_are_refused_with_126() {
    let w = world();
    for extra in [
        &["--backend", "landlock"][..],
        &["--backend", "bwrap"][..],
        &["--no-socket-gate"][..],
        &["--hand-access-token", "claude"][..],
    ] {
        let args = parse(&w, extra, &["/usr/bin/true"]);
        let mut recorder = Recorder::default();
        let err = run_with(&args, &inputs(&w), &mut recorder).unwrap_err();
        assert!(
            matches!(err, CliError::Refused(Refusal::LinuxOnlyFlag { .. })),
            "{extra:?}: {err:?}"
        );
        assert_eq!(err.refusal_code(), crate::error::REFUSED, "{extra:?}");
        assert!(err.to_string().contains("has no macOS meaning"), "{err}");
        assert!(recorder.launches.is_empty());
    }
}

/// Without sandbox-exec there is no cage: exit 126, or, with `--allow-uncaged`, the command
/// as it is (and nothing under Seatbelt).
#[test]
fn no_sandbox_exec_refuses_unless_allow_uncaged() {
    let w = world();
    let mut missing = inputs(&w);
    missing.sandbox_exec = false;
    let args = parse(&w, &[], &["/usr/bin/true"]);
    let mut recorder = Recorder::default();
    let err = run_with(&args, &missing, &mut recorder).unwrap_err();
    assert!(
        matches!(err, CliError::Refused(Refusal::Uncaged { .. })),
        "{err:?}"
    );
    assert_eq!(err.refusal_code(), crate::error::REFUSED);
    assert!(recorder.launches.is_empty() && recorder.uncaged.is_empty());
    let args = parse(&w, &["--allow-uncaged"], &["/usr/bin/true", "x"]);
    assert_eq!(
        run_with(&args, &missing, &mut recorder).unwrap(),
        crate::Report::status(0)
    );
    assert!(recorder.launches.is_empty());
    assert_eq!(recorder.uncaged, vec![vec![os("/usr/bin/true"), os("x")]]);
}
