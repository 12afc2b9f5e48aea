//! The API server's name rules (apimachinery `validation.IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsValidLabelValue`), checked before rendering so that a
//! manifest jaula prints is one the cluster accepts, and a name that would have to be
//! altered to fit is refused rather than silently mapped onto somebody else's.

fn is_label_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
}

/// RFC 1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters. Namespace
/// names are such labels.
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|c| is_label_char(*c))
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// RFC 1123 subdomain: dot-separated labels, at most 253 characters. Pod, Sandbox,
/// NetworkPolicy and RuntimeClass names are such subdomains.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// A label value: empty, or `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?` of at most 63.
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() {
        return true;
    }
    b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
