//! The policy's lists of roots indexed by path, so a decision looks up as many paths as
//! the path has components instead of comparing every root. Knows paths and positions
//! only: the policy holds the cell, `decide` builds and reads it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One of the policy's lists of roots by the path each names: the entries that may cover
/// a path are those named by the path or one of its ancestors, so a decision looks up as
/// many paths as the path has components instead of comparing every root.
#[derive(Debug, Default)]
pub(crate) struct RootIndex(HashMap<PathBuf, Vec<usize>>);

impl RootIndex {
    pub(crate) fn of<'a>(paths: impl Iterator<Item = &'a Path>) -> RootIndex {
        let mut map: HashMap<PathBuf, Vec<usize>> = HashMap::new();
        for (i, path) in paths.enumerate() {
            map.entry(path.to_path_buf()).or_default().push(i);
        }
        RootIndex(map)
    }

    /// The positions, in list order, of the entries named by `path` or an ancestor.
    pub(crate) fn holding(&self, path: &Path) -> Vec<usize> {
        let mut out: Vec<usize> = path
            .ancestors()
            .filter_map(|a| self.0.get(a))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out
    }

    /// The first position, in list order, that `covers` accepts: what a scan of the
    /// whole list would find.
    pub(crate) fn first(&self, path: &Path, covers: impl Fn(usize) -> bool) -> Option<usize> {
        self.holding(path).into_iter().find(|&i| covers(i))
    }
}

/// The indexes of a policy's sealed, protected and writable roots, built on the first
/// decision.
#[derive(Debug, Default)]
pub(crate) struct DecideIndex {
    pub(crate) sealed: RootIndex,
    pub(crate) protected: RootIndex,
    pub(crate) writable: RootIndex,
}

impl DecideIndex {
    /// The index of the three lists, each in its order.
    pub(crate) fn of<'a>(
        sealed: impl Iterator<Item = &'a Path>,
        protected: impl Iterator<Item = &'a Path>,
        writable: impl Iterator<Item = &'a Path>,
    ) -> DecideIndex {
        DecideIndex {
            sealed: RootIndex::of(sealed),
            protected: RootIndex::of(protected),
            writable: RootIndex::of(writable),
        }
    }
}

/// [`DecideIndex`] as a field of [`crate::Policy`]: built once from the policy's own lists (which
/// never change after resolution), and no part of what the policy is: it is neither
/// serialised nor compared, and a clone builds its own.
#[derive(Default)]
pub(crate) struct DecideIndexCell(std::sync::OnceLock<DecideIndex>);

impl DecideIndexCell {
    /// The index, built by `build` the first time it is asked for.
    pub(crate) fn get_or_build(&self, build: impl FnOnce() -> DecideIndex) -> &DecideIndex {
        self.0.get_or_init(build)
    }
}

impl Clone for DecideIndexCell {
    fn clone(&self) -> Self {
        DecideIndexCell::default()
    }
}

impl PartialEq for DecideIndexCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for DecideIndexCell {}

impl std::fmt::Debug for DecideIndexCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecideIndexCell")
    }
}
