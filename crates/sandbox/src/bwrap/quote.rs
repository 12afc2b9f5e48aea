//! Shell quoting, byte-for-byte Python's `shlex.quote`/`shlex.join`: the launcher pastes
//! `jaula line`'s output into a shell command, and it must be the seed's output exactly.

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
pub fn shell_quote(arg: &[u8]) -> Cow<'_, [u8]> {
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
