use super::harness_name;

#[test]
fn a_folded_suite_s_test_is_named_by_its_module_path_without_the_crate() {
    assert_eq!(harness_name("all::floor", "child"), "floor::child");
    assert_eq!(
        harness_name("all::escape::fixture", "prober_entry"),
        "escape::fixture::prober_entry"
    );
}

#[test]
fn a_test_at_the_crate_root_keeps_its_bare_name() {
    assert_eq!(harness_name("proxy", "child"), "child");
}
