use super::*;

#[test]
fn the_guards_verbs_name_their_calls() {
    assert_eq!(call_of("create of"), "create");
    assert_eq!(call_of("temporary file in"), "create");
    assert_eq!(call_of("write to"), "write");
    assert_eq!(call_of("removal of"), "remove");
    assert_eq!(call_of("rename onto"), "rename");
    assert_eq!(call_of("rename of"), "rename");
    assert_eq!(call_of("truncation of"), "truncate");
    assert_eq!(call_of("link of"), "link");
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
