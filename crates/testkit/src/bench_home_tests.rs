use super::*;

fn tmp() -> tempfile::TempDir {
    // A unit test has no CARGO_TARGET_TMPDIR; no cage runs here, so /tmp is fine.
    tempfile::Builder::new()
        .prefix("bench-home-")
        .tempdir()
        .unwrap()
}

#[test]
fn a_home_with_entries_has_exactly_that_many_and_is_kept_when_it_has() {
    let dir = tmp();
    let home = dir.path().join("h");
    with_entries(&home, 10).unwrap();
    assert_eq!(fs::read_dir(&home).unwrap().count(), 10);
    assert!(home.join(".ssh/id_ed25519").is_file());
    assert!(home.join(TOKEN).is_file());
    assert!(home.join("src/repo").is_dir());
    // Kept: a marker left in it survives a second call with the same size.
    fs::write(home.join("src/repo/kept"), "").unwrap();
    with_entries(&home, 10).unwrap();
    assert!(home.join("src/repo/kept").exists());
    // Made afresh for another size.
    with_entries(&home, 12).unwrap();
    assert_eq!(fs::read_dir(&home).unwrap().count(), 12);
    assert!(!home.join("src/repo/kept").exists());
}

#[test]
fn a_real_sized_home_holds_every_secret_and_the_repo() {
    let dir = tmp();
    let home = dir.path().join("h");
    real_sized(&home).unwrap();
    for rel in SECRETS {
        assert_eq!(
            fs::read_to_string(home.join(rel)).unwrap(),
            "secret\n",
            "{rel}"
        );
    }
    assert!(home.join("src/repo").is_dir());
    assert!(fs::read_dir(&home).unwrap().count() > 200);
}
