//! The probe harness: run many file operations in ONE caged shell and judge each by what
//! happened to the HOST, never by what the caged process believed.
//!
//! Two shapes share it:
//! - [`run_probes`]: a flat list of [`Probe`]s over the [`crate::fixture`] tree, judged by
//!   the host file's marker, content or existence;
//! - [`matrix`]: labelled [`matrix::Target`]s (files, directories, links, creates) run by
//!   one script whose every line is tagged, for the conformance suites that compare the
//!   live effect with `Policy::decide` and a backend's listed deviations.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Command;

use crate::fixture::{CREATE_PATHS, PRESENT_FILES};

pub mod matrix;

/// What a probe tries on its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read the file's contents.
    Read,
    /// Append to an existing file.
    Write,
    /// Make a new file.
    Create,
}

/// One probe: an operation on a path relative to the scratch root.
#[derive(Clone, Debug)]
pub struct Probe {
    /// The path, relative to the scratch root.
    pub rel: String,
    /// The operation tried.
    pub op: Op,
}

/// Every present file for read and write (jaula's config for write only) and every
/// creatable path for create, over the credential home [`crate::build_home`] makes.
pub fn standard_probes() -> Vec<Probe> {
    let mut probes = Vec::new();
    for rel in PRESENT_FILES {
        if rel.contains("jaula/config.toml") {
            probes.push(Probe {
                rel: rel.to_string(),
                op: Op::Write,
            });
            continue;
        }
        probes.push(Probe {
            rel: rel.to_string(),
            op: Op::Read,
        });
        probes.push(Probe {
            rel: rel.to_string(),
            op: Op::Write,
        });
    }
    for rel in CREATE_PATHS {
        probes.push(Probe {
            rel: rel.to_string(),
            op: Op::Create,
        });
    }
    probes
}

/// `path` in POSIX single quotes, byte for byte (no UTF-8 needed).
pub fn sh_quote(path: &Path) -> Vec<u8> {
    let mut out = b"'".to_vec();
    for b in path.as_os_str().as_encoded_bytes() {
        if *b == b'\'' {
            out.extend_from_slice(b"'\"'\"'");
        } else {
            out.push(*b);
        }
    }
    out.push(b'\'');
    out
}

/// Run every probe in ONE caged shell (`prefix` + `sh script`), then judge each by its
/// host effect: a read counts when the caged shell printed the host file's marker, a write
/// when the host file changed, a create when the entry exists on the host afterwards.
/// Returns one bool per probe, in order.
pub fn run_probes(
    prefix: &[OsString],
    root: &Path,
    probes: &[Probe],
    script_dir: &Path,
) -> Vec<bool> {
    let mut script: Vec<u8> = Vec::new();
    for (i, p) in probes.iter().enumerate() {
        let quoted = sh_quote(&root.join(&p.rel));
        let line = match p.op {
            Op::Read => [
                b"if cat -- ".as_slice(),
                &quoted,
                b" 2>/dev/null | grep -qF 'jaula-marker:'; then echo 'R",
                i.to_string().as_bytes(),
                b" 1'; else echo 'R",
                i.to_string().as_bytes(),
                b" 0'; fi\n",
            ]
            .concat(),
            // Subshells: a failed redirection on a special builtin ends a POSIX shell.
            Op::Write => [
                b"(printf 'W' >> ".as_slice(),
                &quoted,
                b") 2>/dev/null || true\n",
            ]
            .concat(),
            Op::Create => [b"(: > ".as_slice(), &quoted, b") 2>/dev/null || true\n"].concat(),
        };
        script.extend_from_slice(&line);
    }
    fs::create_dir_all(script_dir).unwrap();
    let script_path = script_dir.join("probe.sh");
    fs::write(&script_path, &script).unwrap();
    let before: Vec<Option<Vec<u8>>> = probes
        .iter()
        .map(|p| fs::read(root.join(&p.rel)).ok())
        .collect();
    let mut argv: Vec<OsString> = prefix.to_vec();
    argv.push("/bin/sh".into());
    argv.push(script_path.into_os_string());
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "caged probe shell failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    probes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = root.join(&p.rel);
            match p.op {
                Op::Read => stdout.lines().any(|l| l == format!("R{i} 1")),
                Op::Write => fs::read(&path).ok() != before[i],
                Op::Create => fs::symlink_metadata(&path).is_ok(),
            }
        })
        .collect()
}

/// Parse a shell-quoted prefix as printed by `line` (POSIX single quotes only, as
/// `shlex.join` writes them) back into argv.
pub fn parse_shell_prefix(line: &[u8]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut in_word = false;
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        match b {
            b' ' | b'\n' | b'\t' => {
                if in_word {
                    out.push(OsString::from_vec(std::mem::take(&mut cur)));
                    in_word = false;
                }
            }
            quote @ (b'\'' | b'"') => {
                in_word = true;
                i += 1;
                while i < line.len() && line[i] != quote {
                    cur.push(line[i]);
                    i += 1;
                }
            }
            _ => {
                in_word = true;
                cur.push(b);
            }
        }
        i += 1;
    }
    if in_word {
        out.push(OsString::from_vec(cur));
    }
    out
}
