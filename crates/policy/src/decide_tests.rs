use std::fs;
use std::path::{Path, PathBuf};

use crate::test_support::{assert_allowed_by, Scratch};
use crate::{Access, FileMatch, FileRule, FileRuleSource, Platform, Policy, PolicySpec, Rule};

fn policy(platform: Platform) -> (Scratch, PathBuf, Policy) {
    let s = Scratch::new();
    fs::create_dir_all(s.root.join("extra")).unwrap();
    let mut spec = s.spec(platform);
    spec.token_file = Some(PathBuf::from("~/.agents-city/.runtime/broker/mine.token"));
    spec.extra_writable = vec![s.root.join("extra")];
    let p = spec.resolve().unwrap();
    let root = s.root.clone();
    (s, root, p)
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
        let working = "repo/src/main.rs repo home/.cache/x home/.cargo/registry/index
            home/.agents-city/state.json extra/y";
        for path in working.split_whitespace().map(|rel| root.join(rel)) {
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
        let secrets = ".ssh/id_ed25519 .ssh .config/gh/hosts.yml .claude/.credentials.json
            .cargo/credentials.toml .cargo/credentials .git-credentials
            .agents-city/.runtime/broker/other.token .claude/channels/seat/.env";
        for path in secrets.split_whitespace().map(|rel| home.join(rel)) {
            for access in Access::ALL {
                assert!(
                    !allowed(&p, &path, access),
                    "{platform} {access} {}",
                    path.display()
                );
            }
        }
        // Neighbours with a shared string prefix are not sealed.
        let at = |name: &str, access: Access| allowed(&p, &home.join(name), access);
        assert!(at(".sshx/key", Access::Read));
        assert!(at(".cargo/credentials.toml.bak", Access::Write));
        assert!(at(".claude/.credentials.jsonx", Access::Write));
        assert!(at(".git-credentials-helper", Access::Read));
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
        let rule = Rule::ReadableInSeal {
            path: token.clone(),
            source: FileRuleSource::WindowToken,
        };
        assert_allowed_by(&p, &token, Access::Read, rule);
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
    let at = |name: &str, access: Access| allowed(&linux, &home.join(name), access);
    assert!(at(".claude.json", Access::Write));
    assert!(at(".claude.json", Access::Create));
    assert!(!at(".claude.json.backup", Access::Create));
    let (_d, root, mac) = policy(Platform::MacOs);
    let home = root.join("home");
    let at = |name: &str, access: Access| allowed(&mac, &home.join(name), access);
    assert!(at(".claude.json", Access::Write));
    assert!(at(".claude.json.backup.1700", Access::Create));
    assert!(at(".claude.jsonx/inner", Access::Create));
    assert!(!at(".claude.jso", Access::Create));
    assert!(!at("x/.claude.json", Access::Create));
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

fn git_policy() -> (Scratch, PathBuf, Policy) {
    let s = Scratch::new();
    fs::create_dir_all(s.home.join(".config")).unwrap();
    fs::create_dir_all(s.repo.join(".git/hooks")).unwrap();
    fs::write(s.repo.join(".git/config"), "[core]\n").unwrap();
    let mut spec = s.spec(Platform::Linux);
    spec.launcher_exe = Some(s.root.join("bin/jaula"));
    let root = s.root.clone();
    let p = spec.resolve().unwrap();
    (s, root, p)
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
    // Each source (its serialised name and a colon), then paths below the scratch root.
    let table = "
        git-config: repo/.git/config
        git-hooks: repo/.git/hooks/pre-commit
        repo-tool-settings: repo/.vscode/tasks.json repo/.claude/settings.json
            repo/.claude/hooks/x.sh repo/.mcp.json repo/.envrc
        home-git-config: home/.gitconfig home/.config/git/config
        shell-startup: home/.bashrc
        session-startup: home/.config/systemd/user/x.service home/.config/autostart/x.desktop
            home/.local/share/applications/firefox.desktop
            home/.local/share/dbus-1/services/x.service
        multiplexer-config: home/.config/tmux/tmux.conf
        editor-init: home/.config/nvim/init.lua
        cargo-config: home/.cargo/config.toml
        agent-settings: home/.claude/settings.json home/.claude/hooks/h.sh
            home/.codex/config.toml
        jaula-executable: bin/jaula";
    let mut cases = Vec::new();
    let mut source: Option<S> = None;
    for word in table.split_whitespace() {
        match word.strip_suffix(':') {
            Some(name) => source = Some(serde_json::from_value(name.into()).unwrap()),
            None => cases.push((root.join(word), source.unwrap())),
        }
    }
    assert_eq!(cases.len(), 21);
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
    let state = "home/.claude/projects/x.jsonl home/.codex/sessions/s.jsonl
        home/.cargo/registry/index home/.local/share/uv/tools home/.local/bin/tool
        repo/.claude/notes.md repo/src/main.rs";
    for path in state.split_whitespace().map(|rel| root.join(rel)) {
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
    let s = Scratch::new();
    let (root, home, repo) = (&s.root, &s.home, &s.repo);
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
    let s = Scratch::new();
    let (root, home, repo, bin) = (&s.root, &s.home, &s.repo, s.root.join("bin"));
    fs::create_dir_all(&bin).unwrap();
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
