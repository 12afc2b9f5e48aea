use std::fs;
use std::path::{Path, PathBuf};

use crate::{
    FileRule, FileRuleSource, Platform, PolicyError, PolicySpec, SealKind, SealSource, Warning,
    WriteSource,
};

use crate::test_support::Scratch;

fn scratch() -> Scratch {
    Scratch::with_repo("work/repo")
}

fn spec(s: &Scratch, platform: Platform) -> PolicySpec {
    s.spec(platform)
}

/// The directory `home/<inside>`, created, and `<root>/<link>`, a symlink to it.
fn link_into(s: &Scratch, inside: &str, link: &str) -> PathBuf {
    fs::create_dir_all(s.home.join(inside)).unwrap();
    std::os::unix::fs::symlink(s.home.join(inside), s.root.join(link)).unwrap();
    s.root.join(link)
}

fn sealed_kind(policy: &crate::Policy, path: &Path) -> Option<(SealKind, SealSource)> {
    policy
        .sealed()
        .iter()
        .find(|r| r.path == path)
        .map(|r| (r.kind, r.source))
}

#[test]
fn defaults_seal_the_credential_lists_with_declared_kinds() {
    let s = scratch();
    let p = spec(&s, Platform::Linux).resolve().unwrap();
    let dirs = [
        ".ssh",
        ".aws",
        ".kube",
        ".gnupg",
        ".config/gcloud",
        ".config/gh",
        ".docker",
    ];
    let files = [
        ".git-credentials",
        ".netrc",
        ".pgpass",
        ".claude/.credentials.json",
    ];
    let cargo = [".cargo/credentials", ".cargo/credentials.toml"];
    let broker = [".agents-city/.runtime/broker"];
    let groups: [(&[&str], SealKind, SealSource); 4] = [
        (&dirs, SealKind::Directory, SealSource::CredentialDirectory),
        (&files, SealKind::File, SealSource::CredentialFile),
        (&cargo, SealKind::File, SealSource::CargoCredentials),
        (&broker, SealKind::Directory, SealSource::BrokerTokens),
    ];
    for (names, kind, source) in groups {
        for name in names {
            let found = sealed_kind(&p, &s.home.join(name));
            assert_eq!(found, Some((kind, source)), "{name}");
        }
    }
    // `.npmrc` is deliberately not sealed by default.
    assert_eq!(sealed_kind(&p, &s.home.join(".npmrc")), None);
    assert_eq!(p.sealed().len(), 14);
}

#[test]
fn declaration_beats_the_disk_for_a_declared_file_that_is_absent() {
    let s = scratch();
    let p = spec(&s, Platform::Linux).resolve().unwrap();
    assert!(!s.home.join(".netrc").exists());
    assert_eq!(
        sealed_kind(&p, &s.home.join(".netrc")).map(|k| k.0),
        Some(SealKind::File)
    );
}

#[test]
fn owner_denies_ask_the_disk_and_default_to_directory() {
    let s = scratch();
    fs::write(s.home.join(".npmrc"), "token").unwrap();
    let mut sp = spec(&s, Platform::Linux);
    sp.extra_sealed = vec![
        PathBuf::from("~/.npmrc"),
        PathBuf::from("~/not-yet"),
        // Named again: the declaration (a file, credential) is kept, not the owner's.
        PathBuf::from("~/.netrc"),
        PathBuf::from("~/.ssh"),
    ];
    let p = sp.resolve().unwrap();
    assert_eq!(
        sealed_kind(&p, &s.home.join(".npmrc")),
        Some((SealKind::File, SealSource::OwnerDeny))
    );
    assert_eq!(
        sealed_kind(&p, &s.home.join("not-yet")),
        Some((SealKind::Directory, SealSource::OwnerDeny))
    );
    assert_eq!(
        sealed_kind(&p, &s.home.join(".netrc")),
        Some((SealKind::File, SealSource::CredentialFile))
    );
    // Dedup: 14 defaults + 2 new owner denies.
    assert_eq!(p.sealed().len(), 16);
    let ssh = p
        .sealed()
        .iter()
        .filter(|r| r.path == s.home.join(".ssh"))
        .count();
    assert_eq!(ssh, 1);
}

#[test]
fn seals_follow_symlinks_to_their_target() {
    let s = scratch();
    let target = s.root.join("elsewhere/ssh");
    fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, s.home.join(".ssh")).unwrap();
    let p = spec(&s, Platform::Linux).resolve().unwrap();
    assert!(sealed_kind(&p, &target).is_some());
    assert!(sealed_kind(&p, &s.home.join(".ssh")).is_none());
}

#[test]
fn relocated_state_home_is_sealed_and_writable_consistently() {
    let s = scratch();
    let state = s.root.join("state");
    let mut sp = spec(&s, Platform::Linux);
    sp.state_home = Some(state.clone());
    let p = sp.resolve().unwrap();
    assert_eq!(p.state_home(), state);
    assert!(sealed_kind(&p, &state.join(".runtime/broker")).is_some());
    assert!(sealed_kind(&p, &s.home.join(".agents-city/.runtime/broker")).is_none());
    assert!(p
        .writable()
        .iter()
        .any(|w| w.path == state && w.source == WriteSource::StateHome));
    assert!(p
        .protected()
        .iter()
        .any(|x| x.path == state.join(".runtime/cage")));
}

#[test]
fn writable_roots_follow_the_platform() {
    let s = scratch();
    let linux = spec(&s, Platform::Linux).resolve().unwrap();
    let mac = spec(&s, Platform::MacOs).resolve().unwrap();
    let has = |p: &crate::Policy, path: &Path| p.writable().iter().any(|w| w.path == path);
    assert!(has(&linux, &s.home.join(".local/share")));
    assert!(has(&linux, &s.home.join(".config")));
    assert!(has(&linux, &s.home.join("go")));
    assert!(!has(&linux, &s.home.join("Library/Caches")));
    assert!(has(&mac, &s.home.join("Library/Caches")));
    assert!(has(&mac, &s.home.join("Library/pnpm")));
    assert!(!has(&mac, &s.home.join(".config")));
    assert!(has(&linux, Path::new("/var/tmp")));
    assert!(has(&mac, Path::new("/private/var/folders")));
    assert!(!has(&mac, Path::new("/var/tmp")));
    for p in [&linux, &mac] {
        assert_eq!(p.writable()[0].path, s.repo);
        assert_eq!(p.writable()[0].source, WriteSource::Repo);
        assert!(has(p, &s.home.join(".cargo")));
        assert!(has(p, &s.home.join(".claude")));
    }
}

#[test]
fn write_allow_inside_a_sealed_root_is_dropped_with_a_warning() {
    let s = scratch();
    let mut sp = spec(&s, Platform::Linux);
    sp.extra_writable = vec![PathBuf::from("~/.ssh/keys"), PathBuf::from("~/scratch")];
    sp.mounts = vec![s.home.join(".aws")];
    let p = sp.resolve().unwrap();
    assert!(!p
        .writable()
        .iter()
        .any(|w| w.path.starts_with(s.home.join(".ssh"))));
    assert!(!p.writable().iter().any(|w| w.path == s.home.join(".aws")));
    assert!(p
        .writable()
        .iter()
        .any(|w| w.path == s.home.join("scratch") && w.source == WriteSource::OwnerAllow));
    assert_eq!(
        p.warnings(),
        &[
            Warning::WriteAllowInsideSealed {
                path: s.home.join(".ssh/keys"),
                sealed: s.home.join(".ssh")
            },
            Warning::WriteAllowInsideSealed {
                path: s.home.join(".aws"),
                sealed: s.home.join(".aws")
            },
        ]
    );
}

#[test]
fn write_allow_through_a_symlink_into_a_seal_is_dropped() {
    let s = scratch();
    let mut sp = spec(&s, Platform::Linux);
    sp.extra_writable = vec![link_into(&s, ".ssh", "innocent")];
    let p = sp.resolve().unwrap();
    assert_eq!(p.warnings().len(), 1);
    assert!(!p.writable().iter().any(|w| w.path == s.home.join(".ssh")));
}

#[test]
fn a_broad_write_allow_that_contains_a_seal_is_kept() {
    // The seal is applied after it and wins; only extras strictly inside seals are dropped.
    let s = scratch();
    let mut sp = spec(&s, Platform::Linux);
    sp.extra_writable = vec![PathBuf::from("~")];
    let p = sp.resolve().unwrap();
    assert!(p.writable().iter().any(|w| w.path == s.home));
    assert!(p.warnings().is_empty());
}

#[test]
fn unsafe_working_directories_are_refused_with_the_offending_path() {
    let s = scratch();
    let check = |repo: PathBuf| {
        let mut sp = spec(&s, Platform::Linux);
        sp.repo = repo;
        sp.resolve().unwrap_err()
    };
    assert!(
        matches!(check(s.root.join("nope")), PolicyError::RepoMissing(p) if p == s.root.join("nope"))
    );
    fs::write(s.root.join("file"), "").unwrap();
    assert!(matches!(
        check(s.root.join("file")),
        PolicyError::RepoNotDirectory(_)
    ));
    assert!(matches!(
        check(PathBuf::from("/")),
        PolicyError::RepoIsRoot(_)
    ));
    assert!(matches!(check(s.home.clone()), PolicyError::RepoIsHome(_)));
    assert!(matches!(
        check(s.root.clone()),
        PolicyError::RepoContainsHome { .. }
    ));
    fs::create_dir_all(s.home.join(".ssh/inner")).unwrap();
    assert!(matches!(
        check(s.home.join(".ssh/inner")),
        PolicyError::RepoInsideSealed { sealed, .. } if sealed == s.home.join(".ssh")
    ));
    fs::create_dir_all(s.home.join(".config")).unwrap();
    assert!(matches!(
        check(s.home.join(".config")),
        PolicyError::RepoContainsSealed { sealed, .. } if sealed == s.home.join(".config/gcloud")
    ));
    // A repo that shares a string prefix with a seal is fine.
    fs::create_dir_all(s.home.join(".sshx")).unwrap();
    let mut sp = spec(&s, Platform::Linux);
    sp.repo = s.home.join(".sshx");
    assert!(sp.resolve().is_ok());
}

#[test]
fn repo_through_a_symlink_into_a_seal_is_refused() {
    let s = scratch();
    let mut sp = spec(&s, Platform::Linux);
    sp.repo = link_into(&s, ".aws/proj", "proj");
    assert!(matches!(
        sp.resolve(),
        Err(PolicyError::RepoInsideSealed { .. })
    ));
}

#[test]
fn channel_token_files_are_listed_only_when_they_exist() {
    let s = scratch();
    let channels = s.home.join(".claude/channels");
    fs::create_dir_all(channels.join("b")).unwrap();
    fs::create_dir_all(channels.join("a")).unwrap();
    fs::create_dir_all(channels.join("empty")).unwrap();
    fs::write(channels.join("b/.env"), "T=1").unwrap();
    fs::write(channels.join("a/.env"), "T=2").unwrap();
    fs::create_dir_all(channels.join("dir-not-file/.env")).unwrap();
    let p = spec(&s, Platform::Linux).resolve().unwrap();
    assert_eq!(
        p.file_rules().last(),
        Some(&FileRule::SealedPattern {
            dir: channels.clone(),
            name: ".env".to_string(),
            existing: vec![channels.join("a/.env"), channels.join("b/.env")],
            source: FileRuleSource::ChannelTokens,
        })
    );
}

#[test]
fn token_file_and_config_are_canonical() {
    let s = scratch();
    let mut sp = spec(&s, Platform::Linux);
    sp.token_file = Some(PathBuf::from("~/.agents-city/.runtime/broker/w1.token"));
    sp.config_file = Some(s.root.join("custom/jaula.toml"));
    let p = sp.resolve().unwrap();
    let readable: Vec<_> = p
        .file_rules()
        .iter()
        .filter_map(|r| match r {
            FileRule::ReadableInSeal { path, source } => Some((path.clone(), *source)),
            _ => None,
        })
        .collect();
    assert_eq!(
        readable,
        [(
            s.home.join(".agents-city/.runtime/broker/w1.token"),
            FileRuleSource::WindowToken
        )]
    );
    let protected: Vec<_> = p
        .protected()
        .iter()
        .filter(|x| x.source.is_cage_configuration())
        .map(|x| x.path.clone())
        .collect();
    assert_eq!(
        protected,
        vec![
            s.home.join(".config/jaula"),
            s.home.join(".agents-city/.runtime/cage"),
            s.root.join("custom/jaula.toml")
        ]
    );
}

#[test]
fn awkward_names_resolve() {
    use std::os::unix::ffi::OsStrExt;
    let s = scratch();
    let name = std::ffi::OsStr::from_bytes(b"r\"e\\p o\n\xfe");
    let repo = s.root.join(name);
    fs::create_dir_all(&repo).unwrap();
    let mut sp = spec(&s, Platform::MacOs);
    sp.repo = repo.clone();
    let p = sp.resolve().unwrap();
    assert_eq!(p.repo(), repo);
}
