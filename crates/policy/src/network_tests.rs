use super::*;
use proptest::prelude::*;

fn rules(allow: &[&str], deny: &[&str], presets: &[&str]) -> DomainRules {
    NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: allow.iter().map(|s| s.to_string()).collect(),
        deny_domains: deny.iter().map(|s| s.to_string()).collect(),
        presets: presets.iter().map(|s| s.to_string()).collect(),
    }
    .resolve()
    .unwrap()
}

#[test]
fn refused_patterns_name_their_reason() {
    let cases: &[(&str, PatternError)] = &[
        ("", PatternError::Empty),
        ("  ", PatternError::Empty),
        ("*", PatternError::Everything),
        ("*.", PatternError::Everything),
        (
            "*.com",
            PatternError::PublicSuffix {
                suffix: "com".into(),
            },
        ),
        (
            "*.CO.UK",
            PatternError::PublicSuffix {
                suffix: "co.uk".into(),
            },
        ),
        ("https://github.com", PatternError::Scheme),
        ("github.com/org/repo", PatternError::Path),
        ("github.com:443", PatternError::Port),
        ("[::1]", PatternError::Port),
        ("a.*.com", PatternError::MisplacedWildcard),
        ("*github.com", PatternError::MisplacedWildcard),
        ("**.github.com", PatternError::MisplacedWildcard),
        ("a..com", PatternError::EmptyLabel),
        (".github.com", PatternError::EmptyLabel),
        (
            "bad name.com",
            PatternError::InvalidCharacter { found: ' ' },
        ),
        ("-x.com", PatternError::Hyphen { label: "-x".into() }),
    ];
    for (text, want) in cases {
        assert_eq!(DomainPattern::parse(text).as_ref(), Err(want), "{text:?}");
    }
    let long_label = format!("{}.com", "a".repeat(64));
    assert!(matches!(
        DomainPattern::parse(&long_label),
        Err(PatternError::LabelTooLong { .. })
    ));
    let long_name = vec!["abcdefghi"; 30].join(".");
    assert_eq!(DomainPattern::parse(&long_name), Err(PatternError::TooLong));
}

#[test]
fn accepted_patterns_are_normalised() {
    use DomainPattern::{Exact, Subdomains};
    for (text, want) in [
        ("API.Example.COM.", Exact("api.example.com".into())),
        ("*.GitHub.com", Subdomains("github.com".into())),
        ("localhost", Exact("localhost".into())),
        ("127.0.0.1", Exact("127.0.0.1".into())),
    ] {
        assert_eq!(DomainPattern::parse(text).unwrap(), want, "{text}");
    }
}

#[test]
fn wildcard_matches_subdomains_not_the_bare_domain_nor_lookalikes() {
    let p = DomainPattern::parse("*.example.com").unwrap();
    for (host, matched) in [
        ("a.example.com", true),
        ("a.b.example.com", true),
        ("example.com", false),
        ("badexample.com", false),
        ("example.com.evil.net", false),
        (".example.com", false),
    ] {
        assert_eq!(p.matches(host), matched, "{host}");
    }
}

#[test]
fn deny_wins_over_allow_and_each_decision_names_its_rule() {
    let r = rules(&["*.example.com"], &["secret.example.com"], &[]);
    let d = r.decide("Secret.Example.com.");
    assert!(!d.allowed);
    assert_eq!(d.rule, "deny-domain secret.example.com");
    let d = r.decide("api.example.com");
    assert!(d.allowed);
    assert_eq!(d.rule, "allow-domain *.example.com");
    let d = r.decide("example.com");
    assert!(!d.allowed);
    assert_eq!(d.rule, NOT_ALLOWED_RULE);
    assert_eq!(r.decide("bad host").rule, INVALID_HOST_RULE);
    assert_eq!(r.decide("::1").rule, INVALID_HOST_RULE);
}

#[test]
fn presets_cover_the_issue_list_and_all_parse() {
    let wanted = [
        ("model-apis", "api.anthropic.com"),
        ("model-apis", "api.openai.com"),
        ("model-apis", "generativelanguage.googleapis.com"),
        ("github", "github.com"),
        ("github", "codeload.github.com"),
        ("github", "objects.githubusercontent.com"),
        ("rust", "index.crates.io"),
        ("rust", "static.crates.io"),
        ("python", "files.pythonhosted.org"),
        ("javascript", "registry.npmjs.org"),
        ("go", "proxy.golang.org"),
        ("go", "sum.golang.org"),
    ];
    let names: Vec<&str> = presets().iter().map(|p| p.name).collect();
    let all = rules(&[], &[], &names);
    for (preset, host) in wanted {
        let d = all.decide(host);
        assert!(d.allowed, "{host}");
        assert!(
            d.rule.starts_with(&format!("preset {preset}: ")),
            "{}",
            d.rule
        );
    }
    assert!(!all.decide("evil.example").allowed);
    assert!(!all.decide("githubusercontent.com").allowed);
}

#[test]
fn spec_errors() {
    let spec = |mode, allow: &[&str], presets: &[&str]| NetworkSpec {
        mode,
        allow_domains: allow.iter().map(|s| s.to_string()).collect(),
        deny_domains: vec![],
        presets: presets.iter().map(|s| s.to_string()).collect(),
    };
    assert!(matches!(
        spec(NetworkMode::Allow, &["*.com"], &[]).resolve(),
        Err(NetworkError::Pattern {
            list: "allow-domain",
            ..
        })
    ));
    assert!(matches!(
        spec(NetworkMode::Allow, &[], &["cobol"]).resolve(),
        Err(NetworkError::UnknownPreset { .. })
    ));
    assert!(matches!(
        spec(NetworkMode::None, &["a.example"], &[]).resolve(),
        Err(NetworkError::ListsWithoutAllow { .. })
    ));
    let empty = spec(NetworkMode::Allow, &[], &[]).resolve().unwrap();
    assert!(!empty.decide("localhost").allowed);
    assert_eq!("allow".parse::<NetworkMode>().unwrap(), NetworkMode::Allow);
    assert!("off".parse::<NetworkMode>().is_err());
    assert_eq!(NetworkMode::default(), NetworkMode::Host);
}

fn label() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?"
}

proptest! {
    #[test]
    fn exact_matches_only_itself(a in label(), b in label(), c in label()) {
        let name = format!("{a}.{b}");
        let p = DomainPattern::parse(&name).unwrap();
        prop_assert!(p.matches(&name));
        let sub = format!("{c}.{name}");
        prop_assert!(!p.matches(&sub));
    }

    #[test]
    fn wildcard_matches_exactly_the_strict_subdomains(
        a in label(), b in label(), c in label(), d in label()
    ) {
        let suffix = format!("{a}.{b}");
        let p = DomainPattern::parse(&format!("*.{suffix}")).unwrap();
        let sub = format!("{c}.{suffix}");
        let deeper = format!("{d}.{c}.{suffix}");
        let glued = format!("{c}{suffix}");
        prop_assert!(p.matches(&sub));
        prop_assert!(p.matches(&deeper));
        prop_assert!(!p.matches(&suffix));
        prop_assert!(!p.matches(&glued));
    }

    #[test]
    fn deny_always_wins(a in label(), b in label(), c in label()) {
        let host = format!("{c}.{a}.{b}");
        let suffix = format!("*.{a}.{b}");
        let r = rules(&[&host, &suffix], &[&suffix], &[]);
        prop_assert!(!r.decide(&host).allowed);
    }

    #[test]
    fn parse_never_panics(s in "\\PC{0,40}") {
        let _ = DomainPattern::parse(&s);
        let _ = normalize_host(&s);
    }
}

#[test]
fn only_an_exact_allow_domain_entry_counts_as_naming_a_host() {
    let r = rules(
        &["api.example.com", "*.example.org", "127.0.0.1", "localhost"],
        &["no.example.org"],
        &["github"],
    );
    for named in [
        "api.example.com",
        "API.Example.com.",
        "127.0.0.1",
        "localhost",
    ] {
        assert!(r.allowed_by_exact_entry(named), "{named}");
    }
    // Allowed, but by a pattern or a preset.
    for allowed in ["a.example.org", "github.com"] {
        assert!(r.decide(allowed).allowed, "{allowed}");
        assert!(!r.allowed_by_exact_entry(allowed), "{allowed}");
    }
    // Not allowed at all.
    for refused in ["no.example.org", "other.example.com", "::1"] {
        assert!(!r.allowed_by_exact_entry(refused), "{refused}");
    }
}

#[test]
fn a_deny_entry_wins_over_an_exact_allow_entry_for_naming_too() {
    let r = rules(&["api.example.com"], &["api.example.com"], &[]);
    assert!(!r.allowed_by_exact_entry("api.example.com"));
}
