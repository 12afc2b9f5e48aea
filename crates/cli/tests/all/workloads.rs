//! Agent-shaped workloads under `jaula run`, through each Linux backend: `git init && git
//! commit`, `cargo build` of a small crate with the cargo caches writable, `python3 -m venv`
//! and `pip install` of a local wheel, `npm install` of a local package. Each runs in a
//! caged repo of a scratch home (no network), and each script also proves the cage was in
//! force: the home's SSH key stays unreadable from inside.
//!
//! A missing tool is a printed skip, except under CI=true where it fails.

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{cage_or_skip, jaula, skip_or_fail, tools_or_skip};

/// A realistic scratch home: the default secrets, the state and cache directories a
/// working agent's home already has, and a repo.
struct Home {
    _keep: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

fn home(name: &str) -> Home {
    let (keep, root) = common::scratch(name);
    let home = root.join("home");
    let repo = home.join("src/repo");
    fs::create_dir_all(&repo).unwrap();
    for (rel, text) in [
        (".ssh/id_x", "jaula-secret-ssh\n"),
        (".aws/credentials", "jaula-secret-aws\n"),
        (".git-credentials", "jaula-secret-git\n"),
        (".cargo/credentials.toml", "jaula-secret-cargo\n"),
        (".claude/.credentials.json", "jaula-secret-claude\n"),
        (".claude/settings.json", "{}\n"),
        (".claude.json", "{}\n"),
        (".bashrc", "# rc\n"),
    ] {
        let path = home.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    for dir in [".cache", ".npm", ".config", ".local/share", ".local/state"] {
        fs::create_dir_all(home.join(dir)).unwrap();
    }
    Home {
        _keep: keep,
        home,
        repo,
    }
}

fn backend_or_skip(backend: &str) -> bool {
    let h = home("workload-probe-");
    let trial = Command::new(jaula())
        .args(["run", "--backend", backend, "--repo"])
        .arg(&h.repo)
        .arg("--home")
        .arg(&h.home)
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    cage_or_skip(backend, &trial)
}

/// The output of a command run outside the cage (setup and discovery only).
fn host(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Run `script` with `/bin/sh -e` under `jaula run --backend <backend>`, in the repo, with
/// HOME the scratch home and PATH `path` then the system's. The script must succeed.
fn caged(backend: &str, h: &Home, path: &[&Path], env: &[(&str, OsString)], script: &str) {
    let out = caged_output(backend, h, &[], path, env, script);
    jaula_testkit::output::assert_ok_for(format!("{backend}: the caged workload"), &out);
}

/// [`caged`] with extra `jaula run` flags, returning the output whatever the status. A flag
/// this jaula does not know yet fails here, with a message naming it.
fn caged_output(
    backend: &str,
    h: &Home,
    flags: &[&str],
    path: &[&Path],
    env: &[(&str, OsString)],
    script: &str,
) -> std::process::Output {
    let mut dirs: Vec<PathBuf> = path.iter().map(|p| p.to_path_buf()).collect();
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    let full = format!(
        "if cat \"$HOME/.ssh/id_x\" 2>/dev/null; then echo 'the cage is not in force' >&2; exit 99; fi\n{script}"
    );
    let out = Command::new(jaula())
        .args(["run", "--backend", backend])
        .args(flags)
        .arg("--repo")
        .arg(&h.repo)
        .arg("--home")
        .arg(&h.home)
        .args(["--", "/bin/sh", "-ec", &full])
        .env_clear()
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("HOME", &h.home)
        .env("LC_ALL", "C")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&h.repo)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for flag in flags.iter().filter(|f| f.starts_with("--")) {
        assert!(
            !(stderr.contains("unexpected argument") && stderr.contains(*flag)),
            "jaula run does not know {flag} yet: this workload needs the socket gate \
             merged.\n{stderr}"
        );
    }
    out
}

fn git_commit(backend: &str) {
    if !tools_or_skip(&["git"]) || !backend_or_skip(backend) {
        return;
    }
    let h = home("workload-git-");
    fs::write(h.repo.join("README.md"), "caged\n").unwrap();
    caged(
        backend,
        &h,
        &[],
        &[],
        "git init -q .\n\
         git add README.md\n\
         git -c user.name=cage -c user.email=cage@example.invalid commit -q -m 'from the cage'\n",
    );
    let log = host(
        Command::new("git")
            .args(["-C"])
            .arg(&h.repo)
            .args(["log", "--format=%s"]),
    );
    assert_eq!(log, "from the cage");
}

/// A crate with one git dependency fetched from a local `file://` repository: cargo
/// clones it into `$CARGO_HOME/git` (the writable cache) with no network.
struct CargoCase {
    h: Home,
    krate: PathBuf,
    bin: PathBuf,
}

fn cargo_case(name: &str) -> Option<CargoCase> {
    if !tools_or_skip(&["rustc", "git"]) {
        return None;
    }
    // The real toolchain, called directly: rustup's proxies would look for their own home
    // under the scratch HOME. Its directory only needs to be readable, as it is.
    let sysroot = PathBuf::from(host(Command::new("rustc").args(["--print", "sysroot"])));
    let bin = sysroot.join("bin");
    if !bin.join("cargo").is_file() {
        skip_or_fail(&format!("no cargo in {}", bin.display()));
        return None;
    }
    let h = home(name);
    let dep = h.home.parent().unwrap().join("dep");
    fs::create_dir_all(dep.join("src")).unwrap();
    fs::write(
        dep.join("Cargo.toml"),
        "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(
        dep.join("src/lib.rs"),
        "pub fn greet() -> &'static str {\n    \"hello from the cage\"\n}\n",
    )
    .unwrap();
    for args in [
        &["init", "-q", "."][..],
        &["add", "."],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            "dep",
        ],
    ] {
        host(Command::new("git").arg("-C").arg(&dep).args(args));
    }
    let krate = h.repo.join("hello");
    fs::create_dir_all(krate.join("src")).unwrap();
    fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\ndep = {{ git = \"file://{}\" }}\n\n\
             # Not a member of the workspace the test tree sits in.\n[workspace]\n",
            dep.display()
        ),
    )
    .unwrap();
    fs::write(
        krate.join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", dep::greet());\n}\n",
    )
    .unwrap();
    Some(CargoCase { h, krate, bin })
}

fn cargo_env(c: &CargoCase) -> Vec<(&'static str, OsString)> {
    vec![
        ("CARGO_HOME", c.h.home.join(".cargo").into()),
        ("RUSTC", c.bin.join("rustc").into()),
        ("CARGO_TERM_COLOR", "never".into()),
        ("CARGO_NET_GIT_FETCH_WITH_CLI", "false".into()),
    ]
}

fn cargo_build(backend: &str) {
    let Some(c) = cargo_case("workload-cargo-") else {
        return;
    };
    if !backend_or_skip(backend) {
        return;
    }
    // A ~/.cargo that has been used: its cache directories exist (see the test below for
    // one that has not).
    for dir in ["git", "registry"] {
        fs::create_dir_all(c.h.home.join(".cargo").join(dir)).unwrap();
    }
    fs::write(c.h.home.join(".cargo/.package-cache"), "").unwrap();
    caged(
        backend,
        &c.h,
        &[&c.bin],
        &cargo_env(&c),
        "cd hello\ncargo build\ncargo run -q\n",
    );
    let built = c.krate.join("target/debug/hello");
    assert_eq!(host(&mut Command::new(&built)), "hello from the cage");
    let db = c.h.home.join(".cargo/git/db");
    assert!(
        fs::read_dir(&db).unwrap().next().is_some(),
        "the dependency was not cached in {}",
        db.display()
    );
}

/// A ~/.cargo that has never cached a git dependency has no `git/`: cargo's first fetch
/// must create it. With the bwrap backend it can (the mount view covers the existing
/// credential files; Landlock grants ~/.cargo whole there). Natively ~/.cargo holds sealed
/// credential paths, so Landlock splits it, for reads and writes. Under the socket gate its
/// supervisor could make `git/` (docs/security.md, "Split directories under the socket
/// gate"), but nothing could read it back (an entry made after launch in an ancestor of a
/// sealed path has no read rule: `ancestor-snapshot`); with `--no-socket-gate` (`gate`
/// false) it cannot even be made (`split-dir-no-new-entries`). `jaula run` therefore
/// creates `~/.cargo/registry` and `~/.cargo/git` before caging; with
/// `cage.create_cache_roots = false` (`creation_off`) and no gate the native limit shows
/// again.
fn cargo_first_cache_entry(backend: &str, creation_off: bool, gate: bool, expect_ok: bool) {
    let Some(c) = cargo_case("workload-cargo-bare-") else {
        return;
    };
    if !backend_or_skip(backend) {
        return;
    }
    let mut dirs: Vec<PathBuf> = vec![c.bin.clone()];
    dirs.extend(["/usr/bin", "/bin"].map(PathBuf::from));
    let config = c.h.home.parent().unwrap().join("creation-off.toml");
    fs::write(&config, "[cage]\ncreate_cache_roots = false\n").unwrap();
    let mut cmd = Command::new(jaula());
    cmd.args(["run", "--backend", backend]);
    if creation_off {
        cmd.arg("--config").arg(&config);
    }
    if !gate {
        cmd.arg("--no-socket-gate");
    }
    let out = cmd
        .arg("--repo")
        .arg(&c.h.repo)
        .arg("--home")
        .arg(&c.h.home)
        .args(["--", "cargo", "build"])
        .env_clear()
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .env("HOME", &c.h.home)
        .envs(cargo_env(&c))
        .current_dir(&c.krate)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if expect_ok {
        assert!(out.status.success(), "{stderr}");
        assert!(c.h.home.join(".cargo/git").is_dir());
        return;
    }
    assert!(!out.status.success(), "cargo now succeeds: {stderr}");
    assert!(
        stderr.contains("failed to create directory") && stderr.contains(".cargo/git"),
        "{stderr}"
    );
    assert!(!c.h.home.join(".cargo/git").exists());
}

/// A minimal wheel (PEP 427) for the package `jaulawheel`, written by hand: building one
/// with `pip wheel` would want setuptools from the network.
fn write_wheel(dir: &Path, python: &Path) -> PathBuf {
    let wheel = dir.join("jaulawheel-0.1.0-py3-none-any.whl");
    let script = r#"
import base64, hashlib, sys, zipfile
files = {
    "jaulawheel/__init__.py": "GREETING = 'hello from the wheel'\n",
    "jaulawheel-0.1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: jaulawheel\nVersion: 0.1.0\n",
    "jaulawheel-0.1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: jaula-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("jaulawheel-0.1.0.dist-info/RECORD,,")
    z.writestr("jaulawheel-0.1.0.dist-info/RECORD", "\n".join(record) + "\n")
"#;
    host(Command::new(python).args(["-c", script]).arg(&wheel));
    wheel
}

fn pip_install(backend: &str) {
    if !tools_or_skip(&["python3"]) || !backend_or_skip(backend) {
        return;
    }
    // The interpreter itself, not a version manager's shim (pyenv's would look for its
    // root under the scratch HOME).
    let python = PathBuf::from(host(
        Command::new("python3").args(["-c", "import sys; print(sys.executable)"]),
    ));
    let has_venv = Command::new(&python)
        .args(["-c", "import venv, ensurepip"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !has_venv {
        return skip_or_fail("python3 has no venv/ensurepip (Debian: python3-venv)");
    }
    let h = home("workload-pip-");
    let wheel = write_wheel(&h.repo, &python);
    let py = python.to_str().unwrap();
    caged(
        backend,
        &h,
        &[],
        &[("PIP_DISABLE_PIP_VERSION_CHECK", "1".into())],
        &format!(
            "'{py}' -m venv .venv\n\
             .venv/bin/python -m pip install -q --no-index '{}'\n\
             .venv/bin/python -c 'import jaulawheel; print(jaulawheel.GREETING)'\n",
            wheel.file_name().unwrap().to_str().unwrap()
        ),
    );
    let out = host(
        Command::new(h.repo.join(".venv/bin/python"))
            .args(["-c", "import jaulawheel; print(jaulawheel.GREETING)"]),
    );
    assert_eq!(out, "hello from the wheel");
}

fn npm_install(backend: &str) {
    if !tools_or_skip(&["npm", "node"]) || !backend_or_skip(backend) {
        return;
    }
    let h = home("workload-npm-");
    jaula_testkit::fixture::write_npm_packages(&h.repo, "hello from the package");
    let app = h.repo.join("app");
    let flags = "--offline --no-audit --no-fund --no-update-notifier";
    caged(
        backend,
        &h,
        &[],
        &[("npm_config_registry", "http://127.0.0.1:9/".into())],
        &format!(
            "cd localpkg\nnpm pack -q {flags} >/dev/null\ncd ../app\n\
             npm install -q {flags} ../localpkg/jaula-localpkg-1.0.0.tgz\n\
             node -e \"console.log(require('jaula-localpkg'))\"\n"
        ),
    );
    let installed = app.join("node_modules/jaula-localpkg/index.js");
    assert!(installed.is_file(), "{} missing", installed.display());
    assert!(
        !fs::symlink_metadata(app.join("node_modules/jaula-localpkg"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let lock = fs::read_to_string(app.join("package-lock.json")).unwrap();
    assert!(lock.contains("jaula-localpkg"), "{lock}");
}

/// The identity git needs for a commit, from the environment: the cage must not need
/// `git config` (which the planting guard refuses, see below).
fn git_identity() -> Vec<(&'static str, OsString)> {
    vec![
        ("GIT_AUTHOR_NAME", "cage".into()),
        ("GIT_AUTHOR_EMAIL", "cage@example.invalid".into()),
        ("GIT_COMMITTER_NAME", "cage".into()),
        ("GIT_COMMITTER_EMAIL", "cage@example.invalid".into()),
    ]
}

fn host_git(dir: &Path, args: &[&str]) -> String {
    host(
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=owner",
                "-c",
                "user.email=owner@example.invalid",
            ])
            .args(args),
    )
}

/// The repo cloned (on the host) from a bare remote elsewhere in the scratch home, which
/// has moved on by one upstream commit since: the cage has something to fetch and pull.
fn repo_with_local_remote(name: &str) -> Home {
    let h = home(name);
    let remote = h.home.join("remotes/origin.git");
    let seed = h.home.join("remotes/seed");
    fs::create_dir_all(&seed).unwrap();
    host(
        Command::new("git")
            .args(["init", "-q", "--bare", "-b", "main"])
            .arg(&remote),
    );
    host_git(&seed, &["init", "-q", "-b", "main"]);
    fs::write(seed.join("README.md"), "seed\n").unwrap();
    host_git(&seed, &["add", "README.md"]);
    host_git(&seed, &["commit", "-qm", "seed"]);
    host_git(
        &seed,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    host_git(&seed, &["push", "-q", "origin", "main"]);
    host(
        Command::new("git")
            .args(["clone", "-q"])
            .arg(&remote)
            .arg(&h.repo),
    );
    fs::write(seed.join("upstream.txt"), "upstream\n").unwrap();
    host_git(&seed, &["add", "upstream.txt"]);
    host_git(&seed, &["commit", "-qm", "upstream"]);
    host_git(&seed, &["push", "-q", "origin", "main"]);
    h
}

/// The git an agent does all day: commit, branch, checkout, merge, stash, fetch and pull
/// from a local remote. Judged on the host from the repository the cage left.
fn git_daily_work(backend: &str) {
    if !tools_or_skip(&["git"]) || !backend_or_skip(backend) {
        return;
    }
    let h = repo_with_local_remote("workload-gitflow-");
    caged(
        backend,
        &h,
        &[],
        &git_identity(),
        "echo a > a.txt\n\
         git add a.txt\n\
         git commit -q -m 'cage: a'\n\
         git branch feature\n\
         git checkout -q feature\n\
         echo f > f.txt\n\
         git add f.txt\n\
         git commit -q -m 'cage: f'\n\
         git checkout -q main\n\
         git merge -q --no-ff --no-edit -m 'cage: merge feature' feature\n\
         echo dirty >> a.txt\n\
         git stash -q\n\
         test \"$(cat a.txt)\" = a\n\
         git stash pop -q\n\
         test \"$(tail -n 1 a.txt)\" = dirty\n\
         git checkout -q -- a.txt\n\
         git fetch -q origin\n\
         git pull -q --no-rebase --no-edit origin main\n",
    );
    let log = host_git(&h.repo, &["log", "--format=%s", "main"]);
    for subject in [
        "cage: a",
        "cage: f",
        "cage: merge feature",
        "upstream",
        "seed",
    ] {
        assert!(
            log.lines().any(|l| l == subject),
            "{backend}: '{subject}' missing from the log:\n{log}"
        );
    }
    assert!(
        h.repo.join("upstream.txt").is_file(),
        "the pull did not land"
    );
    assert!(h.repo.join("f.txt").is_file(), "the merge did not land");
    assert_eq!(host_git(&h.repo, &["stash", "list"]), "");
    assert_eq!(host_git(&h.repo, &["status", "--porcelain"]), "");
    assert_eq!(
        host_git(&h.repo, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "main"
    );
}

/// `.git/config` is planted code (core.fsmonitor, core.pager, aliases): the planting guard
/// protects it, and git says why.
fn git_config_local_is_refused(backend: &str) {
    if !tools_or_skip(&["git"]) || !backend_or_skip(backend) {
        return;
    }
    let h = repo_with_local_remote("workload-gitconfig-");
    let before = fs::read_to_string(h.repo.join(".git/config")).unwrap();
    let out = caged_output(
        backend,
        &h,
        &[],
        &[],
        &[],
        "git config --local user.name x\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        fs::read_to_string(h.repo.join(".git/config")).unwrap(),
        before,
        "{backend}: the cage changed .git/config (planting guard not in force)\n{stderr}"
    );
    assert!(
        !out.status.success() && stderr.contains("protected"),
        "{backend}: `git config --local` must fail with a message naming the protection \
         ({}):\n{stderr}",
        out.status
    );
}

/// The interpreter itself, not a version manager's shim.
fn system_python() -> Option<PathBuf> {
    if !tools_or_skip(&["python3"]) {
        return None;
    }
    Some(PathBuf::from(host(
        Command::new("python3").args(["-c", "import sys; print(sys.executable)"]),
    )))
}

/// `multiprocessing.Manager()`: a server process on a unix socket of the cage's own, and a
/// child process that reaches it through a proxy.
fn python_manager(backend: &str) {
    let Some(python) = system_python() else {
        return;
    };
    if !backend_or_skip(backend) {
        return;
    }
    let h = home("workload-mpmanager-");
    fs::write(
        h.repo.join("manager.py"),
        "import multiprocessing as mp\n\
         \n\
         def work(shared, items):\n\
         \x20   shared['child'] = 'hello from the child'\n\
         \x20   items.append(42)\n\
         \n\
         if __name__ == '__main__':\n\
         \x20   with mp.Manager() as manager:\n\
         \x20       shared, items = manager.dict(), manager.list()\n\
         \x20       p = mp.Process(target=work, args=(shared, items))\n\
         \x20       p.start()\n\
         \x20       p.join()\n\
         \x20       assert p.exitcode == 0, p.exitcode\n\
         \x20       with open('manager-result.txt', 'w') as f:\n\
         \x20           f.write('%s %s' % (shared['child'], list(items)))\n",
    )
    .unwrap();
    caged(
        backend,
        &h,
        &[],
        &[],
        &format!("'{}' manager.py\n", python.display()),
    );
    assert_eq!(
        fs::read_to_string(h.repo.join("manager-result.txt")).unwrap(),
        "hello from the child [42]"
    );
}

/// A Node server and a separate Node client process on a unix socket inside the repo.
fn node_unix_socket(backend: &str) {
    if !tools_or_skip(&["node"]) || !backend_or_skip(backend) {
        return;
    }
    let h = home("workload-nodesock-");
    fs::write(
        h.repo.join("server.js"),
        r#"const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');
const path = __dirname + '/app.sock';
const server = net.createServer((c) => c.on('data', (d) => c.end('pong:' + d)));
server.listen(path, () => {
  const client = spawn(process.execPath, [__dirname + '/client.js', path], { stdio: 'inherit' });
  client.on('exit', (code) => {
    server.close();
    process.exit(code);
  });
});
"#,
    )
    .unwrap();
    fs::write(
        h.repo.join("client.js"),
        r#"const net = require('net');
const fs = require('fs');
const c = net.connect(process.argv[2], () => c.write('ping'));
c.on('data', (d) => fs.writeFileSync(__dirname + '/node-result.txt', String(d)));
c.on('error', (e) => { console.error(e); process.exit(1); });
"#,
    )
    .unwrap();
    caged(backend, &h, &[], &[], "node server.js\n");
    assert_eq!(
        fs::read_to_string(h.repo.join("node-result.txt")).unwrap(),
        "pong:ping"
    );
}

/// A host ssh-agent holding one key; killed and its directory removed on drop.
struct HostAgent {
    child: jaula_testkit::Reaped,
    dir: PathBuf,
    sock: PathBuf,
    pubkey: String,
}

impl Drop for HostAgent {
    fn drop(&mut self) {
        self.child.stop();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn host_agent(h: &Home) -> HostAgent {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let dir = PathBuf::from(format!(
        "/tmp/jaula-wl-agent-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("agent.sock");
    // The private key lives in the sealed ~/.ssh: only the agent can use it.
    let key = h.home.join(".ssh/agent_key");
    host(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "jaula-owner", "-f"])
            .arg(&key),
    );
    let mut child = Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&sock)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // ssh-agent -D prints its environment once the socket listens.
    let line = jaula_testkit::output::first_line(&mut child);
    let agent = HostAgent {
        child: jaula_testkit::Reaped(child),
        dir,
        sock,
        pubkey: fs::read_to_string(key.with_extension("pub"))
            .unwrap()
            .trim()
            .to_string(),
    };
    assert!(line.starts_with("SSH_AUTH_SOCK="), "ssh-agent: {line}");
    host(
        Command::new("ssh-add")
            .arg("-q")
            .arg(&key)
            .env("SSH_AUTH_SOCK", &agent.sock),
    );
    agent
}

/// The owner allowed the agent (`--allow-unix-preset ssh-agent`): `ssh-add -L` lists the
/// owner's key from inside the cage, with SSH_AUTH_SOCK kept by the preset.
fn ssh_add_through_allowed_agent(backend: &str) {
    if !tools_or_skip(&["ssh-agent", "ssh-add", "ssh-keygen"]) || !backend_or_skip(backend) {
        return;
    }
    let h = home("workload-sshagent-");
    let agent = host_agent(&h);
    let out = caged_output(
        backend,
        &h,
        &["--allow-unix-preset", "ssh-agent"],
        &[],
        &[("SSH_AUTH_SOCK", agent.sock.clone().into_os_string())],
        "ssh-add -L\n",
    );
    let what = format!("{backend}: ssh-add -L through the allowed agent");
    jaula_testkit::output::assert_ok_for(what, &out);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), agent.pubkey);
}

#[test]
fn git_init_and_commit_work_caged_with_landlock() {
    git_commit("landlock");
}

#[test]
fn git_init_and_commit_work_caged_with_bwrap() {
    git_commit("bwrap");
}

#[test]
fn cargo_build_works_caged_with_landlock() {
    cargo_build("landlock");
}

#[test]
fn cargo_build_works_caged_with_bwrap() {
    cargo_build("bwrap");
}

#[test]
fn cargo_finds_its_first_cache_directory_made_by_jaula_with_landlock() {
    cargo_first_cache_entry("landlock", false, true, true);
}

#[test]
fn cargo_cannot_create_its_first_cache_directory_with_landlock_creation_off_and_no_gate() {
    cargo_first_cache_entry("landlock", true, false, false);
}

#[test]
fn cargo_creates_its_first_cache_directory_with_bwrap() {
    cargo_first_cache_entry("bwrap", true, true, true);
}

#[test]
fn venv_and_pip_install_of_a_local_wheel_work_caged_with_landlock() {
    pip_install("landlock");
}

#[test]
fn venv_and_pip_install_of_a_local_wheel_work_caged_with_bwrap() {
    pip_install("bwrap");
}

#[test]
fn npm_install_of_a_local_package_works_caged_with_landlock() {
    npm_install("landlock");
}

#[test]
fn npm_install_of_a_local_package_works_caged_with_bwrap() {
    npm_install("bwrap");
}

#[test]
fn git_commit_branch_checkout_merge_stash_fetch_pull_work_caged_with_landlock() {
    git_daily_work("landlock");
}

#[test]
fn git_commit_branch_checkout_merge_stash_fetch_pull_work_caged_with_bwrap() {
    git_daily_work("bwrap");
}

#[test]
fn git_config_local_is_refused_as_protected_with_landlock() {
    git_config_local_is_refused("landlock");
}

#[test]
fn git_config_local_is_refused_as_protected_with_bwrap() {
    git_config_local_is_refused("bwrap");
}

#[test]
fn python_multiprocessing_manager_works_caged_with_landlock() {
    python_manager("landlock");
}

#[test]
fn python_multiprocessing_manager_works_caged_with_bwrap() {
    python_manager("bwrap");
}

#[test]
fn node_server_and_client_on_a_repo_unix_socket_work_caged_with_landlock() {
    node_unix_socket("landlock");
}

#[test]
fn node_server_and_client_on_a_repo_unix_socket_work_caged_with_bwrap() {
    node_unix_socket("bwrap");
}

#[test]
fn ssh_add_lists_keys_through_an_allowed_agent_with_landlock() {
    ssh_add_through_allowed_agent("landlock");
}

#[test]
fn ssh_add_lists_keys_through_an_allowed_agent_with_bwrap() {
    ssh_add_through_allowed_agent("bwrap");
}
