use std::ffi::OsString;
use std::fs;

use super::nested_sandbox_hint;
use crate::test_support::scratch;

fn argv(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn hint(words: &[&str], env: &[(OsString, OsString)]) -> bool {
    nested_sandbox_hint(&argv(words), env).is_some()
}

#[test]
fn codex_with_its_sandbox_on_gets_the_line() {
    for words in [
        &["codex"][..],
        &["/opt/bin/codex", "exec", "hi"],
        &["codex", "--sandbox", "workspace-write"],
        &["codex", "-c", "sandbox_mode=\"read-only\"", "exec", "x"],
        &["codex", "sandbox", "--", "true"],
    ] {
        assert!(hint(words, &[]), "{words:?}");
    }
    let line = nested_sandbox_hint(&argv(&["codex"]), &[]).unwrap();
    assert!(line.starts_with("jaula: codex "), "{line}");
    assert!(line.contains("--sandbox danger-full-access"), "{line}");
    assert!(!line.contains('\n'));
}

#[test]
fn codex_with_its_sandbox_off_or_running_no_commands_and_other_programs_get_nothing() {
    for words in [
        &["codex", "--sandbox", "danger-full-access"][..],
        &["codex", "-s", "danger-full-access", "exec", "hi"],
        &["codex", "--sandbox=danger-full-access"],
        &["codex", "--dangerously-bypass-approvals-and-sandbox"],
        &[
            "codex",
            "sandbox",
            "-c",
            "sandbox_mode=\"danger-full-access\"",
            "--",
            "true",
        ],
        &["codex", "--version"],
        &["codex", "login", "status"],
        &["claude"],
        &["sh", "-c", "codex"],
    ] {
        assert!(!hint(words, &[]), "{words:?}");
    }
}

#[test]
fn codexs_config_file_counts_before_any_profile() {
    let (_dir, root) = scratch("nested-sandbox-");
    let home = root.as_path();
    fs::create_dir_all(home.join(".codex")).unwrap();
    let env = [(OsString::from("HOME"), home.as_os_str().to_owned())];
    let config = home.join(".codex/config.toml");
    fs::write(
        &config,
        "model = \"o3\"\nsandbox_mode = \"danger-full-access\" # jaula\n",
    )
    .unwrap();
    assert!(!hint(&["codex"], &env));
    // A flag wins over the file.
    assert!(hint(&["codex", "-s", "read-only"], &env));
    // Only a profile's: the top level still sandboxes.
    fs::write(
        &config,
        "[profiles.x]\nsandbox_mode = \"danger-full-access\"\n",
    )
    .unwrap();
    assert!(hint(&["codex"], &env));
}
