//! The bubblewrap probe's answer, kept between launches.
//!
//! Building a throwaway namespace before every launch cost about a quarter of the default
//! launch. Whether bubblewrap can build one depends on the binary, the kernel, the user and
//! the few switches that gate unprivileged user namespaces, so those are the key. Only
//! "available" is kept: a machine where bubblewrap fails is probed again each time (it then
//! falls back to Landlock anyway), so an owner who enables user namespaces is not stuck
//! with an old "no". A kept "yes" that has gone stale fails closed: bubblewrap itself
//! refuses at launch, with its reason, and the command does not run.
//!
//! The file lives in the state home's cage profile directory, which every cage sees
//! read-only: a caged process cannot forge a "yes" (a launch failure) or erase one.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use jaula_policy::sources::BwrapHint;

use super::probe::{find_program, probe_with, Availability, AvailableBasis, PROBE_TIMEOUT};
use super::{option_flags, BwrapOptions, BASE_FLAGS};

/// The file's first line: a cache written by another layout is never read as a match.
const HEADER: &str = "jaula bwrap probe v1";
/// The kernel switches that decide whether an unprivileged user namespace may be made
/// (Debian, upstream, Ubuntu's AppArmor restriction); an absent one is recorded as such.
const USERNS_SWITCHES: &[&str] = &[
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
];

/// [`super::probe`], answered from `cache` (a file path) when a probe with the same key
/// succeeded before.
pub fn probe_cached(hint: BwrapHint, options: &BwrapOptions, cache: &Path) -> Availability {
    let path_var = std::env::var_os("PATH");
    if hint != BwrapHint::Probe {
        return probe_with(hint, options, path_var.as_deref(), PROBE_TIMEOUT);
    }
    let Some(program) = find_program(&options.program, path_var.as_deref()) else {
        return probe_with(hint, options, path_var.as_deref(), PROBE_TIMEOUT);
    };
    let Some(key) = cache_key(&program, options) else {
        return probe_with(hint, options, path_var.as_deref(), PROBE_TIMEOUT);
    };
    let kept = std::fs::read_to_string(cache)
        .map(|text| entries(&text))
        .unwrap_or_default();
    if kept.contains(&key) {
        return Availability::Available {
            program,
            basis: AvailableBasis::Cached,
        };
    }
    let answer = probe_with(hint, options, path_var.as_deref(), PROBE_TIMEOUT);
    if answer.is_available() {
        // A cache that cannot be written only costs the next launch a probe.
        let _ = write_atomically(cache, &with_entry(kept, key));
    }
    answer
}

/// How many answers the file keeps: one per set of probed flags in use (`jaula line` and
/// `check` probe the base view, `run` adds its own per network mode and PID namespace),
/// so they do not evict each other; the oldest goes first.
pub(crate) const MAX_ENTRIES: usize = 8;

/// The kept answers of a cache file's `text`, each a whole key (from its header line).
fn entries(text: &str) -> Vec<String> {
    text.split(HEADER)
        .filter(|rest| !rest.is_empty())
        .map(|rest| format!("{HEADER}{rest}"))
        .collect()
}

/// `kept` with `key` added last, at most [`MAX_ENTRIES`], as the file's new text.
fn with_entry(mut kept: Vec<String>, key: String) -> String {
    kept.retain(|entry| *entry != key);
    kept.push(key);
    let skip = kept.len().saturating_sub(MAX_ENTRIES);
    kept[skip..].concat()
}

/// Everything the answer depends on, as the text the cache file holds; `None` when the
/// binary or the kernel cannot be identified (then nothing is cached).
pub(crate) fn cache_key(program: &Path, options: &BwrapOptions) -> Option<String> {
    let meta = std::fs::metadata(program).ok()?;
    let uname = rustix::system::uname();
    let mut key = format!(
        "{HEADER}\nprogram {}\nfile {} {} {} {}.{} {}.{}\nkernel {} {}\neuid {}\n",
        program.display(),
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        uname.release().to_string_lossy(),
        uname.version().to_string_lossy(),
        rustix::process::geteuid().as_raw(),
    );
    for switch in USERNS_SWITCHES {
        let value = std::fs::read_to_string(switch).unwrap_or_else(|_| "absent".to_owned());
        key.push_str(&format!("{switch} {}\n", value.trim()));
    }
    let flags: Vec<&str> = BASE_FLAGS
        .iter()
        .copied()
        .chain(option_flags(options))
        .collect();
    key.push_str(&format!("flags {}\navailable\n", flags.join(" ")));
    Some(key)
}

/// Write `text` to `path` whole or not at all: a temporary file beside it, then rename.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp: PathBuf = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
#[path = "probe_cache_tests.rs"]
mod tests;
