use std::ffi::OsStr;
use std::path::Path;

use super::*;

fn parse(text: &str) -> Profile {
    match Profile::parse(text) {
        Ok(p) => p,
        Err(e) => panic!("should parse: {e}\n{text}"),
    }
}

fn allowed(p: &Profile, op: FileOperation, path: &str) -> bool {
    p.evaluate(op, Path::new(path)).allowed
}

const SAMPLE: &str = r#"(version 1)
; a comment; with "quotes" and (parens)
(allow default)
(deny file-write*)
(allow file-write*
  (subpath "/w")
  (regex #"^/h/\.claude\.json"))
(deny file-read* file-write*
  (subpath "/w/secret")
  (literal "/h/.netrc")
  (regex #"^/h/\.claude/channels/[^/]+/\.env$"))
(deny file-write* (subpath "/w/cfg"))
(allow file-read* (literal "/w/secret/token"))
"#;

#[test]
fn last_matching_rule_wins() {
    let p = parse(SAMPLE);
    use FileOperation::{Read, Write};
    assert!(allowed(&p, Read, "/etc/passwd"));
    assert!(!allowed(&p, Write, "/etc/passwd"));
    assert!(allowed(&p, Write, "/w/x"));
    assert!(allowed(&p, Write, "/w"));
    assert!(!allowed(&p, Write, "/wx"));
    assert!(!allowed(&p, Read, "/w/secret/a"));
    assert!(!allowed(&p, Write, "/w/secret"));
    assert!(allowed(&p, Read, "/w/secretx"));
    assert!(allowed(&p, Read, "/w/secret/token"));
    assert!(!allowed(&p, Write, "/w/secret/token"));
    assert!(!allowed(&p, Read, "/h/.netrc"));
    assert!(allowed(&p, Read, "/h/.netrc/x"));
    assert!(!allowed(&p, Read, "/h/.claude/channels/a/.env"));
    assert!(allowed(&p, Read, "/h/.claude/channels/a/b/.env"));
    assert!(allowed(&p, Write, "/h/.claude.json.backup"));
    assert!(!allowed(&p, Write, "/w/cfg/a"));
    assert!(allowed(&p, Read, "/w/cfg/a"));
}

#[test]
fn paths_are_normalised_as_decide_does() {
    let p = parse(SAMPLE);
    assert!(!allowed(&p, FileOperation::Read, "/w/x/../secret/a"));
    assert!(!allowed(&p, FileOperation::Read, "w/secret"));
    assert!(!allowed(&p, FileOperation::Read, "/w/secret/"));
}

#[test]
fn verdict_names_the_deciding_rule_and_filter() {
    let p = parse(SAMPLE);
    let v = p.evaluate(FileOperation::Read, Path::new("/w/secret/a"));
    assert_eq!(
        v.describe(),
        r#"line 8: (deny file-read* file-write* (subpath "/w/secret"))"#
    );
    let v = p.evaluate(FileOperation::Write, Path::new("/h/.claude.jsonx"));
    assert_eq!(
        v.describe(),
        r#"line 5: (allow file-write* (regex #"^/h/\.claude\.json"))"#
    );
    let v = p.evaluate(FileOperation::Write, Path::new("/etc"));
    assert_eq!(v.describe(), "line 4: (deny file-write*)");
    assert_eq!(v.filter, None);
    let v = p.evaluate(FileOperation::Read, Path::new("/etc"));
    assert_eq!(v.describe(), "line 3: (allow default)");
}

#[test]
fn no_matching_rule_is_a_denial() {
    let p = parse("(version 1)\n(allow file-read* (subpath \"/a\"))\n");
    let v = p.evaluate(FileOperation::Read, Path::new("/b"));
    assert!(!v.allowed);
    assert!(v.rule.is_none());
    assert!(!allowed(&p, FileOperation::Write, "/a"));
    assert!(allowed(&p, FileOperation::Read, "/a/b"));
}

#[test]
fn strings_are_unescaped() {
    let p =
        parse("(version 1)\n(allow default)\n(deny file-read* (literal \"/a\\\\b\\\"c\nd ;e\"))\n");
    assert_eq!(
        p.rules()[1].filters,
        vec![Filter::Literal("/a\\b\"c\nd ;e".to_string())]
    );
    assert!(!allowed(&p, FileOperation::Read, "/a\\b\"c\nd ;e"));
    assert!(allowed(&p, FileOperation::Read, "/a\\b\"c\nd "));
}

#[test]
fn regex_literal_keeps_backslashes_and_is_not_closed_by_an_escaped_quote() {
    let p = parse("(version 1)\n(allow default)\n(deny file-read* (regex #\"^/a\\\"b\\\\\"))\n");
    match &p.rules()[1].filters[..] {
        [Filter::Regex(re)] => assert_eq!(re.as_str(), "^/a\\\"b\\\\"),
        other => panic!("{other:?}"),
    }
    assert!(!allowed(&p, FileOperation::Read, "/a\"b\\"));
    assert!(allowed(&p, FileOperation::Read, "/a\"b"));
}

#[test]
fn subpath_matches_by_component() {
    let p = parse("(version 1)\n(deny file-read* (subpath \"/a/b\") (subpath \"/\"))\n");
    let q = parse("(version 1)\n(allow default)\n(deny file-read* (subpath \"/a/b\"))\n");
    assert!(!allowed(&q, FileOperation::Read, "/a/b"));
    assert!(!allowed(&q, FileOperation::Read, "/a/b/c"));
    assert!(allowed(&q, FileOperation::Read, "/a/bc"));
    assert!(allowed(&q, FileOperation::Read, "/a"));
    // `(subpath "/")` covers every path.
    let v = p.evaluate(FileOperation::Read, Path::new("/zzz"));
    assert_eq!(v.filter, Some(&Filter::Subpath("/".to_string())));
}

#[test]
fn non_utf8_paths_are_evaluated_on_their_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let p = parse(SAMPLE);
    let bad = Path::new(OsStr::from_bytes(b"/h/.claude/channels/\xff/.env"));
    assert!(!p.evaluate(FileOperation::Read, bad).allowed);
    let under = Path::new(OsStr::from_bytes(b"/w/\xff"));
    assert!(p.evaluate(FileOperation::Write, under).allowed);
}

#[test]
fn access_maps_create_and_write_to_file_write_and_connect_to_the_network() {
    let p = Path::new("/a");
    assert_eq!(
        Request::from_access(Access::Read, p),
        Request::File(FileOperation::Read, p)
    );
    assert_eq!(
        Request::from_access(Access::Write, p),
        Request::File(FileOperation::Write, p)
    );
    assert_eq!(
        Request::from_access(Access::Create, p),
        Request::File(FileOperation::Write, p)
    );
    assert_eq!(
        Request::from_access(Access::Connect, p),
        Request::UnixConnect(p)
    );
}

const NETWORK: &str = r#"(version 1)
(allow default)
(deny file-write*)
(deny network-outbound (remote unix-socket))
(allow network-outbound
  (remote unix-socket (path-regex #"^/w/"))
  (remote unix-socket (path-literal "/run/agent.sock")))
(deny network-outbound (remote unix-socket (path-literal "/w/cfg")))
(deny network-outbound (remote ip "*:*"))
(allow network-outbound (remote ip "localhost:8080"))
"#;

fn connect(p: &Profile, path: &str) -> bool {
    p.evaluate_request(Request::UnixConnect(Path::new(path)))
        .allowed
}

fn ip(p: &Profile, loopback: bool, port: u16) -> bool {
    p.evaluate_request(Request::IpConnect(IpEndpoint { loopback, port }))
        .allowed
}

#[test]
fn unix_socket_connects_are_decided_by_the_network_rules_only() {
    let p = parse(NETWORK);
    assert!(!connect(&p, "/tmp/tmux-0/default"));
    assert!(connect(&p, "/w/sock"));
    assert!(connect(&p, "/w/a/b/sock"));
    assert!(!connect(&p, "/w"));
    assert!(!connect(&p, "/wx/sock"));
    assert!(connect(&p, "/run/agent.sock"));
    assert!(!connect(&p, "/run/agent.sockx"));
    assert!(!connect(&p, "/w/cfg"));
    assert!(connect(&p, "/w/cfg/x"));
    // Normalised as file paths are.
    assert!(!connect(&p, "/w/../tmp/s"));
    assert!(connect(&p, "w/s"));
    // The file rules say nothing about a connect, nor the socket rules about a file.
    assert!(
        !p.evaluate(FileOperation::Write, Path::new("/w/sock"))
            .allowed
    );
    assert!(
        p.evaluate(FileOperation::Read, Path::new("/tmp/tmux-0/default"))
            .allowed
    );
    let v = p.evaluate_request(Request::UnixConnect(Path::new("/w/cfg")));
    assert_eq!(
        v.describe(),
        r#"line 8: (deny network-outbound (remote unix-socket (path-literal "/w/cfg")))"#
    );
    let v = p.evaluate_request(Request::UnixConnect(Path::new("/x")));
    assert_eq!(
        v.describe(),
        "line 4: (deny network-outbound (remote unix-socket))"
    );
}

#[test]
fn ip_connects_match_host_and_port() {
    let p = parse(NETWORK);
    assert!(ip(&p, true, 8080));
    assert!(!ip(&p, true, 8081));
    assert!(!ip(&p, false, 8080));
    assert!(!ip(&p, false, 443));
    let v = p.evaluate_request(Request::IpConnect(IpEndpoint {
        loopback: true,
        port: 8080,
    }));
    assert_eq!(
        v.describe(),
        r#"line 10: (allow network-outbound (remote ip "localhost:8080"))"#
    );
    // An IP rule never decides for a unix socket.
    assert!(connect(&p, "/w/s"));
    // Without network rules, `(allow default)` decides.
    let open = parse("(version 1)\n(allow default)\n");
    assert!(ip(&open, false, 22));
    assert!(connect(&open, "/tmp/s"));
    let any_port = parse(
        "(version 1)\n(deny default)\n(allow network-outbound (remote ip \"localhost:*\"))\n",
    );
    assert!(ip(&any_port, true, 1));
    assert!(!ip(&any_port, false, 1));
    assert!(!connect(&any_port, "/s"));
}

#[test]
fn malformed_profiles_are_refused_with_their_line() {
    let cases: Vec<(&str, ProfileError)> = vec![
        ("(allow default)", ProfileError::MissingVersion),
        ("", ProfileError::MissingVersion),
        (
            "(version 2)",
            ProfileError::UnsupportedVersion {
                line: 1,
                version: "2".to_string(),
            },
        ),
        (
            "(version 1)\n(allow file-read* (literal \"/a\\n\"))",
            ProfileError::BadEscape {
                line: 2,
                escape: 'n',
            },
        ),
        (
            "(version 1)\n(allow file-read* (literal \"/a))",
            ProfileError::UnterminatedString { line: 2 },
        ),
        (
            "(version 1)\n(allow file-read*\n",
            ProfileError::UnterminatedList { line: 2 },
        ),
        ("(version 1))", ProfileError::UnexpectedClose { line: 1 }),
        (
            "(version 1)\n(allow network*)",
            ProfileError::UnknownOperation {
                line: 2,
                operation: "network*".to_string(),
            },
        ),
        (
            "(version 1)\n(allow)",
            ProfileError::NoOperation { line: 2 },
        ),
        (
            "(version 1)\n(allow default (subpath \"/a\"))",
            ProfileError::DefaultWithFilter { line: 2 },
        ),
        (
            "(version 1)\n(allow file-read* (subpath \"/a\") file-write*)",
            ProfileError::OperationAfterFilter { line: 2 },
        ),
        (
            "(version 1)\n(import \"bsd.sb\")",
            ProfileError::UnknownForm {
                line: 2,
                form: "import".to_string(),
            },
        ),
        (
            "(version 1)\n(allow file-read* (prefix \"/a\"))",
            ProfileError::UnknownFilter {
                line: 2,
                filter: "prefix".to_string(),
            },
        ),
        (
            "(version 1)\n(allow file-read* (subpath \"a/b\"))",
            ProfileError::RelativePath {
                line: 2,
                filter: "subpath",
                path: "a/b".to_string(),
            },
        ),
        (
            "(version 1)\n(allow file-read* (regex \"^/a\"))",
            ProfileError::BadFilterArgument {
                line: 2,
                filter: "regex",
                expected: "one #\"...\" regex literal",
            },
        ),
        (
            "(version 1)\n(allow file-read* (literal \"/a\" \"/b\"))",
            ProfileError::BadFilterArgument {
                line: 2,
                filter: "literal",
                expected: "one string",
            },
        ),
        (
            "(version 1)\n(allow file-read* (regex #\"^(a|b)\"))",
            ProfileError::Regex {
                line: 2,
                regex: "^(a|b)".to_string(),
                source: EreError::Unsupported {
                    construct: '(',
                    offset: 1,
                },
            },
        ),
        (
            "(version 1)\n(allow file-read* (regex #\"^/a",
            ProfileError::UnterminatedString { line: 2 },
        ),
        (
            "(version 1)\n(allow network-outbound (remote tcp \"*:*\"))",
            ProfileError::UnknownFilter {
                line: 2,
                filter: "remote (other than unix-socket or ip)".to_string(),
            },
        ),
        (
            "(version 1)\n(allow network-outbound (remote ip \"example.com:443\"))",
            ProfileError::BadFilterArgument {
                line: 2,
                filter: "remote ip",
                expected: "one \"HOST:PORT\" string, HOST `*` or `localhost`, PORT `*` or a \
                           number",
            },
        ),
        (
            "(version 1)\n(allow network-outbound (remote ip \"*:99999\"))",
            ProfileError::BadFilterArgument {
                line: 2,
                filter: "remote ip",
                expected: "one \"HOST:PORT\" string, HOST `*` or `localhost`, PORT `*` or a \
                           number",
            },
        ),
        (
            "(version 1)\n(allow network-outbound (remote unix-socket (subpath \"/a\")))",
            ProfileError::BadFilterArgument {
                line: 2,
                filter: "remote unix-socket",
                expected: "nothing, (path-literal \"...\") or (path-regex #\"...\")",
            },
        ),
        (
            "(version 1)\n(allow network-outbound (remote unix-socket (path-literal \"a\")))",
            ProfileError::RelativePath {
                line: 2,
                filter: "path-literal",
                path: "a".to_string(),
            },
        ),
        (
            "(version 1)\n#t",
            ProfileError::Unexpected {
                line: 2,
                token: "#".to_string(),
            },
        ),
        (
            "(version 1)\n\"/a\"",
            ProfileError::Unexpected {
                line: 2,
                token: "\"/a\"".to_string(),
            },
        ),
    ];
    for (text, want) in cases {
        assert_eq!(Profile::parse(text), Err(want), "{text:?}");
    }
}
