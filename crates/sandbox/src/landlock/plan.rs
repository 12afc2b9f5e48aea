//! The pure half of the Landlock layer: which `(path, rights)` rules express a policy.
//!
//! Landlock can only grant, and a rule on a directory grants its rights on the whole
//! hierarchy beneath it (`security/landlock/fs.c` walks from the accessed object up to the
//! real root, across mount points, and unions the rights of every rule it meets). So
//! "everything but `~/.ssh`" is written as its complement: the directories on the way to
//! each sealed root get only `READ_DIR`, and every other entry of those directories is
//! granted whole. Only those ancestors are listed, never anything beneath a sibling, so a
//! home with 100,000 entries costs one rule per entry of the home and nothing more.
//!
//! Writes follow the same shape inside writable roots: a writable directory that holds a
//! sealed or protected path is split, each of its other entries writable whole.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use jaula_policy::paths::is_within;
use jaula_policy::{
    Access, EntryKind, FileRule, FileRuleSource, HostFs, Platform, Policy, ProtectKind, SealKind,
    WriteSource,
};
use serde::Serialize;

use super::rights::{Right, Rights};
use super::LandlockError;

/// What the ruleset is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlanMode {
    /// Landlock alone on the host's filesystem: sealed roots become holes in the complement.
    Native,
    /// Inside jaula's bubblewrap view, which already replaces every existing sealed root
    /// with an empty tmpfs or `/dev/null` and gives the cage its own `/dev`. Reads are
    /// granted on `/` whole and writes on each writable root whole, so this layer adds none
    /// of the native deviations. The one split left is around protected configuration that
    /// does not exist yet (the launcher creates it before bwrap, so normally none); an
    /// absent sealed path stays the mount layer's documented deviation.
    BwrapView,
}

/// What a rule is attached to. Landlock refuses directory-only rights on a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TargetKind {
    /// A directory: the rule covers it and everything beneath, with any right.
    Directory,
    /// Anything else (a file, a device, a socket): only [`Rights::FILE`] apply.
    File,
}

/// Why a rule exists, for `jaula explain` and `--verbose`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
#[non_exhaustive]
pub(crate) enum Reason {
    /// Nothing the cage can see is sealed: `/` is readable whole.
    WorldReadable,
    /// On the way to a sealed root: the names of its entries, nothing more.
    SealAncestor {
        /// The sealed path (a root, or a sealed pattern's file) that split this directory.
        sealed: PathBuf,
    },
    /// Beside the way to a sealed root, with nothing sealed beneath: readable whole.
    Sibling {
        /// The split directory this entry lies in.
        beside: PathBuf,
    },
    /// A writable root with nothing sealed or protected beneath: writable whole.
    WritableRoot {
        /// The root.
        root: PathBuf,
        /// Why the policy makes it writable.
        source: WriteSource,
    },
    /// An entry of a writable directory that is split around `around`.
    WritableSibling {
        /// The writable root the entry lies in.
        root: PathBuf,
        /// The sealed or protected path that split its directory.
        around: PathBuf,
    },
    /// A [`FileRule::ReadableInSeal`] file: the one kind of grant inside a sealed root,
    /// and only `READ_FILE`.
    ReadableInSeal {
        /// What the file is.
        source: FileRuleSource,
    },
    /// A [`FileRule::WritableFile`] file that exists, writable in an otherwise read-only
    /// directory.
    WritableFile {
        /// What the file is.
        source: FileRuleSource,
    },
    /// The host's `/dev`: its names are listable, its devices are not.
    DeviceDirectory,
    /// One of the devices bubblewrap's `--dev` would provide.
    DeviceNode,
    /// The socket gate's supervisor only: a write-split directory granted whole, the
    /// gate's check standing in for the split (see [`Plan::gate_split`]).
    // The gate is Linux's; the plan is rendered everywhere (`jaula render landlock`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    SplitTakenByGate,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::WorldReadable => f.write_str("nothing visible is sealed: / readable whole"),
            Reason::SealAncestor { sealed } => {
                write!(f, "on the way to sealed {}: names only", sealed.display())
            }
            Reason::Sibling { beside } => write!(
                f,
                "entry of {} with nothing sealed beneath",
                beside.display()
            ),
            Reason::WritableRoot { root, source } => {
                write!(f, "writable root {} ({})", root.display(), source.label())
            }
            Reason::WritableSibling { root, around } => write!(
                f,
                "inside writable {}, beside {}",
                root.display(),
                around.display()
            ),
            Reason::ReadableInSeal { source } | Reason::WritableFile { source } => {
                f.write_str(source.label())
            }
            Reason::DeviceDirectory => f.write_str("device directory: names only"),
            Reason::DeviceNode => f.write_str("device of the cage's own /dev"),
            Reason::SplitTakenByGate => {
                f.write_str("split for writes, granted whole to the socket gate's supervisor")
            }
        }
    }
}

/// One Landlock rule: `rights` on `path` and everything beneath it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanRule {
    /// The path the rule is attached to, canonical.
    pub(crate) path: PathBuf,
    /// What the planner saw there, which bounds the rights the kernel accepts.
    pub(crate) kind: TargetKind,
    /// The rights granted on the path and beneath it.
    pub rights: Rights,
    /// Every reason that added rights to this path, in the order they did.
    pub(crate) reasons: Vec<Reason>,
}

/// A directory that gets no rule of its own beyond `READ_DIR` (or a read), because
/// something beneath it must stay out of reach; its entries get rules one by one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SplitDir {
    /// The directory.
    pub path: PathBuf,
    /// Split for reads: on the way to a sealed root.
    pub read: bool,
    /// Split for writes: a writable directory holding a sealed or protected path.
    pub write: bool,
}

/// Something the planner could not see, or chose not to grant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "note", rename_all = "kebab-case")]
#[non_exhaustive]
pub(crate) enum PlanNote {
    /// A split directory that could not be listed: its entries get no rule (fail closed).
    Unlistable {
        /// The directory.
        dir: PathBuf,
        /// Why the listing failed.
        error: String,
    },
    /// A path whose type could not be read: treated as absent.
    Unreadable {
        /// The path.
        path: PathBuf,
        /// Why its type could not be read.
        error: String,
    },
    /// A writable root inside a sealed root: the seal wins, no write is granted.
    WritableInsideSealed {
        /// The writable root left without a grant.
        root: PathBuf,
    },
    /// A writable root inside protected configuration: never writable.
    WritableInsideProtected {
        /// The writable root left without a grant.
        root: PathBuf,
    },
}

/// The rules for one policy on one filesystem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// What the rules were built for.
    pub(crate) mode: PlanMode,
    /// Sorted by path, one per path.
    pub rules: Vec<PlanRule>,
    /// Existing sealed roots left without any rule.
    pub holes: Vec<PathBuf>,
    /// Directories granted entry by entry, sorted by path.
    pub split: Vec<SplitDir>,
    /// What the planner could not see or chose not to grant.
    pub(crate) notes: Vec<PlanNote>,
}

impl Plan {
    /// The rule attached exactly at `path`, if any. A path beneath a rule is governed by
    /// it too; this answers only for the rule's own path.
    pub fn rule(&self, path: &Path) -> Option<&PlanRule> {
        self.rules.iter().find(|r| r.path == path)
    }

    /// A few lines for `jaula run -v`: how many rules, which writable roots are granted
    /// whole, and which directories are split (their entries granted one by one) for reads
    /// and for writes. The full list is the [`Display`](fmt::Display) form.
    // Printed by the Linux launch (`launch`) only.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn summary(&self) -> String {
        let mode = match self.mode {
            PlanMode::Native => "native",
            PlanMode::BwrapView => "inside the bwrap view",
        };
        let whole: Vec<String> = self
            .rules
            .iter()
            .filter(|r| {
                r.reasons
                    .iter()
                    .any(|reason| matches!(reason, Reason::WritableRoot { .. }))
            })
            .map(|r| r.path.display().to_string())
            .collect();
        let split = |read: bool| -> Vec<String> {
            self.split
                .iter()
                .filter(|d| if read { d.read } else { d.write })
                .map(|d| d.path.display().to_string())
                .collect()
        };
        let list = |items: Vec<String>| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(" ")
            }
        };
        let mut out = format!("landlock plan ({mode}): {} rules\n", self.rules.len());
        out.push_str(&format!("  writable whole: {}\n", list(whole)));
        out.push_str(&format!(
            "  split for reads (ancestors of a seal: names listable, other entries granted \
             one by one): {}\n",
            list(split(true))
        ));
        out.push_str(&format!(
            "  split for writes (a seal or protected path inside: no new direct entries): {}",
            list(split(false))
        ));
        if !self.holes.is_empty() {
            let holes = self.holes.iter().map(|h| h.display().to_string()).collect();
            out.push_str(&format!("\n  sealed, no rule at all: {}", list(holes)));
        }
        out
    }
}

/// The two Landlock domains of a cage under the socket gate (see [`Plan::gate_split`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct GateSplit {
    /// The supervisor's domain: the plan with every write-split directory granted
    /// [`Rights::WRITE`] whole.
    pub(crate) supervisor: Plan,
    /// The directories granted whole there, canonical and sorted: beneath them the
    /// supervisor refuses whatever `decide` denies, and never moves or removes them.
    pub(crate) widened: Vec<PathBuf>,
    /// The command's nested domain: the plan's write grants alone, to be enforced with
    /// only the write rights handled, so that stacked on the supervisor's it leaves the
    /// command exactly the plan.
    pub(crate) command_writes: Plan,
}

impl Plan {
    /// The split of this plan between the socket gate's supervisor and the command, or
    /// `None` when no directory is split for writes (the plan is then both).
    ///
    /// Every call that makes, removes or renames a name is made by the supervisor from
    /// inside its own domain after `decide` (see `call_gate::file_calls`); reads never
    /// wait for it. So a write-split directory can be granted whole to the supervisor alone,
    /// whose check then stands in for the split beneath it, while the command enters a
    /// second domain with today's write rules: Landlock intersects stacked domains, so the
    /// command's own calls meet exactly this plan, and reads (the same rules in both) keep
    /// every sealed path unreadable to both.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn gate_split(&self) -> Option<GateSplit> {
        let widened: Vec<PathBuf> = self
            .split
            .iter()
            .filter(|d| d.write)
            .map(|d| d.path.clone())
            .collect();
        if widened.is_empty() {
            return None;
        }
        let mut supervisor = self.clone();
        for dir in &widened {
            let reason = Reason::SplitTakenByGate;
            match supervisor
                .rules
                .binary_search_by(|r| r.path.as_path().cmp(dir))
            {
                Ok(i) => {
                    let rule = &mut supervisor.rules[i];
                    rule.rights |= Rights::WRITE;
                    rule.reasons.push(reason);
                }
                Err(i) => supervisor.rules.insert(
                    i,
                    PlanRule {
                        path: dir.clone(),
                        kind: TargetKind::Directory,
                        rights: Rights::WRITE,
                        reasons: vec![reason],
                    },
                ),
            }
        }
        let command_writes = Plan {
            mode: self.mode,
            rules: self
                .rules
                .iter()
                .filter(|r| !(r.rights & Rights::WRITE).is_empty())
                .map(|r| PlanRule {
                    rights: r.rights & Rights::WRITE,
                    ..r.clone()
                })
                .collect(),
            holes: Vec::new(),
            split: Vec::new(),
            notes: Vec::new(),
        };
        Some(GateSplit {
            supervisor,
            widened,
            command_writes,
        })
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            PlanMode::Native => "native",
            PlanMode::BwrapView => "inside the bwrap view",
        };
        writeln!(f, "landlock plan ({mode}): {} rules", self.rules.len())?;
        for rule in &self.rules {
            let reasons: Vec<String> = rule.reasons.iter().map(|r| r.to_string()).collect();
            writeln!(
                f,
                "  {:<12} {}  [{}]",
                rule.rights.to_string(),
                rule.path.display(),
                reasons.join("; ")
            )?;
        }
        for hole in &self.holes {
            writeln!(f, "  {:<12} {}  [sealed]", "none", hole.display())?;
        }
        for note in &self.notes {
            writeln!(f, "  note: {note:?}")?;
        }
        Ok(())
    }
}

/// The devices bubblewrap's `--dev` puts in a cage's own `/dev`. Natively the cage sees the
/// host's `/dev`, where a writable or readable block device (`/dev/sda`, readable by root
/// even without capabilities) would hand over every sealed file on the disk, so only
/// these are granted. `/dev/pts` is the host's devpts: other terminals of the same uid are
/// reachable (bwrap mode gives a private one; seccomp refuses `TIOCSTI`).
pub(crate) const DEVICE_NODES: &[&str] = &[
    "null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts", "shm",
];

const DEV: &str = "/dev";

/// Build the rules expressing `policy` on the filesystem `fs` shows.
///
/// Absent paths get no rule and nothing is ever created. Policy paths are canonical, so a
/// symlink met while planning is a sibling like any other: it gets no rule (a rule on a
/// symlink inode would protect nothing, and following it could land a grant inside a
/// sealed root); whatever it points to is decided on its own path.
pub fn plan(policy: &Policy, mode: PlanMode, fs: &dyn HostFs) -> Result<Plan, LandlockError> {
    if policy.platform() != Platform::Linux {
        return Err(LandlockError::NotLinux {
            platform: policy.platform(),
        });
    }
    Planner::new(policy, mode, fs)?.run()
}

/// Roots, and the one question the planner asks of them for every entry it meets: which
/// root holds this path. Asked with `is_within` against each root in turn, that question
/// was most of the planner's time (a component-by-component walk per root, ~40 roots,
/// for each of a home's 100,000 entries). Policy paths are canonical, so a path lies within
/// a directory root exactly when one of its ancestors, itself included, equals that root:
/// a walk up the path with one hash lookup per level, whatever the number of roots.
#[derive(Debug, Default)]
struct RootIndex {
    /// Roots that hold everything beneath them, with their first position in the policy.
    dirs: HashMap<PathBuf, usize>,
    /// Roots that hold only themselves.
    files: HashMap<PathBuf, usize>,
}

impl RootIndex {
    fn insert(&mut self, path: &Path, kind: SealKind, position: usize) {
        let map = match kind {
            SealKind::Directory => &mut self.dirs,
            SealKind::File => &mut self.files,
        };
        map.entry(path.to_path_buf()).or_insert(position);
    }

    /// The position of the first root (in policy order) that holds `path`.
    fn first_holding(&self, path: &Path) -> Option<usize> {
        let mut first = self.files.get(path).copied();
        for ancestor in path.ancestors() {
            if let Some(&i) = self.dirs.get(ancestor) {
                first = Some(first.map_or(i, |f| f.min(i)));
            }
        }
        first
    }

    fn holds(&self, path: &Path) -> bool {
        self.files.contains_key(path) || path.ancestors().any(|a| self.dirs.contains_key(a))
    }
}

struct Planner<'a> {
    policy: &'a Policy,
    mode: PlanMode,
    fs: &'a dyn HostFs,
    kinds: BTreeMap<PathBuf, Option<EntryKind>>,
    /// Every sealed path: sealed roots, and the files of each sealed pattern (those that
    /// existed at resolution and those present in its directory now).
    seals: Vec<(PathBuf, SealKind)>,
    /// Every [`FileRule::SealedPattern`], which holds its files whether or not they exist.
    patterns: Vec<&'a FileRule>,
    /// [`FileRule::WritableFile`] paths: granted one by one, never as a sibling.
    writable_files: Vec<(PathBuf, FileRuleSource)>,
    /// [`FileRule::ReadableInSeal`] paths: the only grants allowed inside a seal.
    readable_in_seal: Vec<(PathBuf, FileRuleSource)>,
    /// What reads must not reach, and what writes must not reach.
    read_targets: Vec<PathBuf>,
    write_targets: Vec<PathBuf>,
    /// Protected files and directories (a `.git` entry protection has no Landlock form:
    /// see the `protected-not-split` deviation), with whether they may split their
    /// writable ancestors natively and, when absent, inside the view.
    protected: Vec<(PathBuf, SealKind, bool, bool)>,
    /// Writable directory roots that may be granted (not inside a seal or protected path).
    writable: Vec<(PathBuf, WriteSource)>,
    /// `seals`, `protected` and `writable`, indexed for containment.
    seal_index: RootIndex,
    protected_index: RootIndex,
    writable_index: RootIndex,
    /// Each existing sealed pattern directory, split itself (not only its ancestors), with
    /// the pattern that split it.
    pattern_dirs: Vec<(PathBuf, PathBuf)>,
    /// One rule per path; sorted once at the end (a home of 100,000 entries makes as many
    /// rules, and keeping them ordered on every insert cost more than the rest of the plan).
    rules: HashMap<PathBuf, PlanRule>,
    notes: Vec<PlanNote>,
}

impl<'a> Planner<'a> {
    fn new(policy: &'a Policy, mode: PlanMode, fs: &'a dyn HostFs) -> Result<Self, LandlockError> {
        let mut planner = Planner {
            policy,
            mode,
            fs,
            kinds: BTreeMap::new(),
            seals: Vec::new(),
            read_targets: Vec::new(),
            write_targets: Vec::new(),
            protected: policy
                .protected()
                .iter()
                .filter_map(|p| {
                    let kind = match p.kind {
                        ProtectKind::File => SealKind::File,
                        ProtectKind::Directory => SealKind::Directory,
                        ProtectKind::Entry => return None,
                    };
                    // Inside the view only jaula's own configuration splits when absent
                    // (the launcher creates it first, so normally never): an absent planting
                    // path is reported after the run instead, so that the view keeps
                    // ~/.cargo and ~/.config open for new entries (cargo's registry on
                    // first use), as it did before the guard.
                    let in_view = p.source.is_cage_configuration();
                    Some((p.path.clone(), kind, p.split_natively, in_view))
                })
                .collect(),
            writable: Vec::new(),
            seal_index: RootIndex::default(),
            protected_index: RootIndex::default(),
            writable_index: RootIndex::default(),
            patterns: Vec::new(),
            writable_files: Vec::new(),
            readable_in_seal: Vec::new(),
            pattern_dirs: Vec::new(),
            rules: HashMap::new(),
            notes: Vec::new(),
        };
        planner.collect_targets()?;
        Ok(planner)
    }

    fn kind(&mut self, path: &Path) -> Option<EntryKind> {
        if let Some(kind) = self.kinds.get(path) {
            return *kind;
        }
        let kind = match self.fs.kind(path) {
            Ok(kind) => kind,
            Err(e) => {
                self.notes.push(PlanNote::Unreadable {
                    path: path.to_path_buf(),
                    error: e.to_string(),
                });
                None
            }
        };
        self.kinds.insert(path.to_path_buf(), kind);
        kind
    }

    fn within_seal(&self, path: &Path) -> bool {
        self.seal_index.holds(path) || self.patterns.iter().any(|pattern| pattern.covers(path))
    }

    fn within_protected(&self, path: &Path) -> bool {
        self.protected_index.holds(path)
    }

    /// The first writable root, in policy order, that holds `path`.
    fn writable_root_of(&self, path: &Path) -> Option<&Path> {
        self.writable_index
            .first_holding(path)
            .and_then(|i| self.writable.get(i))
            .map(|(w, _)| w.as_path())
    }

    fn collect_targets(&mut self) -> Result<(), LandlockError> {
        for s in self.policy.sealed() {
            self.seals.push((s.path.clone(), s.kind));
        }
        let pattern_dirs = self.collect_file_rules();
        let pattern_targets = self.collect_pattern_targets(pattern_dirs)?;
        for (i, (path, kind)) in self.seals.iter().enumerate() {
            self.seal_index.insert(path, *kind, i);
        }
        for (i, (path, kind, ..)) in self.protected.iter().enumerate() {
            self.protected_index.insert(path, *kind, i);
        }
        self.collect_seal_targets(pattern_targets);
        self.collect_protected_targets();
        self.collect_writable();
        Ok(())
    }

    /// The file rules, sorted by kind; the sealed patterns' directories and file names.
    fn collect_file_rules(&mut self) -> Vec<(PathBuf, &'a str)> {
        let policy = self.policy;
        let mut pattern_dirs: Vec<(PathBuf, &str)> = Vec::new();
        for rule in policy.file_rules() {
            match rule {
                FileRule::SealedPattern {
                    dir,
                    name,
                    existing,
                    ..
                } => {
                    self.seals
                        .extend(existing.iter().map(|file| (file.clone(), SealKind::File)));
                    self.patterns.push(rule);
                    pattern_dirs.push((dir.clone(), name));
                }
                FileRule::WritableFile { path, source, .. } => {
                    self.writable_files.push((path.clone(), *source));
                }
                FileRule::ReadableInSeal { path, source } => {
                    self.readable_in_seal.push((path.clone(), *source));
                }
            }
        }
        pattern_dirs
    }

    /// What each sealed pattern's directory holds: the files it would seal, now sealed.
    fn collect_pattern_targets(
        &mut self,
        pattern_dirs: Vec<(PathBuf, &'a str)>,
    ) -> Result<Vec<PathBuf>, LandlockError> {
        // A sealed pattern, `<dir>/<child>/<name>`, is sealed whether or not each file
        // exists yet. Rules can only name what exists, so the child directories (and the
        // pattern's directory itself) are split: the cage can create no new match, and
        // none the host creates later is readable.
        let mut pattern_targets = Vec::new();
        for (dir, name) in pattern_dirs {
            match self.kind(&dir) {
                Some(EntryKind::Directory) => {
                    // Splitting the directory itself keeps new children from being made.
                    // Inside the bwrap view that is the mount layer's documented deviation.
                    if self.mode == PlanMode::Native {
                        self.pattern_dirs.push((dir.clone(), dir.join(name)));
                    }
                    let children = self.fs.list(&dir).map_err(|source| LandlockError::List {
                        dir: dir.clone(),
                        source,
                    })?;
                    for (child, kind) in children {
                        if kind == EntryKind::Directory {
                            let file = dir.join(child).join(name);
                            if !self.seals.iter().any(|(s, _)| *s == file) {
                                self.seals.push((file.clone(), SealKind::File));
                            }
                            pattern_targets.push(file);
                        }
                    }
                }
                Some(_) => {}
                None => pattern_targets.push(dir.clone()),
            }
        }
        Ok(pattern_targets)
    }

    /// The seals (and the patterns' files) as what reads and writes must not reach.
    fn collect_seal_targets(&mut self, pattern_targets: Vec<PathBuf>) {
        let seal_paths: Vec<PathBuf> = self.seals.iter().map(|(s, _)| s.clone()).collect();
        match self.mode {
            PlanMode::Native => {
                self.read_targets.extend(seal_paths.iter().cloned());
                self.read_targets.extend(pattern_targets.iter().cloned());
                // `/dev` is handled node by node, so `/` must not grant it whole.
                self.read_targets.push(PathBuf::from(DEV));
                self.write_targets.extend(seal_paths);
                self.write_targets.extend(pattern_targets);
            }
            PlanMode::BwrapView => {
                // The view hides every sealed path that exists. One that does not exist is
                // the mount layer's own documented deviation (the cage may create it); it
                // is not split here, because a split directory cannot get any new entry,
                // and bwrap mode must not bring that Landlock-only deviation back into
                // ~/.cargo, ~/.config or ~/.claude.
            }
        }
    }

    /// The protected paths the plan splits around.
    fn collect_protected_targets(&mut self) {
        // Natively protected paths are split around. In the view they are bound read-only
        // when they exist (the launcher creates jaula's own protected directories first);
        // only one that is still absent needs Landlock to keep it from being created. A
        // path whose split would break agent work (anything in the repo, ~/.local/share,
        // ~/.codex, /run/user/UID) is never split: that is the `protected-not-split`
        // deviation, and `jaula run` reports a change there after the command exits.
        let protected: Vec<(PathBuf, bool, bool)> = self
            .protected
            .iter()
            .map(|(p, _, native, view)| (p.clone(), *native, *view))
            .collect();
        for (p, native, view) in protected {
            let split = match self.mode {
                PlanMode::Native => native,
                PlanMode::BwrapView => view && self.kind(&p).is_none(),
            };
            if split {
                self.write_targets.push(p);
            }
        }
    }

    /// The writable roots that may be granted: none inside a seal or a protected path
    /// (each noted), and not natively `/dev`, which is granted node by node.
    fn collect_writable(&mut self) {
        let policy = self.policy;
        for w in policy.writable() {
            if self.within_seal(&w.path) {
                self.notes.push(PlanNote::WritableInsideSealed {
                    root: w.path.clone(),
                });
                continue;
            }
            if self.within_protected(&w.path) {
                self.notes.push(PlanNote::WritableInsideProtected {
                    root: w.path.clone(),
                });
                continue;
            }
            if self.mode == PlanMode::Native && w.path == Path::new(DEV) {
                continue;
            }
            self.writable_index
                .insert(&w.path, SealKind::Directory, self.writable.len());
            self.writable.push((w.path.clone(), w.source));
        }
    }

    /// Existing directories strictly above `target`, from `/` down, stopping at the first
    /// that is missing or not a directory (its parent is then the deepest existing one).
    fn existing_ancestors(&mut self, target: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut prefix = PathBuf::new();
        let components: Vec<_> = target.components().collect();
        for component in components.iter().take(components.len().saturating_sub(1)) {
            prefix.push(component);
            if self.kind(&prefix) != Some(EntryKind::Directory) {
                break;
            }
            out.push(prefix.clone());
        }
        out
    }

    fn add(&mut self, path: &Path, kind: TargetKind, rights: Rights, reason: Reason) {
        let rights = match kind {
            TargetKind::Directory => rights,
            TargetKind::File => rights & Rights::FILE,
        };
        if rights.is_empty() {
            return;
        }
        let rule = self
            .rules
            .entry(path.to_path_buf())
            .or_insert_with(|| PlanRule {
                path: path.to_path_buf(),
                kind,
                rights: Rights::EMPTY,
                reasons: Vec::new(),
            });
        rule.rights |= rights;
        if !rule.reasons.contains(&reason) {
            rule.reasons.push(reason);
        }
    }

    fn run(mut self) -> Result<Plan, LandlockError> {
        let (read_split, write_split) = self.split_dirs();
        let split: BTreeSet<PathBuf> = read_split
            .keys()
            .chain(write_split.keys())
            .cloned()
            .collect();
        self.grant_split_entries(&split, &read_split, &write_split)?;
        if !read_split.contains_key(Path::new("/")) {
            self.add(
                Path::new("/"),
                TargetKind::Directory,
                Rights::READ,
                Reason::WorldReadable,
            );
        }
        self.grant_writable_roots(&split);
        self.grant_writable_files();
        let granted_in_seal = self.grant_readable_in_seal();
        self.grant_devices();
        self.refuse_grants_in_seals(&granted_in_seal)?;
        let native = self.mode == PlanMode::Native;
        let mut holes = Vec::new();
        if native {
            for (seal, _) in self.seals.clone() {
                if self.kind(&seal).is_some() && !holes.contains(&seal) {
                    holes.push(seal);
                }
            }
        }
        let mut rules: Vec<PlanRule> = self.rules.into_values().collect();
        rules.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let split = split
            .into_iter()
            .map(|path| SplitDir {
                read: read_split.contains_key(&path),
                write: write_split.contains_key(&path),
                path,
            })
            .collect();
        Ok(Plan {
            mode: self.mode,
            rules,
            holes,
            split,
            notes: self.notes,
        })
    }

    /// The directories split for reads and for writes, each with the target that split it.
    fn split_dirs(&mut self) -> (BTreeMap<PathBuf, PathBuf>, BTreeMap<PathBuf, PathBuf>) {
        let mut read_split: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
        for target in self.read_targets.clone() {
            for a in self.existing_ancestors(&target) {
                if !self.within_seal(&a) {
                    read_split.entry(a).or_insert_with(|| target.clone());
                }
            }
        }
        let mut write_split: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
        for target in self.write_targets.clone() {
            for a in self.existing_ancestors(&target) {
                if self.writable_root_of(&a).is_some()
                    && !self.within_seal(&a)
                    && !self.within_protected(&a)
                {
                    write_split.entry(a).or_insert_with(|| target.clone());
                }
            }
        }
        // A sealed pattern's directory is split itself, and so is everything above it, as
        // if a sealed entry were inside it: new children must not be creatable.
        for (dir, why) in self.pattern_dirs.clone() {
            let mut chain = self.existing_ancestors(&dir);
            chain.push(dir.clone());
            for a in chain {
                if self.within_seal(&a) {
                    continue;
                }
                if self.mode == PlanMode::Native {
                    read_split.entry(a.clone()).or_insert_with(|| why.clone());
                }
                if self.writable_root_of(&a).is_some() && !self.within_protected(&a) {
                    write_split.entry(a).or_insert_with(|| why.clone());
                }
            }
        }
        (read_split, write_split)
    }

    /// Each split directory's own rule, and one per entry in it: read beside a read split,
    /// write beside a write split (what the split directory itself may not be given).
    fn grant_split_entries(
        &mut self,
        split: &BTreeSet<PathBuf>,
        read_split: &BTreeMap<PathBuf, PathBuf>,
        write_split: &BTreeMap<PathBuf, PathBuf>,
    ) -> Result<(), LandlockError> {
        // Asked once per entry of every split directory: a hash lookup, not a tree walk of
        // component-wise comparisons.
        let split_lookup: HashSet<&Path> = split.iter().map(PathBuf::as_path).collect();
        let dev = Path::new(DEV);
        let native = self.mode == PlanMode::Native;
        for dir in split {
            if let Some(sealed) = read_split.get(dir) {
                let reason = Reason::SealAncestor {
                    sealed: sealed.clone(),
                };
                self.add(
                    dir,
                    TargetKind::Directory,
                    Rights::single(Right::ReadDir),
                    reason,
                );
            } else if let Some(parent) = dir.parent().filter(|p| read_split.contains_key(*p)) {
                let beside = parent.to_path_buf();
                self.add(
                    dir,
                    TargetKind::Directory,
                    Rights::READ,
                    Reason::Sibling { beside },
                );
            }
            let entries = match self.fs.list(dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                    self.notes.push(PlanNote::Unlistable {
                        dir: dir.clone(),
                        error: e.to_string(),
                    });
                    continue;
                }
                Err(source) => {
                    return Err(LandlockError::List {
                        dir: dir.clone(),
                        source,
                    })
                }
            };
            for (name, entry_kind) in entries {
                let child = dir.join(&name);
                if split_lookup.contains(child.as_path())
                    || entry_kind == EntryKind::Symlink
                    || (native && child == dev)
                    || self.within_seal(&child)
                    || self.writable_files.iter().any(|(file, _)| *file == child)
                {
                    continue;
                }
                let kind = if entry_kind == EntryKind::Directory {
                    TargetKind::Directory
                } else {
                    TargetKind::File
                };
                if read_split.contains_key(dir) {
                    let beside = dir.clone();
                    self.add(&child, kind, Rights::READ, Reason::Sibling { beside });
                }
                if let Some(around) = write_split.get(dir) {
                    if let Some(root) = self.writable_root_of(&child) {
                        if !self.within_protected(&child) {
                            let reason = Reason::WritableSibling {
                                root: root.to_path_buf(),
                                around: around.clone(),
                            };
                            self.add(&child, kind, Rights::WRITE, reason);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Read and write on each writable root that is not split (a split one is granted
    /// entry by entry above).
    fn grant_writable_roots(&mut self, split: &BTreeSet<PathBuf>) {
        let dev = Path::new(DEV);
        for (root, source) in self.writable.clone() {
            if split.contains(&root) {
                continue;
            }
            let kind = match self.kind(&root) {
                Some(EntryKind::Directory) => TargetKind::Directory,
                Some(EntryKind::File | EntryKind::Other) => TargetKind::File,
                Some(EntryKind::Symlink) | None => continue,
            };
            let mut rights = Rights::READ | Rights::WRITE;
            // Device ioctls only where devices are writable: the bwrap view's own `/dev`,
            // or a device path the owner declared writable.
            if is_within(&root, dev) {
                rights |= Rights::single(Right::IoctlDev);
            }
            let reason = Reason::WritableRoot {
                root: root.clone(),
                source,
            };
            self.add(&root, kind, rights, reason);
        }
    }

    /// Read and write on each writable file outside the seals and the protected paths.
    fn grant_writable_files(&mut self) {
        for (file, source) in self.writable_files.clone() {
            if !self.within_seal(&file) && !self.within_protected(&file) {
                if let Some(EntryKind::File) = self.kind(&file) {
                    let rights = Rights::READ | Rights::WRITE;
                    self.add(
                        &file,
                        TargetKind::File,
                        rights,
                        Reason::WritableFile { source },
                    );
                }
            }
        }
    }

    /// Natively, `READ_FILE` on each existing file readable inside a seal; the files
    /// granted, the one exception [`Planner::refuse_grants_in_seals`] allows.
    fn grant_readable_in_seal(&mut self) -> Vec<PathBuf> {
        let mut granted_in_seal = Vec::new();
        let native = self.mode == PlanMode::Native;
        for (file, source) in self.readable_in_seal.clone() {
            let kind = self.kind(&file);
            if native
                && self.within_seal(&file)
                && matches!(kind, Some(EntryKind::File | EntryKind::Other))
            {
                let rights = Rights::single(Right::ReadFile);
                self.add(
                    &file,
                    TargetKind::File,
                    rights,
                    Reason::ReadableInSeal { source },
                );
                granted_in_seal.push(file);
            }
        }
        granted_in_seal
    }

    /// Natively, `/dev`'s names, and each device node as `decide` answers it.
    fn grant_devices(&mut self) {
        let dev = Path::new(DEV);
        if self.mode != PlanMode::Native || self.kind(dev) != Some(EntryKind::Directory) {
            return;
        }
        let names_only = Rights::single(Right::ReadDir);
        self.add(
            dev,
            TargetKind::Directory,
            names_only,
            Reason::DeviceDirectory,
        );
        for name in DEVICE_NODES {
            let node = dev.join(name);
            let kind = match self.kind(&node) {
                Some(EntryKind::Directory) => TargetKind::Directory,
                Some(EntryKind::File | EntryKind::Other) => TargetKind::File,
                Some(EntryKind::Symlink) | None => continue,
            };
            if self.within_seal(&node) {
                continue;
            }
            let mut rights = Rights::EMPTY;
            if self.policy.decide(&node, Access::Read).allowed {
                rights |= Rights::READ;
            }
            if self.policy.decide(&node, Access::Write).allowed {
                rights |= Rights::WRITE | Rights::single(Right::IoctlDev);
            }
            self.add(&node, kind, rights, Reason::DeviceNode);
        }
    }

    /// Fail closed if any construction above ever put a grant inside a sealed root: a
    /// readable-in-seal file is the one exception, and only with READ_FILE.
    fn refuse_grants_in_seals(&self, granted_in_seal: &[PathBuf]) -> Result<(), LandlockError> {
        for rule in self.rules.values() {
            let allowed_exception = granted_in_seal.contains(&rule.path)
                && rule.rights == Rights::single(Right::ReadFile);
            if self.within_seal(&rule.path) && !allowed_exception {
                return Err(LandlockError::GrantInsideSeal {
                    path: rule.path.clone(),
                    rights: rule.rights,
                });
            }
        }
        Ok(())
    }
}
