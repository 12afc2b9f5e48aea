//! A fresh account's first run: a home with nothing in it but a secret, and `npm install`,
//! `pip install` (cache on) and `cargo build` with a registry dependency work in the cage
//! through each Linux backend, as root and as uid 65534, with nothing created by hand.
//! jaula creates the absent cache roots (`~/.npm`, `~/.cache`, `~/.cargo`, ...) before it
//! cages, 0700 and owned by the caller. No network: npm and pip install local archives,
//! cargo reads a local registry. Every step runs as the caller and as uid 65534 (cargo with
//! the system toolchain, which that account can execute).
//!
//! A missing tool is a printed skip, except under CI=true where it fails.

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{cage_or_skip, chown_tree, jaula, open_to_others, skip_or_fail, tools_or_skip};
use jaula_testkit::accounts;

/// A fresh account: its home holds one secret (to prove the cage is in force) and the
/// repo, nothing else. Owned by `uid` when given.
struct Fresh {
    _keep: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
    uid: Option<u32>,
}

fn fresh(name: &str, uid: Option<u32>) -> Fresh {
    let (keep, root) = common::scratch(name);
    let home = root.join("home");
    let repo = home.join("src/repo");
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_x"), "jaula-secret-ssh\n").unwrap();
    Fresh {
        _keep: keep,
        root,
        home,
        repo,
        uid,
    }
}

impl Fresh {
    /// Hand the tree to the account, and let it reach the tree (only directories inside the
    /// build's target directory are opened up).
    fn hand_over(&self) {
        let Some(uid) = self.uid else { return };
        chown_tree(&self.root, uid);
        open_to_others(&self.root);
    }

    /// `jaula run --backend B -- /bin/sh -ec SCRIPT` in `dir`, as the account.
    fn run(&self, backend: &str, dir: &Path, env: &[(&str, OsString)], script: &str) -> Output {
        let full = format!(
            "if cat \"$HOME/.ssh/id_x\" 2>/dev/null; then echo 'the cage is not in force' >&2; exit 99; fi\n{script}"
        );
        let mut cmd = Command::new(jaula());
        cmd.args(["run", "--backend", backend, "--repo"])
            .arg(&self.repo)
            .args(["--", "/bin/sh", "-ec", &full])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("LC_ALL", "C")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(dir);
        if let Some(uid) = self.uid {
            cmd.uid(uid).gid(uid);
        }
        cmd.output().unwrap()
    }

    fn who(&self) -> String {
        match self.uid {
            Some(uid) => format!("uid {uid}"),
            None => "the caller".to_owned(),
        }
    }

    /// Each created root is a real directory, 0700, owned by the account.
    fn assert_created(&self, rel: &str) {
        let path = self.home.join(rel);
        let meta = fs::symlink_metadata(&path)
            .unwrap_or_else(|e| panic!("{} was not created: {e}", path.display()));
        assert!(meta.is_dir(), "{rel}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{rel}");
        let uid = self
            .uid
            .unwrap_or_else(|| fs::metadata("/proc/self").unwrap().uid());
        assert_eq!(meta.uid(), uid, "{rel} is not owned by {}", self.who());
    }
}

fn backend_or_skip(backend: &str) -> bool {
    let f = fresh("first-run-probe-", None);
    cage_or_skip(backend, &f.run(backend, &f.repo, &[], "true"))
}

fn tool_or_skip(path: &str) -> bool {
    tools_or_skip(&[path])
}

fn assert_ok(f: &Fresh, backend: &str, what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} as {} with {backend} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        f.who(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `npm pack` a local package, then `npm install` the tarball: npm's first act is to make
/// `~/.npm/_cacache`, which a fresh account does not have.
fn npm_install(backend: &str) {
    if !tool_or_skip("/usr/bin/npm") || !backend_or_skip(backend) {
        return;
    }
    for uid in accounts() {
        let f = fresh("first-run-npm-", uid);
        jaula_testkit::fixture::write_npm_packages(&f.repo, "hello");
        f.hand_over();
        assert!(!f.home.join(".npm").exists());
        let flags = "--offline --no-audit --no-fund --no-update-notifier";
        let out = f.run(
            backend,
            &f.repo,
            &[("npm_config_registry", "http://127.0.0.1:9/".into())],
            &format!(
                "cd localpkg\nnpm pack -q {flags} >/dev/null\ncd ../app\n\
                 npm install -q {flags} ../localpkg/jaula-localpkg-1.0.0.tgz\n\
                 node -e \"console.log(require('jaula-localpkg'))\"\n"
            ),
        );
        assert_ok(&f, backend, "npm install", &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().last(), Some("hello"), "{stdout}");
        f.assert_created(".npm");
        assert!(
            f.home.join(".npm/_cacache").is_dir(),
            "npm did not use its cache"
        );
    }
}

/// A source distribution `pip` builds into a wheel and caches in `~/.cache/pip/wheels`;
/// with `--no-build-isolation` the system's setuptools and `wheel` (a venv with
/// `--system-site-packages`) build it, with no network.
fn write_sdist(dir: &Path) -> PathBuf {
    let src = dir.join("jaulasdist-0.1.0");
    fs::create_dir_all(src.join("jaulasdist")).unwrap();
    fs::write(
        src.join("setup.py"),
        "from setuptools import setup\nsetup(name='jaulasdist', version='0.1.0', packages=['jaulasdist'])\n",
    )
    .unwrap();
    fs::write(
        src.join("PKG-INFO"),
        "Metadata-Version: 2.1\nName: jaulasdist\nVersion: 0.1.0\n",
    )
    .unwrap();
    fs::write(
        src.join("jaulasdist/__init__.py"),
        "GREETING = 'hello from the sdist'\n",
    )
    .unwrap();
    let sdist = dir.join("jaulasdist-0.1.0.tar.gz");
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&sdist)
        .arg("-C")
        .arg(dir)
        .arg("jaulasdist-0.1.0")
        .status()
        .unwrap();
    assert!(status.success());
    fs::remove_dir_all(&src).unwrap();
    sdist
}

/// `python3 -m venv`, then `pip install` of a local sdist with pip's cache enabled: pip
/// must neither disable its cache ("The cache has been disabled") nor fail, and the built
/// wheel lands in `~/.cache/pip`.
fn pip_install(backend: &str) {
    // The system interpreter: a version manager's shim lives in a home uid 65534 cannot
    // reach.
    let python = "/usr/bin/python3";
    if !tool_or_skip(python) || !backend_or_skip(backend) {
        return;
    }
    let has_venv = Command::new(python)
        .args(["-c", "import venv, ensurepip, wheel"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_venv {
        return skip_or_fail(
            "/usr/bin/python3 has no venv/ensurepip or wheel (Debian: python3-venv, python3-wheel)",
        );
    }
    for uid in accounts() {
        let f = fresh("first-run-pip-", uid);
        let sdist = write_sdist(&f.repo);
        f.hand_over();
        assert!(!f.home.join(".cache").exists());
        let out = f.run(
            backend,
            &f.repo,
            &[("PIP_DISABLE_PIP_VERSION_CHECK", "1".into())],
            &format!(
                "{python} -m venv --system-site-packages .venv\n\
                 .venv/bin/python -m pip install --no-index --no-build-isolation '{}'\n\
                 .venv/bin/python -c 'import jaulasdist; print(jaulasdist.GREETING)'\n",
                sdist.file_name().unwrap().to_str().unwrap()
            ),
        );
        assert_ok(&f, backend, "pip install", &out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("cache has been disabled"),
            "pip disabled its cache: {stderr}"
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("hello from the sdist"));
        f.assert_created(".cache");
        let wheels = f.home.join(".cache/pip/wheels");
        assert!(
            wheels.is_dir(),
            "pip cached no wheel in {}",
            wheels.display()
        );
    }
}

/// Where each account finds a Rust toolchain: the caller's own (rustup's sysroot, in the
/// caller's home), and for another account the system's (`/usr/bin`, Debian's `cargo`
/// package, which `.ci/run` installs): rustup's lives in a home another account cannot
/// enter.
fn toolchain_for(uid: Option<u32>) -> Option<PathBuf> {
    let bin = match uid {
        None => {
            let Ok(out) = Command::new("rustc").args(["--print", "sysroot"]).output() else {
                skip_or_fail("rustc is not installed");
                return None;
            };
            PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()).join("bin")
        }
        Some(_) => PathBuf::from("/usr/bin"),
    };
    if !bin.join("cargo").is_file() || !bin.join("rustc").is_file() {
        skip_or_fail(&format!("no cargo and rustc in {}", bin.display()));
        return None;
    }
    Some(bin)
}

/// A crate depending on `dep = "0.1.0"` from a local registry (the repo's
/// `.cargo/config.toml` replaces crates.io): cargo unpacks the crate into
/// `~/.cargo/registry/src`, which a fresh account does not have. As the caller and as
/// uid 65534, each with a toolchain it can execute.
fn cargo_build(backend: &str) {
    if !backend_or_skip(backend) {
        return;
    }
    for uid in accounts() {
        let Some(bin) = toolchain_for(uid) else {
            continue;
        };
        cargo_build_as(backend, uid, &bin);
    }
}

fn cargo_build_as(backend: &str, uid: Option<u32>, bin: &Path) {
    let f = fresh("first-run-cargo-", uid);
    let registry = f.root.join("registry");
    let dep = f.root.join("dep-src");
    fs::create_dir_all(dep.join("src")).unwrap();
    fs::write(
        dep.join("Cargo.toml"),
        "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         description = \"d\"\nlicense = \"MIT\"\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(
        dep.join("src/lib.rs"),
        "pub fn greet() -> &'static str { \"hello from the registry\" }\n",
    )
    .unwrap();
    let pack = Command::new(bin.join("cargo"))
        .args(["package", "-q", "--no-verify", "--allow-dirty", "--offline"])
        .env_remove("CARGO_TARGET_DIR")
        .current_dir(&dep)
        .env("CARGO_HOME", f.root.join("host-cargo-home"))
        .env("RUSTC", bin.join("rustc"))
        .output()
        .unwrap();
    jaula_testkit::output::assert_ok(&pack);
    let krate = dep.join("target/package/dep-0.1.0.crate");
    fs::create_dir_all(registry.join("index/3/d")).unwrap();
    fs::copy(&krate, registry.join("dep-0.1.0.crate")).unwrap();
    let sum = Command::new("sha256sum").arg(&krate).output().unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let sum = sum.split_whitespace().next().unwrap();
    fs::write(
        registry.join("index/3/d/dep"),
        format!(
            "{{\"name\":\"dep\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{sum}\",\
             \"features\":{{}},\"yanked\":false}}\n"
        ),
    )
    .unwrap();
    let app = f.repo.join("app");
    fs::create_dir_all(app.join("src")).unwrap();
    fs::create_dir_all(app.join(".cargo")).unwrap();
    fs::write(
        app.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\ndep = \"0.1.0\"\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(
        app.join("src/main.rs"),
        "fn main() { println!(\"{}\", dep::greet()); }\n",
    )
    .unwrap();
    fs::write(
        app.join(".cargo/config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\nlocal-registry = \"{}\"\n",
            registry.display()
        ),
    )
    .unwrap();
    assert!(!f.home.join(".cargo").exists());
    f.hand_over();
    let mut path = OsString::from(bin.as_os_str());
    path.push(":/usr/bin:/bin");
    let out = f.run(
        backend,
        &app,
        &[
            ("PATH", path),
            ("RUSTC", bin.join("rustc").into()),
            ("CARGO_TERM_COLOR", "never".into()),
        ],
        "cargo build --offline\ncargo run -q --offline\n",
    );
    assert_ok(&f, backend, "cargo build", &out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "hello from the registry"
    );
    f.assert_created(".cargo");
    let src = f.home.join(".cargo/registry/src");
    assert!(
        fs::read_dir(&src).unwrap().next().is_some(),
        "nothing unpacked in {}",
        src.display()
    );
}

#[test]
fn npm_install_works_on_a_fresh_account_with_landlock() {
    npm_install("landlock");
}

#[test]
fn npm_install_works_on_a_fresh_account_with_bwrap() {
    npm_install("bwrap");
}

#[test]
fn pip_install_keeps_its_cache_on_a_fresh_account_with_landlock() {
    pip_install("landlock");
}

#[test]
fn pip_install_keeps_its_cache_on_a_fresh_account_with_bwrap() {
    pip_install("bwrap");
}

#[test]
fn cargo_build_with_a_registry_dependency_works_on_a_fresh_account_with_landlock() {
    cargo_build("landlock");
}

#[test]
fn cargo_build_with_a_registry_dependency_works_on_a_fresh_account_with_bwrap() {
    cargo_build("bwrap");
}

/// A fresh home stays tidy: the first run creates the shared roots and the cache root of
/// each tool on the launch PATH (here a stub `kimi`), and no root for a tool the account
/// does not have; such a root stays unwritable (a `mkdir ~/.m2` in the cage fails), and
/// once the tool is installed the next run creates it, writable. Both backends, as the
/// caller and as uid 65534.
fn cache_roots_follow_the_path(backend: &str) {
    if !backend_or_skip(backend) {
        return;
    }
    for uid in accounts() {
        let f = fresh("first-run-tidy-", uid);
        let bin = f.root.join("bin");
        fs::create_dir_all(&bin).unwrap();
        // The shell's tools, and bwrap (with the `true` its probe runs), found on this PATH.
        for tool in ["cat", "mkdir", "touch", "true", "bwrap"] {
            let real = ["/usr/local/bin", "/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.is_file());
            if let Some(real) = real {
                std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
            }
        }
        let stub = |name: &str| {
            let path = bin.join(name);
            fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            if let Some(uid) = uid {
                chown_tree(&path, uid);
            }
        };
        stub("kimi");
        f.hand_over();
        let path = [("PATH", bin.clone().into_os_string())];
        // Runs `script` in the repo with the stubbed PATH; it must succeed.
        let run_ok = |what: &str, script: &str| {
            let out = f.run(backend, &f.repo, &path, script);
            assert_ok(&f, backend, what, &out);
        };
        run_ok(
            "a first run",
            "if mkdir \"$HOME/.m2\" 2>/dev/null; then echo 'made ~/.m2 without mvn' >&2; exit 98; fi",
        );
        for made in [".cache", ".config", ".local/bin", ".kimi"] {
            f.assert_created(made);
        }
        for tidy in [
            "go",
            ".m2",
            ".gradle",
            ".bun",
            ".pnpm-store",
            ".npm",
            ".cargo",
            ".rustup",
            ".codex",
            ".opencode",
            ".claude",
        ] {
            assert!(
                !f.home.join(tidy).exists(),
                "{tidy} created on a fresh home without its tool ({} with {backend})",
                f.who()
            );
        }
        // mvn installed later: the next launch creates ~/.m2, and the cage writes in it.
        stub("mvn");
        run_ok(
            "a run after mvn is installed",
            "mkdir \"$HOME/.m2/repository\"\ntouch \"$HOME/.m2/repository/x\"",
        );
        f.assert_created(".m2");
        assert!(f.home.join(".m2/repository/x").is_file());
    }
}

#[test]
fn a_fresh_home_gets_cache_roots_only_for_tools_on_the_path_with_landlock() {
    cache_roots_follow_the_path("landlock");
}

#[test]
fn a_fresh_home_gets_cache_roots_only_for_tools_on_the_path_with_bwrap() {
    cache_roots_follow_the_path("bwrap");
}

/// `jaula explain` answers for the disk as the run will leave it: on a fresh account a
/// create in `~/.cache/pip` is allowed by the reference and by both backends' artifacts,
/// with a note that the run creates `~/.cache`; with the switch off all three refuse.
#[test]
fn explain_agrees_with_the_run_on_an_absent_cache_root() {
    let f = fresh("first-run-explain-", None);
    let target = f.home.join(".cache/pip/x");
    let explain = |config: Option<&Path>| {
        let mut cmd = Command::new(jaula());
        cmd.arg("explain")
            .arg(&target)
            .arg("--create")
            .arg("--json");
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        // No --repo: explain takes the current directory, like run.
        let out = cmd
            .env("HOME", &f.home)
            .current_dir(&f.repo)
            .output()
            .unwrap();
        jaula_testkit::output::assert_ok(&out);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let on = explain(None);
    assert_eq!(on["allowed"], true, "{on}");
    assert_eq!(
        on["created_at_launch"],
        f.home.join(".cache").to_str().unwrap()
    );
    for b in on["backends"].as_array().unwrap() {
        assert_eq!(b["allowed"], true, "{b}");
    }
    let config = f.root.join("off.toml");
    fs::write(&config, "[cage]\ncreate_cache_roots = false\n").unwrap();
    let off = explain(Some(&config));
    assert_eq!(off["allowed"], false, "{off}");
    assert_eq!(off["rule_detail"]["rule"], "absent-writable-root", "{off}");
    for b in off["backends"].as_array().unwrap() {
        if b["backend"] != "seatbelt" {
            assert_eq!(b["allowed"], false, "{b}");
        }
    }
    // explain creates nothing.
    assert!(!f.home.join(".cache").exists());
}

/// A caged `claude` whose login file is sealed gets one line saying so and naming the
/// token routes; with a token in the environment it does not (no false positive).
#[test]
fn a_caged_claude_without_a_token_is_told_why_it_is_not_logged_in() {
    let f = fresh("first-run-claude-", None);
    fs::create_dir_all(f.home.join(".claude")).unwrap();
    fs::write(
        f.home.join(".claude/.credentials.json"),
        "{\"secret\": 1}\n",
    )
    .unwrap();
    let claude = f.repo.join("claude");
    fs::write(
        &claude,
        "#!/bin/sh\ncat ~/.claude/.credentials.json 2>/dev/null && exit 9\necho 'Not logged in'\n",
    )
    .unwrap();
    fs::set_permissions(&claude, fs::Permissions::from_mode(0o755)).unwrap();
    let run = |token: Option<&str>| {
        let mut cmd = Command::new(jaula());
        cmd.args(["run", "--repo"])
            .arg(&f.repo)
            .arg("--")
            .arg(&claude)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &f.home)
            .current_dir(&f.repo);
        if let Some(t) = token {
            cmd.env("CLAUDE_CODE_OAUTH_TOKEN", t);
        }
        cmd.output().unwrap()
    };
    let out = run(None);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("jaula: claude: its login") && stderr.contains("claude setup-token"),
        "{stderr}"
    );
    let out = run(Some("sk-ant-oat-test"));
    assert!(out.status.success(), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("jaula: claude:"),
        "{out:?}"
    );
}
