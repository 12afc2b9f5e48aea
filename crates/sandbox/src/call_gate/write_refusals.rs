//! The writes the cage was refused, for the summary line at exit and `--log`.
//!
//! A Landlock refusal is made in the kernel and tells nobody, but every call that writes,
//! makes or removes a named file is performed by the supervisor (`file_calls`), so the
//! supervisor sees both kinds of refusal: its own (a protected path, the planting guard's
//! git rules) and the kernel's answer to the call it made for the caller (Landlock's
//! `EACCES` beneath no writable root, `EROFS` from a read-only bind of the bwrap view).
//! A kernel refusal counts as the cage's only when `Policy::decide` denies the write too
//! and the file's own permissions would have allowed it; otherwise the call would have
//! failed uncaged as well. Nothing here runs for a call that succeeds.
//!
//! Each refusal goes to the sink the launching jaula installed (the `--log` line) as it
//! happens, and is kept in a process-wide list read back by the same process, the
//! supervisor, when the command ends (as `unreachable` does for the closed network).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use jaula_policy::policy::ProtectedSource;
use jaula_policy::{Access, Decision, Policy, Rule};

/// More distinct paths than a summary can usefully name: refusals of later ones are
/// counted, not kept, so a cage cannot grow the supervisor's memory without bound.
const KEPT: usize = 64;

/// Which kind of rule refused a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteRule {
    /// Beneath no writable root: read-only.
    ReadOnly,
    /// A sealed path (credentials, the owner's deny list): never writable in a cage.
    Sealed,
    /// A writable root that was absent at launch.
    AbsentRoot,
    /// A protected path: readable, never writable (cage configuration, code the owner's
    /// tools run later).
    Protected,
    /// The planting guard's other rules: a name on the way to a protected path, a git
    /// directory's config or hooks the cage made, a directory holding a sealed path.
    PlantingGuard,
}

impl WriteRule {
    /// The rule's short name, as the log's `rule` field holds it.
    pub fn name(self) -> &'static str {
        match self {
            WriteRule::ReadOnly => "read-only",
            WriteRule::Sealed => "sealed",
            WriteRule::AbsentRoot => "absent writable root",
            WriteRule::Protected => "protected",
            WriteRule::PlantingGuard => "planting guard",
        }
    }
}

/// One refused write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRefusal {
    /// The path refused, absolute, as the supervisor found it.
    pub path: PathBuf,
    /// The call: `write`, `create`, `remove`, `rename`, `truncate` or `link`.
    pub call: &'static str,
    /// The kind of rule.
    pub rule: WriteRule,
    /// The rule, described for people (`default: read-only`, `protected: ~/.gitconfig
    /// (...)`).
    pub detail: String,
    /// The flags that would allow it, each with its path (`--allow-write`, `--unprotect`);
    /// empty when no flag does (a sealed path, jaula's own configuration).
    pub allow_with: Vec<(&'static str, PathBuf)>,
}

/// What receives every [`WriteRefusal`] as it happens.
pub type Sink = Box<dyn Fn(&WriteRefusal) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Install the sink for this process; `false` when one was installed already.
pub fn set_sink(sink: Sink) -> bool {
    SINK.set(sink).is_ok()
}

/// The refused writes so far, in the order their paths were first refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefusedWrites {
    /// The first distinct paths (at most 64), each with how many calls were refused there.
    pub kept: Vec<(WriteRefusal, u64)>,
    /// Refused calls on further paths, counted but not kept.
    pub dropped: u64,
}

static REFUSED: Mutex<RefusedWrites> = Mutex::new(RefusedWrites {
    kept: Vec::new(),
    dropped: 0,
});

/// What the cage was refused so far in this process.
pub fn refused_writes() -> RefusedWrites {
    REFUSED.lock().map(|r| r.clone()).unwrap_or_default()
}

/// Record `refusal`: to the sink, and to the list unless it is full.
pub(super) fn note(refusal: WriteRefusal) {
    if let Some(sink) = SINK.get() {
        sink(&refusal);
    }
    if let Ok(mut refused) = REFUSED.lock() {
        refused.add(refusal);
    }
}

impl RefusedWrites {
    /// Count `refusal` against its path, keep it when its path is new and there is room,
    /// else count it as dropped.
    fn add(&mut self, refusal: WriteRefusal) {
        if let Some((_, n)) = self.kept.iter_mut().find(|(r, _)| r.path == refusal.path) {
            *n += 1;
        } else if self.kept.len() < KEPT {
            self.kept.push((refusal, 1));
        } else {
            self.dropped += 1;
        }
    }
}

/// The call named by one of the guard's verbs (`create of`, `write to`, ...).
pub(super) fn call_of(verb: &str) -> &'static str {
    match verb.split(' ').next().unwrap_or_default() {
        "create" | "temporary" => "create",
        "removal" => "remove",
        "rename" => "rename",
        "truncation" => "truncate",
        "link" => "link",
        _ => "write",
    }
}

/// The refusal `decision` (a denial) makes of `access` on `path`.
pub fn from_decision(
    policy: &Policy,
    path: &Path,
    access: Access,
    call: &'static str,
    decision: &Decision,
) -> WriteRefusal {
    let (rule, allow_with) = match &decision.rule {
        Rule::Protected { root, source } => {
            (WriteRule::Protected, unprotect(policy, root, *source))
        }
        Rule::Sealed { .. } | Rule::SealedPattern { .. } | Rule::ReadableInSeal { .. } => {
            (WriteRule::Sealed, Vec::new())
        }
        Rule::AbsentWritableRoot { .. } => (WriteRule::AbsentRoot, Vec::new()),
        _ => (
            WriteRule::ReadOnly,
            vec![("--allow-write", allow_write_target(path, access))],
        ),
    };
    WriteRefusal {
        path: path.to_path_buf(),
        call,
        rule,
        detail: decision.rule.describe(policy.home()),
        allow_with,
    }
}

/// A planting-guard refusal of `path` because of `protected`, a protected path it reaches
/// (under another name, on the way to it, holding it); `detail` says how.
pub(super) fn for_protected(
    policy: &Policy,
    path: &Path,
    call: &'static str,
    rule: WriteRule,
    detail: String,
    protected: &Path,
) -> WriteRefusal {
    let source = match policy.decide(protected, Access::Write).rule {
        Rule::Protected { source, .. } => Some(source),
        _ => None,
    };
    let allow_with = source.map_or_else(
        || vec![("--unprotect", protected.to_path_buf())],
        |source| unprotect(policy, protected, source),
    );
    WriteRefusal {
        path: path.to_path_buf(),
        call,
        rule,
        detail,
        allow_with,
    }
}

/// `--unprotect ROOT`, unless ROOT is jaula's own configuration, which stays protected
/// whatever is unprotected; with `--allow-write` of the directory holding it when that
/// is not writable either (an unprotected path is only as writable as its root).
fn unprotect(
    policy: &Policy,
    root: &Path,
    source: ProtectedSource,
) -> Vec<(&'static str, PathBuf)> {
    if matches!(
        source,
        ProtectedSource::ConfigDirectory
            | ProtectedSource::ConfigFile
            | ProtectedSource::CageProfiles
            | ProtectedSource::JaulaExecutable
    ) {
        return Vec::new();
    }
    let mut flags = vec![("--unprotect", root.to_path_buf())];
    let beneath_writable = policy.writable().iter().any(|w| root.starts_with(&w.path));
    if let (false, Some(dir)) = (beneath_writable, root.parent()) {
        flags.push(("--allow-write", dir.to_path_buf()));
    }
    flags
}

/// What `--allow-write` would have to name: the file itself for a write to it, the
/// directory holding the name for anything that makes or removes one.
fn allow_write_target(path: &Path, access: Access) -> PathBuf {
    match access {
        Access::Write => path.to_path_buf(),
        _ => path.parent().unwrap_or(path).to_path_buf(),
    }
}

/// Whether `errno`, the kernel's answer to a write the supervisor made, may be the cage's
/// refusal: Landlock answers `EACCES`, a read-only bind `EROFS`.
pub(super) fn may_be_the_cage(errno: i32) -> bool {
    errno == libc::EACCES || errno == libc::EROFS
}

#[cfg(test)]
#[path = "write_refusals_tests.rs"]
mod tests;
