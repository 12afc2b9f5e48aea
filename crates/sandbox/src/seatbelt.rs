//! Seatbelt (macOS) profile rendering.
//!
//! [`render_profile`] turns a [`Policy`] into SBPL text for `/usr/bin/sandbox-exec -p`.
//! Seatbelt evaluates a profile's rules last-match-wins, so the order of the blocks *is*
//! the policy, and it mirrors [`Policy::decide`] read from the bottom up:
//!
//! 1. `(allow default)`, then `(deny file-write*)`: the world is readable and read-only;
//! 2. `(allow file-write* ...)`: the writable roots and each [`FileRule::WritableFile`];
//! 3. `(deny file-read* file-write* ...)`: every sealed root (present or not, since a
//!    pattern over a path that does not exist yet is exactly what keeps a credential the
//!    owner creates later sealed) and each [`FileRule::SealedPattern`] as a regex;
//!    emitted after the allows so a broad writable ancestor such as `~/.config` cannot
//!    re-open `~/.config/gh`;
//! 4. `(deny file-write* ...)`: the protected paths (cage configuration and the planting
//!    guard), readable but never writable, even beneath a writable root; a `.git` entry
//!    as a `literal`, so only the entry itself is denied and git still writes beneath it;
//! 5. `network-outbound` for pathname unix sockets, in `decide`'s order read from the
//!    bottom up: `(deny ... (remote unix-socket))`, every socket; then the allowed host
//!    sockets (and, in `host` network mode, the system's name resolver); then the sealed
//!    roots and sealed patterns denied, above everything;
//! 6. the network mode: nothing in `host`; `none` denies every IP destination; `allow`
//!    denies every one but the proxy's loopback port;
//! 7. `(allow file-read* (literal ...))`: each [`FileRule::ReadableInSeal`], the one kind
//!    of file readable inside a sealed root.
//!
//! File rules and network rules never decide for each other (a path filter matches no
//! connect, an address filter no file), so blocks 5 and 6 sit between the file blocks
//! without changing them.
//!
//! Sockets: `decide` also admits a socket a process of this cage bound, a fact of the
//! running cage that no Seatbelt rule can state. Admitting sockets by place instead (the
//! repo, the window's temporary directory) would not be sound: every place the cage can
//! write, it can also rename or hard-link a host socket into (tmux's
//! `/private/tmp/tmux-UID/default` is in a writable root), and connect to it there. So the
//! profile refuses the cage's own sockets too, unless allowed by path: the stricter
//! deviation in [`DEVIATIONS`].
//!
//! The profile cannot be executed on the Linux machines that build and test jaula, so
//! `jaula_sbpl::eval` parses the rendered text back and evaluates it with Seatbelt's semantics; the
//! conformance suite checks that evaluation against `decide` path by path.

use std::path::{Path, PathBuf};

use jaula_policy::network::NetworkMode;
use jaula_policy::{Access, FileMatch, FileRule, Policy, ProtectKind, Rule, SealKind};
use jaula_sbpl::quote::{escape_regex, quote_string};

use crate::backend::Deviation;

mod backend;
pub mod process;

pub(crate) use backend::SeatbeltBackend;

/// The comment every generated profile carries on its second line.
pub(crate) const GENERATED_COMMENT: &str = "; jaula cage, generated for one window. Do not edit.";

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
    NotUtf8 {
        /// Which path of the policy (a sealed root, a writable file, ...).
        what: &'static str,
        /// The path.
        path: PathBuf,
    },
}

/// The system's name resolver: `getaddrinfo` on macOS asks mDNSResponder over this socket.
/// Admitted in `host` network mode only (DNS names are a channel out in `none` and `allow`).
/// Apple's own profiles name it by its resolved path, as here (clients connect through the
/// `/var` symlink).
pub const MDNS_RESPONDER: &str = "/private/var/run/mDNSResponder";

/// What the profile lets the command reach over IP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProfileNetwork {
    /// The host's network, unchanged (and the system's name resolver).
    #[default]
    Host,
    /// No IP destination at all: not even the loopback, which on macOS is the host's.
    None,
    /// Only jaula's proxy, listening on this port of the loopback.
    Proxy {
        /// The proxy's loopback port.
        port: u16,
    },
}

impl ProfileNetwork {
    /// The profile's rules for `mode`, whose proxy (for a mode that has one) listens on
    /// `proxy_port`: read from the mode's table, so a new mode needs no change here.
    pub fn for_mode(mode: NetworkMode, proxy_port: Option<u16>) -> ProfileNetwork {
        match (proxy_port, mode.closes_host_network()) {
            (Some(port), _) if mode.through_proxy() => ProfileNetwork::Proxy { port },
            (_, true) => ProfileNetwork::None,
            (_, false) => ProfileNetwork::Host,
        }
    }
}

/// What a profile needs beyond the policy: the network mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileOptions {
    /// What the profile lets the command reach over IP.
    pub network: ProfileNetwork,
}

/// `<state home>/.runtime/tmp/<window>/tmp`: the window's private temporary directory, the
/// same one the bwrap view binds on `/tmp`. `jaula run` on macOS makes it the command's
/// `TMPDIR`.
pub fn cage_tmp_dir(policy: &Policy, window: Option<&str>) -> PathBuf {
    policy
        .state_home()
        .join(crate::window_tmp::PRIVATE_TMP_DIR)
        .join(crate::window_tmp::window_dir_name(window, policy.repo()))
        .join(crate::window_tmp::TMP_NAME)
}

/// Every known deviation of the Seatbelt profile from `decide`. Each is pinned by the
/// conformance suite (`crates/sandbox/tests/all/seatbelt_conformance.rs`).
pub const DEVIATIONS: &[Deviation] = &[
    Deviation {
        name: "cage-socket-refused",
        looser: false,
        why: "a socket the cage binds itself is refused too, unless allowed by path: \
              Seatbelt judges a socket by its path, and into any place the cage can write \
              it could rename or link a host socket",
    },
    Deviation {
        name: "system-name-resolution",
        looser: true,
        why: "in host network mode the system's name resolver (/private/var/run/mDNSResponder) \
              is reachable: getaddrinfo needs it on macOS",
    },
];

/// The deviation that makes the profile's answer for `access` on `path` differ from
/// `decide`'s, if any. `cage-socket-refused` is never returned: a path alone never says
/// that the cage bound it, so `decide` refuses it too.
pub fn deviation(
    policy: &Policy,
    options: &ProfileOptions,
    path: &Path,
    access: Access,
) -> Option<&'static Deviation> {
    if access != Access::Connect || options.network != ProfileNetwork::Host {
        return None;
    }
    let path = jaula_policy::paths::normalize_lexically(&Path::new("/").join(path));
    if path != Path::new(MDNS_RESPONDER) || policy.decide(&path, access).rule != Rule::HostSocket {
        return None;
    }
    DEVIATIONS
        .iter()
        .find(|d| d.name == "system-name-resolution")
}

/// Render the Seatbelt profile of `policy` with the default options (`host` network).
/// Pure: reads nothing from disk.
pub fn render_profile(policy: &Policy) -> Result<String, SeatbeltError> {
    render_profile_with(policy, &ProfileOptions::default())
}

/// Render the Seatbelt profile of `policy` with `options`. Pure: reads nothing from disk.
pub fn render_profile_with(
    policy: &Policy,
    options: &ProfileOptions,
) -> Result<String, SeatbeltError> {
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
    let files = FileFilters::of(policy)?;
    lines.extend(files.writable.iter().map(|f| format!("  {f}")));
    lines.push(")".to_string());

    lines.push("(deny file-read* file-write*".to_string());
    for root in policy.sealed() {
        lines.push(format!(
            "  {}",
            kind_filter(root.kind, &root.path, "sealed root")?
        ));
    }
    // A sealed pattern stays a pattern, not a list of the files that exist now: one made
    // after the window started must be sealed too.
    for regex in &files.sealed_patterns {
        lines.push(format!("  (regex #\"{regex}\")"));
    }
    lines.push(")".to_string());

    if !policy.protected().is_empty() {
        lines.push("(deny file-write*".to_string());
        for p in policy.protected() {
            lines.push(format!("  {}", protect_filter(p.kind, &p.path)?));
        }
        lines.push(")".to_string());
    }

    socket_blocks(policy, &files, options, &mut lines)?;
    network_blocks(options.network, &mut lines);

    // Last, so each wins over the seal around it; read only, so the seal still denies
    // writing it.
    for literal in &files.readable_in_seal {
        lines.push(format!("(allow file-read* {literal})"));
    }

    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

/// `connect(2)` to pathname unix sockets, as `decide` answers it read from the bottom up.
fn socket_blocks(
    policy: &Policy,
    files: &FileFilters,
    options: &ProfileOptions,
    lines: &mut Vec<String>,
) -> Result<(), SeatbeltError> {
    // Every pathname socket first: the default is a host socket, refused (the cage's own
    // included, see the module documentation).
    lines.push("(deny network-outbound (remote unix-socket))".to_string());

    let mut allowed: Vec<String> = Vec::new();
    for s in policy.unix_sockets() {
        allowed.push(socket_literal(&s.path, "allowed unix socket")?);
    }
    if options.network == ProfileNetwork::Host {
        allowed.push(socket_literal(Path::new(MDNS_RESPONDER), "name resolver")?);
    }
    if !allowed.is_empty() {
        lines.push("(allow network-outbound".to_string());
        lines.extend(allowed.into_iter().map(|f| format!("  {f}")));
        lines.push(")".to_string());
    }

    // Last: a socket in a sealed root is never reachable, allowed or the cage's own.
    lines.push("(deny network-outbound".to_string());
    for root in policy.sealed() {
        lines.push(format!("  {}", socket_literal(&root.path, "sealed root")?));
        if root.kind == SealKind::Directory {
            lines.push(format!("  {}", socket_beneath(&root.path, "sealed root")?));
        }
    }
    for regex in &files.sealed_patterns {
        lines.push(format!("  (remote unix-socket (path-regex #\"{regex}\"))"));
    }
    lines.push(")".to_string());
    Ok(())
}

/// The IP rules of the network mode.
fn network_blocks(network: ProfileNetwork, lines: &mut Vec<String>) {
    match network {
        ProfileNetwork::Host => {}
        ProfileNetwork::None => {
            lines.push("(deny network-outbound (remote ip \"*:*\"))".to_string());
        }
        ProfileNetwork::Proxy { port } => {
            lines.push("(deny network-outbound (remote ip \"*:*\"))".to_string());
            lines.push(format!(
                "(allow network-outbound (remote ip \"localhost:{port}\"))"
            ));
        }
    }
}

/// Exactly the socket at `path`.
fn socket_literal(path: &Path, what: &'static str) -> Result<String, SeatbeltError> {
    Ok(format!(
        "(remote unix-socket (path-literal {}))",
        sbpl_string(path, what)?
    ))
}

/// Every socket strictly beneath `dir`, by component: the pattern ends in `/` (the `dir`
/// itself is a separate literal).
fn socket_beneath(dir: &Path, what: &'static str) -> Result<String, SeatbeltError> {
    let prefix = sbpl_regex_literal(dir, what)?;
    Ok(format!(
        "(remote unix-socket (path-regex #\"^{}/\"))",
        prefix.trim_end_matches('/')
    ))
}

/// The policy's [`FileRule`]s as the filters of the blocks they belong to, one arm per
/// kind: a new kind does not compile until it has a place in the profile.
struct FileFilters {
    /// Block 2, `(allow file-write* ...)`: each writable file's filter.
    writable: Vec<String>,
    /// Blocks 3 and 5: each sealed pattern as the body of an anchored regex literal.
    sealed_patterns: Vec<String>,
    /// Block 7, `(allow file-read* ...)`: each readable-in-seal file's filter.
    readable_in_seal: Vec<String>,
}

impl FileFilters {
    fn of(policy: &Policy) -> Result<FileFilters, SeatbeltError> {
        let mut files = FileFilters {
            writable: Vec::new(),
            sealed_patterns: Vec::new(),
            readable_in_seal: Vec::new(),
        };
        for rule in policy.file_rules() {
            let what = rule.source().noun();
            match rule {
                // As `FileRule::covers` reads it: the file itself, or an anchored prefix
                // pattern (the backup siblings a program writes next to its file).
                FileRule::WritableFile { path, matching, .. } => {
                    files.writable.push(match matching {
                        FileMatch::Exact => format!("(literal {})", sbpl_string(path, what)?),
                        FileMatch::NamePrefix => {
                            format!("(regex #\"^{}\")", sbpl_regex_literal(path, what)?)
                        }
                    })
                }
                // `<dir>/<one child>/<name>`, whether or not it exists.
                FileRule::SealedPattern { dir, name, .. } => files.sealed_patterns.push(format!(
                    "^{}/[^/]+/{}$",
                    sbpl_regex_literal(dir, what)?,
                    sbpl_regex_literal(Path::new(name), what)?
                )),
                FileRule::ReadableInSeal { path, .. } => files
                    .readable_in_seal
                    .push(format!("(literal {})", sbpl_string(path, what)?)),
            }
        }
        Ok(files)
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

/// A path as the body of a `#"..."` regex literal that matches it character for character.
fn sbpl_regex_literal(path: &Path, what: &'static str) -> Result<String, SeatbeltError> {
    Ok(escape_regex(utf8(path, what)?))
}

#[cfg(test)]
#[path = "seatbelt_tests.rs"]
mod tests;
