use std::io::{Error, ErrorKind};

use super::*;

fn not_found() -> Error {
    Error::from(ErrorKind::NotFound)
}

/// 127 only when the user's own command was not found; a missing bubblewrap, stage or
/// sandbox-exec is jaula's refusal, 126, whatever the cause.
#[test]
fn each_refusal_carries_its_exit_code() {
    let command = Refusal::Command {
        program: "nope".into(),
        source: not_found(),
    };
    assert_eq!(command.exit_code(), 127);
    let denied = Refusal::Command {
        program: "x".into(),
        source: Error::from(ErrorKind::PermissionDenied),
    };
    assert_eq!(denied.exit_code(), REFUSED);
    let start = Refusal::Start {
        program: "/usr/bin/bwrap".into(),
        source: not_found(),
    };
    assert_eq!(start.exit_code(), REFUSED);
    let uncaged = Refusal::Uncaged {
        reason: "r".into(),
        remedy: String::new(),
    };
    assert_eq!(uncaged.exit_code(), REFUSED);
    // Through CliError, for both kinds of command: the refusal's own code wins.
    let err = CliError::from(command);
    assert_eq!((err.exit_code(), err.refusal_code()), (127, 127));
    let err = CliError::from(uncaged);
    assert_eq!((err.exit_code(), err.refusal_code()), (REFUSED, REFUSED));
    // Usage stays 2 and other errors 1 (inspection) or 126 (a run).
    let usage = CliError::from(UsageError::ProxyPortNeeded);
    assert_eq!((usage.exit_code(), usage.refusal_code()), (2, 2));
    let repo = CliError::RepoRequired;
    assert_eq!(repo.to_string(), "--repo is required");
    assert_eq!((repo.exit_code(), repo.refusal_code()), (2, 2));
    let other = CliError::Config(crate::error::ConfigProblem {
        file: "/home/o/.config/jaula/config.toml".into(),
        problem: jaula_policy::network::NetworkError::UnknownMode {
            value: "open".into(),
        },
    });
    assert_eq!(
        other.to_string(),
        "config /home/o/.config/jaula/config.toml: network: network mode \"open\" is not one of host, none, allow"
    );
    assert_eq!((other.exit_code(), other.refusal_code()), (1, REFUSED));
}

#[cfg(target_os = "linux")]
#[test]
fn a_launch_refusal_keeps_the_launch_sequence_code() {
    let missing = Refusal::Launch(jaula_sandbox::launch::LaunchError::Exec {
        program: "nope".into(),
        source: not_found(),
    });
    assert_eq!(missing.exit_code(), 127);
    let threads = Refusal::Launch(jaula_sandbox::launch::LaunchError::Threads(2));
    assert_eq!(threads.exit_code(), REFUSED);
}

/// The messages users and launchers match on, word for word.
#[test]
fn refusal_messages_read_as_before() {
    let cases = [
        (
            Refusal::Uncaged {
                reason: "bwrap: no".into(),
                remedy: "install it".into(),
            },
            "refusing to run uncaged: bwrap: no; to cage it: install it; --allow-uncaged runs \
             the command with no cage at all",
        ),
        (
            Refusal::Uncaged {
                reason: "gone".into(),
                remedy: String::new(),
            },
            "refusing to run uncaged: gone; --allow-uncaged runs the command with no cage at all",
        ),
        (
            Refusal::PrivateTmp {
                what: "/tmp",
                reason: "r".into(),
            },
            "refusing to run: cannot make the cage's private /tmp: r",
        ),
        (
            Refusal::LinuxOnlyFlag {
                flag: "--no-socket-gate",
                why: "w",
            },
            "refusing to run: --no-socket-gate has no macOS meaning (w); on macOS jaula runs \
             the command under Seatbelt (/usr/bin/sandbox-exec)",
        ),
        (
            Refusal::Start {
                program: "/usr/bin/bwrap".into(),
                source: not_found(),
            },
            "cannot execute /usr/bin/bwrap: entity not found",
        ),
    ];
    for (refusal, text) in cases {
        assert_eq!(refusal.to_string(), text);
    }
}
