use proptest::prelude::*;

use super::*;
use crate::quote::escape_regex;

fn re(source: &str) -> Ere {
    match Ere::new(source) {
        Ok(re) => re,
        Err(e) => panic!("{source:?} should compile: {e}"),
    }
}

/// `source` matches every path in `matching` and none in `not_matching`.
fn assert_matches(source: &str, matching: &[&[u8]], not_matching: &[&[u8]]) {
    let r = re(source);
    for path in matching {
        assert!(
            r.is_match(path),
            "{source:?} missed {}",
            path.escape_ascii()
        );
    }
    for path in not_matching {
        assert!(
            !r.is_match(path),
            "{source:?} matched {}",
            path.escape_ascii()
        );
    }
}

#[test]
fn anchored_prefix_matches_only_at_the_start() {
    assert_matches(
        r"^/h/\.claude\.json",
        &[
            b"/h/.claude.json",
            b"/h/.claude.json.backup",
            b"/h/.claude.jsonx/y",
        ],
        &[
            b"/x/h/.claude.json",
            b"/h/.claude.jso",
            // An escaped dot is a dot, not any character.
            b"/h/Xclaude.json",
            b"/h/.claudeXjson",
        ],
    );
}

#[test]
fn unanchored_pattern_matches_anywhere() {
    assert_matches(
        r"\.app",
        &[b"/Applications/X.app/Contents"],
        &[b"/Applications/Xapp"],
    );
}

#[test]
fn channel_pattern_matches_exactly_one_segment() {
    assert_matches(
        r"^/h/\.claude/channels/[^/]+/\.env$",
        &[
            b"/h/.claude/channels/seat/.env",
            b"/h/.claude/channels/s e\"a\nt/.env",
            b"/h/.claude/channels/\xff\xfe/.env",
            "/h/.claude/channels/ñ/.env".as_bytes(),
        ],
        &[
            b"/h/.claude/channels//.env",
            b"/h/.claude/channels/.env",
            b"/h/.claude/channels/a/b/.env",
            b"/h/.claude/channels/a/.env/x",
            b"/h/.claude/channels/a/.envx",
            b"/h/.claude/channels/a/x.env",
            // `$` is the end of the path, not of a line (no REG_NEWLINE).
            b"/h/.claude/channels/a/.env\n",
        ],
    );
}

#[test]
fn dot_matches_one_whole_character_including_newline() {
    assert_matches(
        "^a.b$",
        &[b"axb", b"a\nb", "añb".as_bytes(), b"a\xffb"],
        &[b"ab", b"axxb"],
    );
}

#[test]
fn quantifiers() {
    assert_matches("^ab*c$", &[b"ac", b"abbbc"], &[b"abxc"]);
    assert_matches("^ab+c$", &[b"abc", b"abbc"], &[b"ac"]);
    assert_matches("^ab?c$", &[b"ac", b"abc"], &[b"abbc"]);
    // A quantifier repeats a whole multi-byte character.
    assert_matches("^añ+$", &["añññ".as_bytes()], &[b"a\xc3"]);
}

#[test]
fn bracket_expressions() {
    let r = re("^[]a-c-]$");
    for ok in [b"]", b"a", b"b", b"c", b"-"] {
        assert!(r.is_match(ok), "{ok:?}");
    }
    assert!(!r.is_match(b"d"));
    let neg = re("^[^/]$");
    assert!(neg.is_match("é".as_bytes()));
    assert!(!neg.is_match(b"/"));
    // Inside a bracket a backslash is an ordinary member (POSIX).
    let bs = re(r"^[\]$");
    assert!(bs.is_match(b"\\"));
}

#[test]
fn escaped_punctuation_is_literal() {
    let r = re(r#"^\"\\\.\*\+\?\(\)\[\]\{\}\|\^\$$"#);
    assert!(r.is_match(br#""\.*+?()[]{}|^$"#));
    assert!(!r.is_match(br#""\x*+?()[]{}|^$"#));
}

#[test]
fn constructs_outside_the_subset_are_refused() {
    let unsupported = [
        ("(a)", '('),
        ("a|b", '|'),
        ("a{2}", '{'),
        ("a^b", '^'),
        ("a$b", '$'),
        ("a]", ']'),
    ];
    for (source, construct) in unsupported {
        match Ere::new(source) {
            Err(EreError::Unsupported { construct: c, .. }) => assert_eq!(c, construct),
            other => panic!("{source:?}: {other:?}"),
        }
    }
    assert_eq!(
        Ere::new(r"\d"),
        Err(EreError::EscapedAlphanumeric {
            escaped: 'd',
            offset: 0
        })
    );
    assert_eq!(Ere::new("a\\"), Err(EreError::TrailingBackslash));
    assert_eq!(
        Ere::new("ab[^/"),
        Err(EreError::UnterminatedBracket { offset: 2 })
    );
    assert!(matches!(
        Ere::new("*a"),
        Err(EreError::NothingToRepeat {
            quantifier: '*',
            ..
        })
    ));
    assert!(matches!(
        Ere::new("^+"),
        Err(EreError::NothingToRepeat {
            quantifier: '+',
            ..
        })
    ));
    assert!(matches!(
        Ere::new("a**"),
        Err(EreError::Unsupported { construct: '*', .. })
    ));
    assert!(matches!(
        Ere::new("[[:alpha:]]"),
        Err(EreError::UnsupportedBracket { .. })
    ));
    assert!(matches!(
        Ere::new("[é]"),
        Err(EreError::UnsupportedBracket { .. })
    ));
    assert!(matches!(
        Ere::new("[z-a]"),
        Err(EreError::UnsupportedBracket { .. })
    ));
}

#[test]
fn escape_regex_escapes_every_metacharacter_and_the_quote() {
    assert_eq!(
        escape_regex(r#"/a.b*c+d?e(f)g[h]i{j}k|l^m$n\o"p q"#),
        r#"/a\.b\*c\+d\?e\(f\)g\[h\]i\{j\}k\|l\^m\$n\\o\"p q"#
    );
    // Letters and digits are never escaped: `\d`, `\w` mean something else to engines.
    assert_eq!(escape_regex("abc123/é"), "abc123/é");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// An escaped string, anchored at both ends, matches itself and nothing else nearby.
    #[test]
    fn escaped_text_matches_exactly_itself(
        s in r#"[a-c/"\\ \n.*+?()\[\]{}|^$#;é-]{0,16}"#,
        other in r#"[a-c/"\\ \n.*+?()\[\]{}|^$#;é-]{0,16}"#,
    ) {
        let exact = re(&format!("^{}$", escape_regex(&s)));
        prop_assert!(exact.is_match(s.as_bytes()));
        prop_assert_eq!(exact.is_match(other.as_bytes()), s == other);
        let prefix = re(&format!("^{}", escape_regex(&s)));
        prop_assert_eq!(
            prefix.is_match(other.as_bytes()),
            other.as_bytes().starts_with(s.as_bytes())
        );
    }
}
