//! Whether bubblewrap can cage a window on this machine.
//!
//! The binary being installed is not enough: Ubuntu 24.04 restricts unprivileged user
//! namespaces through AppArmor, hardened kernels refuse them, and containers often mask
//! what bubblewrap needs. A prefix that fails at launch takes the agent's window down
//! with it, so the probe builds one real namespace with the cage's own base flags.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use jaula_policy::sources::BwrapHint;

use super::{option_flags, BwrapOptions, BASE_FLAGS};

/// bubblewrap either builds a namespace in milliseconds or is refused outright; a long
/// wait only delays every launch on a machine where it hangs.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why bubblewrap is believed to work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AvailableBasis {
    /// `CITY_CAGE_BWRAP=1` or config `bwrap = true`, and the program is on `PATH`.
    Declared,
    /// A namespace was built just now.
    Probed,
    /// A namespace was built by an earlier launch with the same binary, kernel, user and
    /// user-namespace switches (see [`super::probe_cached`]).
    Cached,
}

/// Why bubblewrap cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unavailable {
    /// `CITY_CAGE_BWRAP=0` or config `bwrap = false`.
    Declared,
    /// The program is not an executable file on `PATH` (or at the path given).
    NotFound {
        /// The name or path looked for.
        program: OsString,
    },
    /// The program was found but could not be started.
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why the spawn failed.
        error: String,
    },
    /// bubblewrap ran and failed to build the namespace.
    Failed {
        /// The program.
        program: PathBuf,
        /// Its exit status.
        status: String,
        /// What it printed on stderr (the kernel's refusal, usually).
        stderr: String,
    },
    /// bubblewrap did not finish within the timeout and was killed.
    TimedOut {
        /// The program.
        program: PathBuf,
        /// The timeout.
        after: Duration,
    },
}

/// The probe's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// bubblewrap can build the cage's namespaces here.
    Available {
        /// Its absolute path.
        program: PathBuf,
        /// Why that is believed (probed, cached or declared).
        basis: AvailableBasis,
    },
    /// bubblewrap cannot be used, and why.
    Unavailable(Unavailable),
}

impl Availability {
    /// Whether bubblewrap can be used.
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available { .. })
    }

    /// The absolute path of the program, when it was found.
    // Read by the Linux launch (`start`) only.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn program(&self) -> Option<&Path> {
        match self {
            Availability::Available { program, .. }
            | Availability::Unavailable(
                Unavailable::Spawn { program, .. }
                | Unavailable::Failed { program, .. }
                | Unavailable::TimedOut { program, .. },
            ) => Some(program),
            Availability::Unavailable(Unavailable::Declared | Unavailable::NotFound { .. }) => None,
        }
    }

    /// One line for people.
    pub fn reason(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Available {
                program,
                basis: AvailableBasis::Declared,
            } => write!(
                f,
                "bubblewrap declared working (CITY_CAGE_BWRAP=1 or config bwrap = true); found {}",
                program.display()
            ),
            Availability::Available {
                program,
                basis: AvailableBasis::Probed,
            } => write!(f, "{} built a namespace", program.display()),
            Availability::Available {
                program,
                basis: AvailableBasis::Cached,
            } => write!(
                f,
                "{} built a namespace at an earlier launch (same binary, kernel, user and \
                 user-namespace switches; kept in the state home's cage directory)",
                program.display()
            ),
            Availability::Unavailable(why) => fmt::Display::fmt(why, f),
        }
    }
}

impl Unavailable {
    /// What would give the bubblewrap view back, for one line beside the reason: the
    /// package when the program is missing, the kernel's switch when it is there but
    /// cannot build a user namespace, the declaration when the owner made one.
    pub fn remedy(&self) -> &'static str {
        match self {
            Unavailable::Declared => "unset CITY_CAGE_BWRAP=0 (or config bwrap = false)",
            Unavailable::NotFound { .. } => "install bubblewrap (apt-get install bubblewrap)",
            Unavailable::Spawn { .. }
            | Unavailable::Failed { .. }
            | Unavailable::TimedOut { .. } => {
                "allow unprivileged user namespaces (Ubuntu 24.04: sysctl \
                 kernel.apparmor_restrict_unprivileged_userns=0; Debian: sysctl \
                 kernel.unprivileged_userns_clone=1; in a container: run it with user \
                 namespaces allowed)"
            }
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Declared => f.write_str(
                "bubblewrap declared not working (CITY_CAGE_BWRAP=0 or config bwrap = false)",
            ),
            Unavailable::NotFound { program } => write!(
                f,
                "{} not found on PATH as an executable file",
                program.to_string_lossy()
            ),
            Unavailable::Spawn { program, error } => {
                write!(f, "could not run {}: {error}", program.display())
            }
            Unavailable::Failed {
                program,
                status,
                stderr,
            } if stderr.is_empty() => {
                write!(
                    f,
                    "{} could not build a namespace ({status})",
                    program.display()
                )
            }
            Unavailable::Failed {
                program,
                status,
                stderr,
            } => write!(
                f,
                "{} could not build a namespace ({status}): {stderr}",
                program.display()
            ),
            Unavailable::TimedOut { program, after } => write!(
                f,
                "{} did not finish within {}s and was killed",
                program.display(),
                after.as_secs_f64()
            ),
        }
    }
}

/// Decide availability from the hint, this process's `PATH` and `PROBE_TIMEOUT`.
pub fn probe(hint: BwrapHint, options: &BwrapOptions) -> Availability {
    probe_with(
        hint,
        options,
        std::env::var_os("PATH").as_deref(),
        PROBE_TIMEOUT,
    )
}

/// [`probe`] with the `PATH` value and the timeout given.
///
/// - `DoesNotWork`: unavailable, without looking.
/// - `Works`: available iff the program is found. The hint is trusted but not blindly:
///   tmux windows inherit the server's whole environment, so a value set on another
///   machine, or before bubblewrap was uninstalled, would otherwise produce a prefix that
///   exits 127 in every window.
/// - `Probe`: run `<program> --ro-bind / / --dev /dev [options] true` and require exit 0.
///   The options are included because a PID namespace with its own `/proc` can be refused
///   where the base is not (a container's masked `/proc`), and the probe must test the
///   sandbox the agent will get.
pub(crate) fn probe_with(
    hint: BwrapHint,
    options: &BwrapOptions,
    path_var: Option<&OsStr>,
    timeout: Duration,
) -> Availability {
    if hint == BwrapHint::DoesNotWork {
        return Availability::Unavailable(Unavailable::Declared);
    }
    let Some(program) = find_program(&options.program, path_var) else {
        return Availability::Unavailable(Unavailable::NotFound {
            program: options.program.clone(),
        });
    };
    if hint == BwrapHint::Works {
        return Availability::Available {
            program,
            basis: AvailableBasis::Declared,
        };
    }
    match run_probe(&program, options, timeout) {
        Ok(()) => Availability::Available {
            program,
            basis: AvailableBasis::Probed,
        },
        Err(why) => Availability::Unavailable(why),
    }
}

/// Resolve `program` to an absolute path of an executable regular file.
///
/// A name with a `/` is taken as a path (made absolute against the working directory).
/// A bare name is searched in `path_var`'s absolute entries only: an empty or relative
/// entry means "the current directory", which for a launcher started in an agent's repo
/// would let the repo choose the sandbox binary.
pub(crate) fn find_program(program: &OsStr, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.as_bytes().contains(&b'/') {
        let path = std::path::absolute(Path::new(program)).ok()?;
        return is_executable_file(&path).then_some(path);
    }
    let path_var = path_var?;
    path_var
        .as_bytes()
        .split(|b| *b == b':')
        .map(|dir| Path::new(OsStr::from_bytes(dir)))
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn run_probe(program: &Path, options: &BwrapOptions, timeout: Duration) -> Result<(), Unavailable> {
    let mut child = Command::new(program)
        .args(BASE_FLAGS)
        .args(option_flags(options))
        .arg("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Unavailable::Spawn {
            program: program.to_path_buf(),
            error: e.to_string(),
        })?;

    // The reader sees end-of-file once bubblewrap and everything holding its stderr have
    // exited; the channel turns that into a wait with a deadline.
    let (tx, rx) = mpsc::channel();
    if let Some(mut stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            // A read error only loses the message; the exit status still decides.
            let _ = stderr.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    }
    let stderr = match rx.recv_timeout(timeout) {
        Ok(buf) => buf,
        Err(mpsc::RecvTimeoutError::Disconnected) => Vec::new(),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // SIGKILL, then reap, so no zombie or half-built namespace is left behind.
            let _ = child.kill();
            let _ = child.wait();
            return Err(Unavailable::TimedOut {
                program: program.to_path_buf(),
                after: timeout,
            });
        }
    };
    let status = child.wait().map_err(|e| Unavailable::Spawn {
        program: program.to_path_buf(),
        error: e.to_string(),
    })?;
    if status.success() {
        return Ok(());
    }
    let first_line = String::from_utf8_lossy(&stderr)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    Err(Unavailable::Failed {
        program: program.to_path_buf(),
        status: status.to_string(),
        stderr: first_line,
    })
}
