//! What jaula says when it cannot give the cage asked for, refuses a repo, or a command in
//! the cage fails for a reason the cage causes (issue 23): one `jaula:` line each, naming
//! the missing layer or the hidden file and a remedy that keeps a cage. Live, on both Linux
//! backends, as root and as uid 65534.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use jaula_testkit::output::text;

const USERS: [User; 2] = [User::Root, User::Nobody];

/// `jaula ARGS` as `user`, in `dir`, with `home` as HOME and `path` as PATH.
fn jaula_as(user: User, home: &Path, dir: &Path, path: &str, args: &[&str]) -> Output {
    let mut cmd = jaula_in(home, dir);
    cmd.env("PATH", path).args(args);
    user.apply(&mut cmd);
    cmd.output().unwrap()
}

/// `jaula run FLAGS --repo R --home H -- ARGV` as `user`, with `path` as PATH.
fn run_as(
    user: User,
    (home, repo): (&Path, &Path),
    path: &str,
    flags: &[&str],
    argv: &[&str],
) -> Output {
    let (home_s, repo_s) = (home.to_str().unwrap(), repo.to_str().unwrap());
    let mut args = vec!["run"];
    args.extend_from_slice(flags);
    args.extend(["--repo", repo_s, "--home", home_s, "--"]);
    args.extend_from_slice(argv);
    jaula_as(user, home, repo, path, &args)
}

/// `out` succeeded, and said no line starting with `prefix`.
fn assert_ok_saying_nothing(out: &Output, prefix: &str, what: &str) {
    assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
    assert!(
        lines_starting(out, prefix).is_empty(),
        "{what}: {}",
        text(&out.stderr)
    );
}

/// The stderr lines of `out` that start with `prefix`.
fn lines_starting(out: &Output, prefix: &str) -> Vec<String> {
    jaula_testkit::output::lines_starting(&text(&out.stderr), prefix)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

const LANDLOCK_ALONE: &str = "jaula: caging with Landlock alone";

/// A directory holding only `bwrap` (a script printing `stderr_line` and failing), or
/// nothing at all: a PATH on which bubblewrap is missing or cannot build a namespace.
fn bin_dir(root: &Path, name: &str, failing_bwrap: Option<&str>) -> PathBuf {
    let bin = root.join(name);
    fs::create_dir_all(&bin).unwrap();
    if let Some(line) = failing_bwrap {
        let bwrap = bin.join("bwrap");
        fs::write(&bwrap, format!("#!/bin/sh\necho '{line}' >&2\nexit 1\n")).unwrap();
        fs::set_permissions(&bwrap, fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// With bubblewrap off PATH, `auto` cages with Landlock alone and says so once, naming
/// the missing layers, the package and the flag that silences it; `--backend landlock`
/// is silent; `--backend bwrap` refuses with the package first and running uncaged last.
#[test]
fn a_missing_bubblewrap_is_said_once_with_the_package_and_the_flag() {
    for user in USERS {
        if !cage_here(Backend::Landlock, user) {
            continue;
        }
        let (_k, root, home, repo) = bare_tree("refuse-nobwrap-");
        let bin = bin_dir(&root, "empty-bin", None);
        chown_tree(&root, user.uid());
        let path = bin.to_str().unwrap();
        let out = run_as(user, (&home, &repo), path, &[], &["/usr/bin/true"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{user:?}: {}",
            text(&out.stderr)
        );
        let said = lines_starting(&out, LANDLOCK_ALONE);
        assert_eq!(said.len(), 1, "{user:?}: {}", text(&out.stderr));
        for part in [
            "no private /tmp",
            "no PID namespace",
            "names of sealed entries stay visible",
            "bwrap not found on PATH",
            "apt-get install bubblewrap",
            "--backend landlock",
        ] {
            assert!(said[0].contains(part), "{user:?}: {part}: {}", said[0]);
        }
        let out = run_as(
            user,
            (&home, &repo),
            path,
            &["--backend", "landlock"],
            &["/usr/bin/true"],
        );
        assert_ok_saying_nothing(&out, LANDLOCK_ALONE, &format!("{user:?}"));
        let out = run_as(
            user,
            (&home, &repo),
            path,
            &["--backend", "bwrap"],
            &["/usr/bin/true"],
        );
        assert_eq!(out.status.code(), Some(126), "{user:?}");
        let err = text(&out.stderr);
        let install = err.find("apt-get install bubblewrap").expect(&err);
        let landlock = err.find("--backend landlock").expect(&err);
        let uncaged = err.find("--allow-uncaged").expect(&err);
        assert!(install < uncaged && landlock < uncaged, "{user:?}: {err}");
        assert!(err.starts_with("jaula: refusing to run uncaged"), "{err}");
    }
}

/// bubblewrap installed but refused a user namespace: the line names the kernel switch,
/// not the package.
#[test]
fn a_bubblewrap_that_cannot_build_a_namespace_names_the_kernel_switch() {
    for user in USERS {
        if !cage_here(Backend::Landlock, user) {
            continue;
        }
        let (_k, root, home, repo) = bare_tree("refuse-nouserns-");
        let bin = bin_dir(
            &root,
            "refusing-bin",
            Some("bwrap: No permissions to create new namespace"),
        );
        chown_tree(&root, user.uid());
        let path = bin.to_str().unwrap();
        let out = run_as(user, (&home, &repo), path, &[], &["/usr/bin/true"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{user:?}: {}",
            text(&out.stderr)
        );
        let said = lines_starting(&out, LANDLOCK_ALONE);
        assert_eq!(said.len(), 1, "{user:?}: {}", text(&out.stderr));
        assert!(
            said[0].contains("could not build a namespace")
                && said[0].contains("No permissions to create new namespace")
                && said[0].contains("unprivileged user namespaces")
                && said[0].contains("--backend landlock"),
            "{user:?}: {}",
            said[0]
        );
        assert!(!said[0].contains("apt-get"), "{}", said[0]);
    }
}

/// Where bubblewrap works, `auto` takes its view and says nothing about Landlock alone.
#[test]
fn a_working_bubblewrap_says_nothing() {
    for user in USERS {
        if !cage_here(Backend::Bwrap, user) {
            continue;
        }
        let (_k, root, home, repo) = bare_tree("refuse-bwrap-ok-");
        chown_tree(&root, user.uid());
        let out = run_as(user, (&home, &repo), HOST_PATH, &[], &["/usr/bin/true"]);
        assert_ok_saying_nothing(&out, LANDLOCK_ALONE, &format!("{user:?}"));
    }
}

/// From the home with no `--repo`: `explain` and `run` refuse with the `jaula:` prefix and
/// say to pass `--repo`; `line` and `profile` refusals carry the prefix too; `check --repo
/// HOME` answers unavailable, as `run` would, and still exits 1 with its first line.
#[test]
fn an_unsafe_working_directory_is_refused_alike_with_the_prefix_and_the_flag() {
    for user in USERS {
        let (_k, root, home, _repo) = bare_tree("refuse-home-");
        chown_tree(&root, user.uid());
        let home_s = home.to_str().unwrap();
        let expected = format!(
            "jaula: the working directory is unsafe to cage: {home_s} is the home directory"
        );
        let out = jaula_as(user, &home, &home, HOST_PATH, &["explain", "/etc/hostname"]);
        assert_eq!(out.status.code(), Some(1), "{user:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with(&expected), "{user:?}: {err}");
        assert!(err.contains("pass --repo DIR"), "{err}");
        let out = jaula_as(
            user,
            &home,
            &home,
            HOST_PATH,
            &["run", "--", "/usr/bin/true"],
        );
        assert_eq!(out.status.code(), Some(126), "{user:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with(&expected), "{user:?}: {err}");
        assert!(
            err.contains("cd into the repo, or pass --repo DIR"),
            "{err}"
        );
        for cmd in ["line", "profile"] {
            let out = jaula_as(user, &home, &home, HOST_PATH, &[cmd, "--repo", home_s]);
            assert_eq!(out.status.code(), Some(1), "{cmd} {user:?}");
            assert!(
                text(&out.stderr).starts_with(&expected),
                "{cmd} {user:?}: {}",
                text(&out.stderr)
            );
        }
        let out = jaula_as(user, &home, &home, HOST_PATH, &["check", "--repo", home_s]);
        assert_eq!(out.status.code(), Some(1), "{user:?}");
        let stdout = text(&out.stdout);
        assert_eq!(
            stdout.lines().next(),
            Some("cage unavailable on this machine")
        );
        assert!(
            stdout.contains("jaula run refuses the repo") && stdout.contains(home_s),
            "{stdout}"
        );
        // `--repo is required` stays word for word, the one message launchers match.
        let out = jaula_as(user, &home, &home, HOST_PATH, &["profile"]);
        assert_eq!(text(&out.stderr).trim(), "--repo is required");
    }
}

/// `check --repo` with a repo `run` accepts answers as `check` alone does.
#[test]
fn check_with_a_good_repo_answers_as_without_one() {
    let (_k, _root, home, repo) = bare_tree("refuse-check-ok-");
    let repo_s = repo.to_str().unwrap();
    let alone = jaula_as(User::Root, &home, &repo, HOST_PATH, &["check"]);
    let with = jaula_as(
        User::Root,
        &home,
        &repo,
        HOST_PATH,
        &["check", "--repo", repo_s],
    );
    assert_eq!(alone.status.code(), with.status.code());
    assert_eq!(
        text(&alone.stdout).lines().next(),
        text(&with.stdout).lines().next()
    );
}

/// A file on the host's /tmp, readable by every user, removed at drop.
fn host_tmp_script(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("jaula-refuse-")
        .tempdir_in("/tmp")
        .unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let script = fs::canonicalize(dir.path()).unwrap().join("work.sh");
    fs::write(&script, body).unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o644)).unwrap();
    (dir, script)
}

const PRIVATE_TMP: &str = "which the cage does not see: it has a private /tmp of its own";

/// `bash /tmp/.../work.sh`: in bubblewrap's view the shell finds nothing (127; dash says
/// 2) and jaula names the private /tmp and the flag; `--allow-write` for the file runs it.
/// Landlock alone shares the host's /tmp: it runs, and nothing is said.
#[test]
fn a_script_on_the_host_tmp_names_the_private_tmp_when_not_found() {
    let (_tmp, script) = host_tmp_script("echo ran-from-tmp\n");
    let script_s = script.to_str().unwrap();
    each_cage(|backend, user| {
        let flags = ["--backend", backend.name()];
        // A tree each: the `--allow-write` run leaves its mount point, an empty file,
        // in the window's private /tmp, which the next run would find.
        for (shell, code) in [("bash", 127), ("sh", 2)] {
            let (_k, root, home, repo) = bare_tree("refuse-tmp-");
            chown_tree(&root, user.uid());
            let out = run_as(user, (&home, &repo), HOST_PATH, &flags, &[shell, script_s]);
            let err = text(&out.stderr);
            let said = lines_starting(&out, "jaula: the command exited");
            if backend == Backend::Landlock {
                assert_eq!(out.status.code(), Some(0), "{user:?} {shell}: {err}");
                assert_eq!(text(&out.stdout).trim(), "ran-from-tmp");
                assert!(said.is_empty(), "{err}");
                continue;
            }
            assert_eq!(out.status.code(), Some(code), "{user:?} {shell}: {err}");
            assert_eq!(said.len(), 1, "{user:?} {shell}: {err}");
            assert!(
                said[0].starts_with(&format!("jaula: the command exited {code}, and"))
                    && said[0].contains(script_s)
                    && said[0].contains(PRIVATE_TMP)
                    && said[0].contains(&format!("--allow-write {script_s}")),
                "{}",
                said[0]
            );
            let bound = ["--backend", "bwrap", "--allow-write", script_s];
            let out = run_as(user, (&home, &repo), HOST_PATH, &bound, &[shell, script_s]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{user:?}: {}",
                text(&out.stderr)
            );
            assert_eq!(text(&out.stdout).trim(), "ran-from-tmp");
        }
        // The same line under `--network allow`, whose launch leaves through the proxy's
        // launcher process.
        if backend == Backend::Bwrap {
            let (_k, root, home, repo) = bare_tree("refuse-tmp-allow-");
            chown_tree(&root, user.uid());
            let allow = ["--backend", "bwrap", "--network", "allow", "-q"];
            let out = run_as(user, (&home, &repo), HOST_PATH, &allow, &["bash", script_s]);
            if out.status.code() == Some(126) {
                skip_or_fail(&format!(
                    "--network allow as {user:?}: {}",
                    text(&out.stderr)
                ));
            } else {
                assert_eq!(
                    out.status.code(),
                    Some(127),
                    "{user:?}: {}",
                    text(&out.stderr)
                );
                assert_eq!(
                    lines_starting(&out, "jaula: the command exited 127").len(),
                    1,
                    "{user:?}: {}",
                    text(&out.stderr)
                );
            }
        }
        // A script that is missing everywhere: 127, and no word about /tmp.
        let (_k, root, home, repo) = bare_tree("refuse-tmp-");
        chown_tree(&root, user.uid());
        let absent = ["bash", "/tmp/jaula-refuse-absent/work.sh"];
        let out = run_as(user, (&home, &repo), HOST_PATH, &flags, &absent);
        assert_eq!(out.status.code(), Some(127), "{user:?}");
        assert!(
            !text(&out.stderr).contains(PRIVATE_TMP),
            "{}",
            text(&out.stderr)
        );
    });
}

const NOT_LOGGED_IN: &str = "so it will say \"Not logged in\"";

/// The login hint fires for `claude` behind `timeout` and behind a wrapper script, not
/// only for a bare `claude`; and not for a command that never starts it.
#[test]
fn the_login_hint_fires_for_a_wrapped_claude() {
    each_cage(|backend, user| {
        let (_k, root, home, repo) = bare_tree("refuse-claude-");
        fs::create_dir_all(home.join(".claude")).unwrap();
        fs::write(home.join(".claude/.credentials.json"), "{}").unwrap();
        let wrapper = repo.join("agent.sh");
        fs::write(&wrapper, "#!/bin/sh\nexec timeout 5 claude \"$@\"\n").unwrap();
        fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
        chown_tree(&root, user.uid());
        let flags = ["--backend", backend.name()];
        for argv in [
            &["timeout", "5", "claude", "-p", "hi"][..],
            &["./agent.sh", "-p", "hi"],
            &["sh", "-c", "claude -p hi"],
        ] {
            let out = run_as(user, (&home, &repo), HOST_PATH, &flags, argv);
            assert_eq!(
                lines_starting(&out, "jaula: claude: its login").len(),
                1,
                "{user:?} {backend:?} {argv:?}: {}",
                text(&out.stderr)
            );
            assert!(text(&out.stderr).contains(NOT_LOGGED_IN));
        }
        let out = run_as(user, (&home, &repo), HOST_PATH, &flags, &["/usr/bin/true"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(!text(&out.stderr).contains(NOT_LOGGED_IN));
    });
}

/// An expired access token is refused as expired, never as "-N s left".
#[test]
fn an_expired_token_is_said_to_be_expired() {
    for user in USERS {
        let (_k, root, home, repo) = bare_tree("refuse-token-");
        fs::create_dir_all(home.join(".claude")).unwrap();
        fs::write(
            home.join(".claude/.credentials.json"),
            r#"{"claudeAiOauth": {"accessToken": "sk-old", "expiresAt": 1000}}"#,
        )
        .unwrap();
        chown_tree(&root, user.uid());
        let out = run_as(
            user,
            (&home, &repo),
            HOST_PATH,
            &["--hand-access-token", "claude"],
            &["/usr/bin/true"],
        );
        assert_eq!(out.status.code(), Some(126), "{user:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(" s ago; run `claude` outside the cage"),
            "{err}"
        );
        assert!(err.contains("expired ") && !err.contains("s left"), "{err}");
        assert!(!err.contains("sk-old"), "{err}");
    }
}

const NETWORK_LINE: &str = "jaula: network none:";

/// `--quiet`, or config `run.quiet = true`, silences the network line at start; the
/// command's own output and status are untouched.
#[test]
fn quiet_silences_the_network_line() {
    each_cage(|backend, user| {
        let (_k, root, home, repo) = bare_tree("refuse-quiet-");
        let config = root.join("quiet.toml");
        fs::write(&config, "[run]\nquiet = true\n").unwrap();
        chown_tree(&root, user.uid());
        let base = ["--backend", backend.name(), "--network", "none"];
        let loud = run_as(user, (&home, &repo), HOST_PATH, &base, &["/usr/bin/true"]);
        if loud.status.code() != Some(0) {
            skip_or_fail(&format!(
                "--network none as {user:?} on {backend:?}: {}",
                text(&loud.stderr)
            ));
            return;
        }
        assert_eq!(
            lines_starting(&loud, NETWORK_LINE).len(),
            1,
            "{}",
            text(&loud.stderr)
        );
        let config_s = config.to_str().unwrap();
        for extra in [&["--quiet"][..], &["-q"], &["--config", config_s]] {
            let mut flags = base.to_vec();
            flags.extend_from_slice(extra);
            let out = run_as(user, (&home, &repo), HOST_PATH, &flags, &["/usr/bin/true"]);
            assert_ok_saying_nothing(&out, NETWORK_LINE, &format!("{extra:?}"));
        }
    });
}

/// `run --help` no longer shows `[default: window]` for `--window`, and names the
/// private /tmp's real default.
#[test]
fn window_help_names_the_real_default() {
    let out = common::jaula_output(&["run", "--help"]);
    let help = text(&out.stdout);
    assert!(!help.contains("[default: window]"), "{help}");
    assert!(
        help.contains("repo-<repo's name>-<hash of its path>"),
        "{help}"
    );
}

/// `explain` of a path that does not exist: the decision allows the read, Landlock has
/// no rule for it, and both lines say why.
#[test]
fn explain_says_why_landlock_parts_from_the_decision_on_an_absent_path() {
    let (_k, _root, home, repo) = bare_tree("refuse-explain-");
    let repo_s = repo.to_str().unwrap();
    let out = jaula_as(
        User::Root,
        &home,
        &repo,
        HOST_PATH,
        &["explain", "--repo", repo_s, "/jaula-nonexistent/zz"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("decision: allowed"), "{stdout}");
    let landlock = stdout
        .lines()
        .find(|l| l.starts_with("landlock:"))
        .unwrap_or_default();
    assert!(
        landlock.contains("denied")
            && landlock.contains("/jaula-nonexistent does not exist")
            && landlock.contains("grants only what exists when the cage starts"),
        "{landlock}"
    );
    assert!(
        stdout.contains("note:     landlock differs from the decision"),
        "{stdout}"
    );
}
