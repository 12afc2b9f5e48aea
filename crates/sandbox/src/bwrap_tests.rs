use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use jaula_policy::sources::BwrapHint;
use jaula_policy::{Access, EntryKind, FileRule, HostFs, Platform, Policy, PolicySpec};

use super::*;

// ── fixtures ────────────────────────────────────────────────────────────────────────

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let repo = home.join("src").join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    Fixture {
        _dir: dir,
        home,
        repo,
    }
}

/// The fixture, and the default policy over it.
fn default_policy() -> (Fixture, Policy) {
    let f = fixture();
    let p = policy(&f, |_| {});
    (f, p)
}

/// A Claude channel seat in the fixture's home, with its `.env` token written.
fn channel_seat(f: &Fixture) -> PathBuf {
    let seat = f.home.join(".claude/channels/seat1");
    std::fs::create_dir_all(&seat).unwrap();
    std::fs::write(seat.join(".env"), "t").unwrap();
    seat
}

fn policy(f: &Fixture, edit: impl FnOnce(&mut PolicySpec)) -> Policy {
    let mut spec = PolicySpec::with_defaults(Platform::Linux, f.home.clone(), f.repo.clone());
    edit(&mut spec);
    spec.resolve().unwrap()
}

/// A host described entry by entry: `true` for a directory.
#[derive(Default)]
struct FakeDisk(BTreeMap<PathBuf, bool>);

impl FakeDisk {
    fn dir(mut self, p: impl Into<PathBuf>) -> Self {
        self.0.insert(p.into(), true);
        self
    }
    fn file(mut self, p: impl Into<PathBuf>) -> Self {
        self.0.insert(p.into(), false);
        self
    }
    fn dirs<P: Into<PathBuf>>(self, ps: impl IntoIterator<Item = P>) -> Self {
        ps.into_iter().fold(self, Self::dir)
    }
    fn files<P: Into<PathBuf>>(self, ps: impl IntoIterator<Item = P>) -> Self {
        ps.into_iter().fold(self, Self::file)
    }
}

impl HostFs for FakeDisk {
    fn kind(&self, path: &Path) -> std::io::Result<Option<EntryKind>> {
        Ok(self.0.get(path).map(|&dir| {
            if dir {
                EntryKind::Directory
            } else {
                EntryKind::File
            }
        }))
    }
    // No links in these hosts: a path resolves to itself.
    fn resolved_kind(&self, path: &Path) -> std::io::Result<Option<EntryKind>> {
        self.kind(path)
    }
    fn list(&self, dir: &Path) -> std::io::Result<Vec<(OsString, EntryKind)>> {
        let mut out = Vec::new();
        for path in self.0.keys().filter(|p| p.parent() == Some(dir)) {
            if let (Some(name), Some(kind)) = (path.file_name(), self.kind(path)?) {
                out.push((name.to_os_string(), kind));
            }
        }
        Ok(out)
    }
}

fn os(s: &str) -> OsString {
    OsString::from(s)
}

/// Index of the operation `op` whose last argument is `dest`.
fn position(argv: &[OsString], op: &str, dest: &Path) -> Option<usize> {
    let arity = match op {
        "--tmpfs" | "--remount-ro" | "--dev" | "--proc" => 1,
        _ => 2,
    };
    (0..argv.len()).find(|&i| argv[i] == op && argv.get(i + arity).map(Path::new) == Some(dest))
}

fn must(argv: &[OsString], op: &str, dest: &Path) -> usize {
    position(argv, op, dest)
        .unwrap_or_else(|| panic!("{op} {} missing in {argv:?}", dest.display()))
}

// ── render_argv ─────────────────────────────────────────────────────────────────────

#[test]
fn starts_with_the_probe_base_and_never_binds_host_dev() {
    let (_f, p) = default_policy();
    let argv = render_argv(&p, &BwrapOptions::default(), &FakeDisk::default()).unwrap();
    assert_eq!(
        &argv[..8],
        &[
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--cap-drop",
            "ALL"
        ]
        .map(os)
    );
    assert_eq!(base_argv(&BwrapOptions::default()), argv[..8].to_vec());
    assert!(p.writable().iter().any(|w| w.path == Path::new("/dev")));
    assert_eq!(position(&argv, "--bind-try", Path::new("/dev")), None);
    // Every other writable root is bound, absent or not: bubblewrap's -try skips it.
    for w in p.writable().iter().filter(|w| w.path != Path::new("/dev")) {
        must(&argv, "--bind-try", &w.path);
    }
}

#[test]
fn order_is_writable_claude_json_protected_seals_channels_token_remounts_options() {
    let f = fixture();
    let seat = channel_seat(&f);
    let broker = f.home.join(".agents-city/.runtime/broker");
    let token = broker.join("w1.token");
    let p = policy(&f, |s| s.token_file = Some(token.clone()));
    let config = f.home.join(".config/jaula");
    let disk = FakeDisk::default()
        .dir(f.home.join(".ssh"))
        .file(f.home.join(".git-credentials"))
        .dir(&broker)
        .file(&token)
        .dir(&config)
        .file(seat.join(".env"));
    let options = BwrapOptions {
        proc_fs: true,
        die_with_parent: true,
        ..BwrapOptions::default()
    };
    let argv = render_argv(&p, &options, &disk).unwrap();

    let last_writable = p
        .writable()
        .iter()
        .filter(|w| w.path != Path::new("/dev"))
        .map(|w| must(&argv, "--bind-try", &w.path))
        .max()
        .unwrap();
    let claude = must(&argv, "--bind-try", &f.home.join(".claude.json"));
    let protected = must(&argv, "--ro-bind-try", &config);
    let ssh = must(&argv, "--tmpfs", &f.home.join(".ssh"));
    let creds = must(&argv, "--ro-bind-try", &f.home.join(".git-credentials"));
    let broker_tmpfs = must(&argv, "--tmpfs", &broker);
    let channel = must(&argv, "--ro-bind-try", &seat.join(".env"));
    let token_bind = must(&argv, "--ro-bind-try", &token);
    let remount_ssh = must(&argv, "--remount-ro", &f.home.join(".ssh"));
    let remount_broker = must(&argv, "--remount-ro", &broker);

    assert!(last_writable < claude, "{argv:?}");
    assert!(claude < protected);
    assert!(protected < ssh.min(creds).min(broker_tmpfs));
    assert!(ssh.max(creds).max(broker_tmpfs) < channel);
    assert!(channel < token_bind);
    // bubblewrap creates the token's mount point inside the broker tmpfs: it must still be
    // writable then (a live run aborts with EROFS otherwise).
    assert!(token_bind < remount_ssh.min(remount_broker));
    assert_eq!(argv[channel + 1], "/dev/null");
    assert_eq!(argv[creds + 1], "/dev/null");
    assert_eq!(argv[token_bind + 1], token.as_os_str());
    assert_eq!(
        &argv[argv.len() - 4..],
        &["--unshare-pid", "--proc", "/proc", "--die-with-parent"].map(os)
    );
}

#[test]
fn the_pid_namespace_is_the_only_option_on_by_default_and_options_only_append_flags() {
    let (_f, p) = default_policy();
    let disk = FakeDisk::default();
    // A default cage has its own PID namespace and /proc: host processes stay unseen.
    let default = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    assert_eq!(
        &default[default.len() - 3..],
        &["--unshare-pid", "--proc", "/proc"].map(os)
    );
    let no_pid = BwrapOptions {
        proc_fs: false,
        ..BwrapOptions::default()
    };
    let plain = render_argv(&p, &no_pid, &disk).unwrap();
    assert!(!plain
        .iter()
        .any(|a| a == "--proc" || a == "--die-with-parent"));
    let pid = BwrapOptions {
        proc_fs: true,
        ..BwrapOptions::default()
    };
    let with_pid = render_argv(&p, &pid, &disk).unwrap();
    assert_eq!(with_pid[..plain.len()], plain[..]);
    assert_eq!(
        &with_pid[plain.len()..],
        &["--unshare-pid", "--proc", "/proc"].map(os)
    );
    let die = BwrapOptions {
        die_with_parent: true,
        proc_fs: false,
        program: os("/opt/bin/bwrap"),
        ..BwrapOptions::default()
    };
    let with_die = render_argv(&p, &die, &disk).unwrap();
    assert_eq!(with_die[0], "/opt/bin/bwrap");
    assert_eq!(with_die.last().unwrap(), "--die-with-parent");
    assert_eq!(with_die.len(), plain.len() + 1);
}

#[test]
fn the_steering_capability_is_added_after_the_base_drops_all_and_is_modelled() {
    let (_f, p) = default_policy();
    let disk = FakeDisk::default();
    let allow = BwrapOptions {
        unshare_net: true,
        net_bind_service: true,
        ..BwrapOptions::default()
    };
    let argv = render_argv(&p, &allow, &disk).unwrap();
    assert_eq!(
        &argv[argv.len() - 3..],
        &["--unshare-net", "--cap-add", "CAP_NET_BIND_SERVICE"].map(os)
    );
    // bubblewrap applies --cap-drop and --cap-add in order: the add must come after.
    let drop_all = argv.iter().position(|a| a == "--cap-drop").unwrap();
    assert_eq!(argv[drop_all + 1], "ALL");
    assert!(drop_all < argv.len() - 2);
    assert!(MountView::from_argv(&argv, &disk).is_ok());
    let default = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    assert!(!default.iter().any(|a| a == "--cap-add"));
}

/// A protected path no writable mount touches (the read-only home's `~/.bashrc`) gets no
/// mount of its own: `--ro-bind / /` already keeps it read-only, and every bind costs
/// bubblewrap a read of /proc/self/mountinfo. One at, beneath or above a writable mount
/// keeps its read-only bind (bwrap_live's probe matrix proves both live).
#[test]
fn protected_paths_are_bound_only_where_a_writable_mount_touches_them() {
    // Not under /tmp, a writable root of the view that would touch every path beneath it.
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let f = Fixture {
        home: root.join("home"),
        repo: root.join("home/src/repo"),
        _dir: dir,
    };
    std::fs::create_dir_all(f.repo.join(".git")).unwrap();
    std::fs::write(f.repo.join(".git/config"), "").unwrap();
    let p = policy(&f, |_| {});
    let bashrc = f.home.join(".bashrc");
    let gitconfig = f.home.join(".gitconfig");
    let cargo_config = f.home.join(".cargo/config.toml");
    let jaula_config = f.home.join(".config/jaula");
    let git_config = f.repo.join(".git/config");
    let disk = FakeDisk::default()
        .files([&bashrc, &gitconfig, &cargo_config, &git_config])
        .dirs([&jaula_config, &f.repo.join(".git")]);
    for protected in [
        &bashrc,
        &gitconfig,
        &cargo_config,
        &jaula_config,
        &git_config,
    ] {
        assert!(
            p.protected().iter().any(|pr| &pr.path == protected),
            "{} is not protected by default",
            protected.display()
        );
    }
    let argv = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    assert_eq!(position(&argv, "--ro-bind-try", &bashrc), None, "{argv:?}");
    assert_eq!(
        position(&argv, "--ro-bind-try", &gitconfig),
        None,
        "{argv:?}"
    );
    must(&argv, "--ro-bind-try", &cargo_config);
    must(&argv, "--ro-bind-try", &jaula_config);
    must(&argv, "--ro-bind-try", &git_config);

    // A writable root beneath a protected directory of the read-only home (`~/.vim`): the
    // bind stays, and still covers the root beneath as before.
    let vim = f.home.join(".vim");
    let cache = vim.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let p = policy(&f, |s| s.extra_writable.push(cache.clone()));
    assert!(p.writable().iter().any(|w| w.path == cache));
    let argv = render_argv(&p, &BwrapOptions::default(), &disk.dir(&vim)).unwrap();
    assert!(must(&argv, "--bind-try", &cache) < must(&argv, "--ro-bind-try", &vim));
    assert_eq!(position(&argv, "--ro-bind-try", &bashrc), None, "{argv:?}");
}

#[test]
fn only_existing_seals_protected_paths_and_channel_tokens_are_rendered() {
    let f = fixture();
    let seat = channel_seat(&f);
    let p = policy(&f, |_| {});
    assert!(p.file_rules().iter().any(|r| matches!(
        r,
        FileRule::SealedPattern { existing, .. } if *existing == [seat.join(".env")]
    )));
    // The fake disk says nothing exists: the channel token vanished after resolve.
    let argv = render_argv(&p, &BwrapOptions::default(), &FakeDisk::default()).unwrap();
    assert!(!argv
        .iter()
        .any(|a| a == "--tmpfs" || a == "/dev/null" || a == "--ro-bind-try"));
    for s in p.sealed() {
        assert!(
            !argv.iter().any(|a| a == s.path.as_os_str()),
            "{:?}",
            s.path
        );
    }
    for pr in p.protected() {
        assert_eq!(position(&argv, "--ro-bind-try", &pr.path), None);
    }
}

#[test]
fn a_seal_is_rendered_by_what_the_disk_holds() {
    let (f, p) = default_policy();
    let netrc = f.home.join(".netrc"); // declared a file
    let kube = f.home.join(".kube"); // declared a directory
    let disk = FakeDisk::default().dir(&netrc).file(&kube);
    let argv = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    // A declared file that is a directory: /dev/null cannot be bound on a directory, so it
    // gets the read-only tmpfs, which hides its entries too.
    must(&argv, "--tmpfs", &netrc);
    must(&argv, "--remount-ro", &netrc);
    assert_eq!(position(&argv, "--ro-bind-try", &netrc), None);
    // A declared directory that is a file: /dev/null covers all of it.
    let i = must(&argv, "--ro-bind-try", &kube);
    assert_eq!(argv[i + 1], "/dev/null");
    assert_eq!(position(&argv, "--tmpfs", &kube), None);

    let view = MountView::from_argv(&argv, &disk).unwrap();
    assert!(!view.effect(&netrc.join("inner"), Access::Read).reaches_host);
    assert!(p.decide(&netrc.join("inner"), Access::Read).allowed);
    assert!(!view.effect(&kube, Access::Read).reaches_host);
}

#[test]
fn an_owner_seal_on_claude_json_wins_over_its_writable_bind() {
    let f = fixture();
    let claude = f.home.join(".claude.json");
    std::fs::write(&claude, "{}").unwrap();
    let p = policy(&f, |s| s.extra_sealed.push(claude.clone()));
    let disk = FakeDisk::default().file(&claude);
    let argv = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    let bind = must(&argv, "--bind-try", &claude);
    let seal = must(&argv, "--ro-bind-try", &claude);
    assert!(bind < seal);
    assert_eq!(argv[seal + 1], "/dev/null");
    assert!(!p.decide(&claude, Access::Write).allowed);
    let effect = view_effect(&p, &BwrapOptions::default(), &disk, &claude, Access::Write).unwrap();
    assert_eq!(
        effect,
        ViewEffect {
            reaches_host: false,
            op: "--ro-bind-try /dev/null ~/.claude.json".into()
        }
    );
}

#[test]
fn non_utf8_paths_pass_through_and_nul_bytes_are_refused() {
    let f = fixture();
    let odd = f.home.join(OsStr::from_bytes(b"caf\xe9"));
    let p = policy(&f, |s| s.extra_writable.push(odd.clone()));
    let argv = render_argv(&p, &BwrapOptions::default(), &FakeDisk::default()).unwrap();
    must(&argv, "--bind-try", &odd);
    let line = shell_join(&argv);
    let quoted = [b"'".as_slice(), odd.as_os_str().as_bytes(), b"'"].concat();
    assert!(line.windows(quoted.len()).any(|w| w == quoted));

    let nul = f.home.join(OsStr::from_bytes(b"bad\0name"));
    let p = policy(&f, |s| s.extra_sealed.push(nul.clone()));
    let disk = FakeDisk::default().file(&nul);
    let err = render_argv(&p, &BwrapOptions::default(), &disk).unwrap_err();
    assert_eq!(
        err,
        BwrapError::NulByte {
            what: "sealed root",
            path: nul
        }
    );
}

#[test]
fn an_empty_program_is_refused() {
    let (_f, p) = default_policy();
    let options = BwrapOptions {
        program: OsString::new(),
        ..BwrapOptions::default()
    };
    assert_eq!(
        render_argv(&p, &options, &FakeDisk::default()),
        Err(BwrapError::EmptyProgram)
    );
}

// ── the view model ──────────────────────────────────────────────────────────────────

#[test]
fn the_view_names_the_governing_operation() {
    let f = fixture();
    let broker = f.home.join(".agents-city/.runtime/broker");
    let token = broker.join("w1.token");
    let p = policy(&f, |s| s.token_file = Some(token.clone()));
    let ssh = f.home.join(".ssh");
    let cargo = f.home.join(".cargo");
    let disk = FakeDisk::default()
        .dirs([&ssh, &cargo, &broker, &f.repo, &f.home.join(".agents-city")])
        .file(&token);
    let o = BwrapOptions::default();
    let effect = |path: &Path, access| view_effect(&p, &o, &disk, path, access).unwrap();

    let e = effect(&ssh.join("id_ed25519"), Access::Read);
    assert_eq!(e.op, "--tmpfs ~/.ssh, --remount-ro ~/.ssh");
    assert!(!e.reaches_host);

    let e = effect(&f.home.join(".bashrc"), Access::Read);
    assert_eq!((e.reaches_host, e.op.as_str()), (true, "--ro-bind / /"));
    assert!(!effect(&f.home.join(".bashrc"), Access::Write).reaches_host);

    let e = effect(&f.repo.join("new.rs"), Access::Create);
    assert_eq!(
        (e.reaches_host, e.op.as_str()),
        (true, "--bind-try ~/src/repo ~/src/repo")
    );

    // An absent sealed file inside a writable root: the parent's bind governs the create.
    let e = effect(&cargo.join("credentials"), Access::Create);
    assert_eq!(
        (e.reaches_host, e.op.as_str()),
        (true, "--bind-try ~/.cargo ~/.cargo")
    );
    assert!(!p.decide(&cargo.join("credentials"), Access::Create).allowed);

    let e = effect(&token, Access::Read);
    assert!(e.reaches_host);
    assert_eq!(e.op, "--ro-bind-try ~/.agents-city/.runtime/broker/w1.token ~/.agents-city/.runtime/broker/w1.token");
    assert!(!effect(&token, Access::Write).reaches_host);
    assert!(!effect(&broker.join("w2.token"), Access::Read).reaches_host);

    // An absent writable root is skipped by bind-try: the read-only / governs it.
    let kimi = f.home.join(".kimi");
    let e = effect(&kimi, Access::Create);
    assert_eq!((e.reaches_host, e.op.as_str()), (false, "--ro-bind / /"));
    assert!(p.decide(&kimi, Access::Create).allowed);

    let e = effect(Path::new("/dev/shm/x"), Access::Create);
    assert_eq!((e.reaches_host, e.op.as_str()), (false, "--dev /dev"));
}

#[test]
fn the_view_refuses_what_it_cannot_model() {
    let argv = ["bwrap", "--ro-bind", "/", "/", "--overlay-src", "/x"].map(os);
    assert_eq!(
        MountView::from_argv(&argv, &FakeDisk::default()).unwrap_err(),
        BwrapError::UnknownArgument {
            arg: os("--overlay-src"),
            index: 4
        }
    );
    let argv = ["bwrap", "--ro-bind", "/"].map(os);
    assert!(matches!(
        MountView::from_argv(&argv, &FakeDisk::default()),
        Err(BwrapError::MissingArgument { index: 1, .. })
    ));
}

// ── quoting ─────────────────────────────────────────────────────────────────────────

#[test]
fn quoting_follows_shlex_rules() {
    let q = |s: &[u8]| shell_quote(s).into_owned();
    assert_eq!(q(b""), b"''");
    assert_eq!(
        q(b"/home/a_b-c/.x@y%z+w=v:u,t"),
        b"/home/a_b-c/.x@y%z+w=v:u,t"
    );
    assert_eq!(q(b"a b"), b"'a b'");
    assert_eq!(q(b"it's"), b"'it'\"'\"'s'");
    assert_eq!(q(b"~/x"), b"'~/x'");
    assert_eq!(q("ñ".as_bytes()), "'ñ'".as_bytes());
    assert_eq!(shell_join(&[os("a"), os(""), os("b c")]), b"a '' 'b c'");
    assert_eq!(shell_join(&[]), b"");
}

fn python3_or_skip() -> bool {
    match Command::new("python3").arg("-c").arg("pass").status() {
        Ok(s) if s.success() => true,
        _ if std::env::var("CI").as_deref() == Ok("true") => panic!("python3 is required under CI"),
        _ => {
            eprintln!("skipping: python3 not available to compare with shlex.join");
            false
        }
    }
}

#[test]
fn shell_join_is_byte_for_byte_python_shlex_join() {
    if !python3_or_skip() {
        return;
    }
    let mut args: Vec<OsString> = [
        "",
        "bwrap",
        "--ro-bind",
        "/",
        "a b",
        "'",
        "''",
        "a'b",
        "\"",
        "$HOME",
        "~",
        "*",
        "x\ny",
        "\t",
        "ñandú",
        "日本",
        "-",
        "@%+=:,./_-",
        "a\\b",
        "!",
        "#",
        "{}",
        "[]",
        "é'é",
    ]
    .map(os)
    .to_vec();
    args.push(OsString::from_vec(b"caf\xe9".to_vec()));
    args.push(OsString::from_vec(b"\xff\xfe'".to_vec()));
    // Pseudo-random bytes 1..=255 (argv cannot carry NUL), biased to the boundary bytes.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..400 {
        let len = (next() % 12) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| match next() % 4 {
                0 => b"'@%+=:,./_- \"\\$`"[(next() % 16) as usize],
                1 => (next() % 255 + 1) as u8,
                _ => b"abcXYZ019"[(next() % 9) as usize],
            })
            .collect();
        args.push(OsString::from_vec(bytes));
    }
    let out = Command::new("python3")
        .env("PYTHONUTF8", "1")
        .env("LC_ALL", "C.UTF-8")
        .arg("-c")
        .arg(
            "import os, shlex, sys; sys.stdout.buffer.write(os.fsencode(shlex.join(sys.argv[1:])))",
        )
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&shell_join(&args)),
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(shell_join(&args), out.stdout);
}

// ── probe ───────────────────────────────────────────────────────────────────────────

/// A directory holding a fake `bwrap` with the given shell body.
fn fake_bwrap(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bin = std::fs::canonicalize(dir.path()).unwrap();
    let program = bin.join("bwrap");
    std::fs::write(&program, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, program)
}

/// The probe, run for real, of the `program` it finds on a `PATH` that starts with a
/// directory that does not exist.
fn probe_found(program: &Path, options: &BwrapOptions) -> Availability {
    let path = path_of(program);
    probe_with(
        BwrapHint::Probe,
        options,
        Some(&path),
        Duration::from_secs(30),
    )
}

fn path_of(program: &Path) -> OsString {
    let mut v = OsString::from("/nonexistent-jaula:");
    v.push(program.parent().unwrap());
    v
}

#[test]
fn declared_not_working_is_unavailable_without_looking() {
    let (_d, program) = fake_bwrap("exit 0");
    let a = probe_with(
        BwrapHint::DoesNotWork,
        &BwrapOptions::default(),
        Some(&path_of(&program)),
        Duration::from_secs(5),
    );
    assert_eq!(a, Availability::Unavailable(Unavailable::Declared));
    assert!(!a.is_available());
    assert!(a.reason().contains("CITY_CAGE_BWRAP=0"));
}

#[test]
fn declared_working_still_requires_the_program_on_path() {
    // The fake would fail a real probe: a declared hint must not run it.
    let (_d, program) = fake_bwrap("exit 7");
    let o = BwrapOptions::default();
    let t = Duration::from_secs(5);
    let a = probe_with(BwrapHint::Works, &o, Some(&path_of(&program)), t);
    assert_eq!(
        a,
        Availability::Available {
            program: program.clone(),
            basis: AvailableBasis::Declared
        }
    );
    let a = probe_with(
        BwrapHint::Works,
        &o,
        Some(OsStr::new("/nonexistent-jaula")),
        t,
    );
    assert_eq!(
        a,
        Availability::Unavailable(Unavailable::NotFound {
            program: os("bwrap")
        })
    );
    assert_eq!(a.program(), None);
    assert!(probe_with(BwrapHint::Works, &o, None, t)
        .program()
        .is_none());
}

#[test]
fn relative_path_entries_are_never_searched() {
    let (d, program) = fake_bwrap("exit 0");
    // The same directory, spelled relative to the working directory: were it searched,
    // whoever controls the working directory (an agent's repo) would choose the binary.
    let cwd = std::env::current_dir().unwrap();
    let mut relative = PathBuf::new();
    for _ in cwd.components().skip(1) {
        relative.push("..");
    }
    relative.push(d.path().strip_prefix("/").unwrap());
    assert!(relative.is_relative());
    assert!(std::fs::metadata(relative.join("bwrap")).unwrap().is_file());
    assert_eq!(
        find_program(OsStr::new("bwrap"), Some(relative.as_os_str())),
        None
    );
    // A non-executable file is passed over for the next entry.
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("bwrap"), "").unwrap();
    let mut path = plain.path().as_os_str().to_owned();
    path.push(":");
    path.push(d.path());
    assert_eq!(
        find_program(OsStr::new("bwrap"), Some(&path)),
        Some(d.path().join("bwrap"))
    );
    // A path with a slash is used as given.
    assert_eq!(
        find_program(program.as_os_str(), None),
        Some(program.clone())
    );
}

#[test]
fn probing_runs_exactly_the_base_flags_plus_true() {
    let (d, program) = fake_bwrap(r#"printf '%s\n' "$@" > "$(dirname "$0")/args""#);
    let a = probe_found(
        &program,
        &BwrapOptions {
            proc_fs: false,
            ..BwrapOptions::default()
        },
    );
    assert_eq!(
        a,
        Availability::Available {
            program,
            basis: AvailableBasis::Probed
        }
    );
    let args = std::fs::read_to_string(d.path().join("args")).unwrap();
    assert_eq!(
        args,
        "--ro-bind\n/\n/\n--dev\n/dev\n--cap-drop\nALL\ntrue\n"
    );

    let (d, program) = fake_bwrap(r#"printf '%s\n' "$@" > "$(dirname "$0")/args""#);
    let o = BwrapOptions {
        proc_fs: true,
        ..BwrapOptions::default()
    };
    let a = probe_found(&program, &o);
    assert!(a.is_available());
    let args = std::fs::read_to_string(d.path().join("args")).unwrap();
    assert_eq!(
        args,
        "--ro-bind\n/\n/\n--dev\n/dev\n--cap-drop\nALL\n--unshare-pid\n--proc\n/proc\ntrue\n"
    );
}

#[test]
fn a_failed_probe_reports_status_and_first_stderr_line() {
    let (_d, program) = fake_bwrap(
        "echo >&2; echo 'bwrap: setting up uid map: Permission denied' >&2; echo second >&2; exit 1",
    );
    let a = probe_found(&program, &BwrapOptions::default());
    assert_eq!(
        a,
        Availability::Unavailable(Unavailable::Failed {
            program: program.clone(),
            status: "exit status: 1".into(),
            stderr: "bwrap: setting up uid map: Permission denied".into(),
        })
    );
    assert_eq!(a.program(), Some(program.as_path()));
    assert!(a.reason().ends_with("Permission denied"), "{}", a.reason());
}

#[test]
fn a_program_that_cannot_start_is_reported() {
    // Executable bit set, but neither ELF nor a #! script: execve fails with ENOEXEC.
    let (_d, program) = fake_bwrap("");
    std::fs::write(&program, b"\x7fELF-not-really").unwrap();
    let a = probe_found(&program, &BwrapOptions::default());
    assert!(
        matches!(&a, Availability::Unavailable(Unavailable::Spawn { program: p, .. }) if *p == program),
        "{a:?}"
    );
}

#[test]
fn a_hanging_probe_is_killed_at_the_deadline() {
    // The fake records its pid, then blocks forever reading a FIFO nobody writes.
    let (d, program) =
        fake_bwrap(r#"echo $$ > "$(dirname "$0")/pid"; exec 3<"$(dirname "$0")/fifo"; exit 0"#);
    let fifo = d.path().join("fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let timeout = Duration::from_millis(300);
    let a = probe_with(
        BwrapHint::Probe,
        &BwrapOptions::default(),
        Some(&path_of(&program)),
        timeout,
    );
    assert_eq!(
        a,
        Availability::Unavailable(Unavailable::TimedOut {
            program,
            after: timeout
        })
    );
    // Killed and reaped: the pid no longer names a process of ours.
    let pid: i32 = std::fs::read_to_string(d.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) with signal 0 only checks for existence; it sends nothing.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "probe child {pid} survived the timeout");
}

/// With the private view, the host's /tmp, /var/tmp and /run/user (and their sockets) are
/// never bound; the cage's own come first, so a writable root beneath /tmp (a repo there)
/// is still bound over them, and the model says /tmp no longer reaches the host's.
#[test]
fn the_private_view_replaces_the_hosts_temp_and_runtime_dirs_before_other_roots() {
    let (_f, p) = default_policy();
    let disk = FakeDisk::default();
    let options = BwrapOptions {
        private_tmp: Some(PrivateTmpFds { tmp: 7, var_tmp: 8 }),
        private_run_user: Some(1000),
        ..BwrapOptions::default()
    };
    let argv = render_argv(&p, &options, &disk).unwrap();
    let text: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let base = BASE_FLAGS.len() + 1;
    assert_eq!(
        &text[base..base + 12],
        &[
            "--bind-fd",
            "7",
            "/tmp",
            "--bind-fd",
            "8",
            "/var/tmp",
            "--tmpfs",
            "/run/user",
            "--perms",
            "0700",
            "--dir",
            "/run/user/1000"
        ]
    );
    for host in ["/tmp", "/var/tmp", "/run/user"] {
        let bound_from_host = text
            .windows(2)
            .any(|w| w[0].contains("bind") && !w[0].ends_with("-fd") && w[1] == host);
        assert!(!bound_from_host, "the host's {host} is bound: {text:?}");
    }
    let view = MountView::from_argv(&argv, &disk).unwrap();
    for (path, op) in [
        ("/tmp/tmux-0/default", "--bind-fd 7 /tmp"),
        ("/var/tmp/x", "--bind-fd 8 /var/tmp"),
        ("/run/user/1000/bus", "--tmpfs /run/user"),
    ] {
        let e = view.effect(Path::new(path), Access::Read);
        assert_eq!((e.reaches_host, e.op.as_str()), (false, op), "{path}");
        let e = view.effect(Path::new(path), Access::Create);
        assert!(!e.reaches_host, "{path}");
    }
    // Without the options the launcher view is rendered: the host's own, bound writable.
    let shared = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    let shared: Vec<String> = shared
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert!(shared
        .windows(3)
        .any(|w| w == ["--bind-try", "/tmp", "/tmp"]));
}

#[test]
fn a_writable_root_beneath_tmp_is_bound_over_the_private_tmp() {
    let f = fixture();
    let p = policy(&f, |s| {
        s.extra_writable.push(PathBuf::from("/tmp/shared-build"))
    });
    let options = BwrapOptions {
        private_tmp: Some(PrivateTmpFds { tmp: 7, var_tmp: 8 }),
        ..BwrapOptions::default()
    };
    let argv = render_argv(&p, &options, &FakeDisk::default()).unwrap();
    let pos = |needle: &[&str]| {
        argv.windows(needle.len())
            .position(|w| w.iter().zip(needle).all(|(a, b)| a == b))
            .unwrap_or_else(|| panic!("{needle:?} not in {argv:?}"))
    };
    assert!(
        pos(&["--bind-fd", "7", "/tmp"])
            < pos(&["--bind-try", "/tmp/shared-build", "/tmp/shared-build"])
    );
}

#[test]
fn the_git_entry_is_bound_onto_itself_before_its_config_and_hooks_go_read_only() {
    let f = fixture();
    std::fs::create_dir_all(f.repo.join(".git/hooks")).unwrap();
    std::fs::write(f.repo.join(".git/config"), "[core]\n").unwrap();
    let p = policy(&f, |_| {});
    let git = f.repo.join(".git");
    let disk = FakeDisk::default()
        .dir(&f.repo)
        .dir(&git)
        .file(git.join("config"))
        .dir(git.join("hooks"));
    let argv = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    let repo_bind = position(&argv, "--bind-try", &f.repo).expect("repo bind");
    let entry = position(&argv, "--bind", &git).expect(".git self-bind");
    let config = position(&argv, "--ro-bind-try", &git.join("config")).expect("config ro");
    let hooks = position(&argv, "--ro-bind-try", &git.join("hooks")).expect("hooks ro");
    assert!(repo_bind < entry && entry < config && entry < hooks);
    // Absent planting paths get no mount point: nothing would be left on the host.
    assert_eq!(
        position(&argv, "--ro-bind-try", &f.repo.join(".vscode")),
        None
    );
    assert_eq!(
        position(&argv, "--ro-bind-try", &git.join("config.worktree")),
        None
    );
    // The model of the view agrees: the config does not reach the host, the index does.
    let view = MountView::from_argv(&argv, &disk).unwrap();
    assert!(!view.effect(&git.join("config"), Access::Write).reaches_host);
    assert!(
        !view
            .effect(&git.join("hooks/pre-commit"), Access::Create)
            .reaches_host
    );
    assert!(
        view.effect(&git.join("index.lock"), Access::Create)
            .reaches_host
    );
}

#[test]
fn shell_lines_puts_one_mount_per_line_and_stays_one_shell_command() {
    let argv: Vec<OsString> = [
        "bwrap",
        "--ro-bind",
        "/",
        "/",
        "--tmpfs",
        "/home/u/.ssh",
        "--unshare-pid",
        "--bind-try",
        "/home/u/my repo",
        "/home/u/my repo",
        "--",
        "/usr/bin/jaula",
        "run",
        "--inner-stage",
        "--repo",
        "/r",
        "--verbose",
        "--",
        "sh",
        "-c",
        "echo hi",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    let text = String::from_utf8(super::shell_lines(&argv)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "bwrap \\",
            "  --ro-bind / / \\",
            "  --tmpfs /home/u/.ssh \\",
            "  --unshare-pid \\",
            "  --bind-try '/home/u/my repo' '/home/u/my repo' \\",
            "  -- \\",
            "  /usr/bin/jaula \\",
            "  run \\",
            "  --inner-stage \\",
            "  --repo /r \\",
            "  --verbose \\",
            "  -- \\",
            "  sh -c 'echo hi'",
        ]
    );
    // The same words as the one-line form, in the same order.
    let joined = String::from_utf8(super::shell_join(&argv)).unwrap();
    assert_eq!(text.replace(" \\\n  ", " "), joined);
}

/// The argv renders rule kinds, not known files: each kind given for a path no default
/// names is mounted as its kind says, at its kind's step.
#[test]
fn file_rule_kinds_are_mounted_by_kind_for_any_path() {
    use crate::test_support::with_each_file_rule_kind;
    use jaula_policy::FileMatch;
    let f = fixture();
    let vault = f.home.join("vault");
    let keep = vault.join("keep.txt");
    let notes = f.home.join("notes.db");
    let tenants = f.home.join("Documents/tenants");
    let secret = tenants.join("acme/secret.key");
    let p = with_each_file_rule_kind(
        policy(&f, |s| s.extra_sealed = vec![vault.clone()]),
        &keep,
        &notes,
        FileMatch::Exact,
        &tenants,
        vec![secret.clone()],
    );
    let disk = FakeDisk::default()
        .dir(&vault)
        .file(&keep)
        .file(&notes)
        .file(&secret);
    let argv = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    let writable = must(&argv, "--bind-try", &notes);
    let vault_tmpfs = must(&argv, "--tmpfs", &vault);
    let sealed = must(&argv, "--ro-bind-try", &secret);
    assert_eq!(argv[sealed + 1], os("/dev/null"));
    let readable = must(&argv, "--ro-bind-try", &keep);
    assert_eq!(argv[readable + 1], keep.clone().into_os_string());
    let remount = must(&argv, "--remount-ro", &vault);
    assert!(writable < vault_tmpfs, "{argv:?}");
    assert!(vault_tmpfs < readable && sealed < readable, "{argv:?}");
    assert!(readable < remount, "{argv:?}");
}

/// `path`'s effect under the view [`render_argv`] builds for `policy`.
fn view_effect(
    policy: &Policy,
    options: &BwrapOptions,
    disk: &dyn HostFs,
    path: &Path,
    access: Access,
) -> Result<ViewEffect, BwrapError> {
    let argv = render_argv(policy, options, disk)?;
    Ok(MountView::from_argv(&argv, disk)?
        .with_display_home(policy.home())
        .effect(path, access))
}

/// A protected path beneath the cage's own `/run/user` (the owner's
/// `/run/user/UID/systemd`, every user's for root) is not in the view: no bind brings the
/// host's in, with its user manager's private socket. One of a repo under `/tmp`, bound
/// from the host over the cage's own `/tmp`, keeps its bind.
#[test]
fn protected_paths_beneath_the_cages_own_dirs_are_not_brought_in_from_the_host() {
    let f = fixture();
    let p = policy(&f, |s| s.owner_uid = Some(1000));
    let systemd = PathBuf::from("/run/user/1000/systemd");
    let dbus = PathBuf::from("/run/user/1000/dbus-1");
    assert!(p.protected().iter().any(|pr| pr.path == systemd));
    let git_config = f.repo.join(".git/config");
    std::fs::create_dir_all(f.repo.join(".git")).unwrap();
    let p = policy(&f, |s| s.owner_uid = Some(1000));
    let disk = FakeDisk::default()
        .dir(&systemd)
        .dir(&dbus)
        .dir(f.repo.join(".git"))
        .file(&git_config);
    let private = BwrapOptions {
        private_tmp: Some(PrivateTmpFds { tmp: 7, var_tmp: 8 }),
        private_run_user: Some(1000),
        ..BwrapOptions::default()
    };
    let argv = render_argv(&p, &private, &disk).unwrap();
    assert_eq!(position(&argv, "--ro-bind-try", &systemd), None, "{argv:?}");
    assert_eq!(position(&argv, "--ro-bind-try", &dbus), None, "{argv:?}");
    must(&argv, "--ro-bind-try", &git_config);
    // Without the private view the host's /run/user is bound writable: the bind stays.
    let argv = render_argv(&p, &BwrapOptions::default(), &disk).unwrap();
    must(&argv, "--ro-bind-try", &systemd);
}
