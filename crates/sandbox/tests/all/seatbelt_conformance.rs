//! The Seatbelt backend against the reference meaning: for policies built from scratch
//! homes, `eval(render_profile(policy))` must decide every probed (path, access) exactly as
//! `policy.decide` does. Seatbelt cannot run here, so the profile text is parsed back and
//! evaluated with Seatbelt's last-match-wins rule (`jaula_sbpl::eval`).
//!
//! Unix-socket connects (`Access::Connect`) are checked on the same probes, against
//! `decide` and the profile's named deviations (`seatbelt::DEVIATIONS`):
//! `system-name-resolution` (mDNSResponder in `host` mode), which must be observed, and
//! `cage-socket-refused` (the cage's own sockets are refused too), which a path alone
//! cannot show since `decide` refuses them as well; every other disagreement fails. The network modes are checked for IP
//! destinations in `network_modes_reach_only_what_they_name`.
//!
//! File accesses: no deviation in the verdicts. One in explanations, pinned by
//! `sealed_and_protected_overlap_is_explained_by_the_later_block`: for a write to a path
//! that is both sealed and protected, `decide` names the seal and Seatbelt's last match is
//! the protected block. Both deny.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use jaula_policy::{
    Access, FileMatch, FileRule, Platform, Policy, PolicySpec, Rule, SocketSource, Warning,
};
use jaula_sandbox::seatbelt::{
    self, cage_tmp_dir, render_profile, render_profile_with, ProfileNetwork, ProfileOptions,
    MDNS_RESPONDER,
};
use jaula_sbpl::eval::{Action, IpEndpoint, Operation, Profile, Request};

/// The window's private temporary directory (`jaula run`'s `TMPDIR` on macOS): probed as a
/// place a naive profile would trust.
fn window_tmp(cage: &Cage) -> PathBuf {
    cage_tmp_dir(&cage.policy, Some("w1"))
}
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Names that break naive quoting: SBPL string and regex delimiters, ERE metacharacters,
/// whitespace, comment and datum markers, non-ASCII.
const AWKWARD: &str = r#"[a-c"\\ \n\t.*+?()\[\]{}|^$#;'é-]"#;

#[derive(Clone, Copy, Debug)]
struct Options {
    platform: Platform,
    /// `AGENTS_CITY_HOME` outside the home.
    relocated_state: bool,
    /// An owner allow-write of `/`: only the order of the blocks keeps seals sealed.
    broad_allow: bool,
}

struct Cage {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    policy: Policy,
    options: ProfileOptions,
    text: String,
    profile: Profile,
}

fn mkdir(p: &Path) {
    fs::create_dir_all(p).unwrap_or_else(|e| panic!("mkdir {}: {e}", p.display()));
}

fn touch(p: &Path) {
    if let Some(parent) = p.parent() {
        mkdir(parent);
    }
    fs::write(p, b"x").unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
}

/// A scratch home with some secrets present and some absent, a broker dir with this
/// window's token and another window's, channel tokens, and owner denies and allows.
fn build(home_name: &OsStr, repo_name: &OsStr, opts: Options) -> Cage {
    // Inside the target directory, never /tmp: /tmp is writable in every cage.
    let (dir, root) = jaula_testkit::scratch!("seatbelt-conformance-");
    let home = root.join("homes").join(home_name);
    let repo = root.join("repos").join(repo_name);
    mkdir(&repo);
    // Present: ~/.ssh, ~/.gnupg, ~/.config/gcloud, ~/.netrc, ~/.cargo/credentials,
    // ~/.claude/.credentials.json. Absent: ~/.aws, ~/.kube, ~/.docker, ~/.config/gh,
    // ~/.git-credentials, ~/.pgpass, ~/.cargo/credentials.toml.
    touch(&home.join(".ssh/id_ed25519"));
    mkdir(&home.join(".gnupg"));
    mkdir(&home.join(".config/gcloud"));
    touch(&home.join(".netrc"));
    touch(&home.join(".cargo/credentials"));
    touch(&home.join(".claude/.credentials.json"));
    touch(&home.join(".claude.json"));
    touch(&home.join(".claude.json.backup"));
    touch(&home.join(".claude/channels/seat-a/.env"));
    touch(&home.join(".claude/channels/seat-b/.env"));
    mkdir(&home.join(".claude/channels/seat-c"));
    touch(&home.join("private-notes/diary"));
    touch(&home.join("secret.txt"));
    mkdir(&root.join("shared"));
    mkdir(&root.join("mount-target"));
    // The planting guard: a worktree whose `.git` file names a git directory outside the
    // repo, and whose commondir holds the config and hooks (every name lands in the
    // anchors below, with children, twins and siblings).
    let common = root.join("main-checkout/.git");
    mkdir(&common.join("hooks"));
    touch(&common.join("config"));
    let wt_git = common.join("worktrees/w1");
    mkdir(&wt_git);
    fs::write(wt_git.join("commondir"), "../..\n").expect("commondir");
    fs::write(repo.join(".git"), format!("gitdir: {}\n", wt_git.display())).expect("gitdir file");
    touch(&repo.join(".vscode/tasks.json"));
    touch(&home.join(".gitconfig"));

    let state_home = if opts.relocated_state {
        root.join("state")
    } else {
        home.join(".agents-city")
    };
    let broker = state_home.join(".runtime/broker");
    touch(&broker.join("w1.token"));
    touch(&broker.join("w2.token"));
    mkdir(&state_home.join(".runtime/cage"));

    let mut spec = PolicySpec::with_defaults(opts.platform, home.clone(), repo);
    if opts.relocated_state {
        spec.state_home = Some(state_home.clone());
    }
    spec.extra_sealed = vec![
        home.join("private-notes"),
        home.join("secret.txt"),
        root.join("outside-secret"),
        PathBuf::from("~/.npmrc"),
    ];
    spec.extra_writable = vec![
        root.join("shared"),
        home.join(".ssh/allowed"),
        home.join(".config/jaula/plugins"),
    ];
    if opts.broad_allow {
        spec.extra_writable.push(PathBuf::from("/"));
    }
    spec.mounts = vec![root.join("mount-target")];
    spec.token_file = Some(broker.join("w1.token"));
    spec.config_file = Some(home.join(".config/jaula/config.toml"));
    spec.launcher_exe = Some(root.join("bin/jaula"));
    spec.runtime_dir = Some(root.join("run/user/1000"));
    spec.protect_path_dirs = true;
    // An allowed host socket; one at a protected path (the allow wins, as in decide); one
    // inside the sealed ~/.ssh (dropped: a seal is never reachable).
    spec.allowed_sockets = vec![
        (root.join("sockets/agent.sock"), SocketSource::Owner),
        (protected_socket(&spec.repo), SocketSource::Owner),
        (home.join(".ssh/ctl-socket"), SocketSource::Owner),
    ];

    let policy = spec.resolve().expect("policy resolves");
    // The fixture is what it claims: the worktree's git directories were followed.
    for p in [
        wt_git.join("config.worktree"),
        common.join("config"),
        common.join("hooks"),
    ] {
        assert!(
            policy.protected().iter().any(|x| x.path == p),
            "{} not protected",
            p.display()
        );
    }
    // The fixture is what it claims: the allow inside ~/.ssh was dropped, loudly.
    assert!(
        policy
            .warnings()
            .iter()
            .any(|w| matches!(w, Warning::WriteAllowInsideSealed { .. })),
        "{:?}",
        policy.warnings()
    );
    let options = ProfileOptions::default();
    let text = render_profile_with(&policy, &options).expect("profile renders");
    let profile = Profile::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    Cage {
        _dir: dir,
        root,
        home,
        policy,
        options,
        text,
        profile,
    }
}

/// A socket path at a protected place of the worktree fixture (its `.vscode`).
fn protected_socket(repo: &Path) -> PathBuf {
    repo.join(".vscode/agent.sock")
}

fn join_raw(base: &Path, suffix: &[u8]) -> PathBuf {
    let mut bytes = base.as_os_str().as_bytes().to_vec();
    bytes.extend_from_slice(suffix);
    PathBuf::from(OsString::from_vec(bytes))
}

/// Every root the policy names, and the places a string-prefix mistake would confuse
/// with them.
fn anchors(cage: &Cage) -> Vec<PathBuf> {
    let p = &cage.policy;
    let mut out: Vec<PathBuf> = vec![
        PathBuf::from("/"),
        cage.root.clone(),
        p.home().to_path_buf(),
        p.repo().to_path_buf(),
        p.state_home().to_path_buf(),
    ];
    out.extend(p.sealed().iter().map(|s| s.path.clone()));
    out.extend(p.writable().iter().map(|w| w.path.clone()));
    out.extend(p.protected().iter().map(|x| x.path.clone()));
    for rule in p.file_rules() {
        match rule {
            FileRule::WritableFile { path, .. } | FileRule::ReadableInSeal { path, .. } => {
                out.push(path.clone())
            }
            FileRule::SealedPattern { dir, existing, .. } => {
                out.push(dir.clone());
                out.extend(existing.iter().cloned());
            }
        }
    }
    out.extend(p.unix_sockets().iter().map(|s| s.path.clone()));
    out.push(window_tmp(cage));
    out.push(PathBuf::from(MDNS_RESPONDER));
    out
}

fn hand_picked(cage: &Cage) -> Vec<PathBuf> {
    let mut probes: BTreeSet<PathBuf> = BTreeSet::new();
    for a in anchors(cage) {
        probes.insert(a.clone());
        probes.insert(a.join("child"));
        probes.insert(a.join("child/deeper"));
        probes.insert(a.join(".env"));
        probes.insert(a.join("x/.env"));
        probes.insert(join_raw(&a, b"x"));
        probes.insert(join_raw(&a, b".backup"));
        probes.insert(join_raw(&a, b"x/y"));
        if let Some(parent) = a.parent() {
            probes.insert(parent.to_path_buf());
            probes.insert(parent.join("sibling"));
        }
        let bytes = a.as_os_str().as_bytes();
        if bytes.len() > 1 {
            probes.insert(PathBuf::from(OsStr::from_bytes(&bytes[..bytes.len() - 1])));
        }
    }
    // The profile's regex filters are built from these; a metacharacter left unescaped in
    // them makes a pattern match a twin path. (Literal and subpath filters compare bytes,
    // so twins of the other roots are only more siblings, covered above.)
    let p = &cage.policy;
    let regex_roots = p.file_rules().iter().filter_map(|rule| match rule {
        FileRule::WritableFile {
            path,
            matching: FileMatch::NamePrefix,
            ..
        } => Some(path),
        FileRule::SealedPattern { dir, .. } => Some(dir),
        _ => None,
    });
    for a in regex_roots {
        for twin in metachar_twins(a) {
            probes.insert(twin.join("seat/.env"));
            probes.insert(twin.join("x"));
            probes.insert(twin);
        }
    }
    let h = &cage.home;
    let broker = cage.policy.state_home().join(".runtime/broker");
    let relative = [
        ".sshx",
        ".ssh/id_ed25519",
        ".ssh/allowed",
        ".ssh/../.bashrc",
        ".bashrc",
        ".profile",
        ".claude.json",
        ".claude.json.backup",
        ".claude.jsonx/y",
        ".claude.json/inside",
        ".claude.jso",
        ".claude.json~",
        "x/.claude.json",
        ".claude/.claude.json",
        ".claude/settings.json",
        ".claude/.credentials.json",
        ".claude/.credentials.jsonx",
        ".claude/channels",
        ".claude/channels/.env",
        ".claude/channels/seat-a",
        ".claude/channels/seat-a/.env",
        ".claude/channels/seat-a/.env/x",
        ".claude/channels/seat-a/.envx",
        ".claude/channels/seat-a/x.env",
        ".claude/channels/seat-a/.en",
        ".claude/channels/seat-a/sub/.env",
        ".claude/channels/seat-c/.env",
        ".claude/channels/seat-new/.env",
        ".claude/channels/.env/.env",
        ".claude/channels/seat a/.env",
        ".claude/channels/seat\"q/.env",
        ".claude/channels/seat\nnl/.env",
        ".claude/channelsx/seat-a/.env",
        ".claude/channel/seat-a/.env",
        ".config",
        ".config/gh",
        ".config/gh/hosts.yml",
        ".config/ghx",
        ".config/gcloud/credentials.db",
        ".config/jaula",
        ".config/jaula/config.toml",
        ".config/jaula/config.toml.new",
        ".config/jaula/plugins/p",
        ".config/jaulax",
        ".config/other/settings",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".cargo/credentialsx",
        ".cargo/registry/cache/x.crate",
        ".aws/credentials",
        ".awsx",
        ".kube/config",
        ".gnupg/private-keys-v1.d/k",
        ".docker/config.json",
        ".netrc",
        ".netrcx",
        ".netrc/x",
        ".git-credentials",
        ".pgpass",
        ".npmrc",
        ".npmrc/x",
        "private-notes/diary",
        "private-notesx",
        "secret.txt",
        "secret.txt/x",
        "secret.txtx",
        "Library/Caches/x",
        "Library/Cachesx",
        ".local/share/x",
        ".cache/x",
    ];
    for r in relative {
        probes.insert(h.join(r));
    }
    probes.extend(
        [
            ".docker/run/docker.sock",
            "Library/Caches/tool/cmd.sock",
            ".cache/tool/cmd.sock",
            ".ssh/ctl-socket",
            ".ssh/agent.sock",
            ".gnupg/S.gpg-agent",
        ]
        .map(|r| h.join(r)),
    );
    let repo = cage.policy.repo();
    probes.extend(
        [
            "server.sock",
            "target/tmp/s.sock",
            ".vscode/agent.sock",
            ".vscode/other.sock",
            ".git/hooks/s",
        ]
        .map(|r| repo.join(r)),
    );
    let tmp = window_tmp(cage);
    probes.insert(tmp.join("pymp-abc/listener-xyz"));
    probes.insert(tmp.join("../var-tmp/s"));
    probes.extend(
        [
            "w1.token",
            "w1.token.bak",
            "w1.toke",
            "w1.tokenx",
            "w1.token/x",
            "w2.token",
            "",
            "../cage/w1.sb",
            "../cagex/w1.sb",
            "../other",
        ]
        .map(|r| broker.join(r)),
    );
    for abs in [
        "/etc/passwd",
        "/tmp",
        "/tmp/x",
        "/tmpx",
        "/var/tmp/x",
        "/private/tmp/x",
        "/private/var/folders/ab/x",
        "/private/var/foldersx",
        "/dev/null",
        "/dev/tty",
        "/run/user/1000/x",
        "/usr/bin/sandbox-exec",
        // Host services on macOS: tmux (both of its places), launchd's ssh-agent and
        // XQuartz, Docker Desktop's socket and its /var/run link, the name resolver
        // through its /var link.
        "/private/tmp/tmux-501/default",
        "/private/var/folders/ab/cd/T/tmux-501/default",
        "/private/tmp/com.apple.launchd.abc/Listeners",
        "/private/tmp/com.apple.launchd.def/org.xquartz:0",
        "/private/tmp/.X11-unix/X0",
        "/var/run/docker.sock",
        "/var/run/mDNSResponder",
        "/private/var/run/mDNSResponderx",
    ] {
        probes.insert(PathBuf::from(abs));
    }
    probes.into_iter().collect()
}

/// Paths a regex would confuse with `a` if a metacharacter in it were left unescaped:
/// each `.`, `*`, `+`, `?`, `[`, ... replaced by another character, dropped, or doubled.
fn metachar_twins(a: &Path) -> Vec<PathBuf> {
    let bytes = a.as_os_str().as_bytes();
    let mut out = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        if !b".[]()*+?{}|^$\\\"".contains(&b) {
            continue;
        }
        let (head, tail) = (&bytes[..i], &bytes[i + 1..]);
        let variants: [&[u8]; 3] = [b"X", b"", &[b, b]];
        for middle in variants {
            let twin = [head, middle, tail].concat();
            out.push(PathBuf::from(OsString::from_vec(twin)));
        }
    }
    out
}

/// How the profile's deciding block differs from `expected` (its action, operations and
/// whether a filter matched), in words; `None` when it is the expected one.
fn block_differs(
    v: &jaula_sbpl::eval::Verdict<'_>,
    (action, ops, filtered): (Action, Vec<Operation>, bool),
) -> Option<String> {
    let got = v
        .rule
        .map(|r| (r.action, r.operations.clone(), v.filter.is_some()));
    (got != Some((action, ops.clone(), filtered))).then(|| {
        format!(
            "expects ({action:?} {ops:?}), profile says {}",
            v.describe()
        )
    })
}

/// Where `decide`'s rule says the deciding profile rule should be.
fn expected_block(rule: &Rule, access: Access) -> (Action, Vec<Operation>, bool) {
    use Action::{Allow, Deny};
    use Operation::{Default, FileRead, FileWrite};
    match rule {
        Rule::ReadableInSeal { .. } => (Allow, vec![FileRead], true),
        Rule::Sealed { .. } | Rule::SealedPattern { .. } => (Deny, vec![FileRead, FileWrite], true),
        Rule::Protected { .. } => (Deny, vec![FileWrite], true),
        Rule::Writable { .. } | Rule::WritableFile { .. } => (Allow, vec![FileWrite], true),
        Rule::DefaultReadable => (Allow, vec![Default], false),
        Rule::DefaultReadOnly => (Deny, vec![FileWrite], false),
        other => panic!("unknown rule {other:?} for {access}"),
    }
}

/// Where `decide`'s rule for a connect says the deciding profile rule should be: every
/// socket rule is a `network-outbound` rule with a filter.
fn expected_connect_block(rule: &Rule, deviation: Option<&str>) -> (Action, Vec<Operation>, bool) {
    let allow = deviation.is_some() || matches!(rule, Rule::AllowedSocket { .. });
    let action = if allow { Action::Allow } else { Action::Deny };
    match rule {
        Rule::AllowedSocket { .. }
        | Rule::HostSocket
        | Rule::Sealed { .. }
        | Rule::SealedPattern { .. } => (action, vec![Operation::NetworkOutbound], true),
        other => panic!("unknown rule {other:?} for connect"),
    }
}

/// What the profile should answer for a connect to `path`, and the deviation that makes
/// it differ from `decide`, worked out here from the deviations' own words (not from
/// `seatbelt::deviation`, which is checked against this).
fn expected_connect(cage: &Cage, path: &Path) -> (bool, Option<&'static str>) {
    let path = jaula_policy::paths::normalize_lexically(&Path::new("/").join(path));
    let d = cage.policy.decide(&path, Access::Connect);
    if d.rule == Rule::HostSocket
        && cage.options.network == ProfileNetwork::Host
        && path == Path::new(MDNS_RESPONDER)
    {
        return (true, Some("system-name-resolution"));
    }
    (d.allowed, None)
}

/// Compare verdicts (and, with `explain`, the deciding block) for every access on every
/// probe, a connect included. Returns one line per disagreement.
fn disagreements(cage: &Cage, probes: &[PathBuf], explain: bool) -> Vec<String> {
    disagreements_counting(cage, probes, explain, &mut BTreeSet::new())
}

/// [`disagreements`], noting each deviation that made a difference in `seen`.
fn disagreements_counting(
    cage: &Cage,
    probes: &[PathBuf],
    explain: bool,
    seen: &mut BTreeSet<&'static str>,
) -> Vec<String> {
    let mut out = Vec::new();
    for path in probes {
        let (want, deviation) = expected_connect(cage, path);
        let v = cage.profile.evaluate_access(Access::Connect, path);
        let d = cage.policy.decide(path, Access::Connect);
        let named =
            seatbelt::deviation(&cage.policy, &cage.options, path, Access::Connect).map(|d| d.name);
        if named != deviation {
            out.push(format!(
                "connect {path:?}: seatbelt::deviation says {named:?}, the test {deviation:?}"
            ));
        }
        if v.allowed != want {
            out.push(format!(
                "connect {path:?}: decide {} ({:?}), deviation {deviation:?}, profile {} ({})",
                d.allowed,
                d.rule,
                v.allowed,
                v.describe()
            ));
        } else {
            if let Some(name) = deviation {
                seen.insert(name);
            }
            if explain {
                if let Some(wrong) = block_differs(&v, expected_connect_block(&d.rule, deviation)) {
                    out.push(format!("connect {path:?}: decide's {:?} {wrong}", d.rule));
                }
            }
        }
        for access in Access::ALL {
            let d = cage.policy.decide(path, access);
            let v = cage.profile.evaluate_access(access, path);
            if d.allowed != v.allowed {
                out.push(format!(
                    "{access} {path:?}: decide {} ({:?}), profile {} ({})",
                    d.allowed,
                    d.rule,
                    v.allowed,
                    v.describe()
                ));
                continue;
            }
            if !explain {
                continue;
            }
            if let Some(wrong) = block_differs(&v, expected_block(&d.rule, access)) {
                out.push(format!("{access} {path:?}: decide's {:?} {wrong}", d.rule));
            }
        }
    }
    out
}

fn assert_agree(cage: &Cage, probes: &[PathBuf], explain: bool) {
    let bad = disagreements(cage, probes, explain);
    assert!(
        bad.is_empty(),
        "{} disagreements between decide and the Seatbelt profile:\n{}\n--- profile ---\n{}",
        bad.len(),
        bad.iter().take(25).cloned().collect::<Vec<_>>().join("\n"),
        cage.text
    );
}

const ALL_OPTIONS: [Options; 4] = [
    Options {
        platform: Platform::MacOs,
        relocated_state: false,
        broad_allow: false,
    },
    Options {
        platform: Platform::Linux,
        relocated_state: false,
        broad_allow: false,
    },
    Options {
        platform: Platform::MacOs,
        relocated_state: true,
        broad_allow: true,
    },
    Options {
        platform: Platform::Linux,
        relocated_state: true,
        broad_allow: false,
    },
];

#[test]
fn hand_picked_paths_agree_with_decide() {
    for opts in ALL_OPTIONS {
        let cage = build(OsStr::new("owner"), OsStr::new("project"), opts);
        let probes = hand_picked(&cage);
        assert!(probes.len() >= 200, "only {} probes", probes.len());
        assert_agree(&cage, &probes, true);
        // Every deviation a path can show is shown, so the table holds no stale entry.
        let mut seen = BTreeSet::new();
        disagreements_counting(&cage, &probes, true, &mut seen);
        assert_eq!(
            seen,
            ["system-name-resolution"]
                .into_iter()
                .collect::<BTreeSet<_>>()
        );
    }
    // And the one no path shows is in the table, looser=false.
    let names: Vec<(&str, bool)> = seatbelt::DEVIATIONS
        .iter()
        .map(|d| (d.name, d.looser))
        .collect();
    assert_eq!(
        names,
        vec![
            ("cage-socket-refused", false),
            ("system-name-resolution", true),
        ]
    );
}

/// The routes of the escape-by-proxy issue as macOS has them, by name: each host service's
/// socket is refused by the profile (and by decide), wherever it sits: in the host's
/// temporary directories, in a cache, and in the places a host socket can be renamed or
/// linked into (the repo, the window's temporary directory; `cage-socket-refused`). Only
/// the allowed ones are reachable, and a seal wins over an allow.
#[test]
fn host_sockets_are_refused_wherever_they_sit_and_allowed_ones_reachable() {
    let cage = build(OsStr::new("owner"), OsStr::new("project"), ALL_OPTIONS[0]);
    let h = &cage.home;
    let repo = cage.policy.repo();
    let tmp = window_tmp(&cage);
    let refused: Vec<PathBuf> = vec![
        PathBuf::from("/private/tmp/tmux-501/default"),
        PathBuf::from("/private/var/folders/ab/cd/T/tmux-501/default"),
        PathBuf::from("/private/tmp/com.apple.launchd.abc/Listeners"),
        PathBuf::from("/private/tmp/.X11-unix/X0"),
        PathBuf::from("/var/run/docker.sock"),
        h.join(".docker/run/docker.sock"),
        h.join("Library/Caches/tool/cmd.sock"),
        h.join(".ssh/ctl-socket"),
        cage.root.join("sockets/agent.sockx"),
        repo.join(".vscode/other.sock"),
        tmp.join("../var-tmp/s"),
        repo.join("server.sock"),
        tmp.join("pymp-abc/listener-xyz"),
    ];
    for path in &refused {
        let v = cage.profile.evaluate_access(Access::Connect, path);
        assert!(!v.allowed, "{}: {}", path.display(), v.describe());
        assert!(!cage.policy.decide(path, Access::Connect).allowed);
    }
    let reachable: Vec<PathBuf> = vec![
        cage.root.join("sockets/agent.sock"),
        repo.join(".vscode/agent.sock"),
        PathBuf::from(MDNS_RESPONDER),
    ];
    for path in &reachable {
        let v = cage.profile.evaluate_access(Access::Connect, path);
        assert!(v.allowed, "{}: {}", path.display(), v.describe());
    }
    // The seal wins even over an explicit allow, and the dropped allow was said aloud.
    assert!(cage
        .policy
        .warnings()
        .iter()
        .any(|w| format!("{w:?}").contains("ctl-socket")));
}

fn endpoints(port: u16) -> Vec<IpEndpoint> {
    let mut out = Vec::new();
    for loopback in [true, false] {
        for p in [port, port.wrapping_add(1), 53, 443, 22] {
            out.push(IpEndpoint { loopback, port: p });
        }
    }
    out
}

/// `host` reaches everything, `none` nothing (not even the loopback: on macOS it is the
/// host's, where the owner's services listen), `allow` only the proxy's port on the
/// loopback. The socket rules are the same in every mode but for the name resolver, which
/// is a channel out (DNS names) in the two closed modes.
#[test]
fn network_modes_reach_only_what_they_name() {
    let base = build(OsStr::new("owner"), OsStr::new("project"), ALL_OPTIONS[0]);
    let port = 41_999;
    for network in [
        ProfileNetwork::Host,
        ProfileNetwork::None,
        ProfileNetwork::Proxy { port },
    ] {
        let options = ProfileOptions { network };
        let text = render_profile_with(&base.policy, &options).expect("renders");
        let profile = Profile::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        for end in endpoints(port) {
            let want = match network {
                ProfileNetwork::Host => true,
                ProfileNetwork::None => false,
                ProfileNetwork::Proxy { port: p } => end.loopback && end.port == p,
            };
            let v = profile.evaluate_request(Request::IpConnect(end));
            assert_eq!(
                v.allowed,
                want,
                "{network:?} {end:?}: {}\n{text}",
                v.describe()
            );
        }
        let mdns = profile.evaluate_access(Access::Connect, Path::new(MDNS_RESPONDER));
        assert_eq!(mdns.allowed, network == ProfileNetwork::Host, "{network:?}");
        // Files and sockets are decided as in the host-mode profile (the cage is rebuilt
        // with these options, so expected_connect knows the mode).
        let cage = Cage {
            _dir: jaula_testkit::scratch!("seatbelt-conformance-").0,
            root: base.root.clone(),
            home: base.home.clone(),
            policy: base.policy.clone(),
            options,
            text,
            profile,
        };
        assert_agree(&cage, &hand_picked(&cage), true);
    }
}

/// The default options (every caller of `render_profile`) are the host mode.
#[test]
fn default_options_render_the_host_mode() {
    let cage = build(OsStr::new("owner"), OsStr::new("project"), ALL_OPTIONS[0]);
    assert_eq!(
        render_profile(&cage.policy).expect("renders"),
        render_profile_with(
            &cage.policy,
            &ProfileOptions {
                network: ProfileNetwork::Host
            }
        )
        .expect("renders")
    );
    let profile = Profile::parse(&render_profile(&cage.policy).expect("renders")).expect("parses");
    assert!(
        profile
            .evaluate_request(Request::IpConnect(IpEndpoint {
                loopback: false,
                port: 443
            }))
            .allowed
    );
}

#[test]
fn hand_picked_paths_agree_under_an_awkward_home() {
    let home = OsStr::new("we\"ird \\ho\nme.*+?()[]{}|^$#;");
    let repo = OsStr::new("re\"po \\ [x]");
    for opts in ALL_OPTIONS {
        let cage = build(home, repo, opts);
        assert_agree(&cage, &hand_picked(&cage), true);
    }
}

/// The probes really cover each kind of decision, so agreement means something.
#[test]
fn hand_picked_probes_reach_every_kind_of_rule() {
    let cage = build(OsStr::new("owner"), OsStr::new("project"), ALL_OPTIONS[0]);
    let mut kinds: BTreeSet<&'static str> = BTreeSet::new();
    for path in hand_picked(&cage) {
        for access in Access::ALL {
            kinds.insert(match cage.policy.decide(&path, access).rule {
                Rule::ReadableInSeal { .. } => "token",
                Rule::Sealed { .. } => "sealed",
                Rule::SealedPattern { .. } => "channel",
                Rule::Protected { .. } => "protected",
                Rule::Writable { .. } => "writable",
                Rule::WritableFile { .. } => "claude-json",
                Rule::DefaultReadable => "readable",
                Rule::DefaultReadOnly => "read-only",
                _ => "other",
            });
        }
    }
    let want: BTreeSet<&str> = [
        "token",
        "sealed",
        "channel",
        "protected",
        "writable",
        "claude-json",
        "readable",
        "read-only",
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, want);
}

/// The one known difference, in explanations only: a write to a path both sealed and
/// protected is denied by both; `decide` reports the seal (checked first), Seatbelt's last
/// match is the protected block (emitted later).
#[test]
fn sealed_and_protected_overlap_is_explained_by_the_later_block() {
    let (_dir, root) = jaula_testkit::scratch!("seatbelt-overlap-");
    let home = root.join("home");
    let repo = root.join("repo");
    mkdir(&repo);
    mkdir(&home.join(".config/jaula"));
    let mut spec = PolicySpec::with_defaults(Platform::MacOs, home.clone(), repo);
    spec.extra_sealed = vec![home.join(".config/jaula")];
    let policy = spec.resolve().expect("resolves");
    let profile = Profile::parse(&render_profile(&policy).expect("renders")).expect("parses");
    let path = home.join(".config/jaula/config.toml");
    let d = policy.decide(&path, Access::Write);
    let v = profile.evaluate_access(Access::Write, &path);
    assert!(!d.allowed && !v.allowed);
    assert!(matches!(d.rule, Rule::Sealed { .. }), "{:?}", d.rule);
    let rule = v.rule.expect("a rule decided");
    assert_eq!(rule.operations, vec![Operation::FileWrite]);
    assert_eq!(rule.action, Action::Deny);
    // Reads agree on the rule too: the protected block says nothing about reads.
    let v = profile.evaluate_access(Access::Read, &path);
    assert_eq!(
        v.rule.map(|r| r.operations.clone()),
        Some(vec![Operation::FileRead, Operation::FileWrite])
    );
}

fn segment() -> impl Strategy<Value = OsString> {
    prop_oneof![
        4 => proptest::string::string_regex(&format!("{AWKWARD}{{1,6}}"))
            .expect("valid regex")
            .prop_map(OsString::from),
        2 => prop::sample::select(vec![
            ".env", ".claude.json", ".claude.json.backup", "seat-a", ".ssh", "id_ed25519",
            "w1.token", "config.toml", "channels", ".claude", "..", ".",
        ])
        .prop_map(OsString::from),
        1 => prop::collection::vec(
            any::<u8>().prop_filter("no slash or NUL in a name", |b| *b != b'/' && *b != 0),
            1..5,
        )
        .prop_map(OsString::from_vec),
    ]
}

/// A path near one of the policy's roots: the root, optionally glued to more characters
/// (a sibling sharing its prefix), then a few components.
fn probe(anchors: Vec<PathBuf>) -> impl Strategy<Value = PathBuf> {
    (
        prop::sample::select(anchors),
        prop::option::weighted(0.3, segment()),
        prop::collection::vec(segment(), 0..4),
    )
        .prop_map(|(anchor, glue, tail)| {
            let mut path = match glue {
                Some(glue) => join_raw(&anchor, glue.as_bytes()),
                None => anchor,
            };
            for s in tail {
                path.push(s);
            }
            path
        })
}

fn run(cases: u32, strategy: impl Strategy<Value = PathBuf>, cage: &Cage) {
    let mut runner = TestRunner::new(Config::with_cases(cases));
    let result = runner.run(&strategy, |path| {
        let bad = disagreements(cage, std::slice::from_ref(&path), false);
        prop_assert!(bad.is_empty(), "{}", bad.join("\n"));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}\n--- profile ---\n{}", cage.text);
    }
}

#[test]
fn generated_paths_agree_with_decide() {
    let awkward = OsStr::new("h\"o\\m e\n.*+?()[]{}|^$");
    for opts in ALL_OPTIONS {
        for home in [OsStr::new("owner"), awkward] {
            let cage = build(home, OsStr::new("r[e]p\"o"), opts);
            run(300, probe(anchors(&cage)), &cage);
        }
    }
}

fn name() -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("{AWKWARD}{{1,10}}"))
        .expect("valid regex")
        .prop_filter("a real name", |s| s != "." && s != "..")
}

fn options() -> impl Strategy<Value = Options> {
    (
        prop::sample::select(vec![Platform::MacOs, Platform::Linux]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(platform, relocated_state, broad_allow)| Options {
            platform,
            relocated_state,
            broad_allow,
        })
}

#[test]
fn policies_with_awkward_names_agree_with_decide() {
    let mut runner = TestRunner::new(Config::with_cases(96));
    let result = runner.run(
        &(
            name(),
            name(),
            options(),
            prop::collection::vec(segment(), 1..3),
        ),
        |(home, repo, opts, tail)| {
            let cage = build(OsStr::new(&home), OsStr::new(&repo), opts);
            let mut probes = hand_picked(&cage);
            for a in anchors(&cage) {
                let mut p = a.clone();
                for s in &tail {
                    p.push(s);
                }
                probes.push(p);
            }
            let bad = disagreements(&cage, &probes, true);
            prop_assert!(
                bad.is_empty(),
                "{}\n--- profile ---\n{}",
                bad.iter().take(25).cloned().collect::<Vec<_>>().join("\n"),
                cage.text
            );
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
