//! A crate's module graph, read from its sources: which of its top-level modules name
//! which (`crate::X`, in `use` lines and inline), so a test can hold every crate to having
//! no import circle. Test files (`*_tests.rs`) and comment lines are left out: a test may
//! reach anywhere, and a doc link is not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules of the same crate it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The graph of the crate whose sources are under `src`.
pub fn graph(src: &Path) -> std::io::Result<Graph> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let mut graph = Graph::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file);
        let Some(module) = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|m| m.trim_end_matches(".rs").to_owned())
        else {
            continue;
        };
        let test_file = file
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| s.ends_with("_tests"));
        if module == "lib" || module == "main" || test_file {
            continue;
        }
        let source = std::fs::read_to_string(&file)?;
        let named = graph.entry(module.clone()).or_default();
        for line in source.lines().filter(|l| !l.trim_start().starts_with("//")) {
            named.extend(named_modules(line).into_iter().filter(|m| *m != module));
        }
    }
    // Only the crate's own modules count (not `crate::Type` re-exported at the root).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for named in graph.values_mut() {
        named.retain(|m| modules.contains(m));
    }
    Ok(graph)
}

/// Every pair of modules that reach each other, each pair once, sorted.
pub fn cycles(graph: &Graph) -> BTreeSet<(String, String)> {
    let reaches = |from: &str, to: &str| -> bool {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(m) = todo.pop() {
            if m == to {
                return true;
            }
            if seen.insert(m.clone()) {
                todo.extend(graph.get(&m).into_iter().flatten().cloned());
            }
        }
        false
    };
    let mut out = BTreeSet::new();
    for (module, named) in graph {
        for other in named {
            if reaches(other, module) {
                let (a, b) = if module < other {
                    (module, other)
                } else {
                    (other, module)
                };
                out.insert((a.clone(), b.clone()));
            }
        }
    }
    out
}

/// The modules `line` names through `crate::`, every name of a `crate::{a, b::c}` group
/// included.
fn named_modules(line: &str) -> BTreeSet<String> {
    names_after(line, "crate::")
}

/// The names `text` gives right after `prefix` (`crate::commands::`), every name of a
/// `prefix{a, b::c}` group included.
pub fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        rest = &rest[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(ident).filter(|n| !n.is_empty()));
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// Every `.rs` file under `dir`.
fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
