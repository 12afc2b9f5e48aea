//! The writes the cage refused, said once at exit and logged one JSON line each.
//!
//! A refused write otherwise surfaces only as the tool's own `Permission denied` or
//! `Read-only file system`, which reads like a broken machine rather than a rule with a
//! flag that would lift it. The socket gate's supervisor performs every call that writes,
//! makes or removes a named file, so it sees each refusal (its own, and the kernel's
//! answer to the call it made); it keeps them, and this module says them: one stderr line
//! at the command's exit naming a few paths, each with its rule and the flag that would
//! allow it, and under `--log FILE` one line per refusal beside the network's records.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use jaula_policy::paths::display_with_tilde;
use jaula_sandbox::call_gate::write_refusals::{RefusedWrites, Sink, WriteRefusal};
use serde::Serialize;

/// How many refused paths the exit line names before it counts the rest.
pub const NAMED: usize = 5;

/// The exit line, when anything was refused.
pub fn summary(refused: &RefusedWrites, home: &Path) -> Option<String> {
    if refused.kept.is_empty() {
        return None;
    }
    let named: Vec<String> = refused
        .kept
        .iter()
        .take(NAMED)
        .map(|(r, _)| describe(r, home))
        .collect();
    let more: u64 = refused
        .kept
        .iter()
        .skip(NAMED)
        .map(|(_, n)| *n)
        .sum::<u64>()
        + refused.dropped;
    let more = match more {
        0 => String::new(),
        n => format!("; and {n} more refused write(s) elsewhere"),
    };
    Some(format!(
        "jaula: the cage refused writes to {}{more}",
        named.join("; ")
    ))
}

/// `PATH (RULE; allow with FLAG PATH)` for one refusal.
fn describe(refusal: &WriteRefusal, home: &Path) -> String {
    let t = |p: &Path| display_with_tilde(p, home);
    let allow = if refusal.allow_with.is_empty() {
        "no flag allows it".to_owned()
    } else {
        let flags: Vec<String> = refusal
            .allow_with
            .iter()
            .map(|(flag, path)| format!("{flag} {}", t(path)))
            .collect();
        format!("allow with {}", flags.join(" "))
    };
    // A rule `decide` named is described with its name first (`protected: ~/.gitconfig
    // (...)`); the planting guard's own reasons are not.
    let name = refusal.rule.name();
    let rule = if refusal.detail.starts_with(name) || refusal.detail.starts_with("default:") {
        refusal.detail.clone()
    } else {
        format!("{name}: {}", refusal.detail)
    };
    format!("{} ({rule}; {allow})", t(&refusal.path))
}

/// One line of `--log` for a refused write.
#[derive(Serialize)]
struct WriteRecord<'a> {
    time: String,
    /// Always `file`: a network record has `CONNECT`, an HTTP method, `DNS` or `connect`.
    method: &'static str,
    call: &'static str,
    path: String,
    decision: &'static str,
    rule: &'static str,
    detail: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    allow_with: Vec<String>,
}

/// The line for one refusal, newline included.
pub fn line(refusal: &WriteRefusal) -> Option<Vec<u8>> {
    let record = WriteRecord {
        time: jaula_proxy::rfc3339_now(),
        method: "file",
        call: refusal.call,
        path: refusal.path.display().to_string(),
        decision: "deny",
        rule: refusal.rule.name(),
        detail: &refusal.detail,
        allow_with: refusal
            .allow_with
            .iter()
            .map(|(flag, path)| format!("{flag} {}", path.display()))
            .collect(),
    };
    let mut line = serde_json::to_vec(&record).ok()?;
    line.push(b'\n');
    Some(line)
}

/// A sink appending each refusal to `file`. A failed write loses a line, not the
/// refusal, which already happened.
pub fn sink(file: File) -> Sink {
    let file = Mutex::new(file);
    Box::new(move |refusal| {
        if let (Some(line), Ok(mut file)) = (line(refusal), file.lock()) {
            let _ = file.write_all(&line);
        }
    })
}

#[cfg(test)]
#[path = "write_notice_tests.rs"]
mod tests;
