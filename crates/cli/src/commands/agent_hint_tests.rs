use std::ffi::OsString;
use std::fs;
use std::path::Path;

use jaula_policy::{Platform, Policy, PolicySpec};

use super::login_hint;
use crate::test_support::scratch;

fn policy(root: &Path, platform: Platform) -> Policy {
    let home = root.join("home");
    let repo = root.join("repo");
    fs::create_dir_all(home.join(".claude")).unwrap();
    fs::create_dir_all(&repo).unwrap();
    PolicySpec::with_defaults(platform, home, repo)
        .resolve()
        .unwrap()
}

fn argv(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
}

#[test]
fn claude_with_its_login_sealed_and_nothing_else_gets_the_hint() {
    let (_keep, root) = scratch("agent-hint-");
    let p = policy(&root, Platform::Linux);
    let claude = &argv(&["/usr/local/bin/claude"]);
    // No login on the host: claude would ask to log in anyway, caged or not.
    assert_eq!(login_hint(claude, &p, &env(&[])), None);
    fs::write(p.home().join(".claude/.credentials.json"), "{}").unwrap();
    let hint = login_hint(claude, &p, &env(&[("PATH", "/usr/bin")])).unwrap();
    assert!(hint.contains("CLAUDE_CODE_OAUTH_TOKEN") && hint.contains("setup-token"));
    assert!(hint.contains("--hand-access-token claude"), "{hint}");
    assert!(!hint.contains('\n'));
    assert!(login_hint(&argv(&["claude"]), &p, &env(&[])).is_some());
}

#[test]
fn no_hint_when_anything_else_would_log_it_in_or_it_is_not_claude() {
    let (_keep, root) = scratch("agent-hint-");
    let p = policy(&root, Platform::Linux);
    fs::write(p.home().join(".claude/.credentials.json"), "{}").unwrap();
    let claude = &argv(&["claude"]);
    for name in [
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CONFIG_DIR",
    ] {
        assert_eq!(login_hint(claude, &p, &env(&[(name, "x")])), None, "{name}");
    }
    // An empty variable logs nothing in.
    assert!(login_hint(claude, &p, &env(&[("ANTHROPIC_API_KEY", "")])).is_some());
    for other in ["codex", "claude-helper", "sh"] {
        assert_eq!(login_hint(&argv(&[other]), &p, &env(&[])), None, "{other}");
    }
    fs::write(
        p.home().join(".claude/settings.json"),
        r#"{"apiKeyHelper": "~/bin/key"}"#,
    )
    .unwrap();
    assert_eq!(login_hint(claude, &p, &env(&[])), None);
}

#[test]
fn no_hint_off_linux() {
    let (_keep, root) = scratch("agent-hint-");
    let mac = policy(&root, Platform::MacOs);
    fs::write(mac.home().join(".claude/.credentials.json"), "{}").unwrap();
    assert_eq!(login_hint(&argv(&["claude"]), &mac, &env(&[])), None);
}

/// A wrapped `claude` gets the hint as a bare one does: behind `timeout`, in a shell
/// string, in a script the command names or finds on PATH.
#[test]
fn a_wrapped_claude_gets_the_hint_too() {
    let (_keep, root) = scratch("agent-hint-");
    let p = policy(&root, Platform::Linux);
    fs::write(p.home().join(".claude/.credentials.json"), "{}").unwrap();
    let none = env(&[]);
    for cmd in [
        &["timeout", "30", "claude", "-p", "hi"][..],
        &["env", "X=1", "/opt/bin/claude"],
        &["sh", "-c", "cd x && claude -p 'hi'"],
        &["nice", "-n", "5", "timeout", "30", "claude"],
    ] {
        assert!(login_hint(&argv(cmd), &p, &none).is_some(), "{cmd:?}");
    }
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let agent = bin.join("agent");
    fs::write(&agent, "#!/bin/sh\nexec timeout 30 claude \"$@\"\n").unwrap();
    let agent_arg = agent.to_string_lossy().into_owned();
    assert!(login_hint(&argv(&[&agent_arg]), &p, &none).is_some());
    assert!(login_hint(&argv(&["bash", &agent_arg]), &p, &none).is_some());
    let on_path = env(&[("PATH", bin.to_str().unwrap())]);
    assert!(login_hint(&argv(&["agent", "-x"]), &p, &on_path).is_some());
    // Not a script (no #!), a script that never names claude, a longer name: no hint.
    let notes = bin.join("notes.txt");
    fs::write(&notes, "run claude later\n").unwrap();
    let other = bin.join("other");
    fs::write(&other, "#!/bin/sh\nexec claude-helper\n").unwrap();
    for cmd in [
        vec!["cat".to_owned(), notes.to_string_lossy().into_owned()],
        vec![other.to_string_lossy().into_owned()],
        vec![
            "timeout".to_owned(),
            "30".to_owned(),
            "claude-code".to_owned(),
        ],
    ] {
        let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
        assert_eq!(login_hint(&argv(&cmd), &p, &none), None, "{cmd:?}");
    }
}
