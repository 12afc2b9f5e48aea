//! No crate of the workspace has an import circle between its top-level modules: what two
//! modules share lives in a module of its own (docs/architecture.md, "Where a new thing
//! goes"). Read from the sources, so a circle cannot hide behind a `cfg`.

use std::path::Path;

use jaula_testkit::layout;

#[test]
fn no_crate_has_a_module_that_imports_a_module_that_imports_it_back() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        read += 1;
        for (a, b) in layout::cycles(&layout::graph(&src).unwrap()) {
            found.push(format!("{}: {a} <-> {b}", src.display()));
        }
    }
    assert!(
        read >= 8,
        "read only {read} crates under {}",
        crates.display()
    );
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}
