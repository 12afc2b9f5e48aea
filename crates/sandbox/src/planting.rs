//! The planting report: what changed at the protected paths while a cage ran.
//!
//! Where a backend cannot stop the creation or change of a protected path (native Landlock
//! cannot deny one name inside a writable directory; a mount view cannot bind a path that
//! does not exist without leaving a placeholder on the host), `jaula run` takes a
//! [`Snapshot`] before the command starts and calls [`report_after`] once it has exited:
//! one stderr line for every protected path created, removed or changed, and one JSON line
//! each in the evidence log (see [`evidence_path`]), which no cage can write.
//!
//! What is compared, per protected path: existence, file type, device and inode (a
//! replacement shows), size, mtime and ctime (a process cannot set ctime, so a write that
//! restores size and mtime still shows), mode, a symlink's target, and the full content of
//! small files. A protected directory is walked the same way, bounded in depth and entry
//! count; a `.git` entry only by its own identity, since git rewrites what lies beneath.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use jaula_policy::{Policy, ProtectKind, ProtectedSource};
use serde::Serialize;

/// Files up to this size are compared byte for byte.
const CONTENT_LIMIT: u64 = 16 * 1024;
/// How deep a protected directory is walked, and how many entries are recorded beneath
/// each one: a bound, so a cage cannot make the report walk forever.
const DIR_DEPTH: usize = 4;
const DIR_ENTRY_LIMIT: usize = 1024;
/// The evidence log, relative to the state home: inside the protected cage profile
/// directory, so no cage can write or truncate it.
pub(crate) const EVIDENCE_FILE: &str = ".runtime/cage/planting.jsonl";
/// Where a successful bubblewrap probe is remembered, relative to the state home.
pub const PROBE_CACHE_FILE: &str = ".runtime/cage/bwrap-probe";
/// What jaula itself writes beneath the protected cage profile directory, from outside
/// every cage (or, for the live cages' records, from a supervisor through a descriptor
/// opened outside), relative to the state home: never reported, since any other window's
/// launch rewrites them while this one runs.
#[cfg(target_os = "linux")]
const JAULA_OWN_FILES: &[&str] = &[
    EVIDENCE_FILE,
    PROBE_CACHE_FILE,
    crate::cage_record::LIVE_DIR,
];
#[cfg(not(target_os = "linux"))]
const JAULA_OWN_FILES: &[&str] = &[EVIDENCE_FILE, PROBE_CACHE_FILE];

#[derive(Clone, Debug, PartialEq, Eq)]
struct Meta {
    file_type: FileType,
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
    /// Small regular files: the bytes. A symlink: its target.
    content: Content,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Content {
    /// Not compared: a directory, a large file, a device.
    Skipped,
    Bytes(Vec<u8>),
    /// The read failed (the reporter out of descriptors or memory, a file it may not
    /// read): not evidence of a change.
    Unreadable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum FileType {
    File,
    Directory,
    Symlink,
    Other,
}

impl Meta {
    fn read(path: &Path, meta: &Metadata) -> Meta {
        let ft = meta.file_type();
        let file_type = if ft.is_symlink() {
            FileType::Symlink
        } else if ft.is_dir() {
            FileType::Directory
        } else if ft.is_file() {
            FileType::File
        } else {
            FileType::Other
        };
        let content = match file_type {
            FileType::File if meta.len() <= CONTENT_LIMIT => std::fs::read(path),
            FileType::Symlink => {
                std::fs::read_link(path).map(|t| t.into_os_string().into_encoded_bytes())
            }
            _ => return Meta::of(file_type, meta, Content::Skipped),
        };
        let content = content.map_or(Content::Unreadable, Content::Bytes);
        Meta::of(file_type, meta, content)
    }

    fn of(file_type: FileType, meta: &Metadata, content: Content) -> Meta {
        Meta {
            file_type,
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mode: meta.mode(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            content,
        }
    }

    /// A directory's own times change with every entry made beneath it; those entries
    /// are compared one by one instead. An entry protection compares identity only.
    fn identity_only(&self) -> (FileType, u64, u64) {
        (self.file_type, self.dev, self.ino)
    }

    /// Whether the only difference is content that one side could not read.
    fn unreadable_differs(&self, other: &Meta) -> bool {
        let unreadable = [&self.content, &other.content].contains(&&Content::Unreadable);
        let stat = |m: &Meta| (m.identity_only(), m.size, m.mode, m.mtime, m.ctime);
        unreadable && self.content != other.content && stat(self) == stat(other)
    }
}

/// One protected path as it was: absent, or its metadata and (for a directory) the
/// metadata of what lies beneath, by relative path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Observed {
    root: Option<Meta>,
    beneath: BTreeMap<PathBuf, Meta>,
    truncated: bool,
    /// Where the observation failed for another reason than absence (relative paths;
    /// empty for the protected path itself): nothing at or beneath them is evidence.
    unchecked: Vec<PathBuf>,
}

/// The protected paths of one policy as they were at one moment.
#[derive(Clone, Debug)]
pub struct Snapshot {
    entries: Vec<(PathBuf, ProtectKind, ProtectedSource, Observed)>,
    /// jaula's own files beneath protected directories, left out of every comparison.
    own: Vec<PathBuf>,
}

/// What happened to one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ChangeKind {
    /// The path did not exist before the cage ran and does now.
    Created,
    /// The path existed before the cage ran and does not now.
    Removed,
    /// Another file now stands at the path (new inode or type).
    Replaced,
    /// The same file, changed: its contents, size, mode or times differ.
    Modified,
    /// The path could not be observed (the reporter was out of descriptors or memory):
    /// neither a change nor its absence is known.
    Unchecked,
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChangeKind::Created => "created",
            ChangeKind::Removed => "removed",
            ChangeKind::Replaced => "replaced",
            ChangeKind::Modified => "modified",
            ChangeKind::Unchecked => "could not be checked",
        })
    }
}

/// One protected path created, removed or changed while the cage ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The path that changed (the protected path, or an entry beneath a protected
    /// directory).
    pub(crate) path: PathBuf,
    /// What happened to it.
    pub(crate) change: ChangeKind,
    /// The protected path it lies at or beneath.
    pub(crate) protected: PathBuf,
    /// Why that path is protected.
    pub(crate) source: ProtectedSource,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.change == ChangeKind::Unchecked {
            return write!(
                f,
                "jaula: could not check protected path after the cage ran: {} ({})",
                self.path.display(),
                self.source.label()
            );
        }
        write!(
            f,
            "jaula: protected path changed while the cage ran: {} ({}; {})",
            self.path.display(),
            self.change,
            self.source.label()
        )
    }
}

impl Snapshot {
    /// Observe every protected path of `policy` now.
    pub fn take(policy: &Policy) -> Snapshot {
        let own: Vec<PathBuf> = JAULA_OWN_FILES
            .iter()
            .map(|f| policy.state_home().join(f))
            .collect();
        let entries = policy
            .protected()
            .iter()
            .map(|p| {
                (
                    p.path.clone(),
                    p.kind,
                    p.source,
                    observe(&p.path, p.kind, &own),
                )
            })
            .collect();
        Snapshot { entries, own }
    }

    /// How many protected paths were observed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the policy protects no path at all (nothing to compare afterwards).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Observe the same paths again and list what differs, in the snapshot's order.
    pub(crate) fn changes(&self) -> Vec<Change> {
        let mut out = Vec::new();
        for (path, kind, source, before) in &self.entries {
            let after = observe(path, *kind, &self.own);
            let mut push = |p: PathBuf, change| {
                out.push(Change {
                    path: p,
                    change,
                    protected: path.clone(),
                    source: *source,
                })
            };
            // A failure on one side only is told as such; the same failure on both sides
            // (a directory the reporter may not read) is no news.
            let unchecked: Vec<&PathBuf> = before
                .unchecked
                .iter()
                .filter(|u| !after.unchecked.contains(u))
                .chain(
                    after
                        .unchecked
                        .iter()
                        .filter(|u| !before.unchecked.contains(u)),
                )
                .collect();
            for rel in &unchecked {
                push(path.join(rel).components().collect(), ChangeKind::Unchecked);
            }
            let skipped = |rel: &Path| {
                before
                    .unchecked
                    .iter()
                    .chain(&after.unchecked)
                    .any(|u| rel.starts_with(u))
            };
            if skipped(Path::new("")) {
                continue;
            }
            if let Some(change) = compare_root(*kind, before.root.as_ref(), after.root.as_ref()) {
                push(path.clone(), change);
            }
            // Entries beneath a directory that appeared or vanished as a whole are told
            // by the root's own line.
            if before.root.is_none() || after.root.is_none() {
                continue;
            }
            let names: std::collections::BTreeSet<&PathBuf> =
                before.beneath.keys().chain(after.beneath.keys()).collect();
            for rel in names {
                if skipped(rel) {
                    continue;
                }
                let change = match (before.beneath.get(rel), after.beneath.get(rel)) {
                    // Past the bound on one side only: not evidence of anything.
                    (None, Some(_)) if before.truncated => None,
                    (Some(_), None) if after.truncated => None,
                    (b, a) => compare_file(b, a),
                };
                if let Some(change) = change {
                    push(path.join(rel), change);
                }
            }
        }
        out
    }
}

fn compare_root(
    kind: ProtectKind,
    before: Option<&Meta>,
    after: Option<&Meta>,
) -> Option<ChangeKind> {
    match (before, after) {
        (Some(b), Some(a)) if b.file_type == FileType::Directory || kind == ProtectKind::Entry => {
            (b.identity_only() != a.identity_only()).then_some(ChangeKind::Replaced)
        }
        (b, a) => compare_file(b, a),
    }
}

fn compare_file(before: Option<&Meta>, after: Option<&Meta>) -> Option<ChangeKind> {
    match (before, after) {
        (None, None) => None,
        (None, Some(_)) => Some(ChangeKind::Created),
        (Some(_), None) => Some(ChangeKind::Removed),
        (Some(b), Some(a)) if b.identity_only() != a.identity_only() => Some(ChangeKind::Replaced),
        // A directory beneath a protected one: its entries are compared on their own.
        (Some(b), Some(_)) if b.file_type == FileType::Directory => None,
        (Some(b), Some(a)) if b.unreadable_differs(a) => Some(ChangeKind::Unchecked),
        (Some(b), Some(a)) => (b != a).then_some(ChangeKind::Modified),
    }
}

fn observe(path: &Path, kind: ProtectKind, own: &[PathBuf]) -> Observed {
    let mut observed = Observed {
        root: None,
        beneath: BTreeMap::new(),
        truncated: false,
        unchecked: Vec::new(),
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return observed,
        Err(_) => {
            observed.unchecked.push(PathBuf::new());
            return observed;
        }
    };
    let root = Meta::read(path, &meta);
    let walk = kind == ProtectKind::Directory && root.file_type == FileType::Directory;
    observed.root = Some(root);
    if walk {
        walk_dir(path, Path::new(""), 0, own, &mut observed);
    }
    observed
}

fn walk_dir(root: &Path, rel: &Path, depth: usize, own: &[PathBuf], out: &mut Observed) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        out.unchecked.push(rel.to_path_buf());
        return;
    };
    let mut names: Vec<OsString> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        if out.beneath.len() >= DIR_ENTRY_LIMIT {
            out.truncated = true;
            return;
        }
        let child_rel = rel.join(&name);
        let child = root.join(&child_rel);
        if is_jaulas_own(&child, own) {
            continue;
        }
        let meta = match std::fs::symlink_metadata(&child) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => {
                out.unchecked.push(child_rel);
                continue;
            }
        };
        let m = Meta::read(&child, &meta);
        let is_dir = m.file_type == FileType::Directory;
        out.beneath.insert(child_rel.clone(), m);
        if is_dir {
            if depth + 1 < DIR_DEPTH {
                walk_dir(root, &child_rel, depth + 1, own, out);
            } else {
                out.truncated = true;
            }
        }
    }
}

/// `path` is one of jaula's own files, or the temporary file an atomic rewrite of one
/// goes through (`.NAME.PID.tmp` beside it, as `bwrap::probe_cached` writes it).
fn is_jaulas_own(path: &Path, own: &[PathBuf]) -> bool {
    own.iter().any(|file| {
        if path == file {
            return true;
        }
        let (Some(name), Some(own_name)) = (path.file_name(), file.file_name()) else {
            return false;
        };
        let (name, own_name) = (name.to_string_lossy(), own_name.to_string_lossy());
        let pid = name
            .strip_prefix(&format!(".{own_name}."))
            .and_then(|rest| rest.strip_suffix(".tmp"));
        path.parent() == file.parent()
            && pid.is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Where the evidence of changed protected paths is appended, one JSON line each.
pub fn evidence_path(policy: &Policy) -> PathBuf {
    policy.state_home().join(EVIDENCE_FILE)
}

/// One evidence record, as appended to [`evidence_path`].
#[derive(Debug, Serialize)]
struct Evidence<'a> {
    event: &'static str,
    time_unix: u64,
    repo: &'a Path,
    path: &'a Path,
    change: ChangeKind,
    protected: &'a Path,
    source: ProtectedSource,
    reason: &'static str,
}

/// Why the evidence could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum EvidenceError {
    #[error("cannot write the planting evidence {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode the planting evidence: {0}")]
    Encode(String),
}

/// Compare the protected paths of `policy` with `snapshot`, print one stderr line for
/// every change and append one evidence record each. Returns the changes. Call it after
/// the caged command has exited, from a process that may still open the evidence log.
pub fn report_after(snapshot: &Snapshot, policy: &Policy) -> Vec<Change> {
    let path = evidence_path(policy);
    report(snapshot, policy, &path, || open_evidence(&path))
}

/// The evidence log, opened (and its directory made) now: for a reporter that will be
/// confined by the time it reports, such as the socket gate's supervisor, which runs in
/// the cage's own Landlock domain and could not open the log later.
pub struct EvidenceLog {
    path: PathBuf,
    file: Result<std::fs::File, String>,
}

impl EvidenceLog {
    /// Open `policy`'s evidence log for appending, making its directory. A failure is
    /// kept, not returned: the changes are still printed, with a line saying why the log
    /// could not be written.
    pub fn open(policy: &Policy) -> EvidenceLog {
        let path = evidence_path(policy);
        let file = open_evidence(&path).map_err(|e| e.to_string());
        EvidenceLog { path, file }
    }
}

/// [`report_after`], writing to a log opened before the reporter was confined.
pub fn report_after_into(snapshot: &Snapshot, policy: &Policy, log: EvidenceLog) -> Vec<Change> {
    let EvidenceLog { path, file } = log;
    let named = path.clone();
    report(snapshot, policy, &path, move || {
        file.map_err(|message| EvidenceError::Write {
            path: named,
            source: std::io::Error::other(message),
        })
    })
}

fn report(
    snapshot: &Snapshot,
    policy: &Policy,
    path: &Path,
    open: impl FnOnce() -> Result<std::fs::File, EvidenceError>,
) -> Vec<Change> {
    let changes = snapshot.changes();
    for change in &changes {
        eprintln!("{change}");
    }
    if !changes.is_empty() {
        match open().and_then(|mut file| append_evidence(&mut file, path, policy, &changes)) {
            Ok(()) => eprintln!("jaula: evidence appended to {}", path.display()),
            Err(e) => eprintln!("jaula: {e}"),
        }
    }
    changes
}

fn open_evidence(path: &Path) -> Result<std::fs::File, EvidenceError> {
    let err = |source| EvidenceError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(dir)
            .map_err(err)?;
    }
    // O_NOFOLLOW: a symlink planted in place of the log must not redirect the append.
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(err)
}

fn append_evidence(
    file: &mut std::fs::File,
    path: &Path,
    policy: &Policy,
    changes: &[Change],
) -> Result<(), EvidenceError> {
    let err = |source| EvidenceError::Write {
        path: path.to_path_buf(),
        source,
    };
    let time_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut text = Vec::new();
    for c in changes {
        let record = Evidence {
            event: if c.change == ChangeKind::Unchecked {
                "protected-path-unchecked"
            } else {
                "protected-path-changed"
            },
            time_unix,
            repo: policy.repo(),
            path: &c.path,
            change: c.change,
            protected: &c.protected,
            source: c.source,
            reason: c.source.label(),
        };
        serde_json::to_writer(&mut text, &record)
            .map_err(|e| EvidenceError::Encode(e.to_string()))?;
        text.push(b'\n');
    }
    file.write_all(&text).map_err(err)
}

#[cfg(test)]
#[path = "planting_tests.rs"]
mod tests;
