//! Domain patterns: an exact name, or `*.suffix` for every name strictly beneath it.

use std::fmt;

/// Longest DNS name in presentation form without the trailing dot (RFC 1035 §2.3.4).
const MAX_NAME: usize = 253;
/// Longest label (RFC 1035 §2.3.4).
const MAX_LABEL: usize = 63;

/// Registry-controlled suffixes of two labels under which anyone can register a name.
/// A wildcard over one of them (`*.co.uk`) admits unrelated owners just as `*.com` does.
/// Not the whole Public Suffix List: single-label suffixes are refused by rule, these are
/// the common two-label ones.
const PUBLIC_SUFFIXES: &[&str] = &[
    "ac.uk", "co.uk", "gov.uk", "ltd.uk", "me.uk", "net.uk", "org.uk", "plc.uk", "com.au",
    "net.au", "org.au", "edu.au", "gov.au", "co.nz", "net.nz", "org.nz", "co.jp", "ne.jp", "or.jp",
    "ac.jp", "com.br", "net.br", "org.br", "com.cn", "net.cn", "org.cn", "co.in", "net.in",
    "org.in", "co.za", "org.za", "com.mx", "com.tr", "com.tw", "com.hk", "co.kr", "or.kr",
    "com.sg", "com.ar", "co.il", "com.ua", "com.pl", "co.id", "com.my", "eu.org",
];

/// A validated pattern, stored lower-case without a trailing dot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DomainPattern {
    /// This name only.
    Exact(String),
    /// Names strictly beneath the suffix (`*.example.com` matches `a.example.com` and
    /// `a.b.example.com`, not `example.com`).
    Subdomains(String),
}

/// Why a pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatternError {
    /// Nothing was written.
    #[error("empty pattern")]
    Empty,
    /// A URL was given (`https://...`) where a host name belongs.
    #[error("a scheme is not part of a host name; write the name alone")]
    Scheme,
    /// A path was given: the proxy never sees paths inside TLS.
    #[error("a path is not part of a host name; the proxy decides by name only")]
    Path,
    /// A port was given: rules are per name, every port.
    #[error("a port is not part of a host name; every port of an allowed name is allowed")]
    Port,
    /// `*` alone: an allow-list that allows everything.
    #[error("`*` alone would allow every host; use --network host instead")]
    Everything,
    /// `*.com` and the like: a wildcard over names of unrelated owners.
    #[error("`*.{suffix}` covers a whole public suffix, i.e. unrelated owners' names")]
    PublicSuffix {
        /// The public suffix the wildcard covers.
        suffix: String,
    },
    /// `*` inside a label or after the first one.
    #[error("`*` may only stand alone as the first label, as in `*.example.com`")]
    MisplacedWildcard,
    /// Two dots in a row, or a leading dot.
    #[error("empty label (two dots in a row, or a leading dot)")]
    EmptyLabel,
    /// A label over 63 bytes, which no DNS name can hold.
    #[error("label {label:?} is longer than 63 bytes")]
    LabelTooLong {
        /// The label.
        label: String,
    },
    /// A name over 253 bytes, which no DNS name can be.
    #[error("the name is longer than 253 bytes")]
    TooLong,
    /// A character no host name holds.
    #[error("character {found:?} is not allowed in a host name (letters, digits, `-`, `_`)")]
    InvalidCharacter {
        /// The character.
        found: char,
    },
    /// A label that starts or ends with `-`.
    #[error("label {label:?} starts or ends with `-`")]
    Hyphen {
        /// The label.
        label: String,
    },
}

impl DomainPattern {
    /// Parse a user's pattern. Case is folded and one trailing dot dropped.
    pub fn parse(text: &str) -> Result<DomainPattern, PatternError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(PatternError::Empty);
        }
        if text.contains("://") {
            return Err(PatternError::Scheme);
        }
        if text.contains('/') {
            return Err(PatternError::Path);
        }
        if text.contains(':') || text.contains('[') {
            return Err(PatternError::Port);
        }
        let lower = text.to_ascii_lowercase();
        let name = lower.strip_suffix('.').unwrap_or(&lower);
        if name == "*" {
            return Err(PatternError::Everything);
        }
        match name.strip_prefix("*.") {
            Some(suffix) => {
                check_name(suffix)?;
                if !suffix.contains('.') || PUBLIC_SUFFIXES.contains(&suffix) {
                    return Err(PatternError::PublicSuffix {
                        suffix: suffix.to_owned(),
                    });
                }
                Ok(DomainPattern::Subdomains(suffix.to_owned()))
            }
            None => {
                check_name(name)?;
                Ok(DomainPattern::Exact(name.to_owned()))
            }
        }
    }

    /// Whether `host`, already normalised by [`normalize_host`], matches.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            DomainPattern::Exact(name) => host == name,
            DomainPattern::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .and_then(|head| head.strip_suffix('.'))
                .is_some_and(|head| !head.is_empty()),
        }
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomainPattern::Exact(name) => f.write_str(name),
            DomainPattern::Subdomains(suffix) => write!(f, "*.{suffix}"),
        }
    }
}

/// A config file's pattern is checked as it is read, so a bad one is refused at load
/// with its key and line.
impl<'de> serde::Deserialize<'de> for DomainPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DomainPattern, D::Error> {
        let text = String::deserialize(d)?;
        DomainPattern::parse(&text)
            .map_err(|e| serde::de::Error::custom(format!("domain pattern {text:?}: {e}")))
    }
}

fn check_name(name: &str) -> Result<(), PatternError> {
    if name.is_empty() {
        return Err(PatternError::Empty);
    }
    if name.len() > MAX_NAME {
        return Err(PatternError::TooLong);
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(PatternError::EmptyLabel);
        }
        if label.len() > MAX_LABEL {
            return Err(PatternError::LabelTooLong {
                label: label.to_owned(),
            });
        }
        if let Some(found) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Err(if found == '*' {
                PatternError::MisplacedWildcard
            } else {
                PatternError::InvalidCharacter { found }
            });
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(PatternError::Hyphen {
                label: label.to_owned(),
            });
        }
    }
    Ok(())
}

/// The form a request's host is compared in: lower-case, without one trailing dot;
/// `None` when it is not a syntactically valid name or IPv4 literal (an IPv6 literal,
/// which no pattern can name, is also `None` and so refused).
pub fn normalize_host(host: &str) -> Option<String> {
    let lower = host.to_ascii_lowercase();
    let name = lower.strip_suffix('.').unwrap_or(&lower);
    check_name(name).ok()?;
    Some(name.to_owned())
}
