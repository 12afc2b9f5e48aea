//! Writing text into a profile: a string literal, and the inside of a `#"..."` regex that
//! matches a string character for character.

use crate::ere;

/// Scheme string quoting: only `\` and `"` need escaping. Any other character, newline
/// included, stands for itself inside the quotes.
pub fn quote_string(s: &str) -> String {
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

/// Escape `s` for the inside of an SBPL `#"..."` regex literal.
///
/// The reader hands the content of `#"..."` to the regex engine with its backslashes
/// intact (Apple's own profiles write `#"\.app"` to mean a literal dot), so one backslash
/// is both the POSIX ERE escape and what keeps a `"` from ending the literal early. Every
/// ERE metacharacter is escaped, and `"` is written `\"` (left bare, a home whose path
/// held a quote would close the literal mid-path). Letters and digits are never
/// escaped: engines give `\w`, `\d`, `\<` meanings of their own.
///
/// Not verified against a real Mac: sandbox-exec cannot run on the Linux machines that
/// build jaula. [`crate::eval`] implements this reading and the conformance suite holds the
/// renderer to it.
pub fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if ere::is_metachar(c) || c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
