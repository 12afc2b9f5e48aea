//! The real agent CLIs in the cage: Claude Code and Codex, from their npm packages at the
//! versions `.ci/run` pins and installs under [`AGENTS_PREFIX`]. On both backends each one
//! starts, reaches its own login check, and takes the documented route in: a key in the
//! environment, which it sends to its API. Under `--network allow --allow-preset
//! model-apis` the proxy's decision log admits each CLI's API host by that preset.
//!
//! No traffic leaves the machine. The `none` runs have only the cage's loopback; the key
//! runs point the CLI's base URL at a fake API the caged command starts on that loopback.
//! The `allow` runs start jaula in a network namespace of the test's own that holds only a
//! loopback, so the proxy's upstream connect fails at once and nothing is routed anywhere.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{missing_tool, skip_or_fail, Backend, User, HOST_PATH};

/// Where `.ci/run` installs the CLIs: outside the repo, the home and /tmp, so no cage can
/// write the binaries it runs. `JAULA_AGENTS_PREFIX` points elsewhere for a local run.
const AGENTS_PREFIX: &str = "/opt/jaula-ci/agents";
/// The pinned versions, as `--version` prints them (keep in step with `.ci/run`).
const CLAUDE_VERSION: &str = "2.1.332 (Claude Code)";
const CODEX_VERSION: &str = "codex-cli 0.171.0";

const BACKENDS: [Backend; 2] = [Backend::Bwrap, Backend::Landlock];

/// A fake key of each vendor's shape: never valid anywhere.
const ANTHROPIC_KEY: &str = "sk-ant-test-not-a-key";
const OAUTH_TOKEN: &str = "sk-ant-oat01-test-not-a-token";
const OPENAI_KEY: &str = "sk-test-not-a-key";

/// Past this a run is stuck: the watchdog kills it and the test fails with its output.
const RUN_LIMIT: Duration = Duration::from_secs(240);

/// Claude Code's own switches: one try per request (no backoff between retries) and no
/// telemetry or update checks, so a run ends on its first API answer.
const CLAUDE_QUIET: [(&str, &str); 2] = [
    ("CLAUDE_CODE_MAX_RETRIES", "0"),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
];

struct Agents {
    claude: PathBuf,
    codex: PathBuf,
}

/// The pinned CLIs, or `None` after a skip (a failure under CI=true) naming why.
fn agents_or_skip() -> Option<Agents> {
    let bin = agents_bin();
    let agents = Agents {
        claude: bin.join("claude"),
        codex: bin.join("codex"),
    };
    for (path, want) in [
        (&agents.claude, CLAUDE_VERSION),
        (&agents.codex, CODEX_VERSION),
    ] {
        let got = Command::new(path)
            .arg("--version")
            .env_clear()
            .env("PATH", HOST_PATH)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        if got.as_deref().ok() != Some(want) {
            skip_or_fail(&format!(
                "{} is not the pinned {want:?} (got {got:?}); .ci/run installs it with npm",
                path.display()
            ));
            return None;
        }
    }
    if let Some(tool) = missing_tool(&["/usr/bin/python3", "unshare"]) {
        skip_or_fail(&format!("{tool} is not installed"));
        return None;
    }
    Some(agents)
}

/// Where the pinned CLIs' commands are.
fn agents_bin() -> PathBuf {
    std::env::var_os("JAULA_AGENTS_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(AGENTS_PREFIX))
        .join("node_modules/.bin")
}

/// The backends that cage here as root; each one that cannot is a skip (a failure under
/// CI=true) naming jaula's reason.
fn caging_backends() -> impl Iterator<Item = Backend> {
    BACKENDS
        .into_iter()
        .filter(|&backend| common::cage_here(backend, User::Root))
}

/// Runs `case` with the pinned CLIs on each backend that cages here as root, in a fresh
/// scratch home and repo (prefix `name`) for each; nothing when the CLIs are missing
/// (a skip, a failure under CI=true).
fn each_backend(name: &str, mut case: impl FnMut(&Agents, Backend, Scratch)) {
    let Some(agents) = agents_or_skip() else {
        return;
    };
    for backend in caging_backends() {
        case(&agents, backend, fresh(name));
    }
}

/// A scratch home and repo of the test's own: the CLIs find no login of the host's.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    repo: PathBuf,
}

fn fresh(name: &str) -> Scratch {
    let (dir, root, home, repo) = common::bare_tree(name);
    Scratch {
        _dir: dir,
        root,
        home,
        repo,
    }
}

/// `jaula run --backend B ARGS -- CMD` with only PATH, HOME and `env` in the environment.
fn jaula_cmd(
    s: &Scratch,
    backend: Backend,
    args: &[&str],
    env: &[(&str, &str)],
    cmd: &[&Path],
    cmd_args: &[&str],
) -> Command {
    let mut c = common::jaula_run(backend, &s.home, &s.repo);
    // The CLIs on the PATH, as an install puts them: jaula creates an agent's state
    // directory (`~/.codex`) on a fresh home only for the tools it finds there.
    let mut path = agents_bin().into_os_string();
    path.push(":");
    path.push(HOST_PATH);
    c.env("PATH", path);
    c.args(args)
        .arg("--")
        .args(cmd)
        .args(cmd_args)
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    c
}

/// Runs `cmd` in a process group of its own; a watchdog kills the group after
/// [`RUN_LIMIT`], so a CLI that hangs fails the test instead of stalling it.
fn run(mut cmd: Command) -> Output {
    cmd.process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pgid = child.id() as i32;
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(RUN_LIMIT).is_err() {
            kill_group(pgid);
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    out
}

/// Kills the process group `pgid` (started by this test) with SIGKILL.
fn kill_group(pgid: i32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status();
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fake model API, run *inside* the cage: it binds the cage's loopback, starts the CLI
/// with `PORT` in its arguments and in `BASE_VAR`'s value replaced by the bound port,
/// answers every request 401 and prints what credential each request carried.
const FAKE_API: &str = r#"
import http.server, json, os, subprocess, sys, threading
seen = []
class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def answer(self):
        n = int(self.headers.get("content-length") or 0)
        if n:
            self.rfile.read(n)
        seen.append("x-api-key=%s authorization=%s" % (
            self.headers.get("x-api-key"), self.headers.get("authorization")))
        body = json.dumps({"type": "error", "error": {"type": "authentication_error",
                           "message": "invalid x-api-key"}}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = answer
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
port = str(server.server_address[1])
threading.Thread(target=server.serve_forever, daemon=True).start()
env = dict(os.environ)
if sys.argv[1] != "-":
    env[sys.argv[1]] = sys.argv[2].replace("PORT", port)
argv = [a.replace("PORT", port) for a in sys.argv[3:]]
status = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL).returncode
for line in seen:
    print("fake-api saw " + line)
print("cli exit %d" % status)
"#;

/// `python3 fake_api.py BASE_VAR BASE_VALUE CLI ARGS...` as the caged command's argv.
fn fake_api_argv(s: &Scratch, base_var: &str, base_value: &str) -> Vec<String> {
    let script = s.repo.join("fake_api.py");
    std::fs::write(&script, FAKE_API).unwrap();
    vec![
        "/usr/bin/python3".into(),
        script.to_str().unwrap().into(),
        base_var.into(),
        base_value.into(),
    ]
}

fn caged_with_fake_api(
    s: &Scratch,
    backend: Backend,
    env: &[(&str, &str)],
    base: (&str, &str),
    cli: &Path,
    cli_args: &[&str],
) -> Output {
    caged_with_fake_api_and(s, backend, &[], env, base, cli, cli_args)
}

/// `claude -p hi` in the cage (with `jaula_args` and `env`), pointed at the fake API.
fn claude_with_fake_api(
    s: &Scratch,
    backend: Backend,
    jaula_args: &[&str],
    env: &[(&str, &str)],
    agents: &Agents,
) -> Output {
    caged_with_fake_api_and(
        s,
        backend,
        jaula_args,
        env,
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:PORT"),
        &agents.claude,
        &["-p", "hi"],
    )
}

/// [`caged_with_fake_api`] with more `jaula run` arguments.
fn caged_with_fake_api_and(
    s: &Scratch,
    backend: Backend,
    jaula_args: &[&str],
    env: &[(&str, &str)],
    base: (&str, &str),
    cli: &Path,
    cli_args: &[&str],
) -> Output {
    let mut argv = fake_api_argv(s, base.0, base.1);
    argv.push(cli.to_str().unwrap().into());
    argv.extend(cli_args.iter().map(|a| a.to_string()));
    let argv: Vec<&Path> = argv.iter().map(Path::new).collect();
    let mut args = vec!["--network", "none"];
    args.extend_from_slice(jaula_args);
    run(jaula_cmd(s, backend, &args, env, &argv, &[]))
}

/// Why the CLIs live under [`AGENTS_PREFIX`]: no cage can plant a file beside the binary
/// it runs (a new entry, so a broken cage costs a stray file, never the binary).
#[test]
fn the_clis_install_prefix_is_outside_every_cages_writable_set() {
    let Some(agents) = agents_or_skip() else {
        return;
    };
    let dir = agents.claude.parent().unwrap().to_path_buf();
    let planted = dir.join("planted-by-the-cage");
    let script = format!("echo x > '{}'", planted.display());
    // Control: uncaged, the same write lands (this test runs as the prefix's owner).
    let control = Command::new("/bin/sh")
        .args(["-c", &script])
        .status()
        .unwrap();
    let landed = planted.exists();
    let _ = std::fs::remove_file(&planted);
    if !(control.success() && landed) {
        skip_or_fail(&format!(
            "{} is not writable by this test's uid",
            dir.display()
        ));
        return;
    }
    for backend in caging_backends() {
        let s = fresh("agents-prefix-");
        let out = run(jaula_cmd(
            &s,
            backend,
            &["--network", "none"],
            &[],
            &[Path::new("/bin/sh")],
            &["-c", &script],
        ));
        let created = planted.exists();
        let _ = std::fs::remove_file(&planted);
        assert!(
            !created,
            "{backend:?}: the cage wrote into {}",
            dir.display()
        );
        assert!(!out.status.success(), "{backend:?}: {}", text(&out));
    }
}

#[test]
fn claude_reaches_its_login_check_on_both_backends() {
    reaches_its_login_check("claude", |a| &a.claude, &CLAUDE_QUIET, &["-p", "hi"]);
}

/// `cli` (one of the pinned CLIs) run with `args` and `env` under `--network none` with no
/// login anywhere: it must get as far as its own login check (exit 1, "Not logged in").
fn reaches_its_login_check(
    name: &str,
    cli: fn(&Agents) -> &PathBuf,
    env: &[(&str, &str)],
    args: &[&str],
) {
    each_backend(&format!("agents-{name}-"), |agents, backend, s| {
        let out = run(jaula_cmd(
            &s,
            backend,
            &["--network", "none"],
            env,
            &[cli(agents)],
            args,
        ));
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{backend:?}: {all}");
        assert!(
            all.contains("Not logged in"),
            "{backend:?}: {name} did not reach its login check: {all}"
        );
    });
}

/// With a key in the environment (the documented route) Claude Code gets past its login
/// check: under `none` it tries the network and is refused; against the fake API on the
/// cage's loopback it sends exactly that key, and an OAuth token as a bearer token.
#[test]
fn claude_takes_the_key_or_token_from_the_environment_on_both_backends() {
    each_backend("agents-claude-key-", |agents, backend, s| {
        let mut env = CLAUDE_QUIET.to_vec();
        env.push(("ANTHROPIC_API_KEY", ANTHROPIC_KEY));
        let out = run(jaula_cmd(
            &s,
            backend,
            &["--network", "none"],
            &env,
            &[&agents.claude],
            &["-p", "hi"],
        ));
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{backend:?}: {all}");
        assert!(!all.contains("Not logged in"), "{backend:?}: {all}");
        assert!(
            all.contains("Can't reach the API server"),
            "{backend:?}: claude did not try the network: {all}"
        );

        let out = claude_with_fake_api(&s, backend, &[], &env, agents);
        let all = text(&out);
        assert!(out.status.success(), "{backend:?}: {all}");
        assert!(all.contains("Invalid API key"), "{backend:?}: {all}");
        assert!(
            all.contains(&format!("fake-api saw x-api-key={ANTHROPIC_KEY} ")),
            "{backend:?}: the key from the environment was not sent: {all}"
        );
        assert!(all.contains("cli exit 1"), "{backend:?}: {all}");

        let mut env = CLAUDE_QUIET.to_vec();
        env.push(("CLAUDE_CODE_OAUTH_TOKEN", OAUTH_TOKEN));
        let out = claude_with_fake_api(&s, backend, &[], &env, agents);
        let all = text(&out);
        assert!(out.status.success(), "{backend:?}: {all}");
        assert!(
            all.contains(&format!("authorization=Bearer {OAUTH_TOKEN}")),
            "{backend:?}: the token from the environment was not sent: {all}"
        );
    });
}

/// Writes a Claude Code login into the scratch home whose access token expires
/// `expires_in_secs` from now (negative: already expired).
fn write_claude_login(s: &Scratch, expires_in_secs: i64) {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let dir = s.home.join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".credentials.json"),
        format!(
            r#"{{"claudeAiOauth":{{"accessToken":"{LENT_ACCESS}","refreshToken":"{KEPT_REFRESH}","expiresAt":{},"scopes":["user:inference"]}}}}"#,
            now_ms + expires_in_secs * 1000
        ),
    )
    .unwrap();
}

const LENT_ACCESS: &str = "sk-ant-oat01-lent-access-token";
const KEPT_REFRESH: &str = "sk-ant-ort01-kept-refresh-token";

/// `--hand-access-token claude`: the caged `claude` logs in with the owner's short-lived
/// access token, read by jaula outside the cage, while nothing in the cage (environment or
/// files) holds the refresh token. An expired token refuses the launch (126).
#[test]
fn claude_logs_in_with_the_handed_access_token_and_never_sees_the_refresh_token() {
    each_backend("agents-claude-lent-", |agents, backend, s| {
        write_claude_login(&s, 3600);

        // The control: without the flag, the sealed login leaves claude logged out.
        let out = claude_with_fake_api(&s, backend, &[], &CLAUDE_QUIET, agents);
        let all = text(&out);
        assert!(all.contains("Not logged in"), "{backend:?}: {all}");
        assert!(!all.contains(LENT_ACCESS), "{backend:?}: {all}");

        let out = claude_with_fake_api(
            &s,
            backend,
            &["--hand-access-token", "claude"],
            &CLAUDE_QUIET,
            agents,
        );
        let all = text(&out);
        assert!(out.status.success(), "{backend:?}: {all}");
        assert!(
            all.contains(&format!("authorization=Bearer {LENT_ACCESS}")),
            "{backend:?}: the handed token was not sent: {all}"
        );
        assert!(
            all.contains("handing claude its access token as CLAUDE_CODE_OAUTH_TOKEN"),
            "{backend:?}: {all}"
        );

        // `program args` caged without a network, handed the access token.
        let handed = |program: &str, args: &[&str]| {
            run(jaula_cmd(
                &s,
                backend,
                &["--network", "none", "--hand-access-token", "claude"],
                &[],
                &[Path::new(program)],
                args,
            ))
        };
        // Everything the cage can see: its environment and the login file.
        let out = handed(
            "/bin/sh",
            &[
                "-c",
                "env; cat \"$HOME/.claude/.credentials.json\"; echo cat=$?",
            ],
        );
        let all = text(&out);
        assert!(
            all.contains(&format!("CLAUDE_CODE_OAUTH_TOKEN={LENT_ACCESS}")),
            "{backend:?}: {all}"
        );
        assert!(
            !all.contains(KEPT_REFRESH),
            "{backend:?}: the refresh token reached the cage: {all}"
        );
        assert!(
            all.contains("cat=1"),
            "{backend:?}: the login file was readable: {all}"
        );

        write_claude_login(&s, -10);
        let out = handed("/bin/true", &[]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(126), "{backend:?}: {all}");
        assert!(
            all.contains("expired ") && all.contains(" s ago") && !all.contains("has -"),
            "{backend:?}: {all}"
        );
    });
}

#[test]
fn codex_reaches_its_login_check_on_both_backends() {
    reaches_its_login_check("codex", |a| &a.codex, &[], &["login", "status"]);
}

/// Codex's non-interactive route is `CODEX_API_KEY`: `codex exec` sends it as a bearer
/// token. Its base URL (config `openai_base_url`) points at the fake API in the cage.
#[test]
fn codex_exec_sends_the_key_from_the_environment_on_both_backends() {
    each_backend("agents-codex-key-", |agents, backend, s| {
        let out = caged_with_fake_api(
            &s,
            backend,
            &[("CODEX_API_KEY", OPENAI_KEY)],
            ("-", "-"),
            &agents.codex,
            &[
                "exec",
                "--skip-git-repo-check",
                "-c",
                "openai_base_url=\"http://127.0.0.1:PORT/v1\"",
                "hi",
            ],
        );
        let all = text(&out);
        assert!(out.status.success(), "{backend:?}: {all}");
        assert!(
            all.contains(&format!("authorization=Bearer {OPENAI_KEY}")),
            "{backend:?}: the key from the environment was not sent: {all}"
        );
        assert!(all.contains("401 Unauthorized"), "{backend:?}: {all}");
        assert!(all.contains("cli exit 1"), "{backend:?}: {all}");
    });
}

/// One `--network allow --allow-preset model-apis` run in a network namespace that holds
/// only a loopback (`unshare --net`): the proxy decides and logs, and its connect to the
/// API host fails at once, with no route out of the machine. The log is a FIFO read as
/// the proxy writes it: the run is ended (its process group killed) as soon as the line
/// for `host` arrives, since Codex waits for the network indefinitely.
fn allow_run(
    agents_cli: &Path,
    cli_args: &[&str],
    env: &[(&str, &str)],
    host: &str,
) -> Vec<serde_json::Value> {
    let mut records = Vec::new();
    let private_net = Command::new("unshare")
        .args(["--net", "--", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !private_net {
        skip_or_fail("unshare --net cannot make a network namespace here (it needs root)");
        return records;
    }
    for backend in caging_backends() {
        let s = fresh("agents-allow-");
        let log = s.root.join("decisions.fifo");
        let status = Command::new("mkfifo").arg(&log).status().unwrap();
        assert!(status.success());
        // Read and write: the open does not wait for the proxy, and the test's own write
        // end lets it end the reader once the run is over.
        let fifo = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&log)
            .unwrap();
        let mut ender = fifo.try_clone().unwrap();
        let (lines, arrived) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(fifo).lines() {
                let line = line.unwrap();
                if line == "end-of-test" || lines.send(line).is_err() {
                    break;
                }
            }
        });
        let inner = jaula_cmd(
            &s,
            backend,
            &[
                "--network",
                "allow",
                "--allow-preset",
                "model-apis",
                "--network-log",
                log.to_str().unwrap(),
            ],
            env,
            &[agents_cli],
            cli_args,
        );
        let mut cmd = Command::new("unshare");
        cmd.args(["--net", "--"])
            .arg(inner.get_program())
            .args(inner.get_args());
        cmd.current_dir(&s.repo)
            .env_clear()
            .envs(inner.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let child = cmd.spawn().unwrap();
        let pgid = child.id() as i32;
        let mut seen = Vec::new();
        let mut found = false;
        while let Ok(line) = arrived.recv_timeout(RUN_LIMIT) {
            let record: serde_json::Value = serde_json::from_str(&line).unwrap();
            found = record["host"] == host;
            seen.push(record);
            if found {
                break;
            }
        }
        kill_group(pgid);
        let out = child.wait_with_output().unwrap();
        writeln!(ender, "end-of-test").unwrap();
        reader.join().unwrap();
        assert!(
            found,
            "{backend:?}: no decision for {host} in the proxy log: {seen:?}\n{}",
            text(&out)
        );
        records.extend(seen);
    }
    records
}

fn assert_admitted_by_preset(records: &[serde_json::Value], host: &str) {
    let admitted: Vec<_> = records.iter().filter(|r| r["host"] == host).collect();
    if records.is_empty() {
        return; // skipped above, with the reason printed
    }
    assert!(!admitted.is_empty(), "{records:?}");
    for r in admitted {
        assert_eq!(r["method"], "CONNECT", "{r}");
        assert_eq!(r["port"], 443, "{r}");
        // Admitted by the preset, then failed upstream (no refusal): the namespace has
        // no route out, so not even the name resolves, and no address was tried.
        assert_eq!(r["decision"], "failed", "{r}");
        assert_eq!(r["rule"], format!("preset model-apis: {host}"), "{r}");
        assert_eq!(r["reason"], "name-not-resolved", "{r}");
        assert!(r.get("address").is_none(), "{r}");
    }
}

#[test]
fn allow_model_apis_admits_claudes_api_host_by_the_preset() {
    let Some(agents) = agents_or_skip() else {
        return;
    };
    let mut env = CLAUDE_QUIET.to_vec();
    env.push(("ANTHROPIC_API_KEY", ANTHROPIC_KEY));
    let records = allow_run(&agents.claude, &["-p", "hi"], &env, "api.anthropic.com");
    assert_admitted_by_preset(&records, "api.anthropic.com");
}

#[test]
fn allow_model_apis_admits_codexs_api_host_by_the_preset() {
    let Some(agents) = agents_or_skip() else {
        return;
    };
    let records = allow_run(
        &agents.codex,
        &["exec", "--skip-git-repo-check", "hi"],
        &[("CODEX_API_KEY", OPENAI_KEY)],
        "api.openai.com",
    );
    assert_admitted_by_preset(&records, "api.openai.com");
}

/// Codex runs each command it executes under its own sandbox, bubblewrap on Linux, which
/// cannot start in the cage (new namespaces are refused). The README's way: Codex with its
/// sandbox off (`--sandbox danger-full-access`, here through `codex sandbox`'s
/// `-c sandbox_mode=...`, the same setting), and jaula is the sandbox. On both backends, as
/// root and as uid 65534: Codex's own sandbox command fails, with jaula's line before it
/// (from the command line) and the gate's at its end (the refused namespace seen), and
/// with its sandbox off the command runs, without either.
#[test]
fn codex_runs_commands_in_the_cage_with_its_own_sandbox_off() {
    let Some(agents) = agents_or_skip() else {
        return;
    };
    let users: &[User] = if common::is_root() {
        &[User::Root, User::Nobody]
    } else {
        &[User::Root]
    };
    for &user in users {
        for backend in BACKENDS {
            if !common::cage_here(backend, user) {
                continue;
            }
            let s = fresh("agents-codex-nested-");
            user.own(&s.root);
            if user == User::Nobody {
                common::open_to_others(&s.root);
            }
            let codex = |sandbox_args: &[&str]| {
                let mut args = vec!["sandbox"];
                args.extend_from_slice(sandbox_args);
                args.extend(["--", "/bin/sh", "-c", "echo ran-in-the-cage"]);
                let mut cmd = jaula_cmd(
                    &s,
                    backend,
                    &["--network", "none"],
                    &[],
                    &[&agents.codex],
                    &args,
                );
                user.apply(&mut cmd);
                run(cmd)
            };
            let line = "jaula: codex runs each command under its own sandbox";

            let on = codex(&[]);
            let all = text(&on);
            assert!(!on.status.success(), "{backend:?} {user:?}: {all}");
            assert!(
                !all.contains("ran-in-the-cage"),
                "{backend:?} {user:?}: {all}"
            );
            assert_eq!(
                all.matches(line).count(),
                1,
                "{backend:?} {user:?}: jaula did not say why, once: {all}"
            );
            assert!(all.contains("--sandbox danger-full-access"), "{all}");
            // The gate saw bubblewrap's refused namespace: one line at the end too.
            assert_eq!(
                all.matches("jaula: the command tried to create new namespaces")
                    .count(),
                1,
                "{backend:?} {user:?}: {all}"
            );

            let off = codex(&["-c", "sandbox_mode=\"danger-full-access\""]);
            let all = text(&off);
            assert!(off.status.success(), "{backend:?} {user:?}: {all}");
            assert!(
                String::from_utf8_lossy(&off.stdout).contains("ran-in-the-cage"),
                "{backend:?} {user:?}: {all}"
            );
            assert!(!all.contains(line), "{backend:?} {user:?}: {all}");
            assert!(
                !all.contains("new namespaces"),
                "{backend:?} {user:?}: {all}"
            );
        }
    }
}
