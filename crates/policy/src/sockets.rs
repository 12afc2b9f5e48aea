//! Pathname unix sockets: which host sockets a cage may connect to.
//!
//! A unix socket is a door to whatever program listens on it, and that program runs outside
//! the cage: the tmux server that hosts the agent's own window opens new windows uncaged,
//! Docker starts privileged containers, the session bus starts transient systemd units,
//! ssh-agent signs with the owner's keys. Read-only mounts and Landlock below ABI 9 do not
//! stop `connect(2)`, so the policy names the sockets a cage may reach, and the enforcer
//! refuses every other host socket. Sockets the cage binds itself stay reachable from
//! inside it: that is the agent's own work (test servers, Python's multiprocessing).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::env::EnvVars;

/// A named set of host sockets an owner can allow with one word. Each one gives away what
/// the program behind it can do; `docs/security.md` says what that is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum UnixPreset {
    /// The socket named by `SSH_AUTH_SOCK`: the cage can ask the agent to sign with every
    /// key it holds (git over ssh, commit signing), never read the keys themselves.
    SshAgent,
    /// gpg-agent's standard socket: signing and decryption with the owner's keys.
    GpgAgent,
    /// The Docker (and Podman) API sockets: as good as root on the host for a member of
    /// the docker group; allow only when the agent must drive containers.
    Docker,
}

impl UnixPreset {
    /// Every preset, in the order help texts and errors list them.
    pub const ALL: [UnixPreset; 3] = [
        UnixPreset::SshAgent,
        UnixPreset::GpgAgent,
        UnixPreset::Docker,
    ];

    /// The name flags and config use (`ssh-agent`, `gpg-agent`, `docker`).
    pub fn name(self) -> &'static str {
        match self {
            UnixPreset::SshAgent => "ssh-agent",
            UnixPreset::GpgAgent => "gpg-agent",
            UnixPreset::Docker => "docker",
        }
    }

    /// Parse a preset name as written on the command line or in the config file.
    pub fn parse(name: &str) -> Option<UnixPreset> {
        UnixPreset::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The socket paths this preset stands for on this host, from the environment the
    /// cage is launched with. Paths that do not exist are kept: an agent started later
    /// (a restarted ssh-agent at the same path) is still the one the owner allowed.
    pub fn paths(self, env: &EnvVars, home: &std::path::Path) -> Vec<PathBuf> {
        let runtime = env
            .get("XDG_RUNTIME_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        match self {
            UnixPreset::SshAgent => env
                .get("SSH_AUTH_SOCK")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .into_iter()
                .collect(),
            UnixPreset::GpgAgent => {
                let gnupg_home = env
                    .get("GNUPGHOME")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
                    .unwrap_or_else(|| home.join(".gnupg"));
                let mut out = Vec::new();
                if let Some(runtime) = &runtime {
                    out.push(runtime.join("gnupg/S.gpg-agent"));
                }
                out.push(gnupg_home.join("S.gpg-agent"));
                out
            }
            UnixPreset::Docker => {
                let mut out = Vec::new();
                if let Some(host) = env.get("DOCKER_HOST").and_then(|v| v.to_str()) {
                    if let Some(path) = host.strip_prefix("unix://") {
                        out.push(PathBuf::from(path));
                    }
                }
                out.push(PathBuf::from("/var/run/docker.sock"));
                out.push(PathBuf::from("/run/podman/podman.sock"));
                if let Some(runtime) = &runtime {
                    out.push(runtime.join("docker.sock"));
                    out.push(runtime.join("podman/podman.sock"));
                }
                out
            }
        }
    }
}

impl std::fmt::Display for UnixPreset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a host socket is reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "source", content = "preset", rename_all = "kebab-case")]
pub enum SocketSource {
    /// `--allow-unix-socket` or config `allow_unix_socket`.
    Owner,
    /// `--allow-unix-preset` or config `allow_unix_preset`.
    Preset(UnixPreset),
}

impl SocketSource {
    /// A short phrase for people, as `explain` prints it.
    pub fn label(self) -> String {
        match self {
            SocketSource::Owner => "owner allow-unix-socket".to_owned(),
            SocketSource::Preset(p) => format!("preset {p}"),
        }
    }
}

/// A host socket the owner lets the cage connect to, canonical.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedSocket {
    /// The socket's path, canonical.
    #[serde(with = "crate::serde_path")]
    pub path: PathBuf,
    /// The flag, config key or preset that allowed it.
    pub source: SocketSource,
}

/// The variables that tell a client where a host socket is, as `(name, separator)`: the
/// socket's path is the value up to the first `separator` (`None`: the whole value). The
/// default scrub removes each; an allowed socket keeps the one that names it, or the door
/// the owner opened could not be found from the cage.
pub const SOCKET_VARIABLES: &[(&str, Option<char>)] = &[
    ("SSH_AUTH_SOCK", None),
    // gpg-agent's old `PATH:PID:PROTOCOL`.
    ("GPG_AGENT_INFO", Some(':')),
    // tmux's `PATH,PID,SESSION`; TMUX_PANE stays scrubbed (it only names a pane to type into).
    ("TMUX", Some(',')),
];

/// The names of [`SOCKET_VARIABLES`] in `vars` whose socket is one of `allowed`: the value
/// is resolved as the allowed paths were (canonical where it exists) and compared by
/// component.
pub fn variables_naming(
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    allowed: &[AllowedSocket],
) -> Vec<&'static str> {
    variables_naming_on(vars, allowed, &crate::RealHostFs)
}

/// [`variables_naming`], resolving each value through `fs`.
pub fn variables_naming_on(
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    allowed: &[AllowedSocket],
    fs: &dyn crate::HostFs,
) -> Vec<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for (name, value) in vars {
        let Some(&(known, separator)) = SOCKET_VARIABLES.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        let bytes = value.as_bytes();
        let path = match separator {
            Some(sep) => bytes.split(|&b| b == sep as u8).next().unwrap_or(bytes),
            None => bytes,
        };
        if path.is_empty() {
            continue;
        }
        let declared = std::path::Path::new(std::ffi::OsStr::from_bytes(path));
        let path = fs
            .canonicalize(declared)
            .unwrap_or_else(|_| declared.to_path_buf());
        if allowed.iter().any(|s| s.path == path) && !out.contains(&known) {
            out.push(known);
        }
    }
    out
}

#[cfg(test)]
#[path = "sockets_tests.rs"]
mod tests;
