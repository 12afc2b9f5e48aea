use super::*;
use crate::test_support::scratch;

#[test]
fn the_guards_verbs_name_their_calls() {
    for (verb, call) in [
        ("create of", "create"),
        ("temporary file in", "create"),
        ("write to", "write"),
        ("removal of", "remove"),
        ("rename onto", "rename"),
        ("rename of", "rename"),
        ("truncation of", "truncate"),
        ("link of", "link"),
    ] {
        assert_eq!(call_of(verb), call, "{verb}");
    }
}

#[test]
fn only_eacces_and_erofs_may_be_the_cage() {
    assert!(may_be_the_cage(libc::EACCES));
    assert!(may_be_the_cage(libc::EROFS));
    for other in [
        libc::EPERM,
        libc::EXDEV,
        libc::ENOENT,
        libc::EEXIST,
        libc::ENOSPC,
    ] {
        assert!(!may_be_the_cage(other), "{other}");
    }
}

#[test]
fn allow_write_names_the_file_written_or_the_directory_a_name_is_made_in() {
    let p = Path::new("/usr/local/share/x");
    assert_eq!(allow_write_target(p, Access::Write), p);
    assert_eq!(
        allow_write_target(p, Access::Create),
        Path::new("/usr/local/share")
    );
}

fn refusal(path: &str) -> WriteRefusal {
    WriteRefusal {
        path: PathBuf::from(path),
        call: "create",
        rule: WriteRule::ReadOnly,
        detail: "default: read-only".to_owned(),
        allow_with: Vec::new(),
    }
}

#[test]
fn the_list_keeps_each_path_once_and_counts_past_its_bound() {
    let mut refused = RefusedWrites::default();
    for i in 0..(KEPT + 3) {
        refused.add(refusal(&format!("/ro/{i}")));
    }
    refused.add(refusal("/ro/0"));
    refused.add(refusal("/ro/0"));
    assert_eq!(refused.kept.len(), KEPT);
    assert_eq!(refused.kept[0].0.path, Path::new("/ro/0"));
    assert_eq!(refused.kept[0].1, 3);
    assert_eq!(refused.dropped, 3);
}

fn resolved() -> (tempfile::TempDir, PathBuf, Policy) {
    let (dir, root) = scratch("write-refusals-");
    let (home, repo) = (root.join("home"), root.join("repo"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
    let policy = jaula_policy::PolicySpec::with_defaults(jaula_policy::Platform::Linux, home, repo)
        .resolve()
        .unwrap();
    (dir, root, policy)
}

fn refused(policy: &Policy, path: &Path, access: Access) -> WriteRefusal {
    let decision = policy.decide(path, access);
    assert!(!decision.allowed, "{}", path.display());
    from_decision(policy, path, access, "create", &decision)
}

#[test]
fn each_rule_is_given_the_flag_that_would_allow_it() {
    let (_dir, root, policy) = resolved();
    let home = root.join("home");
    // Read-only: the directory a name is made in, the file itself for a write.
    let ro = refused(&policy, Path::new("/usr/local/notes.txt"), Access::Create);
    assert_eq!(ro.rule, WriteRule::ReadOnly);
    assert_eq!(
        ro.allow_with,
        vec![("--allow-write", PathBuf::from("/usr/local"))]
    );
    let ro = refused(&policy, Path::new("/usr/bin/x"), Access::Write);
    assert_eq!(
        ro.allow_with,
        vec![("--allow-write", PathBuf::from("/usr/bin/x"))]
    );
    // Protected beneath a writable root: --unprotect alone.
    let config = root.join("repo/.git/config");
    let git = refused(&policy, &config, Access::Write);
    assert_eq!(git.rule, WriteRule::Protected);
    assert_eq!(git.allow_with, vec![("--unprotect", config)]);
    // Protected beneath no writable root: an unprotected path is only as writable as its
    // root, so the directory must be made writable too.
    let bashrc = home.join(".bashrc");
    let rc = refused(&policy, &bashrc, Access::Write);
    assert_eq!(rc.rule, WriteRule::Protected);
    assert_eq!(
        rc.allow_with,
        vec![("--unprotect", bashrc), ("--allow-write", home.clone())]
    );
    // Sealed: nothing opens it.
    let sealed = refused(&policy, &home.join(".ssh/id_ed25519"), Access::Write);
    assert_eq!(sealed.rule, WriteRule::Sealed);
    assert!(sealed.allow_with.is_empty());
    // jaula's own configuration stays protected whatever is unprotected.
    let own = refused(
        &policy,
        &home.join(".config/jaula/config.toml"),
        Access::Write,
    );
    assert_eq!(own.rule, WriteRule::Protected);
    assert!(own.allow_with.is_empty(), "{:?}", own.allow_with);
}
