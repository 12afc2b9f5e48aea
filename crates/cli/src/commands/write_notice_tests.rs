use super::*;

use std::path::PathBuf;

use jaula_sandbox::call_gate::write_refusals::WriteRule;

fn refusal(path: &str, rule: WriteRule, allow_with: &[(&'static str, &str)]) -> WriteRefusal {
    WriteRefusal {
        path: PathBuf::from(path),
        call: "create",
        rule,
        detail: "default: read-only".to_owned(),
        allow_with: allow_with
            .iter()
            .map(|(f, p)| (*f, PathBuf::from(p)))
            .collect(),
    }
}

#[test]
fn nothing_refused_says_nothing() {
    assert_eq!(
        summary(&RefusedWrites::default(), Path::new("/home/u")),
        None
    );
}

#[test]
fn the_line_names_path_rule_and_flag() {
    let refused = RefusedWrites {
        kept: vec![
            (
                refusal(
                    "/home/u/notes.txt",
                    WriteRule::ReadOnly,
                    &[("--allow-write", "/home/u")],
                ),
                1,
            ),
            (
                WriteRefusal {
                    detail: "sealed: ~/.ssh (credential directory)".to_owned(),
                    ..refusal("/home/u/.ssh/x", WriteRule::Sealed, &[])
                },
                2,
            ),
            (
                WriteRefusal {
                    detail: "made by the cage".to_owned(),
                    ..refusal("/r/.git/hooks/x", WriteRule::PlantingGuard, &[])
                },
                1,
            ),
        ],
        dropped: 0,
    };
    let line = summary(&refused, Path::new("/home/u")).unwrap();
    assert_eq!(
        line,
        "jaula: the cage refused writes to ~/notes.txt (default: read-only; allow with \
         --allow-write ~); ~/.ssh/x (sealed: ~/.ssh (credential directory); no flag allows \
         it); /r/.git/hooks/x (planting guard: made by the cage; no flag allows it)"
    );
}

#[test]
fn past_a_few_paths_the_rest_are_counted() {
    let mut kept: Vec<(WriteRefusal, u64)> = (0..NAMED + 2)
        .map(|i| (refusal(&format!("/ro/{i}"), WriteRule::ReadOnly, &[]), 2))
        .collect();
    kept[0].1 = 9;
    let line = summary(&RefusedWrites { kept, dropped: 3 }, Path::new("/home/u")).unwrap();
    assert!(line.contains("/ro/4 "), "{line}");
    assert!(!line.contains("/ro/5"), "{line}");
    let more = "; and 7 more refused write(s) elsewhere";
    assert!(line.ends_with(more), "{line}");
}

#[test]
fn a_log_line_is_json_with_the_rule_and_the_flags() {
    let r = WriteRefusal {
        path: PathBuf::from("/home/u/.gitconfig"),
        call: "write",
        rule: WriteRule::Protected,
        detail: "protected: ~/.gitconfig (git config in the home)".to_owned(),
        allow_with: vec![
            ("--unprotect", PathBuf::from("/home/u/.gitconfig")),
            ("--allow-write", PathBuf::from("/home/u")),
        ],
    };
    let line = line(&r).unwrap();
    assert_eq!(line.last(), Some(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(v["method"], "file");
    assert_eq!(v["call"], "write");
    assert_eq!(v["path"], "/home/u/.gitconfig");
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["rule"], "protected");
    assert_eq!(
        v["allow_with"],
        serde_json::json!(["--unprotect /home/u/.gitconfig", "--allow-write /home/u"])
    );
    assert!(v["time"].as_str().unwrap().ends_with('Z'));
    let sealed = line_of(refusal("/home/u/.ssh/k", WriteRule::Sealed, &[]));
    assert!(sealed.get("allow_with").is_none());
}

fn line_of(r: WriteRefusal) -> serde_json::Value {
    serde_json::from_slice(&line(&r).unwrap()).unwrap()
}
