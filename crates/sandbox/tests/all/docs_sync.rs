//! docs/security.md must show the seccomp and environment lists the code enforces, and
//! every deviation each backend lists.

#[test]
fn security_doc_carries_the_enforced_tables() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/security.md"
    ))
    .unwrap();
    for (name, table) in [
        ("seccomp", jaula_sandbox::doc_tables::seccomp_table()),
        ("environment", jaula_sandbox::doc_tables::env_tables()),
        (
            "backend deviations",
            jaula_sandbox::doc_tables::deviation_tables(),
        ),
    ] {
        assert!(
            doc.contains(table.trim()),
            "docs/security.md is out of date with the {name} table; regenerate it with \
             `cargo run -q -p jaula-sandbox --example doc_tables`"
        );
    }
}
