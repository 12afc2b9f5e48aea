//! Shell quoting, byte-for-byte Python's `shlex.quote`/`shlex.join`: the launcher pastes
//! `jaula line`'s output into a shell command, and it must stay byte-for-byte what launchers already parse.

use std::borrow::Cow;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// `shlex.quote`'s safe set is `[\w@%+=:,./-]` under `re.ASCII`: every other byte,
/// including any byte of a non-ASCII character, forces quoting.
fn is_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b)
}

/// One argument quoted for a POSIX shell: as is when every byte is safe, `''` when empty,
/// otherwise wrapped in single quotes with each `'` written as `'"'"'`.
pub(crate) fn shell_quote(arg: &[u8]) -> Cow<'_, [u8]> {
    if arg.is_empty() {
        return Cow::Borrowed(b"''");
    }
    if arg.iter().copied().all(is_safe) {
        return Cow::Borrowed(arg);
    }
    let mut out = Vec::with_capacity(arg.len() + 2);
    out.push(b'\'');
    for &b in arg {
        if b == b'\'' {
            out.extend_from_slice(b"'\"'\"'");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    Cow::Owned(out)
}

/// The arguments quoted and joined with single spaces, as `shlex.join` does.
pub fn shell_join(argv: &[OsString]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, arg) in argv.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&shell_quote(arg.as_bytes()));
    }
    out
}

/// How many operands a bubblewrap option takes (bubblewrap(1)); unknown options none.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn operands(option: &[u8]) -> usize {
    match option {
        b"--bind" | b"--bind-try" | b"--ro-bind" | b"--ro-bind-try" | b"--dev-bind"
        | b"--dev-bind-try" | b"--symlink" | b"--file" | b"--bind-data" | b"--ro-bind-data"
        | b"--bind-fd" | b"--ro-bind-fd" | b"--setenv" | b"--chmod" => 2,
        b"--tmpfs" | b"--dir" | b"--proc" | b"--dev" | b"--mqueue" | b"--remount-ro"
        | b"--chdir" | b"--perms" | b"--size" | b"--unsetenv" | b"--uid" | b"--gid"
        | b"--hostname" | b"--seccomp" | b"--add-seccomp-fd" | b"--args" | b"--sync-fd"
        | b"--info-fd" | b"--block-fd" | b"--userns-block-fd" | b"--json-status-fd"
        | b"--cap-add" | b"--cap-drop" | b"--lock-file" | b"--exec-label" | b"--file-label"
        | b"--argv0" | b"--userns" | b"--userns2" | b"--pidns" | b"--overlay-src"
        | b"--tmp-overlay" | b"--ro-overlay" => 1,
        _ => 0,
    }
}

/// The same command as [`shell_join`], one bubblewrap option with its operands per line
/// (one mount a line), each line but the last ending in ` \`, so `-v` output reads as a
/// list and still pastes into a shell. After bubblewrap's `--`, jaula's inner stage: each
/// `--flag value` on its line, and the caged command, after the second `--`, on the last.
// Printed by the Linux launch (`start`) only.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn shell_lines(argv: &[OsString]) -> Vec<u8> {
    let args: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let mut lines: Vec<Vec<&[u8]>> = Vec::new();
    let mut i = 0;
    let mut separators = 0;
    while i < args.len() {
        let arg = args[i];
        let take = if separators >= 2 {
            args.len() - i // the caged command, whole
        } else if arg == b"--" {
            separators += 1;
            1
        } else if separators == 0 {
            1 + operands(arg)
        } else if arg.starts_with(b"--") && args.get(i + 1).is_some_and(|n| !n.starts_with(b"--")) {
            2 // an inner-stage flag and its value
        } else {
            1
        };
        let end = (i + take).min(args.len());
        lines.push(args[i..end].to_vec());
        i = end;
    }
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.extend_from_slice(b" \\\n  ");
        }
        for (k, arg) in line.iter().enumerate() {
            if k > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(&shell_quote(arg));
        }
    }
    out
}
