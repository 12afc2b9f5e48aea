//! Seatbelt (macOS) profile rendering.
//!
//! [`render_profile`] turns a [`Policy`] into SBPL text for `/usr/bin/sandbox-exec -p`.
//! Seatbelt evaluates a profile's rules last-match-wins, so the order of the blocks *is*
//! the policy, and it mirrors [`Policy::decide`] read from the bottom up:
//!
//! 1. `(allow default)`, then `(deny file-write*)`: the world is readable and read-only;
//! 2. `(allow file-write* ...)`: the writable roots and `~/.claude.json`;
//! 3. `(deny file-read* file-write* ...)`: every sealed root (present or not, since a
//!    pattern over a path that does not exist yet is exactly what keeps a credential the
//!    owner creates later sealed) and the channel token pattern; emitted after the allows
//!    so a broad writable ancestor such as `~/.config` cannot re-open `~/.config/gh`;
//! 4. `(deny file-write* ...)`: the protected paths (cage configuration and the planting
//!    guard), readable but never writable, even beneath a writable root; a `.git` entry
//!    as a `literal`, so only the entry itself is denied and git still writes beneath it;
//! 5. `(allow file-read* (literal <token file>))`: this window's own broker token, the one
//!    file readable inside the sealed broker directory.
//!
//! The profile cannot be executed on the Linux machines that build and test jaula, so
//! [`eval`] parses the rendered text back and evaluates it with Seatbelt's semantics; the
//! conformance suite checks that evaluation against `decide` path by path.

use std::path::{Path, PathBuf};

use jaula_policy::{Platform, Policy, ProtectKind, SealKind};

pub mod ere;
pub mod eval;

/// The comment every generated profile carries on its second line.
pub const GENERATED_COMMENT: &str = "; jaula cage, generated for one window. Do not edit.";

/// Why a policy could not be written as SBPL text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeatbeltError {
    /// SBPL is text: a path whose bytes are not UTF-8 has no spelling in it, and writing a
    /// lossy one would seal (or open) a different path than the policy names.
    #[error(
        "cannot write the {what} {} into a Seatbelt profile: the path is not valid UTF-8",
        .path.display()
    )]
    NotUtf8 { what: &'static str, path: PathBuf },
}

/// Render the Seatbelt profile of `policy`. Pure: reads nothing from disk.
pub fn render_profile(policy: &Policy) -> Result<String, SeatbeltError> {
    let mut lines: Vec<String> = vec![
        "(version 1)".to_string(),
        GENERATED_COMMENT.to_string(),
        "(allow default)".to_string(),
        "(deny file-write*)".to_string(),
        "(allow file-write*".to_string(),
    ];
    for root in policy.writable() {
        lines.push(format!(
            "  (subpath {})",
            sbpl_string(&root.path, "writable root")?
        ));
    }
    lines.push(format!("  {}", claude_json_filter(policy)?));
    lines.push(")".to_string());

    lines.push("(deny file-read* file-write*".to_string());
    for root in policy.sealed() {
        lines.push(format!(
            "  {}",
            kind_filter(root.kind, &root.path, "sealed root")?
        ));
    }
    // The channel token is a pattern, not a list of the files that exist now: a seat
    // configured after the window started must be sealed too.
    lines.push(format!(
        "  (regex #\"^{}/[^/]+/\\.env$\")",
        sbpl_regex_literal(policy.channels_root(), "channels root")?
    ));
    lines.push(")".to_string());

    if !policy.protected().is_empty() {
        lines.push("(deny file-write*".to_string());
        for p in policy.protected() {
            lines.push(format!("  {}", protect_filter(p.kind, &p.path)?));
        }
        lines.push(")".to_string());
    }

    if let Some(token) = policy.token_file() {
        // Last, so it wins over the broker directory's seal; read only, so the seal still
        // denies writing it.
        lines.push(format!(
            "(allow file-read* (literal {}))",
            sbpl_string(token, "token file")?
        ));
    }

    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

/// `~/.claude.json`, as `decide`'s `is_claude_json` reads it: on macOS an anchored prefix
/// pattern (Claude writes backup siblings such as `~/.claude.json.backup` next to it); on
/// Linux the file itself.
fn claude_json_filter(policy: &Policy) -> Result<String, SeatbeltError> {
    let path = policy.claude_json();
    match policy.platform() {
        Platform::MacOs => Ok(format!(
            "(regex #\"^{}\")",
            sbpl_regex_literal(path, "Claude state file")?
        )),
        // Any other platform gets the narrower rule: the exact file.
        _ => Ok(format!(
            "(literal {})",
            sbpl_string(path, "Claude state file")?
        )),
    }
}

/// A file is matched exactly; a directory together with everything beneath it.
fn kind_filter(kind: SealKind, path: &Path, what: &'static str) -> Result<String, SeatbeltError> {
    let quoted = sbpl_string(path, what)?;
    Ok(match kind {
        SealKind::File => format!("(literal {quoted})"),
        SealKind::Directory => format!("(subpath {quoted})"),
    })
}

/// A protected file and a protected `.git` entry are matched exactly (the entry's own
/// rename, removal or replacement is a write to that literal path, while writes beneath it
/// name other paths and stay allowed); a protected directory with everything beneath it.
fn protect_filter(kind: ProtectKind, path: &Path) -> Result<String, SeatbeltError> {
    let quoted = sbpl_string(path, "protected path")?;
    Ok(match kind {
        ProtectKind::File | ProtectKind::Entry => format!("(literal {quoted})"),
        ProtectKind::Directory => format!("(subpath {quoted})"),
    })
}

fn utf8<'a>(path: &'a Path, what: &'static str) -> Result<&'a str, SeatbeltError> {
    path.to_str().ok_or_else(|| SeatbeltError::NotUtf8 {
        what,
        path: path.to_path_buf(),
    })
}

/// A path as an SBPL (Scheme) string literal.
fn sbpl_string(path: &Path, what: &'static str) -> Result<String, SeatbeltError> {
    Ok(quote_string(utf8(path, what)?))
}

/// Scheme string quoting: only `\` and `"` need escaping. Any other character, newline
/// included, stands for itself inside the quotes.
pub(crate) fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '\\' || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A path as the body of a `#"..."` regex literal that matches it character for character.
fn sbpl_regex_literal(path: &Path, what: &'static str) -> Result<String, SeatbeltError> {
    Ok(escape_regex(utf8(path, what)?))
}

/// Escape `s` for the inside of an SBPL `#"..."` regex literal.
///
/// The reader hands the content of `#"..."` to the regex engine with its backslashes
/// intact (Apple's own profiles write `#"\.app"` to mean a literal dot), so one backslash
/// is both the POSIX ERE escape and what keeps a `"` from ending the literal early. Every
/// ERE metacharacter is escaped, and `"` is written `\"` (the seed left it bare, so a home
/// whose path held a quote closed the literal mid-path). Letters and digits are never
/// escaped: engines give `\w`, `\d`, `\<` meanings of their own.
///
/// Not verified against a real Mac: sandbox-exec cannot run on the Linux machines that
/// build jaula. [`eval`] implements this reading and the conformance suite holds the
/// renderer to it.
pub(crate) fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if ere::is_metachar(c) || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
