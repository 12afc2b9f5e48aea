use std::path::Path;

use super::{FileMatch, FileRule, FileRuleSource};

fn writable(path: &str, matching: FileMatch) -> FileRule {
    FileRule::WritableFile {
        path: path.into(),
        matching,
        source: FileRuleSource::ClaudeState,
    }
}

#[test]
fn an_exact_rule_covers_only_its_path() {
    let rule = writable("/h/state.json", FileMatch::Exact);
    assert!(rule.covers(Path::new("/h/state.json")));
    for other in [
        "/h/state.json.bak",
        "/h/state.json/x",
        "/h",
        "/h/x/state.json",
    ] {
        assert!(!rule.covers(Path::new(other)), "{other}");
    }
    let rule = FileRule::ReadableInSeal {
        path: "/s/mine".into(),
        source: FileRuleSource::WindowToken,
    };
    assert!(rule.covers(Path::new("/s/mine")));
    assert!(!rule.covers(Path::new("/s/mine2")));
}

#[test]
fn a_name_prefix_rule_covers_siblings_named_after_the_file_and_what_lies_beneath() {
    let rule = writable("/h/state.json", FileMatch::NamePrefix);
    for hit in [
        "/h/state.json",
        "/h/state.json.backup",
        "/h/state.jsonx/inner",
    ] {
        assert!(rule.covers(Path::new(hit)), "{hit}");
    }
    for miss in ["/h/state.jso", "/h/x/state.json", "/other/state.json", "/h"] {
        assert!(!rule.covers(Path::new(miss)), "{miss}");
    }
}

#[test]
fn a_sealed_pattern_covers_exactly_one_child_deep() {
    let rule = FileRule::SealedPattern {
        dir: "/h/ch".into(),
        name: ".env".into(),
        existing: Vec::new(),
        source: FileRuleSource::ChannelTokens,
    };
    assert!(rule.covers(Path::new("/h/ch/seat/.env")));
    for miss in [
        "/h/ch/.env",
        "/h/ch/a/b/.env",
        "/h/ch/seat/.envx",
        "/h/ch/seat",
        "/h/chx/seat/.env",
    ] {
        assert!(!rule.covers(Path::new(miss)), "{miss}");
    }
}
