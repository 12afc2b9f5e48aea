use super::*;
use crate::paths::{canonicalize_lenient, normalize_lexically};
use proptest::prelude::*;
use std::os::unix::fs::symlink;

/// The oracle: the lenient rule spelled with `std::fs::canonicalize` (glibc `realpath`)
/// per prefix, as jaula did it before the walker.
fn oracle(path: &Path) -> PathBuf {
    let absolute = normalize_lexically(path);
    let mut missing = Vec::new();
    let mut cursor = absolute.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(cursor) {
            let mut out = real;
            out.extend(missing.iter().rev());
            return out;
        }
        match (cursor.parent(), cursor.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                cursor = parent;
            }
            _ => return absolute,
        }
    }
}

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = crate::test_scratch();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// Every query agrees with the oracle, uncached and inside one shared cache (asked
/// twice, so the second answer comes from the cache).
fn assert_agrees(queries: &[PathBuf]) {
    for q in queries {
        assert_eq!(
            lenient(&normalize_lexically(q), &crate::RealHostFs),
            oracle(q),
            "uncached: {q:?}"
        );
        // The strict walk a fake host's `canonicalize` uses: realpath itself.
        assert_eq!(
            realpath(q, &crate::RealHostFs).ok(),
            std::fs::canonicalize(q).ok(),
            "realpath: {q:?}"
        );
    }
    with_cache(|| {
        for _ in 0..2 {
            for q in queries {
                assert_eq!(
                    canonicalize_lenient(q, Path::new("/")),
                    oracle(q),
                    "cached: {q:?}"
                );
            }
        }
    });
}

#[test]
fn links_parents_absent_tails_and_loops_resolve_as_realpath_does() {
    let (_guard, r) = scratch();
    std::fs::create_dir_all(r.join("real/sub")).unwrap();
    std::fs::write(r.join("real/file"), "x").unwrap();
    symlink(r.join("real"), r.join("abs")).unwrap(); // absolute link to a directory
    symlink("real/sub", r.join("rel")).unwrap(); // relative link
    symlink("../real", r.join("real/sub/up")).unwrap(); // `..` inside a target
    symlink("abs/sub/up/file", r.join("chain")).unwrap(); // links through links
    symlink("loop", r.join("loop")).unwrap(); // a link to itself
    symlink("ping", r.join("pong")).unwrap();
    symlink("pong", r.join("ping")).unwrap(); // a two-link loop
    symlink("absent/deeper", r.join("dangling")).unwrap();
    symlink("real/file/", r.join("file-slash")).unwrap(); // a file named as a directory
    symlink("real/file/..", r.join("file-dotdot")).unwrap();
    symlink("real/sub/.", r.join("dir-dot")).unwrap();
    symlink("/", r.join("to-root")).unwrap();
    let queries: Vec<PathBuf> = [
        "real",
        "real/sub",
        "abs",
        "abs/sub",
        "abs/absent/x",
        "rel",
        "rel/up/file",
        "rel/up/sub/up",
        "chain",
        "chain/x",
        "loop",
        "loop/x",
        "ping/x",
        "dangling",
        "dangling/x",
        "file-slash",
        "file-slash/x",
        "file-dotdot",
        "dir-dot",
        "dir-dot/y",
        "real/file/x",
        "real/file/x/y",
        "absent",
        "absent/a/b",
        "to-root",
        "to-root/etc",
    ]
    .iter()
    .map(|q| r.join(q))
    .chain([PathBuf::from("/"), r.join("real/../abs/./sub/")])
    .collect();
    assert_agrees(&queries);
}

#[test]
fn a_link_chain_longer_than_realpath_allows_does_not_resolve() {
    let (_guard, r) = scratch();
    std::fs::create_dir(r.join("end")).unwrap();
    symlink("end", r.join("l0")).unwrap();
    for i in 1..45 {
        symlink(format!("l{}", i - 1), r.join(format!("l{i}"))).unwrap();
    }
    let queries: Vec<PathBuf> = (35..45).map(|i| r.join(format!("l{i}/x"))).collect();
    assert_agrees(&queries);
}

#[test]
fn the_cache_lives_for_one_call_only() {
    let (_guard, r) = scratch();
    let before = with_cache(|| canonicalize_lenient(&r.join("later/x"), &r));
    assert_eq!(before, r.join("later/x"));
    std::fs::create_dir(r.join("real")).unwrap();
    symlink("real", r.join("later")).unwrap();
    let after = with_cache(|| canonicalize_lenient(&r.join("later/x"), &r));
    assert_eq!(after, r.join("real/x"));
}

#[test]
fn a_replaced_link_is_seen_by_the_next_resolution() {
    let (_guard, r) = scratch();
    std::fs::create_dir(r.join("first")).unwrap();
    std::fs::create_dir(r.join("second")).unwrap();
    symlink("first", r.join("link")).unwrap();
    let link = r.join("link");
    let (once, again) = with_cache(|| {
        (
            read_link(&link, &crate::RealHostFs),
            read_link(&link, &crate::RealHostFs),
        )
    });
    assert_eq!(once, Some(PathBuf::from("first")));
    assert_eq!(again, once);
    std::fs::remove_file(&link).unwrap();
    symlink("second", &link).unwrap();
    assert_eq!(
        with_cache(|| read_link(&link, &crate::RealHostFs)),
        Some(PathBuf::from("second"))
    );
    assert_eq!(
        read_link(&link, &crate::RealHostFs),
        Some(PathBuf::from("second"))
    );
    std::fs::remove_file(&link).unwrap();
    std::fs::create_dir(&link).unwrap();
    assert_eq!(with_cache(|| read_link(&link, &crate::RealHostFs)), None);
}

/// One entry of a generated tree: where it goes (indices into NAMES) and what it is.
#[derive(Debug, Clone)]
enum Node {
    Dir(Vec<usize>),
    File(Vec<usize>),
    /// A link and its target's parts; `absolute` starts the target at the scratch root.
    Link {
        at: Vec<usize>,
        target: Vec<usize>,
        absolute: bool,
        trailing_slash: bool,
    },
}

const NAMES: [&str; 5] = ["a", "b", "c", "..", "."];

fn rel(parts: &[usize], real_names_only: bool) -> String {
    parts
        .iter()
        .map(|i| NAMES[if real_names_only { i % 3 } else { *i }])
        .collect::<Vec<_>>()
        .join("/")
}

fn node() -> impl Strategy<Value = Node> {
    let at = prop::collection::vec(0..3usize, 1..4);
    prop_oneof![
        at.clone().prop_map(Node::Dir),
        at.clone().prop_map(Node::File),
        (
            at,
            prop::collection::vec(0..5usize, 0..4),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(at, target, absolute, trailing_slash)| Node::Link {
                at,
                target,
                absolute,
                trailing_slash
            }),
    ]
}

fn build(root: &Path, nodes: &[Node]) {
    for n in nodes {
        // Creation may fail (a parent is a file or a link, the name is taken): the tree
        // is whatever the kernel let us make, which is all the walker may assume too.
        let _ = match n {
            Node::Dir(at) => std::fs::create_dir_all(root.join(rel(at, true))),
            Node::File(at) => std::fs::write(root.join(rel(at, true)), "x"),
            Node::Link {
                at,
                target,
                absolute,
                trailing_slash,
            } => {
                let mut text = rel(target, false);
                if *absolute {
                    text = format!("{}/{text}", root.display());
                }
                if *trailing_slash {
                    text.push('/');
                }
                if text.is_empty() {
                    text.push('.');
                }
                symlink(text, root.join(rel(at, true)))
            }
        };
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn generated_trees_resolve_as_realpath_does(
        nodes in prop::collection::vec(node(), 1..14),
        queries in prop::collection::vec(prop::collection::vec(0..3usize, 1..6), 1..12),
    ) {
        let (_guard, r) = scratch();
        build(&r, &nodes);
        let queries: Vec<PathBuf> = queries.iter().map(|q| r.join(rel(q, true))).collect();
        assert_agrees(&queries);
    }
}
