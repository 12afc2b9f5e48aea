//! What a steered connection's first bytes tell: the outcome of the two pure parsers,
//! [`crate::sni`] (TLS ClientHello) and [`crate::http_host`] (HTTP/1.x request head).
//!
//! Both are fed the bytes read so far, from the start of the connection, and never
//! consume them: the steering loop keeps reading until the parser stops asking for more
//! (bounded by [`MAX_SNIFF`] and the proxy's header timeout), then replays every byte
//! upstream unchanged.

/// The most bytes read from a steered connection before it is judged. A ClientHello is
/// one handshake message (about 2 KiB with today's post-quantum key shares, rarely more
/// than one 16 KiB TLS record) and a request head is a few hundred bytes; more than this
/// is refused rather than buffered.
pub const MAX_SNIFF: usize = 64 * 1024;

/// A parser's answer for the bytes it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sniffed<T> {
    /// The bytes are a valid prefix; read more.
    NeedMore,
    /// Enough was read to judge.
    Found(T),
    /// The bytes cannot be the start of what this port expects; the reason is logged as
    /// the refusal's rule.
    Malformed(&'static str),
}

/// Whether `name` is fit to be judged and shown: 1 to 255 bytes of visible ASCII. What
/// a client sends is printed in the summary on the owner's terminal, so control
/// characters (escape sequences) never get that far; the rules then judge the name's
/// syntax like any other host.
pub(crate) fn printable_name(name: &[u8]) -> Option<&str> {
    if name.is_empty() || name.len() > 255 || !name.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return None;
    }
    std::str::from_utf8(name).ok()
}
