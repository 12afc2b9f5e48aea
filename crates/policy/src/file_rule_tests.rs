use std::path::Path;

use super::{FileMatch, FileRule, FileRuleSource};

fn writable(path: &str, matching: FileMatch) -> FileRule {
    FileRule::WritableFile {
        path: path.into(),
        matching,
        source: FileRuleSource::ClaudeState,
    }
}

/// `rule` covers every path of `hits` and none of `misses` (each list separated by spaces).
fn assert_covers(rule: &FileRule, hits: &str, misses: &str) {
    for hit in hits.split_whitespace() {
        assert!(rule.covers(Path::new(hit)), "{hit}");
    }
    for miss in misses.split_whitespace() {
        assert!(!rule.covers(Path::new(miss)), "{miss}");
    }
}

#[test]
fn an_exact_rule_covers_only_its_path() {
    let rule = writable("/h/state.json", FileMatch::Exact);
    let misses = "/h/state.json.bak /h/state.json/x /h /h/x/state.json";
    assert_covers(&rule, "/h/state.json", misses);
    let rule = FileRule::ReadableInSeal {
        path: "/s/mine".into(),
        source: FileRuleSource::WindowToken,
    };
    assert_covers(&rule, "/s/mine", "/s/mine2");
}

#[test]
fn a_name_prefix_rule_covers_siblings_named_after_the_file_and_what_lies_beneath() {
    let rule = writable("/h/state.json", FileMatch::NamePrefix);
    let hits = "/h/state.json /h/state.json.backup /h/state.jsonx/inner";
    let misses = "/h/state.jso /h/x/state.json /other/state.json /h";
    assert_covers(&rule, hits, misses);
}

#[test]
fn a_sealed_pattern_covers_exactly_one_child_deep() {
    let rule = FileRule::SealedPattern {
        dir: "/h/ch".into(),
        name: ".env".into(),
        existing: Vec::new(),
        source: FileRuleSource::ChannelTokens,
    };
    let misses = "/h/ch/.env /h/ch/a/b/.env /h/ch/seat/.envx /h/ch/seat /h/chx/seat/.env";
    assert_covers(&rule, "/h/ch/seat/.env", misses);
}
