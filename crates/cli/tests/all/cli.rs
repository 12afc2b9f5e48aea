//! The binary's contract: exit codes, messages, the launcher-compatible outputs, fail-closed
//! refusal, and the protection of the cage's own configuration.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use jaula_testkit::output::{success as ok, text};

fn jaula_in(home: &Path) -> Command {
    let mut c = Command::new(jaula());
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home);
    c
}

/// `jaula run FLAGS --repo REPO -- ARGV` in the scratch home, with `env` added.
fn run_in(h: &Home, env: &[(&str, &str)], flags: &[&str], argv: &[&str]) -> Output {
    jaula_in(&h.home)
        .envs(env.iter().copied())
        .arg("run")
        .args(flags)
        .arg("--repo")
        .arg(&h.repo)
        .arg("--")
        .args(argv)
        .output()
        .unwrap()
}

/// The exit code `code`, or a failure naming `what` with jaula's stderr.
#[track_caller]
fn assert_code(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: {}",
        text(&out.stderr)
    );
}

#[test]
fn line_and_profile_require_repo_with_exit_2() {
    let (_k, root) = scratch("norepo");
    let h = build_home(&root);
    for cmd in ["line", "profile"] {
        let out = jaula_in(&h.home).arg(cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert_eq!(text(&out.stderr).trim(), "--repo is required");
        assert!(out.stdout.is_empty());
    }
}

/// A refusal: its stderr says each of `said`, and nothing came out on stdout.
#[track_caller]
fn refused_saying(out: &Output, said: &[&str], what: impl std::fmt::Display) {
    jaula_testkit::output::assert_says(&text(&out.stderr), said, &what);
    assert!(
        out.stdout.is_empty(),
        "{what}: printed {}",
        text(&out.stdout)
    );
}

#[test]
fn unsafe_working_directories_exit_1_with_the_path() {
    let (_k, root) = scratch("unsafe");
    let h = build_home(&root);
    let cases = [
        (h.home.join(".ssh"), "inside the sealed root"),
        (h.home.clone(), "is the home directory"),
        (root.clone(), "contains the home directory"),
        (root.join("missing"), "needs an existing working directory"),
    ];
    for (repo, why) in cases {
        for cmd in ["profile", "line", "explain"] {
            let mut c = jaula_in(&h.home);
            c.arg(cmd);
            if cmd == "explain" {
                c.arg("/etc/hostname");
            }
            let out = c.arg("--repo").arg(&repo).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{cmd} {}", repo.display());
            let shown = repo.display().to_string();
            refused_saying(&out, &[why, &shown], cmd);
        }
    }
}

#[test]
fn check_answers_with_the_seed_line_and_exit_code() {
    let (_k, root) = scratch("check");
    let h = build_home(&root);
    let out = jaula_in(&h.home).arg("check").output().unwrap();
    let first = text(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    match out.status.code() {
        Some(0) => assert_eq!(first, "cage available"),
        Some(1) => assert_eq!(first, "cage unavailable on this machine"),
        other => panic!("check exited {other:?}"),
    }
    let off = jaula_in(&h.home)
        .env("CITY_CAGE", "0")
        .arg("check")
        .output()
        .unwrap();
    assert_eq!(off.status.code(), Some(1));
    assert_eq!(
        text(&off.stdout).lines().next(),
        Some("cage unavailable on this machine")
    );
    let json: serde_json::Value = serde_json::from_slice(
        &jaula_in(&h.home)
            .args(["check", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(json["available"].is_boolean());
    assert!(json["landlock"]["kernel"].is_object() || json["landlock"]["kernel"].is_string());
}

#[test]
fn explain_names_the_rule_and_the_backends() {
    let (_k, root) = scratch("explain");
    let h = build_home(&root);
    let out = jaula_in(&h.home)
        .args(["explain", "--json", "--repo"])
        .arg(&h.repo)
        .arg(h.home.join(".ssh/id_x"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(v["allowed"], false);
    assert_eq!(v["rule"], "sealed: ~/.ssh (credential directory)");
    let out = jaula_in(&h.home)
        .args(["explain", "--write", "--repo"])
        .arg(&h.repo)
        .arg(h.repo.join("src/new.rs"))
        .output()
        .unwrap();
    let s = ok(&out);
    assert!(s.contains("decision: allowed"), "{s}");
    assert!(s.contains("(repo)"), "{s}");
    let out = jaula_in(&h.home)
        .args(["explain", "--write", "--repo"])
        .arg(&h.repo)
        .arg(h.home.join(".config/jaula/config.toml"))
        .output()
        .unwrap();
    assert!(ok(&out).contains("protected: ~/.config/jaula (jaula config directory)"));
}

/// `explain --connect`: the seatbelt row is the rendered profile's own answer, with the
/// deviation named where it differs from decide.
#[test]
fn explain_connect_gives_the_profiles_answer_for_seatbelt() {
    let (_k, root) = scratch("explain-connect");
    let h = build_home(&root);
    let seatbelt = |path: &Path| {
        let out = jaula_in(&h.home)
            .args(["explain", "--connect", "--json", "--repo"])
            .arg(&h.repo)
            .arg(path)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
        (
            v["allowed"].as_bool().unwrap(),
            common::backend_row(&v, "seatbelt"),
        )
    };
    // (socket, what seatbelt answers, what its summary says); decide refuses each (for
    // the repo's socket, decide cannot know who bound it).
    for (path, allowed, said) in [
        (
            PathBuf::from("/private/tmp/tmux-501/default"),
            false,
            "(deny network-outbound (remote unix-socket))",
        ),
        (
            h.repo.join("server.sock"),
            false,
            "deviation cage-socket-refused",
        ),
        (
            PathBuf::from("/private/var/run/mDNSResponder"),
            true,
            "deviation system-name-resolution",
        ),
    ] {
        let (decided, row) = seatbelt(&path);
        assert!(!decided, "{}: decide allowed it", path.display());
        assert_eq!(row["allowed"], allowed, "{row}");
        assert!(common::summary_says(&row, said), "{said}: {row}");
    }
}

/// `profile --network`: `none` denies every IP destination, `allow` needs the proxy's port
/// and opens only that one; a port without `allow` is a usage error.
#[test]
fn profile_renders_the_network_modes() {
    let (_k, root) = scratch("profile-network");
    let h = build_home(&root);
    let profile = |extra: &[&str]| {
        jaula_in(&h.home)
            .args(["profile", "--repo"])
            .arg(&h.repo)
            .args(extra)
            .output()
            .unwrap()
    };
    let host = ok(&profile(&[]));
    assert!(!host.contains("(remote ip"), "{host}");
    assert!(host.contains("(remote unix-socket (path-literal \"/private/var/run/mDNSResponder\"))"));
    let none = ok(&profile(&["--network", "none"]));
    assert!(
        none.contains("(deny network-outbound (remote ip \"*:*\"))\n"),
        "{none}"
    );
    assert!(!none.contains("mDNSResponder"), "{none}");
    let allow = ok(&profile(&["--network", "allow", "--proxy-port", "4321"]));
    assert!(
        allow.contains(
            "(deny network-outbound (remote ip \"*:*\"))\n(allow network-outbound (remote ip \"localhost:4321\"))\n"
        ),
        "{allow}"
    );
    for bad in [
        &["--network", "allow"][..],
        &["--proxy-port", "4321"][..],
        &["--network", "none", "--proxy-port", "1"][..],
    ] {
        let out = profile(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("--proxy-port"), "{bad:?}");
    }
}

#[test]
fn render_bwrap_json_is_the_argv() {
    let (_k, root) = scratch("render");
    let h = build_home(&root);
    let out = jaula_in(&h.home)
        .args(["render", "bwrap", "--json", "--repo"])
        .arg(&h.repo)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let argv: Vec<String> = v["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert_eq!(&argv[..3], &["bwrap", "--ro-bind", "/"]);
    let ssh = h.home.join(".ssh").display().to_string();
    let tmpfs = argv
        .windows(2)
        .position(|w| w[0] == "--tmpfs" && w[1] == ssh);
    assert!(tmpfs.is_some(), "{argv:?}");
}

#[test]
fn a_bad_config_file_is_refused_and_nothing_is_launched() {
    let (_k, root) = scratch("badcfg");
    let h = build_home(&root);
    fs::write(
        h.home.join(".config/jaula/config.toml"),
        "[cage]\ndenny = [\"~/.x\"]\n",
    )
    .unwrap();
    for args in [vec!["line"], vec!["run", "--", "true"]] {
        let out = jaula_in(&h.home)
            .args(&args)
            .arg("--repo")
            .arg(&h.repo)
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        refused_saying(&out, &["denny", "config.toml"], format!("{args:?}"));
    }
}

#[test]
fn run_refuses_to_start_uncaged_with_126_and_the_missing_layer() {
    let (_k, root) = scratch("refuse");
    let h = build_home(&root);
    let marker = h.repo.join("ran");
    let script = format!("touch '{}'", marker.display());
    // The cage switched off: refuse unless --allow-uncaged.
    let out = run_in(&h, &[("CITY_CAGE", "0")], &[], &["sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(126));
    assert!(
        text(&out.stderr).contains("refusing to run uncaged"),
        "{}",
        text(&out.stderr)
    );
    assert!(!marker.exists());
    // bwrap declared unusable and the bwrap backend asked for: refuse, naming bwrap.
    let out = run_in(
        &h,
        &[("CITY_CAGE_BWRAP", "0")],
        &["--backend", "bwrap"],
        &["sh", "-c", &script],
    );
    assert_eq!(out.status.code(), Some(126));
    assert!(text(&out.stderr).contains("bwrap"), "{}", text(&out.stderr));
    assert!(!marker.exists());
    // With --allow-uncaged it runs, loudly.
    let out = run_in(
        &h,
        &[("CITY_CAGE", "0")],
        &["--allow-uncaged"],
        &["sh", "-c", &script],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("UNCAGED"));
    assert!(marker.exists());
}

#[test]
fn run_keeps_the_exit_code_and_pid() {
    let (_k, root) = scratch("exit");
    let h = build_home(&root);
    for backend in ["landlock", "bwrap"] {
        let out = run_in(&h, &[], &["--backend", backend], &["sh", "-c", "exit 42"]);
        assert_code(&out, 42, backend);
        let out = run_in(&h, &[], &["--backend", backend], &["/no/such/cmd"]);
        assert_code(&out, 127, backend);
    }
    // Landlock mode confines jaula, then forks twice: the command is the child of the
    // socket gate's supervisor, which is the child of the jaula process the caller waits
    // for and which leaves with the command's status.
    let child = jaula_in(&h.home)
        .args(["run", "--backend", "landlock", "--repo"])
        .arg(&h.repo)
        .args(["--", "sh", "-c", "awk '{print $4}' /proc/$PPID/stat"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(text(&out.stdout).trim(), pid.to_string());
}

/// The config file shapes every cage, so no cage may write it, even though ~/.config is
/// writable, and even when it does not exist yet (creating it would plant a policy).
#[test]
fn the_config_file_is_unwritable_from_every_cage() {
    for backend in ["landlock", "bwrap"] {
        for present in [true, false] {
            let (_k, root) = scratch("cfg");
            let h = build_home(&root);
            let dir = h.home.join(".config/jaula");
            if !present {
                fs::remove_dir_all(&dir).unwrap();
            }
            let cfg = dir.join("config.toml");
            let attack = format!(
                "mkdir -p '{d}' 2>/dev/null; printf '[cage]\\nenabled = false\\n' > '{c}' 2>/dev/null; \
                 printf 'x' >> '{c}' 2>/dev/null; mv '{d}' '{d}.old' 2>/dev/null; true",
                d = dir.display(),
                c = cfg.display()
            );
            let before = fs::read(&cfg).ok();
            let out = run_in(&h, &[], &["--backend", backend], &["sh", "-c", &attack]);
            assert_code(&out, 0, backend);
            assert_eq!(
                fs::read(&cfg).ok(),
                before,
                "{backend} present={present}: the config changed"
            );
            assert!(
                !h.home.join(".config/jaula.old").exists(),
                "{backend}: the config dir was renamed"
            );
            // And the cage still allows its neighbours in ~/.config.
            let out = jaula_in(&h.home)
                .args(["run", "--backend", backend, "--repo"])
                .arg(&h.repo)
                .args(["--", "sh", "-c"])
                .arg(format!(
                    "printf y >> '{}'",
                    h.home.join(".config/x/y.conf").display()
                ))
                .output()
                .unwrap();
            assert_code(&out, 0, backend);
        }
    }
}

/// A pathname unix socket (docker.sock, a D-Bus bus, an ssh-agent) is a door to an uncaged
/// program. The socket gate refuses it in both backends unless the owner allows it by path,
/// and a seal wins over the allow (the allow is dropped with a warning).
#[test]
fn a_host_unix_socket_is_reachable_only_when_allowed_in_both_backends() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip_or_fail("python3 is not installed");
    }
    let (_k, root) = scratch("sock");
    let h = build_home(&root);
    let socket = root.join("outside/agent.sock");
    // Bound and listening: a connect lands in the backlog without an accept.
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let client = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect({:?})\n    print('CONNECTED')\nexcept OSError as e:\n    print('REFUSED', e.errno)\n",
        socket.display().to_string()
    );
    let attempt = |backend: &str, flags: &[&std::ffi::OsStr]| {
        let mut c = jaula_in(&h.home);
        c.args(["run", "--backend", backend, "--repo"]).arg(&h.repo);
        c.args(flags);
        let out = c.args(["--", "python3", "-c", &client]).output().unwrap();
        assert!(out.status.success(), "{backend}: {}", text(&out.stderr));
        (text(&out.stdout).trim().to_string(), text(&out.stderr))
    };
    // Control: the same client, uncaged, reaches the socket.
    let out = Command::new("python3")
        .args(["-c", &client])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout).trim(), "CONNECTED", "control");
    let allow: [&std::ffi::OsStr; 2] = ["--allow-unix-socket".as_ref(), socket.as_os_str()];
    let deny: [&std::ffi::OsStr; 2] = ["--deny".as_ref(), socket.as_os_str()];
    for backend in ["landlock", "bwrap"] {
        let (stdout, stderr) = attempt(backend, &[]);
        // A scratch tree beneath the host's /tmp is not in the bwrap view at all (its /tmp
        // is the window's own): the socket is then absent rather than refused.
        if backend == "bwrap" && root.starts_with("/tmp") {
            assert_eq!(
                stdout,
                format!("REFUSED {}", libc::ENOENT),
                "{backend}: {stderr}"
            );
        } else {
            assert_eq!(
                stdout,
                format!("REFUSED {}", libc::EACCES),
                "{backend}: {stderr}"
            );
            assert!(
                stderr.contains("jaula: refused connect to") && stderr.contains("agent.sock"),
                "{backend}: the refusal names the socket: {stderr}"
            );
        }
        assert_eq!(
            attempt(backend, &allow).0,
            "CONNECTED",
            "{backend}: allowed"
        );
        let (stdout, stderr) = attempt(backend, &[allow[0], allow[1], deny[0], deny[1]]);
        assert!(
            stdout.starts_with("REFUSED"),
            "{backend}: sealed wins: {stdout}"
        );
        assert!(
            stderr.contains("ignoring allowed unix socket"),
            "{backend}: the dropped allow is said: {stderr}"
        );
    }
}

/// The README's tmux launcher recipe, run as written with a stand-in `tmux` that records
/// what it was asked to start: a window starts caged in an existing repo, and none starts
/// when `line` refuses the repo (missing) or no cage is in force (`CITY_CAGE=0`), where
/// pasting `$(jaula line ...)` alone would have started the agent uncaged.
#[test]
fn the_readme_launcher_recipe_never_starts_a_window_uncaged() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap())
        .find(|code| code.contains("jaula line --repo"))
        .expect("the README has a launcher recipe");
    let first = block.lines().next().unwrap();
    assert!(first.starts_with("repo=~/src/myrepo;"), "{first}");
    let recipe = block.replacen("repo=~/src/myrepo;", "repo=\"$TEST_REPO\";", 1);
    let (_k, root) = scratch("readme-recipe");
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(jaula(), bin.join("jaula")).unwrap();
    let repo = root.join("home/src/myrepo");
    fs::create_dir_all(&repo).unwrap();
    let script = format!("tmux() {{ echo \"TMUX-CALLED $*\"; }}\n{recipe}");
    let run = |repo: &Path, env: &[(&str, &str)]| {
        Command::new("/bin/bash")
            .args(["-c", &script])
            .env_clear()
            .env("PATH", format!("{}:{HOST_PATH}", bin.display()))
            .env("HOME", root.join("home"))
            .env("TEST_REPO", repo)
            .envs(env.iter().copied())
            .output()
            .unwrap()
    };
    let both = |o: &Output| format!("{}{}", text(&o.stdout), text(&o.stderr));
    let started = run(&repo, &[]);
    let out = both(&started);
    assert!(started.status.success(), "{out}");
    assert!(
        out.contains(&format!("TMUX-CALLED new-window -c {}", repo.display()))
            && out.contains(" run ")
            && out.trim_end().ends_with("-- claude"),
        "{out}"
    );
    for (why, repo, env) in [
        ("a missing repo", root.join("home/src/typo"), vec![]),
        ("CITY_CAGE=0", repo.clone(), vec![("CITY_CAGE", "0")]),
    ] {
        let refused = run(&repo, &env);
        let out = both(&refused);
        assert_eq!(refused.status.code(), Some(1), "{why}: {out}");
        assert!(!out.contains("TMUX-CALLED"), "{why}: {out}");
        assert!(out.contains("not starting myrepo"), "{why}: {out}");
    }
}
