//! The exit-code contract (docs/configuration.md, "Exit status"), pinned as one table:
//! for `run` and `contract run`, 2 for a command line that is wrong, 126 for every refusal
//! to cage (an unsafe repo, a config jaula cannot use, no cage, a command that cannot be
//! executed), 127 for a command not found, and otherwise the command's own status. The
//! inspection and launcher commands keep agents-city's 0/1/2 (docs/compatibility.md).

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{is_root, jaula, scratch};

struct Case {
    what: &'static str,
    args: Vec<String>,
    /// Config file text, passed with `--config`, when given.
    config: Option<&'static str>,
    env: Vec<(&'static str, &'static str)>,
    code: i32,
    /// Text the output (stdout or stderr) must hold.
    says: &'static str,
}

fn case(what: &'static str, args: &[&str], code: i32, says: &'static str) -> Case {
    Case {
        what,
        args: args.iter().map(|a| a.to_string()).collect(),
        config: None,
        env: Vec::new(),
        code,
        says,
    }
}

fn with_config(mut c: Case, text: &'static str) -> Case {
    c.config = Some(text);
    c
}

fn with_env(mut c: Case, name: &'static str, value: &'static str) -> Case {
    c.env.push((name, value));
    c
}

#[test]
fn every_refusal_has_its_documented_exit_code() {
    let (_keep, root) = scratch("exit-codes-");
    let home = root.join("home");
    let repo = home.join("src/repo");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::create_dir_all(&repo).unwrap();
    let at = |p: &Path| p.to_str().unwrap().to_owned();
    let (home_s, ssh_s, missing_s) = (at(&home), at(&home.join(".ssh")), at(&root.join("missing")));
    let run_with_repo = |repo: &str| -> Vec<String> {
        ["run", "--repo", repo, "--", "true"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let mut cases = vec![
        // run: the command's own status.
        case(
            "run: the command's status",
            &["run", "--", "sh", "-c", "exit 7"],
            7,
            "",
        ),
        case("run: success", &["run", "--", "true"], 0, ""),
        case(
            "run: command not found",
            &["run", "--", "/nonexistent/jaula-no-such-command"],
            127,
            "",
        ),
        // run: usage errors (the command line itself), 2.
        case("run: no command", &["run"], 2, "CMD"),
        case(
            "run: unknown value",
            &["run", "--network", "bogus", "--", "true"],
            2,
            "bogus",
        ),
        case(
            "run: an unknown unix-socket preset",
            &["run", "--allow-unix-preset", "bogus", "--", "true"],
            2,
            "known: ssh-agent, gpg-agent, docker",
        ),
        case(
            "run: a flag that needs another mode",
            &[
                "run",
                "--network",
                "none",
                "--allow-domain",
                "x.example",
                "--",
                "true",
            ],
            2,
            "--network allow",
        ),
        // run: refusals to cage, 126.
        case(
            "run: the filesystem root as repo",
            &["run", "--repo", "/", "--", "true"],
            126,
            "filesystem root",
        ),
        with_config(
            case(
                "run: unparsable config",
                &["run", "--", "true"],
                126,
                "not valid",
            ),
            "[run\n",
        ),
        with_config(
            case(
                "run: unknown config key",
                &["run", "--", "true"],
                126,
                "unknown field",
            ),
            "[cage]\nseal = []\n",
        ),
        with_config(
            case(
                "run: bad run.backend",
                &["run", "--", "true"],
                126,
                "run.backend",
            ),
            "[run]\nbackend = \"fast\"\n",
        ),
        with_config(
            case(
                "run: bad network.mode",
                &["run", "--", "true"],
                126,
                "network.mode",
            ),
            "[network]\nmode = \"open\"\n",
        ),
        with_config(
            case(
                "run: bad network preset in the config",
                &["run", "--", "true"],
                126,
                "cobol",
            ),
            "[network]\nallow_preset = [\"cobol\"]\n",
        ),
        with_config(
            case(
                "run: bad env pattern in the config",
                &["run", "--", "true"],
                126,
                "env.keep",
            ),
            "[env]\nkeep = [\"A=B\"]\n",
        ),
        with_env(
            case(
                "run: cage disabled",
                &["run", "--", "true"],
                126,
                "refusing to run uncaged",
            ),
            "CITY_CAGE",
            "0",
        ),
        // Inspection and launcher commands: agents-city's codes.
        case("line: no --repo", &["line"], 2, "--repo is required"),
        case("profile: no --repo", &["profile"], 2, "--repo is required"),
        case(
            "explain: --repo defaults to the current directory",
            &["explain", "/etc/hostname"],
            0,
            "decision: allowed",
        ),
        with_config(
            case("check: a config run refuses", &["check"], 1, "run.backend"),
            "[run]\nbackend = \"fast\"\n",
        ),
    ];
    for (what, repo, says) in [
        ("run: the home as repo", home_s, "home directory"),
        ("run: a repo inside a seal", ssh_s, "sealed root"),
        (
            "run: a missing repo",
            missing_s,
            "existing working directory",
        ),
    ] {
        let mut c = case(what, &[], 126, says);
        c.args = run_with_repo(&repo);
        cases.push(c);
    }
    let mut failures = Vec::new();
    for c in &cases {
        let mut cmd = Command::new(jaula());
        let mut args = c.args.clone();
        if let Some(text) = c.config {
            let file: PathBuf = root.join(format!("config-{}.toml", failures.len() + args.len()));
            fs::write(&file, text).unwrap();
            // After the subcommand: the flag belongs to it.
            args.insert(1, "--config".into());
            args.insert(2, file.to_str().unwrap().into());
        }
        cmd.args(&args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home)
            .envs(c.env.iter().copied())
            .current_dir(&repo);
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.code() != Some(c.code) || !text.contains(c.says) {
            failures.push(format!(
                "{}: want {} with {:?}, got {:?}:\n{text}",
                c.what,
                c.code,
                c.says,
                out.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

/// `jaula --help` and `jaula contract --help` describe contract mode in words, not with a
/// usage string where the description belongs.
#[test]
fn help_describes_contract_mode() {
    for args in [&["--help"][..], &["contract", "--help"]] {
        let out = Command::new(jaula()).args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("contract ") || l.starts_with("Isolate"))
            .unwrap_or_else(|| panic!("{args:?}: no contract description:\n{text}"));
        assert!(!line.contains("`jaula contract ["), "{args:?}: {line}");
        assert!(text.contains("Isolate tenants"), "{args:?}:\n{text}");
    }
}

/// A `contract run` that is refused before its command starts exits 126 and still leaves a
/// `run` line in the evidence log, with the reason. Here the refusal is a workspace root
/// the tenant's uid cannot search (a 0700 directory of root's on the way).
#[test]
fn a_refused_contract_run_is_recorded() {
    if !is_root() {
        return common::skip_or_fail("contract mode needs root (uid separation)");
    }
    let (_keep, root) = scratch("exit-codes-contract-");
    let locked = root.join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let out = Command::new(jaula())
        .env("JAULA_CONTRACT_ROOT", locked.join("tenants"))
        .env("JAULA_CONTRACT_STATE", root.join("state"))
        .env("JAULA_CONTRACT_UIDS", "231000-231009")
        .args([
            "contract",
            "run",
            "cccccccc-0000-4000-8000-000000000003",
            "--work-record",
            "w1",
            "--runtime",
            "claude",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    let log = fs::read_to_string(root.join("state/contract-evidence.jsonl")).unwrap();
    let run = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["event"] == "run")
        .unwrap_or_else(|| panic!("no run line:\n{log}"));
    assert_eq!(run["contract"], "cccccccc-0000-4000-8000-000000000003");
    assert!(
        run["refused"]
            .as_str()
            .unwrap()
            .contains("cannot enter its workspace under"),
        "{run}"
    );
    assert!(run["exit_code"].is_null());
}

/// A bad id is a wrong command line: clap refuses it (exit 2) with the rule it broke,
/// before any state is opened, so nothing is recorded or created.
#[test]
fn a_bad_contract_id_is_a_usage_error_that_changes_nothing() {
    let (_keep, root) = scratch("exit-codes-ids-");
    // `contract run ID --work-record WR --runtime RT -- true`, one bad field at a time.
    let run = |id: &'static str, work_record: &'static str, runtime: &'static str| {
        vec![
            "run",
            id,
            "--work-record",
            work_record,
            "--runtime",
            runtime,
            "--",
            "true",
        ]
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            run("bad/id", "w1", "claude"),
            "[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
        ),
        (
            run("c1", "not a work record id", "claude"),
            "[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
        ),
        (run("c1", "w1", "Claude"), "[a-z][a-z0-9_]{0,31}"),
        (vec!["prepare", "c1", "tmp"], "reserved"),
        (vec!["uid", "../x"], "one path segment"),
        (vec!["--uid-range", "5-1", "held"], "uid range"),
    ];
    for (args, rule) in &cases {
        let out = Command::new(jaula())
            .env("JAULA_CONTRACT_ROOT", root.join("tenants"))
            .env("JAULA_CONTRACT_STATE", root.join("state"))
            .env("JAULA_CONTRACT_UIDS", "231000-231009")
            .arg("contract")
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("invalid value"), "{args:?}: {stderr}");
        assert!(
            stderr.contains(rule),
            "{args:?} does not name {rule:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(
        !root.join("state").exists(),
        "a bad id opened the state directory"
    );
    assert!(!root.join("tenants").exists(), "a bad id created a tree");
}
