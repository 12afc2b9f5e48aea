//! An evaluator of SBPL profiles, for checking on Linux what Seatbelt would decide on macOS.
//!
//! [`Profile::parse`] reads profile text (the subset jaula emits: `version`, comments,
//! `allow`/`deny` rules over the operations `default`, `file-read*`, `file-write*` and
//! `network-outbound`, with the path filters `subpath`, `literal` and `regex` and the address
//! filters `(remote unix-socket [(path-literal S) | (path-regex #"R")])` and
//! `(remote ip "HOST:PORT")`), unescaping strings as the Scheme reader does.
//! It is a parser of the text, not a re-computation from a policy: whatever the renderer
//! gets wrong in quoting shows up as a disagreement with `decide`.
//!
//! [`Profile::evaluate_request`] applies Seatbelt's rule: of the rules whose operation covers
//! the request and whose filter (any of them) matches it, the last one in the profile
//! decides; `(allow default)` matches everything. A path filter matches file requests only,
//! an address filter network requests only, so the file blocks and the network blocks of a
//! profile never decide for each other. When no rule matches, Seatbelt denies.
//! `default` is modelled as one more rule matching every operation, in profile order;
//! Seatbelt treats it as the fallback for operations without a rule of their own, which
//! agrees for every profile that states `default` first, as jaula's do.

use std::fmt;
use std::path::Path;

use jaula_policy::paths::normalize_lexically;
use jaula_policy::Access;

use crate::ere::{Ere, EreError};
use crate::quote::quote_string;

/// Why profile text could not be read. `line` is 1-based.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// A `"` string with no closing quote before the end of the text.
    #[error("line {line}: string not terminated")]
    UnterminatedString {
        /// Where the string starts.
        line: usize,
    },
    /// A `(` with no matching `)` before the end of the text.
    #[error("line {line}: list not closed")]
    UnterminatedList {
        /// Where the list starts.
        line: usize,
    },
    /// A `)` that closes nothing.
    #[error("line {line}: unexpected ')'")]
    UnexpectedClose {
        /// Where the `)` is.
        line: usize,
    },
    /// A backslash escape in a string other than `\\` and `\"`, the only two jaula writes.
    #[error("line {line}: escape \\{escape} is not one jaula writes")]
    BadEscape {
        /// Where the escape is.
        line: usize,
        /// The character after the backslash.
        escape: char,
    },
    /// A token where the grammar has no place for it: a bare atom at the top level or
    /// inside a rule, or a `#` not followed by `"`.
    #[error("line {line}: unexpected {token}")]
    Unexpected {
        /// Where the token is.
        line: usize,
        /// The token, as written.
        token: String,
    },
    /// The first form is not `(version ...)`.
    #[error("the profile does not start with (version 1)")]
    MissingVersion,
    /// A `(version ...)` form with a version other than 1.
    #[error("line {line}: unsupported version {version}")]
    UnsupportedVersion {
        /// Where the form is.
        line: usize,
        /// The version given, empty when the form has none.
        version: String,
    },
    /// A top-level form other than `allow` or `deny`.
    #[error("line {line}: unknown form {form}")]
    UnknownForm {
        /// Where the form is.
        line: usize,
        /// Its head, as written.
        form: String,
    },
    /// An operation the evaluator does not model (see [`Operation`]).
    #[error("line {line}: unknown operation {operation}")]
    UnknownOperation {
        /// Where the operation is named.
        line: usize,
        /// Its name.
        operation: String,
    },
    /// An `allow` or `deny` form that names no operation.
    #[error("line {line}: a rule needs at least one operation")]
    NoOperation {
        /// Where the rule starts.
        line: usize,
    },
    /// An operation named after a filter, which Seatbelt would read as something else.
    #[error("line {line}: operations must come before filters")]
    OperationAfterFilter {
        /// Where the late operation is.
        line: usize,
    },
    /// A rule on `default` that also has a filter.
    #[error("line {line}: `default` takes no filter")]
    DefaultWithFilter {
        /// Where the rule starts.
        line: usize,
    },
    /// A filter the evaluator does not model (see [`Filter`]).
    #[error("line {line}: unknown filter {filter}")]
    UnknownFilter {
        /// Where the filter is.
        line: usize,
        /// Its head, as written.
        filter: String,
    },
    /// A known filter with the wrong kind or number of arguments.
    #[error("line {line}: ({filter} ...) takes {expected}")]
    BadFilterArgument {
        /// Where the filter is.
        line: usize,
        /// The filter's name.
        filter: &'static str,
        /// What it takes, in words.
        expected: &'static str,
    },
    /// A path filter whose path is relative, which Seatbelt refuses too.
    #[error("line {line}: ({filter} {path:?}) needs an absolute path")]
    RelativePath {
        /// Where the filter is.
        line: usize,
        /// The filter's name.
        filter: &'static str,
        /// The path, unescaped.
        path: String,
    },
    /// A `#"..."` regex outside the subset [`Ere`] accepts.
    #[error("line {line}: regex #\"{regex}\": {source}")]
    Regex {
        /// Where the regex is.
        line: usize,
        /// The regex as written.
        regex: String,
        /// Why it was refused.
        source: EreError,
    },
}

/// What a rule does when it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `(allow ...)`: the request goes through.
    Allow,
    /// `(deny ...)`: the request fails.
    Deny,
}

/// An operation named in a rule: the ones jaula's profiles use, each covering a family of
/// Seatbelt's finer operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `default`: every operation.
    Default,
    /// `file-read*`: reading a file's data or metadata, listing a directory.
    FileRead,
    /// `file-write*`: creating, writing, renaming, unlinking or changing the metadata of a
    /// file.
    FileWrite,
    /// Outgoing connections and datagrams: `connect(2)` to a unix socket or an IP address.
    NetworkOutbound,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Default => "default",
            Operation::FileRead => "file-read*",
            Operation::FileWrite => "file-write*",
            Operation::NetworkOutbound => "network-outbound",
        }
    }

    fn covers(self, probe: &Probe<'_>) -> bool {
        matches!(
            (self, probe),
            (Operation::Default, _)
                | (Operation::FileRead, Probe::File(FileOperation::Read, _))
                | (Operation::FileWrite, Probe::File(FileOperation::Write, _))
                | (Operation::NetworkOutbound, Probe::Unix(_) | Probe::Ip(_))
        )
    }
}

/// What a process attempts on a file, as Seatbelt classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOperation {
    /// Judged by the `file-read*` rules.
    Read,
    /// Judged by the `file-write*` rules; creating an entry is a write on the new path.
    Write,
}

/// One request to judge, as Seatbelt sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// A file operation on a path.
    File(FileOperation, &'a Path),
    /// `connect(2)` to a pathname unix socket (`network-outbound`, remote unix-socket).
    UnixConnect(&'a Path),
    /// `connect(2)` or `sendto(2)` to an IP address (`network-outbound`, remote ip).
    IpConnect(IpEndpoint),
}

impl<'a> Request<'a> {
    /// A policy-level access on `path`. Seatbelt has no separate "create": making an entry
    /// is a `file-write*` operation (`file-write-create`) on the new path; a connect to a
    /// pathname socket is `network-outbound` with the socket as the remote address.
    pub fn from_access(access: Access, path: &'a Path) -> Request<'a> {
        match access {
            Access::Read => Request::File(FileOperation::Read, path),
            Access::Write | Access::Create => Request::File(FileOperation::Write, path),
            Access::Connect => Request::UnixConnect(path),
        }
    }
}

/// The remote end of an IP connection, as far as SBPL can tell endpoints apart: its
/// `(remote ip "HOST:PORT")` filter knows only `*` and `localhost` for a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpEndpoint {
    /// A loopback address (`127.0.0.0/8`, `::1`).
    pub loopback: bool,
    /// The destination port.
    pub port: u16,
}

/// The request with its path normalised and as bytes, as the filters compare it.
enum Probe<'b> {
    File(FileOperation, &'b [u8]),
    Unix(&'b [u8]),
    Ip(IpEndpoint),
}

/// A path filter, with its argument unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// The path and everything beneath it, by component.
    Subpath(String),
    /// Exactly the path.
    Literal(String),
    /// A POSIX ERE over the whole path.
    Regex(Ere),
    /// `(remote unix-socket)`: a connect to a pathname unix socket, any (`None`) or the
    /// ones whose path the inner filter matches.
    RemoteUnixSocket(Option<SocketPath>),
    /// `(remote ip "HOST:PORT")`.
    RemoteIp(IpPattern),
}

/// The path filter inside `(remote unix-socket ...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SocketPath {
    /// `(path-literal "...")`: exactly this socket.
    Literal(String),
    /// `(path-regex #"...")`: a POSIX ERE over the socket's whole path.
    Regex(Ere),
}

/// The argument of `(remote ip "HOST:PORT")`: `*` or `localhost`, and `*` or a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpPattern {
    /// `false`: `*`, any address; `true`: `localhost`, the loopback addresses.
    pub localhost: bool,
    /// `None`: `*`, any port.
    pub port: Option<u16>,
}

impl IpPattern {
    fn parse(text: &str) -> Option<IpPattern> {
        let (host, port) = text.rsplit_once(':')?;
        let localhost = match host {
            "*" => false,
            "localhost" => true,
            _ => return None,
        };
        let port = match port {
            "*" => None,
            p if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
            _ => return None,
        };
        Some(IpPattern { localhost, port })
    }

    fn matches(&self, end: IpEndpoint) -> bool {
        let port = match self.port {
            None => true,
            Some(p) => p == end.port,
        };
        (!self.localhost || end.loopback) && port
    }
}

impl fmt::Display for IpPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.localhost { "localhost" } else { "*" };
        match self.port {
            Some(port) => write!(f, "{host}:{port}"),
            None => write!(f, "{host}:*"),
        }
    }
}

impl Filter {
    fn matches(&self, probe: &Probe<'_>) -> bool {
        match (self, probe) {
            (Filter::Literal(p), Probe::File(_, path)) => *path == p.as_bytes(),
            (Filter::Subpath(root), Probe::File(_, path)) => {
                let root = root.trim_end_matches('/').as_bytes();
                *path == root || (path.starts_with(root) && path.get(root.len()) == Some(&b'/'))
            }
            (Filter::Regex(re), Probe::File(_, path)) => re.is_match(path),
            (Filter::RemoteUnixSocket(None), Probe::Unix(_)) => true,
            (Filter::RemoteUnixSocket(Some(SocketPath::Literal(p))), Probe::Unix(path)) => {
                *path == p.as_bytes()
            }
            (Filter::RemoteUnixSocket(Some(SocketPath::Regex(re))), Probe::Unix(path)) => {
                re.is_match(path)
            }
            (Filter::RemoteIp(pattern), Probe::Ip(end)) => pattern.matches(*end),
            // A path filter says nothing about a network request, nor an address filter
            // about a file.
            _ => false,
        }
    }
}

impl fmt::Display for Filter {
    /// The filter as SBPL, quoted as jaula writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Filter::Subpath(p) => write!(f, "(subpath {})", quote_string(p)),
            Filter::Literal(p) => write!(f, "(literal {})", quote_string(p)),
            Filter::Regex(re) => write!(f, "(regex #\"{}\")", re.as_str()),
            Filter::RemoteUnixSocket(None) => f.write_str("(remote unix-socket)"),
            Filter::RemoteUnixSocket(Some(SocketPath::Literal(p))) => {
                write!(f, "(remote unix-socket (path-literal {}))", quote_string(p))
            }
            Filter::RemoteUnixSocket(Some(SocketPath::Regex(re))) => {
                write!(f, "(remote unix-socket (path-regex #\"{}\"))", re.as_str())
            }
            Filter::RemoteIp(pattern) => write!(f, "(remote ip \"{pattern}\")"),
        }
    }
}

/// One `allow` or `deny` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileRule {
    /// Whether a match allows or denies.
    pub action: Action,
    /// The operations the rule covers, at least one.
    pub operations: Vec<Operation>,
    /// Any one matching is enough; none at all matches every path.
    pub filters: Vec<Filter>,
    /// Where the form starts in the profile text, 1-based.
    pub line: usize,
}

impl ProfileRule {
    fn head(&self) -> String {
        let action = match self.action {
            Action::Allow => "allow",
            Action::Deny => "deny",
        };
        let ops: Vec<&str> = self.operations.iter().map(|o| o.name()).collect();
        format!("{action} {}", ops.join(" "))
    }
}

/// A parsed profile: its rules in order, without the `(version 1)` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    rules: Vec<ProfileRule>,
}

/// Seatbelt's answer for one operation on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict<'p> {
    /// Whether Seatbelt lets the request through.
    pub allowed: bool,
    /// The deciding rule; `None` when no rule matched and Seatbelt's implicit deny applied.
    pub rule: Option<&'p ProfileRule>,
    /// The filter of `rule` that matched; `None` for a rule without filters.
    pub filter: Option<&'p Filter>,
}

impl Verdict<'_> {
    /// One line for people, e.g. `line 40: (deny file-read* file-write* (subpath "/u/.ssh"))`.
    pub fn describe(&self) -> String {
        match (self.rule, self.filter) {
            (None, _) => "no rule matched: denied by Seatbelt's implicit default".to_string(),
            (Some(rule), None) => format!("line {}: ({})", rule.line, rule.head()),
            (Some(rule), Some(filter)) => {
                format!("line {}: ({} {filter})", rule.line, rule.head())
            }
        }
    }
}

impl Profile {
    /// Parse profile text. Anything outside the subset jaula writes is an error, never
    /// skipped: an evaluator that ignored a rule would certify a profile Seatbelt reads
    /// differently.
    pub fn parse(text: &str) -> Result<Profile, ProfileError> {
        let forms = read_all(text)?;
        let mut forms = forms.into_iter();
        match forms.next() {
            Some(Sexp::List(items, line)) if is_symbol(items.first(), "version") => {
                match items.as_slice() {
                    [_, Sexp::Symbol(v, _)] if v == "1" => {}
                    [_, other] => {
                        return Err(ProfileError::UnsupportedVersion {
                            line,
                            version: other.describe(),
                        })
                    }
                    _ => {
                        return Err(ProfileError::UnsupportedVersion {
                            line,
                            version: String::new(),
                        })
                    }
                }
            }
            _ => return Err(ProfileError::MissingVersion),
        }
        let rules = forms.map(rule).collect::<Result<Vec<_>, _>>()?;
        Ok(Profile { rules })
    }

    /// The `allow` and `deny` forms, in profile order (the last match decides).
    pub fn rules(&self) -> &[ProfileRule] {
        &self.rules
    }

    /// What Seatbelt decides for `op` on `path`. The kernel hands Seatbelt resolved
    /// absolute paths; as `Policy::decide` does, a relative path is taken beneath `/` and
    /// `.`/`..` are applied lexically.
    pub fn evaluate(&self, op: FileOperation, path: &Path) -> Verdict<'_> {
        self.evaluate_request(Request::File(op, path))
    }

    /// What Seatbelt decides for one request. Paths (of files and of sockets) are
    /// normalised as in [`Profile::evaluate`].
    pub fn evaluate_request(&self, request: Request<'_>) -> Verdict<'_> {
        let normal = |path: &Path| normalize_lexically(&Path::new("/").join(path));
        let path = match request {
            Request::File(_, path) | Request::UnixConnect(path) => normal(path),
            Request::IpConnect(_) => std::path::PathBuf::new(),
        };
        let bytes = path.as_os_str().as_encoded_bytes();
        let probe = match request {
            Request::File(op, _) => Probe::File(op, bytes),
            Request::UnixConnect(_) => Probe::Unix(bytes),
            Request::IpConnect(end) => Probe::Ip(end),
        };
        for rule in self.rules.iter().rev() {
            if !rule.operations.iter().any(|o| o.covers(&probe)) {
                continue;
            }
            let filter = if rule.filters.is_empty() {
                None
            } else {
                match rule.filters.iter().find(|f| f.matches(&probe)) {
                    Some(f) => Some(f),
                    None => continue,
                }
            };
            return Verdict {
                allowed: rule.action == Action::Allow,
                rule: Some(rule),
                filter,
            };
        }
        Verdict {
            allowed: false,
            rule: None,
            filter: None,
        }
    }

    /// [`Profile::evaluate_request`] for a policy-level access (`Create` and `Write` are
    /// both `file-write*`, `Connect` is `network-outbound` to the socket at `path`).
    pub fn evaluate_access(&self, access: Access, path: &Path) -> Verdict<'_> {
        self.evaluate_request(Request::from_access(access, path))
    }
}

fn is_symbol(sexp: Option<&Sexp>, name: &str) -> bool {
    matches!(sexp, Some(Sexp::Symbol(s, _)) if s == name)
}

fn rule(form: Sexp) -> Result<ProfileRule, ProfileError> {
    let (items, line) = match form {
        Sexp::List(items, line) => (items, line),
        other => {
            return Err(ProfileError::Unexpected {
                line: other.line(),
                token: other.describe(),
            })
        }
    };
    let mut items = items.into_iter();
    let action = match items.next() {
        Some(Sexp::Symbol(s, _)) if s == "allow" => Action::Allow,
        Some(Sexp::Symbol(s, _)) if s == "deny" => Action::Deny,
        Some(other) => {
            return Err(ProfileError::UnknownForm {
                line,
                form: other.describe(),
            })
        }
        None => {
            return Err(ProfileError::UnknownForm {
                line,
                form: "()".to_string(),
            })
        }
    };
    let mut operations = Vec::new();
    let mut filters = Vec::new();
    for item in items {
        match item {
            Sexp::Symbol(name, at) => {
                if !filters.is_empty() {
                    return Err(ProfileError::OperationAfterFilter { line: at });
                }
                operations.push(match name.as_str() {
                    "default" => Operation::Default,
                    "file-read*" => Operation::FileRead,
                    "file-write*" => Operation::FileWrite,
                    "network-outbound" => Operation::NetworkOutbound,
                    _ => {
                        return Err(ProfileError::UnknownOperation {
                            line: at,
                            operation: name,
                        })
                    }
                });
            }
            Sexp::List(parts, at) => filters.push(filter(parts, at)?),
            other => {
                return Err(ProfileError::Unexpected {
                    line: other.line(),
                    token: other.describe(),
                })
            }
        }
    }
    if operations.is_empty() {
        return Err(ProfileError::NoOperation { line });
    }
    if operations.contains(&Operation::Default) && !filters.is_empty() {
        return Err(ProfileError::DefaultWithFilter { line });
    }
    Ok(ProfileRule {
        action,
        operations,
        filters,
        line,
    })
}

fn filter(parts: Vec<Sexp>, line: usize) -> Result<Filter, ProfileError> {
    let mut parts = parts.into_iter();
    let name = match parts.next() {
        Some(Sexp::Symbol(name, _)) => name,
        Some(other) => {
            return Err(ProfileError::UnknownFilter {
                line,
                filter: other.describe(),
            })
        }
        None => {
            return Err(ProfileError::UnknownFilter {
                line,
                filter: "()".to_string(),
            })
        }
    };
    if name == "remote" {
        return remote_filter(parts.collect(), line);
    }
    let arg = parts.next();
    let extra = parts.next();
    let (filter, expected): (&'static str, &'static str) = match name.as_str() {
        "subpath" => ("subpath", "one string"),
        "literal" => ("literal", "one string"),
        "regex" => ("regex", "one #\"...\" regex literal"),
        _ => return Err(ProfileError::UnknownFilter { line, filter: name }),
    };
    let bad = ProfileError::BadFilterArgument {
        line,
        filter,
        expected,
    };
    if extra.is_some() {
        return Err(bad);
    }
    match (filter, arg) {
        ("regex", Some(Sexp::Regex(source, at))) => match Ere::new(&source) {
            Ok(re) => Ok(Filter::Regex(re)),
            Err(e) => Err(ProfileError::Regex {
                line: at,
                regex: source,
                source: e,
            }),
        },
        ("subpath" | "literal", Some(Sexp::Str(path, at))) => {
            // Seatbelt refuses relative paths in path filters; so does this reader.
            if !path.starts_with('/') {
                return Err(ProfileError::RelativePath {
                    line: at,
                    filter,
                    path,
                });
            }
            Ok(if filter == "subpath" {
                Filter::Subpath(path)
            } else {
                Filter::Literal(path)
            })
        }
        _ => Err(bad),
    }
}

/// `(remote unix-socket)`, `(remote unix-socket (path-literal "/p"))`,
/// `(remote unix-socket (path-regex #"^/p/"))` or `(remote ip "HOST:PORT")`, given the
/// parts after `remote`.
fn remote_filter(parts: Vec<Sexp>, line: usize) -> Result<Filter, ProfileError> {
    let bad = |filter, expected| ProfileError::BadFilterArgument {
        line,
        filter,
        expected,
    };
    const UNIX: &str = "nothing, (path-literal \"...\") or (path-regex #\"...\")";
    match parts.as_slice() {
        [Sexp::Symbol(kind, _)] if kind == "unix-socket" => Ok(Filter::RemoteUnixSocket(None)),
        [Sexp::Symbol(kind, _), Sexp::List(inner, _)] if kind == "unix-socket" => {
            match inner.as_slice() {
                [Sexp::Symbol(f, _), Sexp::Str(path, at)] if f == "path-literal" => {
                    if !path.starts_with('/') {
                        return Err(ProfileError::RelativePath {
                            line: *at,
                            filter: "path-literal",
                            path: path.clone(),
                        });
                    }
                    Ok(Filter::RemoteUnixSocket(Some(SocketPath::Literal(
                        path.clone(),
                    ))))
                }
                [Sexp::Symbol(f, _), Sexp::Regex(source, at)] if f == "path-regex" => {
                    match Ere::new(source) {
                        Ok(re) => Ok(Filter::RemoteUnixSocket(Some(SocketPath::Regex(re)))),
                        Err(e) => Err(ProfileError::Regex {
                            line: *at,
                            regex: source.clone(),
                            source: e,
                        }),
                    }
                }
                _ => Err(bad("remote unix-socket", UNIX)),
            }
        }
        [Sexp::Symbol(kind, _), Sexp::Str(address, _)] if kind == "ip" => {
            IpPattern::parse(address).map(Filter::RemoteIp).ok_or(bad(
                "remote ip",
                "one \"HOST:PORT\" string, HOST `*` or `localhost`, PORT `*` or a number",
            ))
        }
        [Sexp::Symbol(kind, _), ..] if kind == "unix-socket" => {
            Err(bad("remote unix-socket", UNIX))
        }
        [Sexp::Symbol(kind, _), ..] if kind == "ip" => Err(bad(
            "remote ip",
            "one \"HOST:PORT\" string, HOST `*` or `localhost`, PORT `*` or a number",
        )),
        _ => Err(ProfileError::UnknownFilter {
            line,
            filter: "remote (other than unix-socket or ip)".to_string(),
        }),
    }
}

/// A read S-expression, with the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Sexp {
    List(Vec<Sexp>, usize),
    Symbol(String, usize),
    /// A `"..."` string, unescaped.
    Str(String, usize),
    /// The raw content of a `#"..."` regex literal, backslashes intact.
    Regex(String, usize),
}

impl Sexp {
    fn line(&self) -> usize {
        match self {
            Sexp::List(_, l) | Sexp::Symbol(_, l) | Sexp::Str(_, l) | Sexp::Regex(_, l) => *l,
        }
    }

    fn describe(&self) -> String {
        match self {
            Sexp::List(..) => "a list".to_string(),
            Sexp::Symbol(s, _) => s.clone(),
            Sexp::Str(s, _) => quote_string(s),
            Sexp::Regex(s, _) => format!("#\"{s}\""),
        }
    }
}

struct Reader<'t> {
    chars: std::iter::Peekable<std::str::Chars<'t>>,
    line: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// Skip whitespace and `;` comments; return the next significant character unread.
    fn skip(&mut self) -> Option<char> {
        loop {
            match *self.chars.peek()? {
                c if c.is_whitespace() => {
                    self.next();
                }
                ';' => {
                    while let Some(c) = self.next() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                c => return Some(c),
            }
        }
    }

    /// Read one datum, or `None` at a `)` (consumed) or the end of the text.
    fn datum(&mut self) -> Result<Option<Sexp>, ProfileError> {
        let Some(c) = self.skip() else {
            return Ok(None);
        };
        let line = self.line;
        match c {
            '(' => {
                self.next();
                let mut items = Vec::new();
                loop {
                    match self.skip() {
                        None => return Err(ProfileError::UnterminatedList { line }),
                        Some(')') => {
                            self.next();
                            return Ok(Some(Sexp::List(items, line)));
                        }
                        Some(_) => {
                            if let Some(item) = self.datum()? {
                                items.push(item);
                            }
                        }
                    }
                }
            }
            ')' => Err(ProfileError::UnexpectedClose { line }),
            '"' => {
                self.next();
                Ok(Some(Sexp::Str(self.string(line)?, line)))
            }
            '#' => {
                self.next();
                if self.chars.peek() != Some(&'"') {
                    return Err(ProfileError::Unexpected {
                        line,
                        token: "#".to_string(),
                    });
                }
                self.next();
                Ok(Some(Sexp::Regex(self.regex(line)?, line)))
            }
            _ => {
                let mut symbol = String::new();
                while let Some(&c) = self.chars.peek() {
                    if c.is_whitespace() || matches!(c, '(' | ')' | '"' | ';') {
                        break;
                    }
                    symbol.push(c);
                    self.next();
                }
                Ok(Some(Sexp::Symbol(symbol, line)))
            }
        }
    }

    /// The rest of a `"..."` string after its opening quote: `\\` and `\"` unescaped, any
    /// other character (newline included) taken as it is.
    fn string(&mut self, line: usize) -> Result<String, ProfileError> {
        let mut out = String::new();
        loop {
            match self.next() {
                None => return Err(ProfileError::UnterminatedString { line }),
                Some('"') => return Ok(out),
                Some('\\') => match self.next() {
                    Some(c @ ('\\' | '"')) => out.push(c),
                    Some(escape) => {
                        return Err(ProfileError::BadEscape {
                            line: self.line,
                            escape,
                        })
                    }
                    None => return Err(ProfileError::UnterminatedString { line }),
                },
                Some(c) => out.push(c),
            }
        }
    }

    /// The rest of a `#"..."` literal: raw, a backslash keeping the next character (so
    /// `\"` does not end it) and both reaching the regex engine.
    fn regex(&mut self, line: usize) -> Result<String, ProfileError> {
        let mut out = String::new();
        loop {
            match self.next() {
                None => return Err(ProfileError::UnterminatedString { line }),
                Some('"') => return Ok(out),
                Some('\\') => {
                    out.push('\\');
                    match self.next() {
                        Some(c) => out.push(c),
                        None => return Err(ProfileError::UnterminatedString { line }),
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }
}

fn read_all(text: &str) -> Result<Vec<Sexp>, ProfileError> {
    let mut reader = Reader {
        chars: text.chars().peekable(),
        line: 1,
    };
    let mut forms = Vec::new();
    while let Some(form) = reader.datum()? {
        forms.push(form);
    }
    Ok(forms)
}

#[cfg(test)]
#[path = "eval_tests.rs"]
mod tests;
