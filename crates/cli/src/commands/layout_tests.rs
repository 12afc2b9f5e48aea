//! The commands' import graph has no cycle: a piece two commands share lives in a module
//! of its own, never in one of the two. Read from the sources, every `crate::commands::X`
//! path (in `use` lines and inline), so a cycle cannot hide behind a `cfg`.

use std::collections::BTreeSet;

use jaula_testkit::layout::{cycles, names_after, Graph};
use std::path::Path;

/// Cycles that another change removes; each must still be a cycle, so the entry is
/// dropped with it. None are left.
const KNOWN_CYCLES: &[(&str, &str)] = &[];

/// The sibling modules `source` names through `crate::commands::`, including every name of
/// a `crate::commands::{a, b::c}` group.
fn named_siblings(source: &str) -> BTreeSet<String> {
    names_after(source, "crate::commands::")
}

/// Module name -> the sibling modules it names. A `NAME_tests.rs` file is part of `NAME`.
fn graph_of(files: &[(String, String)]) -> Graph {
    let mut graph = Graph::new();
    for (file, source) in files {
        let module = file.strip_suffix("_tests").unwrap_or(file).to_owned();
        let named: Vec<String> = named_siblings(source)
            .into_iter()
            .filter(|n| *n != module && n != "mod")
            .collect();
        graph.entry(module).or_default().extend(named);
    }
    graph
}

fn sources() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            files.push((stem, std::fs::read_to_string(&path).unwrap()));
        }
    }
    assert!(
        files.len() > 10,
        "found only {} files in {dir:?}",
        files.len()
    );
    files
}

#[test]
fn no_command_imports_a_sibling_that_imports_it_back() {
    let found = cycles(&graph_of(&sources()));
    let known: BTreeSet<(String, String)> = KNOWN_CYCLES
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(
        new.is_empty(),
        "import cycles in crates/cli/src/commands (move the shared piece to a module of \
         its own): {new:?}"
    );
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        gone.is_empty(),
        "no longer cycles, drop from KNOWN_CYCLES: {gone:?}"
    );
}

/// The check itself finds what it is for: direct and longer cycles, through groups and
/// inline paths, with a test file counted as its module.
#[test]
fn the_cycle_check_sees_groups_inline_paths_and_test_files() {
    let file = |name: &str, text: &str| (name.to_owned(), text.to_owned());
    let files = [
        file("a", "use crate::commands::{b, c::X};"),
        file("b", "fn f() { crate::commands::a::g() }"),
        file("c", "use crate::commands::d::Y;"),
        file("d", "use crate::context;"),
        file("d_tests", "use crate::commands::c::Z;"),
        file("e", "use crate::commands::e::Self_;"),
    ];
    let graph = graph_of(&files);
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        cycles(&graph),
        BTreeSet::from([pair("a", "b"), pair("c", "d")]),
        "{graph:?}"
    );
}
