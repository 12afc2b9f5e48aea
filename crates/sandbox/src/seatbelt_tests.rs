use std::fs;
use std::path::{Path, PathBuf};

use jaula_policy::{Platform, Policy, PolicySpec, SealKind};

use super::*;
use crate::test_support::scratch;
use jaula_sbpl::eval::{self, Action, Filter, Operation, Profile};
use jaula_sbpl::quote::escape_regex;

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    spec: PolicySpec,
}

fn fixture(platform: Platform, home_name: &str) -> Fixture {
    let (dir, root) = scratch("seatbelt-");
    let home = root.join(home_name);
    let repo = root.join("repo");
    fs::create_dir_all(home.join(".ssh")).expect("mkdir .ssh");
    fs::create_dir_all(&repo).expect("mkdir repo");
    let mut spec = PolicySpec::with_defaults(platform, home.clone(), repo);
    spec.token_file = Some(home.join(".agents-city/.runtime/broker/w1.token"));
    spec.config_file = Some(home.join("cage.toml"));
    Fixture {
        _dir: dir,
        home,
        spec,
    }
}

fn resolve(spec: &PolicySpec) -> Policy {
    spec.resolve().expect("policy resolves")
}

fn render(policy: &Policy) -> String {
    render_profile(policy).expect("profile renders")
}

fn quoted(path: &Path) -> String {
    quote_string(path.to_str().expect("utf-8 test path"))
}

#[test]
fn profile_has_the_launcher_profile_structure_in_order() {
    let f = fixture(Platform::MacOs, "home");
    let policy = resolve(&f.spec);
    let text = render(&policy);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "(version 1)");
    assert_eq!(lines[1], GENERATED_COMMENT);
    assert_eq!(lines[2], "(allow default)");
    assert_eq!(lines[3], "(deny file-write*)");
    assert_eq!(lines[4], "(allow file-write*");
    assert!(text.ends_with(")\n"));

    let profile = Profile::parse(&text).expect("own profile parses");
    let rules = profile.rules();
    assert_eq!(rules.len(), 9, "{text}");
    let shape: Vec<(Action, Vec<Operation>, usize)> = rules
        .iter()
        .map(|r| (r.action, r.operations.clone(), r.filters.len()))
        .collect();
    use Action::{Allow, Deny};
    use Operation::{Default, FileRead, FileWrite, NetworkOutbound};
    let sealed_sockets = policy.sealed().len()
        + policy
            .sealed()
            .iter()
            .filter(|s| s.kind == SealKind::Directory)
            .count()
        + 1;
    assert_eq!(
        shape,
        vec![
            (Allow, vec![Default], 0),
            (Deny, vec![FileWrite], 0),
            (Allow, vec![FileWrite], policy.writable().len() + 1),
            (Deny, vec![FileRead, FileWrite], policy.sealed().len() + 1),
            (Deny, vec![FileWrite], policy.protected().len()),
            (Deny, vec![NetworkOutbound], 1),
            (
                Allow,
                vec![NetworkOutbound],
                policy.unix_sockets().len() + 1
            ),
            (Deny, vec![NetworkOutbound], sealed_sockets),
            (Allow, vec![FileRead], 1),
        ]
    );
    // Each block lists the policy's roots in the policy's order.
    let writable: Vec<Filter> = policy
        .writable()
        .iter()
        .map(|w| Filter::Subpath(w.path.to_str().expect("utf-8").to_string()))
        .collect();
    assert_eq!(rules[2].filters[..writable.len()], writable[..]);
    let sealed: Vec<Filter> = policy
        .sealed()
        .iter()
        .map(|s| {
            let p = s.path.to_str().expect("utf-8").to_string();
            match s.kind {
                SealKind::File => Filter::Literal(p),
                SealKind::Directory => Filter::Subpath(p),
            }
        })
        .collect();
    assert_eq!(rules[3].filters[..sealed.len()], sealed[..]);
}

#[test]
fn rendering_is_deterministic_and_pure() {
    let f = fixture(Platform::MacOs, "home");
    let policy = resolve(&f.spec);
    let before: Vec<PathBuf> = walk(&f.home);
    assert_eq!(render(&policy), render(&policy));
    assert_eq!(walk(&f.home), before);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            out.extend(walk(&e.path()));
        }
    }
    out.sort();
    out
}

#[test]
fn quotes_and_backslashes_are_escaped_in_strings() {
    let f = fixture(Platform::MacOs, "we\"ird\\ho me");
    let policy = resolve(&f.spec);
    let text = render(&policy);
    let home = policy.home().to_str().expect("utf-8").to_string();
    let escaped_home = home.replace('\\', "\\\\").replace('"', "\\\"");
    assert!(
        escaped_home.ends_with("/we\\\"ird\\\\ho me"),
        "{escaped_home}"
    );
    assert!(
        text.contains(&format!("  (subpath \"{escaped_home}/.ssh\")\n")),
        "{text}"
    );
    assert!(text.contains(&format!("  (literal \"{escaped_home}/.netrc\")\n")));
}

#[test]
fn newlines_in_paths_stay_inside_the_string() {
    let f = fixture(Platform::Linux, "new\nline");
    let policy = resolve(&f.spec);
    let text = render(&policy);
    assert!(text.contains(&format!("  (subpath {})\n", quoted(&f.home.join(".ssh")))));
    let profile = Profile::parse(&text).expect("parses");
    let v = profile.evaluate(eval::FileOperation::Read, &f.home.join(".ssh/id"));
    assert!(!v.allowed, "{}", v.describe());
}

#[test]
fn regex_literals_escape_every_metacharacter_and_the_quote() {
    let name = "a.b*c+d?e(f)g[h]i{j}k|l^m$n\\o\"p q";
    let f = fixture(Platform::MacOs, name);
    let policy = resolve(&f.spec);
    let text = render(&policy);
    let parent = policy
        .home()
        .parent()
        .and_then(Path::to_str)
        .expect("utf-8 parent")
        .to_string();
    let esc_home = format!(
        "{}/{}",
        escape_regex(&parent),
        r#"a\.b\*c\+d\?e\(f\)g\[h\]i\{j\}k\|l\^m\$n\\o\"p q"#
    );
    assert!(
        text.contains(&format!("  (regex #\"^{esc_home}/\\.claude\\.json\")\n")),
        "{text}"
    );
    assert!(text.contains(&format!(
        "  (regex #\"^{esc_home}/\\.claude/channels/[^/]+/\\.env$\")\n"
    )));
}

#[test]
fn non_utf8_paths_are_a_typed_error_naming_the_path() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bad = OsStr::from_bytes(b"h\xffome");
    let f = fixture(Platform::MacOs, "home");
    let mut spec = f.spec.clone();
    spec.home = f.home.parent().expect("parent").join(bad);
    let policy = resolve(&spec);
    match render_profile(&policy) {
        Err(SeatbeltError::NotUtf8 { what, path }) => {
            assert_eq!(what, "writable root");
            assert!(path
                .as_os_str()
                .as_encoded_bytes()
                .ends_with(b"h\xffome/.agents-city"));
            let message = SeatbeltError::NotUtf8 { what, path }.to_string();
            assert!(message.contains("h\u{fffd}ome"), "{message}");
            assert!(message.contains("not valid UTF-8"), "{message}");
        }
        other => panic!("expected NotUtf8, got {other:?}"),
    }
    // A non-UTF-8 token file alone fails too, naming it.
    let mut spec = f.spec.clone();
    spec.token_file = Some(f.home.join(".agents-city/.runtime/broker").join(bad));
    match render_profile(&resolve(&spec)) {
        Err(SeatbeltError::NotUtf8 { what, .. }) => assert_eq!(what, "token file"),
        other => panic!("expected NotUtf8, got {other:?}"),
    }
}

#[test]
fn absent_secrets_are_still_sealed_with_their_declared_kind() {
    let f = fixture(Platform::MacOs, "home");
    assert!(!f.home.join(".aws").exists());
    assert!(!f.home.join(".netrc").exists());
    let policy = resolve(&f.spec);
    let text = render(&policy);
    assert!(text.contains(&format!("  (subpath {})\n", quoted(&f.home.join(".aws")))));
    assert!(text.contains(&format!("  (literal {})\n", quoted(&f.home.join(".netrc")))));
    assert!(text.contains(&format!(
        "  (literal {})\n",
        quoted(&f.home.join(".cargo/credentials.toml"))
    )));
    // A seal is never rendered as the other kind.
    assert!(!text.contains(&format!("(literal {})", quoted(&f.home.join(".aws")))));
    assert!(!text.contains(&format!("(subpath {})", quoted(&f.home.join(".netrc")))));
}

#[test]
fn token_file_rule_comes_last_and_only_when_there_is_one() {
    let f = fixture(Platform::MacOs, "home");
    let policy = resolve(&f.spec);
    let text = render(&policy);
    let token = f.home.join(".agents-city/.runtime/broker/w1.token");
    let last = text.lines().last().expect("non-empty");
    assert_eq!(
        last,
        format!("(allow file-read* (literal {}))", quoted(&token))
    );

    let mut spec = f.spec.clone();
    spec.token_file = None;
    let text = render(&resolve(&spec));
    assert!(!text.contains("(allow file-read*"), "{text}");
    assert_eq!(text.lines().last(), Some(")"));
}

#[test]
fn protected_block_denies_writes_to_cage_configuration() {
    let f = fixture(Platform::Linux, "home");
    let policy = resolve(&f.spec);
    let text = render(&policy);
    let block = format!(
        "(deny file-write*\n  (subpath {})\n  (subpath {})\n  (literal {})\n",
        quoted(&f.home.join(".config/jaula")),
        quoted(&f.home.join(".agents-city/.runtime/cage")),
        quoted(&f.home.join("cage.toml")),
    );
    assert!(text.contains(&block), "{text}");
    // After the seals, before the token exception.
    let seals = text
        .find("(deny file-read* file-write*")
        .expect("seal block");
    let protected = text.find(&block).expect("protected block");
    let token = text.find("(allow file-read*").expect("token rule");
    assert!(seals < protected && protected < token);
}

#[test]
fn both_platforms_render_on_this_host() {
    let mac = fixture(Platform::MacOs, "home");
    let mac_text = render(&resolve(&mac.spec));
    let claude = escape_regex(mac.home.join(".claude.json").to_str().expect("utf-8"));
    assert!(mac_text.contains(&format!("  (regex #\"^{claude}\")\n")));
    assert!(mac_text.contains("  (subpath \"/private/tmp\")\n"));
    assert!(mac_text.contains(&format!(
        "(subpath {})",
        quoted(&mac.home.join("Library/Caches"))
    )));
    assert!(!mac_text.contains("(subpath \"/tmp\")"));

    let linux = fixture(Platform::Linux, "home");
    let linux_text = render(&resolve(&linux.spec));
    assert!(linux_text.contains(&format!(
        "  (literal {})\n",
        quoted(&linux.home.join(".claude.json"))
    )));
    assert!(!linux_text.contains(".claude\\.json\")"));
    assert!(linux_text.contains("  (subpath \"/tmp\")\n"));
    assert!(linux_text.contains(&format!(
        "(subpath {})",
        quoted(&linux.home.join(".config"))
    )));
    assert!(!linux_text.contains("/private/tmp"));
}

#[test]
fn the_git_entry_is_denied_as_a_literal_and_its_hooks_as_a_subpath() {
    let f = fixture(Platform::MacOs, "home");
    let repo = f.spec.repo.clone();
    fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    let policy = resolve(&f.spec);
    let text = render(&policy);
    assert!(
        text.contains(&format!("  (literal {})\n", quoted(&repo.join(".git")))),
        "{text}"
    );
    assert!(text.contains(&format!(
        "  (subpath {})\n",
        quoted(&repo.join(".git/hooks"))
    )));
    assert!(text.contains(&format!(
        "  (literal {})\n",
        quoted(&repo.join(".git/config"))
    )));
    let profile = Profile::parse(&text).unwrap();
    for (path, access, allowed) in [
        (repo.join(".git"), jaula_policy::Access::Write, false),
        (repo.join(".git/config"), jaula_policy::Access::Write, false),
        (
            repo.join(".git/hooks/pre-commit"),
            jaula_policy::Access::Create,
            false,
        ),
        (
            repo.join(".git/index.lock"),
            jaula_policy::Access::Create,
            true,
        ),
        (
            repo.join(".vscode/tasks.json"),
            jaula_policy::Access::Create,
            false,
        ),
    ] {
        assert_eq!(
            profile.evaluate_access(access, &path).allowed,
            allowed,
            "{}",
            path.display()
        );
        assert_eq!(
            policy.decide(&path, access).allowed,
            allowed,
            "{}",
            path.display()
        );
    }
}

/// The profile renders rule kinds, not known files: each kind given for a path no default
/// names is enforced as its kind says, and the evaluated profile agrees with `decide`.
#[test]
fn file_rule_kinds_are_rendered_by_kind_for_any_path() {
    use crate::test_support::with_each_file_rule_kind;
    use jaula_policy::{Access, FileMatch};
    let mut f = fixture(Platform::MacOs, "home");
    let vault = f.home.join("vault");
    f.spec.extra_sealed = vec![vault.clone()];
    let keep = vault.join("keep.txt");
    let notes = f.home.join("notes.db");
    let tenants = f.home.join("Documents/ten.ants");
    let policy = with_each_file_rule_kind(
        resolve(&f.spec),
        &keep,
        &notes,
        FileMatch::NamePrefix,
        &tenants,
        Vec::new(),
    );
    let text = render(&policy);
    assert!(text.ends_with(&format!("(allow file-read* (literal {}))\n", quoted(&keep))));
    let profile = Profile::parse(&text).expect("own profile parses");
    let cases = [
        (keep.clone(), Access::Read, true),
        (keep.clone(), Access::Write, false),
        (vault.join("other.txt"), Access::Read, false),
        (notes.clone(), Access::Write, true),
        (f.home.join("notes.db-wal"), Access::Create, true),
        (f.home.join("notes.d"), Access::Create, false),
        (tenants.join("acme/secret.key"), Access::Read, false),
        (tenants.join("acme/secret.key"), Access::Connect, false),
        (tenants.join("acme/secret.keys"), Access::Read, true),
        (
            f.home.join("Documents/tenXants/acme/secret.key"),
            Access::Read,
            true,
        ),
        (tenants.join("secret.key"), Access::Read, true),
    ];
    for (path, access, want) in cases {
        let decided = policy.decide(&path, access);
        assert_eq!(decided.allowed, want, "decide {access} {}", path.display());
        let verdict = profile.evaluate_access(access, &path);
        assert_eq!(
            verdict.allowed,
            want,
            "profile {access} {}: {}",
            path.display(),
            verdict.describe()
        );
    }
}
