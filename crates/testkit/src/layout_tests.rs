use super::*;

#[test]
fn a_group_and_an_inline_path_are_both_named_and_comments_are_not() {
    let named = named_modules("use crate::{alpha, beta::Gamma}; let x = crate::delta::f();");
    assert_eq!(
        named,
        BTreeSet::from(["alpha".into(), "beta".into(), "delta".into()])
    );
}

#[test]
fn a_cycle_through_a_third_module_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    let chain = graph(&[("a", "b"), ("b", "c")]);
    assert!(cycles(&chain).is_empty());
    let circle = graph(&[("a", "b"), ("b", "c"), ("c", "a")]);
    assert_eq!(
        cycles(&circle),
        BTreeSet::from([
            ("a".into(), "b".into()),
            ("a".into(), "c".into()),
            ("b".into(), "c".into())
        ])
    );
}

#[test]
fn a_test_file_in_a_module_directory_is_left_out_like_one_at_the_top() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch");
    let (_dir, src) = crate::scratch_in(&base, "layout-nested-tests");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::Thing;\n").unwrap();
    std::fs::write(src.join("b.rs"), "mod x;\n").unwrap();
    std::fs::write(src.join("b/x_tests.rs"), "use crate::a::f;\n").unwrap();
    let graph_of = |src: &Path| graph(src).unwrap();
    assert!(cycles(&graph_of(&src)).is_empty());
    // The same line in the module's own code is an import, and the circle is found.
    std::fs::write(src.join("b/x.rs"), "use crate::a::f;\n").unwrap();
    assert_eq!(
        cycles(&graph_of(&src)),
        BTreeSet::from([("a".into(), "b".into())])
    );
}
