/// Scratch directories for unit tests. Never under `/tmp`: `/tmp` is a writable root of
/// every Linux cage, so a scratch home there would be writable whole and prove nothing.
pub(crate) fn test_scratch() -> tempfile::TempDir {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::Builder::new()
        .prefix("policy-")
        .tempdir_in(base)
        .unwrap()
}
