use std::fs;
use std::path::{Path, PathBuf};

use crate::{Access, FileMatch, FileRule, FileRuleSource, Platform, Policy, PolicySpec, Rule};

fn policy(platform: Platform) -> (tempfile::TempDir, PathBuf, Policy) {
    let dir = crate::test_scratch();
    let root = fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(root.join("extra")).unwrap();
    let mut spec = PolicySpec::with_defaults(platform, home, repo);
    spec.token_file = Some(PathBuf::from("~/.agents-city/.runtime/broker/mine.token"));
    spec.extra_writable = vec![root.join("extra")];
    let p = spec.resolve().unwrap();
    (dir, root, p)
}

fn allowed(p: &Policy, path: &Path, access: Access) -> bool {
    p.decide(path, access).allowed
}

#[test]
fn reads_are_allowed_by_default_and_writes_are_not() {
    for platform in [Platform::Linux, Platform::MacOs] {
        let (_d, root, p) = policy(platform);
        // A home file no list names: the home itself is read-only.
        let bashrc = root.join("home/notes.txt");
        assert_eq!(p.decide(&bashrc, Access::Read).rule, Rule::DefaultReadable);
        assert!(allowed(&p, &bashrc, Access::Read));
        for access in [Access::Write, Access::Create] {
            let d = p.decide(&bashrc, access);
            assert!(!d.allowed);
            assert_eq!(d.rule, Rule::DefaultReadOnly);
        }
        assert!(!allowed(&p, Path::new("/etc/passwd"), Access::Write));
    }
}

#[test]
fn the_working_set_is_writable() {
    for platform in [Platform::Linux, Platform::MacOs] {
        let (_d, root, p) = policy(platform);
        for path in [
            root.join("repo/src/main.rs"),
            root.join("repo"),
            root.join("home/.cache/x"),
            root.join("home/.cargo/registry/index"),
            root.join("home/.agents-city/state.json"),
            root.join("extra/y"),
        ] {
            for access in Access::ALL {
                assert!(
                    allowed(&p, &path, access),
                    "{platform} {access} {}",
                    path.display()
                );
            }
        }
        let d = p.decide(&root.join("repo/a"), Access::Create);
        assert!(matches!(
            d.rule,
            Rule::Writable {
                source: crate::WriteSource::Repo,
                ..
            }
        ));
    }
}

#[test]
fn secrets_are_sealed_for_read_and_write_even_inside_writable_roots() {
    for platform in [Platform::Linux, Platform::MacOs] {
        let (_d, root, p) = policy(platform);
        let home = root.join("home");
        for path in [
            home.join(".ssh/id_ed25519"),
            home.join(".ssh"),
            home.join(".config/gh/hosts.yml"),
            home.join(".claude/.credentials.json"),
            home.join(".cargo/credentials.toml"),
            home.join(".cargo/credentials"),
            home.join(".git-credentials"),
            home.join(".agents-city/.runtime/broker/other.token"),
            home.join(".claude/channels/seat/.env"),
        ] {
            for access in Access::ALL {
                assert!(
                    !allowed(&p, &path, access),
                    "{platform} {access} {}",
                    path.display()
                );
            }
        }
        // Neighbours with a shared string prefix are not sealed.
        assert!(allowed(&p, &home.join(".sshx/key"), Access::Read));
        assert!(allowed(
            &p,
            &home.join(".cargo/credentials.toml.bak"),
            Access::Write
        ));
        assert!(allowed(
            &p,
            &home.join(".claude/.credentials.jsonx"),
            Access::Write
        ));
        assert!(allowed(
            &p,
            &home.join(".git-credentials-helper"),
            Access::Read
        ));
    }
}

#[test]
fn file_seals_cover_only_the_file() {
    let (_d, root, p) = policy(Platform::Linux);
    // A file seal is a literal: nothing "beneath" it is sealed (nothing can be).
    let d = p.decide(&root.join("home/.netrc"), Access::Read);
    assert!(matches!(
        d.rule,
        Rule::Sealed {
            kind: crate::SealKind::File,
            ..
        }
    ));
    assert!(allowed(&p, &root.join("home/.netrc.d"), Access::Read));
}

#[test]
fn the_window_token_is_readable_above_the_broker_seal_but_not_writable() {
    for platform in [Platform::Linux, Platform::MacOs] {
        let (_d, root, p) = policy(platform);
        let token = root.join("home/.agents-city/.runtime/broker/mine.token");
        let d = p.decide(&token, Access::Read);
        assert!(d.allowed);
        assert_eq!(
            d.rule,
            Rule::ReadableInSeal {
                path: token.clone(),
                source: FileRuleSource::WindowToken,
            }
        );
        assert!(!allowed(&p, &token, Access::Write));
        assert!(!allowed(&p, &token.with_extension("token2"), Access::Read));
    }
}

#[test]
fn channel_tokens_match_exactly_one_seat_deep() {
    let (_d, root, p) = policy(Platform::Linux);
    let channels = root.join("home/.claude/channels");
    assert!(!allowed(&p, &channels.join("seat/.env"), Access::Read));
    assert!(allowed(&p, &channels.join(".env"), Access::Read));
    assert!(allowed(&p, &channels.join("a/b/.env"), Access::Read));
    assert!(allowed(&p, &channels.join("seat/.envx"), Access::Read));
    assert!(allowed(&p, &channels.join("seat/config"), Access::Write));
    assert!(matches!(
        p.decide(&channels.join("s/.env"), Access::Read).rule,
        Rule::SealedPattern {
            source: FileRuleSource::ChannelTokens,
            ..
        }
    ));
}

#[test]
fn claude_json_is_a_file_on_linux_and_a_name_prefix_on_macos() {
    let (_d, root, linux) = policy(Platform::Linux);
    let home = root.join("home");
    assert!(allowed(&linux, &home.join(".claude.json"), Access::Write));
    assert!(allowed(&linux, &home.join(".claude.json"), Access::Create));
    assert!(!allowed(
        &linux,
        &home.join(".claude.json.backup"),
        Access::Create
    ));
    let (_d, root, mac) = policy(Platform::MacOs);
    let home = root.join("home");
    assert!(allowed(&mac, &home.join(".claude.json"), Access::Write));
    assert!(allowed(
        &mac,
        &home.join(".claude.json.backup.1700"),
        Access::Create
    ));
    assert!(allowed(
        &mac,
        &home.join(".claude.jsonx/inner"),
        Access::Create
    ));
    assert!(!allowed(&mac, &home.join(".claude.jso"), Access::Create));
    assert!(!allowed(&mac, &home.join("x/.claude.json"), Access::Create));
}

#[test]
fn cage_configuration_is_readable_but_never_writable() {
    let (_d, root, p) = policy(Platform::Linux);
    let home = root.join("home");
    // ~/.config is writable on Linux, and the config dir lies beneath it.
    assert!(allowed(&p, &home.join(".config/other/x"), Access::Create));
    for path in [
        home.join(".config/jaula"),
        home.join(".config/jaula/config.toml"),
        home.join(".agents-city/.runtime/cage/w.sb"),
    ] {
        assert!(allowed(&p, &path, Access::Read), "{}", path.display());
        for access in [Access::Write, Access::Create] {
            let d = p.decide(&path, access);
            assert!(!d.allowed, "{}", path.display());
            assert!(matches!(d.rule, Rule::Protected { .. }));
        }
    }
    assert!(allowed(
        &p,
        &home.join(".config/jaula-other"),
        Access::Create
    ));
}

#[test]
fn decide_normalises_dots_and_relative_paths() {
    let (_d, root, p) = policy(Platform::Linux);
    let sneaky = root.join("repo/../home/./.ssh/id");
    assert!(!allowed(&p, &sneaky, Access::Read));
    assert!(allowed(&p, Path::new("etc/hostname"), Access::Read));
}

#[test]
fn rules_describe_themselves_with_tilde() {
    let (_d, root, p) = policy(Platform::Linux);
    let home = root.join("home");
    assert_eq!(
        p.decide(&home.join(".ssh/id"), Access::Read)
            .rule
            .describe(p.home()),
        "sealed: ~/.ssh (credential directory)"
    );
    assert_eq!(
        p.decide(&root.join("repo/x"), Access::Write)
            .rule
            .describe(p.home()),
        format!("writable: {} (repo)", root.join("repo").display())
    );
    assert_eq!(
        p.decide(&home.join("x"), Access::Write)
            .rule
            .describe(p.home()),
        "default: read-only"
    );
}

fn git_policy() -> (tempfile::TempDir, PathBuf, Policy) {
    let dir = crate::test_scratch();
    let root = fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    fs::create_dir_all(home.join(".config")).unwrap();
    fs::create_dir_all(repo.join(".git/hooks")).unwrap();
    fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, home, repo);
    spec.launcher_exe = Some(root.join("bin/jaula"));
    (dir, root, spec.resolve().unwrap())
}

#[test]
fn the_git_entry_is_protected_but_what_lies_beneath_stays_writable() {
    let (_d, root, p) = git_policy();
    let git = root.join("repo/.git");
    for access in [Access::Write, Access::Create] {
        let d = p.decide(&git, access);
        assert!(!d.allowed, "{access} .git");
        assert!(matches!(
            d.rule,
            Rule::Protected {
                source: crate::ProtectedSource::GitDirectory,
                ..
            }
        ));
    }
    assert!(allowed(&p, &git, Access::Read));
    for inner in ["index.lock", "objects/ab/cdef", "refs/heads/main", "HEAD"] {
        for access in [Access::Write, Access::Create] {
            assert!(allowed(&p, &git.join(inner), access), "{access} {inner}");
        }
    }
}

#[test]
fn planted_code_paths_are_denied_with_their_reason() {
    use crate::ProtectedSource as S;
    let (_d, root, p) = git_policy();
    let home = root.join("home");
    let repo = root.join("repo");
    let cases = [
        (repo.join(".git/config"), S::GitConfig),
        (repo.join(".git/hooks/pre-commit"), S::GitHooks),
        (repo.join(".vscode/tasks.json"), S::RepoToolSettings),
        (repo.join(".claude/settings.json"), S::RepoToolSettings),
        (repo.join(".claude/hooks/x.sh"), S::RepoToolSettings),
        (repo.join(".mcp.json"), S::RepoToolSettings),
        (repo.join(".envrc"), S::RepoToolSettings),
        (home.join(".gitconfig"), S::HomeGitConfig),
        (home.join(".config/git/config"), S::HomeGitConfig),
        (home.join(".bashrc"), S::ShellStartup),
        (
            home.join(".config/systemd/user/x.service"),
            S::SessionStartup,
        ),
        (home.join(".config/autostart/x.desktop"), S::SessionStartup),
        (
            home.join(".local/share/applications/firefox.desktop"),
            S::SessionStartup,
        ),
        (
            home.join(".local/share/dbus-1/services/x.service"),
            S::SessionStartup,
        ),
        (home.join(".config/tmux/tmux.conf"), S::MultiplexerConfig),
        (home.join(".config/nvim/init.lua"), S::EditorInit),
        (home.join(".cargo/config.toml"), S::CargoConfig),
        (home.join(".claude/settings.json"), S::AgentSettings),
        (home.join(".claude/hooks/h.sh"), S::AgentSettings),
        (home.join(".codex/config.toml"), S::AgentSettings),
        (root.join("bin/jaula"), S::JaulaExecutable),
    ];
    for (path, source) in cases {
        for access in [Access::Write, Access::Create] {
            let d = p.decide(&path, access);
            assert!(!d.allowed, "{access} {}", path.display());
            match d.rule {
                Rule::Protected { source: s, .. } => assert_eq!(s, source, "{}", path.display()),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert!(allowed(&p, &path, Access::Read), "{}", path.display());
    }
    // The agents' runtime state beside their settings stays writable.
    for path in [
        home.join(".claude/projects/x.jsonl"),
        home.join(".codex/sessions/s.jsonl"),
        home.join(".cargo/registry/index"),
        home.join(".local/share/uv/tools"),
        home.join(".local/bin/tool"),
        repo.join(".claude/notes.md"),
        repo.join("src/main.rs"),
    ] {
        assert!(allowed(&p, &path, Access::Create), "{}", path.display());
    }
}

#[test]
fn protected_rules_describe_their_reason() {
    let (_d, root, p) = git_policy();
    let home = root.join("home");
    let d = p.decide(&root.join("repo/.git/hooks/pre-commit"), Access::Create);
    assert_eq!(
        d.rule.describe(&home),
        format!(
            "protected: {} (git hooks: run by the owner's next commit, checkout or merge)",
            root.join("repo/.git/hooks").display()
        )
    );
    let d = p.decide(&home.join(".bashrc"), Access::Write);
    assert_eq!(
        d.rule.describe(&home),
        "protected: ~/.bashrc (shell startup file: run by the owner's next shell)"
    );
}

/// Neither Linux backend can grant a root that does not exist: an absent cache root is
/// writable only because `jaula run` creates it first; with creation off, or for a root
/// jaula never creates (an owner's extra), the reference refuses as the backends do.
#[test]
fn absent_writable_roots_are_writable_only_when_created_at_launch() {
    let dir = crate::test_scratch();
    let root = fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    let npm = home.join(".npm");
    let extra = root.join("absent-extra");
    for create in [true, false] {
        for platform in [Platform::Linux, Platform::MacOs] {
            let mut spec = PolicySpec::with_defaults(platform, home.clone(), repo.clone());
            spec.create_absent_roots = create;
            spec.extra_writable = vec![extra.clone()];
            let p = spec.resolve().unwrap();
            let cache = p.decide(&npm.join("_cacache"), Access::Create);
            let owner = p.decide(&extra.join("f"), Access::Create);
            if platform == Platform::MacOs {
                // A Seatbelt rule names a path whether or not it exists.
                assert!(cache.allowed && owner.allowed, "{cache:?} {owner:?}");
                assert!(p.absent_roots().is_empty());
                continue;
            }
            assert_eq!(cache.allowed, create, "{cache:?}");
            assert_eq!(
                p.roots_to_create().any(|a| a.path == npm),
                create,
                "create={create}"
            );
            assert!(
                p.roots_to_create()
                    .any(|a| a.path == home.join(".cargo/git"))
                    == create,
                "cargo's cache entries follow the switch"
            );
            assert!(!owner.allowed);
            assert!(
                matches!(owner.rule, Rule::AbsentWritableRoot { ref root, .. } if *root == extra),
                "{owner:?}"
            );
            // Sealed paths beneath a created root are never created.
            assert!(p.roots_to_create().all(|a| !a.path.ends_with(".ssh")));
        }
    }
}

/// The rule kinds drive `decide` whatever file they name: a path no default knows, given
/// as data, is honoured by kind.
#[test]
fn a_readable_in_seal_rule_opens_exactly_its_file_for_reading() {
    let (_d, root, _) = policy(Platform::Linux);
    let vault = root.join("vault");
    fs::create_dir_all(&vault).unwrap();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, root.join("home"), root.join("repo"));
    spec.extra_sealed = vec![vault.clone()];
    let p0 = spec.resolve().unwrap();
    let keep = vault.join("keep.txt");
    let p1 = p0.clone().with_file_rule(FileRule::ReadableInSeal {
        path: keep.clone(),
        source: FileRuleSource::WindowToken,
    });
    assert!(
        !allowed(&p0, &keep, Access::Read),
        "sealed without the rule"
    );
    let d = p1.decide(&keep, Access::Read);
    assert!(d.allowed);
    assert!(matches!(d.rule, Rule::ReadableInSeal { ref path, .. } if *path == keep));
    for access in [Access::Write, Access::Create] {
        let d = p1.decide(&keep, access);
        assert!(!d.allowed, "{access}");
        assert!(matches!(d.rule, Rule::Sealed { ref root, .. } if *root == vault));
    }
    for sibling in [
        vault.join("other.txt"),
        vault.join("keep.txt.bak"),
        vault.clone(),
    ] {
        assert!(
            !allowed(&p1, &sibling, Access::Read),
            "{}",
            sibling.display()
        );
    }
}

#[test]
fn a_writable_file_rule_opens_its_file_for_writing_unless_sealed_or_protected() {
    let (_d, root, p) = policy(Platform::Linux);
    let notes = root.join("home/notes.db");
    assert!(!allowed(&p, &notes, Access::Write));
    let exact = p.clone().with_file_rule(FileRule::WritableFile {
        path: notes.clone(),
        matching: FileMatch::Exact,
        source: FileRuleSource::ClaudeState,
    });
    assert!(allowed(&exact, &notes, Access::Write));
    assert!(allowed(&exact, &notes, Access::Create));
    assert!(!allowed(
        &exact,
        &root.join("home/notes.db-wal"),
        Access::Create
    ));
    let prefix = p.clone().with_file_rule(FileRule::WritableFile {
        path: notes.clone(),
        matching: FileMatch::NamePrefix,
        source: FileRuleSource::ClaudeState,
    });
    assert!(allowed(
        &prefix,
        &root.join("home/notes.db-wal"),
        Access::Create
    ));
    assert!(!allowed(&prefix, &root.join("home/note"), Access::Create));
    // A seal wins over the rule, as an owner's deny of the file would.
    let sealed_file = root.join("home/.netrc");
    let sealed = p.clone().with_file_rule(FileRule::WritableFile {
        path: sealed_file.clone(),
        matching: FileMatch::Exact,
        source: FileRuleSource::ClaudeState,
    });
    assert!(!allowed(&sealed, &sealed_file, Access::Write));
}

#[test]
fn a_sealed_pattern_rule_seals_every_child_s_file_present_or_not() {
    let (_d, root, p) = policy(Platform::Linux);
    let dir = root.join("repo/tenants");
    let rule = FileRule::SealedPattern {
        dir: dir.clone(),
        name: "secret.key".to_string(),
        existing: Vec::new(),
        source: FileRuleSource::ChannelTokens,
    };
    let p = p.with_file_rule(rule);
    for access in Access::ALL.into_iter().chain([Access::Connect]) {
        let d = p.decide(&dir.join("acme/secret.key"), access);
        assert!(!d.allowed, "{access}");
        assert!(matches!(d.rule, Rule::SealedPattern { .. }));
    }
    // Only one child deep, and only that name: the rest of the writable repo stays so.
    for path in [
        dir.join("secret.key"),
        dir.join("a/b/secret.key"),
        dir.join("acme/secret.keys"),
        dir.join("acme/notes"),
    ] {
        assert!(allowed(&p, &path, Access::Write), "{}", path.display());
    }
}

/// A fresh home stays tidy: a tool family's cache root is created only when one of its
/// programs is on the launch PATH (found through a symlink too), and a root left absent is
/// refused by the reference as the backends refuse it, never a hole. Shared roots
/// (`~/.cache`, `~/.config`) are created whatever the PATH holds.
#[test]
fn cache_roots_are_created_only_for_tools_on_the_path() {
    let dir = crate::test_scratch();
    let root = fs::canonicalize(dir.path()).unwrap();
    let (home, repo, bin) = (root.join("home"), root.join("repo"), root.join("bin"));
    for d in [&home, &repo, &bin] {
        fs::create_dir_all(d).unwrap();
    }
    fs::write(bin.join("npm"), b"#!/bin/sh\n").unwrap();
    fs::write(root.join("real-go"), b"").unwrap();
    std::os::unix::fs::symlink(root.join("real-go"), bin.join("go")).unwrap();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, home.clone(), repo.clone());
    spec.tool_path = Some(vec![root.join("empty"), bin.clone()]);
    let p = spec.resolve().unwrap();
    let created = |name: &str| p.roots_to_create().any(|a| a.path == home.join(name));
    for present in [".npm", "go", ".cache", ".config", ".local/bin"] {
        assert!(created(present), "{present} should be created");
    }
    for absent in [
        ".m2",
        ".gradle",
        ".bun",
        ".kimi",
        ".cargo",
        ".cargo/git",
        ".pnpm-store",
    ] {
        assert!(!created(absent), "{absent} created without its tool");
        let d = p.decide(&home.join(absent).join("f"), Access::Create);
        assert!(
            !d.allowed && matches!(d.rule, Rule::AbsentWritableRoot { .. }),
            "{absent}: {d:?}"
        );
    }
    // The command itself is a family's program, wherever it lives: its root is created.
    let mut launched = spec.clone();
    launched.launched = Some(root.join("elsewhere/bun"));
    let p = launched.resolve().unwrap();
    assert!(p.roots_to_create().any(|a| a.path == home.join(".bun")));
    assert!(!p.roots_to_create().any(|a| a.path == home.join(".m2")));
    // Installed later: the next launch's policy creates the root.
    fs::write(bin.join("mvn"), b"").unwrap();
    let p = spec.resolve().unwrap();
    assert!(p.roots_to_create().any(|a| a.path == home.join(".m2")));
    assert!(
        p.decide(&home.join(".m2/repository"), Access::Create)
            .allowed
    );
}

/// The index finds what a scan of each whole list would: the first sealed, protected and
/// writable root covering a path, for every root of a resolved policy and the paths around
/// it (itself, a child, its parent, a sibling, a name sharing its prefix).
#[test]
fn the_decision_index_finds_what_a_scan_of_every_root_finds() {
    use crate::paths::is_within;
    for (_d, root, p) in [
        policy(Platform::Linux),
        policy(Platform::MacOs),
        git_policy(),
    ] {
        let index = p.decide_index();
        let roots = p
            .sealed
            .iter()
            .map(|s| s.path.clone())
            .chain(p.protected.iter().map(|r| r.path.clone()))
            .chain(p.writable.iter().map(|w| w.path.clone()));
        let mut paths = vec![PathBuf::from("/"), root.clone()];
        for r in roots {
            let mut prefixed = r.clone().into_os_string();
            prefixed.push("x");
            paths.extend([
                r.join("child"),
                r.with_file_name("sibling"),
                PathBuf::from(prefixed),
            ]);
            paths.extend(r.parent().map(Path::to_path_buf));
            paths.push(r);
        }
        assert!(paths.len() > 50, "{}", paths.len());
        for path in &paths {
            let sealed = |i: usize| super::seal_covers(p.sealed[i].kind, &p.sealed[i].path, path);
            let protected = |i: usize| p.protected[i].kind.covers(&p.protected[i].path, path);
            assert_eq!(
                index.sealed.first(path, sealed),
                (0..p.sealed.len()).find(|&i| sealed(i)),
                "{}",
                path.display()
            );
            assert_eq!(
                index.protected.first(path, protected),
                (0..p.protected.len()).find(|&i| protected(i)),
                "{}",
                path.display()
            );
            let within: Vec<usize> = (0..p.writable.len())
                .filter(|&i| is_within(path, &p.writable[i].path))
                .collect();
            let indexed: Vec<usize> = index
                .writable
                .holding(path)
                .into_iter()
                .filter(|&i| is_within(path, &p.writable[i].path))
                .collect();
            assert_eq!(indexed, within, "{}", path.display());
        }
    }
}
