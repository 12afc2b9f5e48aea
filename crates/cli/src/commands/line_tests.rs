use super::{sanitize_window, write_profile};
use std::os::unix::fs::PermissionsExt;

/// The macOS half of `line`, run on any host: the profile lands under the state home's
/// `.runtime/cage`, mode 0600, named after the sanitised window, replacing (never
/// following) whatever was planted at that name.
#[test]
fn the_profile_file_is_private_atomic_and_never_follows_a_planted_link() {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("line-")
        .tempdir_in(&base)
        .unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (home, repo) = (root.join("home"), root.join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(home.join(".agents-city/.runtime/cage")).unwrap();
    let victim = root.join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let target = home.join(".agents-city/.runtime/cage/my-win-1.sb");
    std::os::unix::fs::symlink(&victim, &target).unwrap();
    let policy = jaula_policy::PolicySpec::with_defaults(jaula_policy::Platform::MacOs, home, repo)
        .resolve()
        .unwrap();
    let path = write_profile(&policy, "my win:1").unwrap();
    assert_eq!(path, target);
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_file(), "the planted link was replaced");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        jaula_sandbox::seatbelt::render_profile(&policy).unwrap()
    );
    let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1, "no temp file is left behind");
}

#[test]
fn window_names_are_sanitised_like_the_seed() {
    assert_eq!(sanitize_window("repo:1 main"), "repo-1-main");
    assert_eq!(sanitize_window("../../etc/x"), "------etc-x");
    assert_eq!(sanitize_window("ñ_ok-1"), "-_ok-1");
    assert_eq!(sanitize_window(""), "window");
}
