//! An evaluator of SBPL profiles, for checking on Linux what Seatbelt would decide on macOS.
//!
//! [`Profile::parse`] reads profile text (the subset jaula emits: `version`, comments,
//! `allow`/`deny` rules over the operations `default`, `file-read*` and `file-write*`, with
//! `subpath`, `literal` and `regex` filters), unescaping strings as the Scheme reader does.
//! It is a parser of the text, not a re-computation from a policy: whatever the renderer
//! gets wrong in quoting shows up as a disagreement with `decide`.
//!
//! [`Profile::evaluate`] applies Seatbelt's rule: of the rules whose operation covers the
//! access and whose filter (any of them) matches the path, the last one in the profile
//! decides; `(allow default)` matches everything. When no rule matches, Seatbelt denies.
//! `default` is modelled as one more rule matching every operation, in profile order;
//! Seatbelt treats it as the fallback for operations without a rule of their own, which
//! agrees for every profile that states `default` first, as jaula's do.

use std::fmt;
use std::path::Path;

use jaula_policy::paths::normalize_lexically;
use jaula_policy::Access;

use super::ere::{Ere, EreError};
use super::quote_string;

/// Why profile text could not be read. `line` is 1-based.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("line {line}: string not terminated")]
    UnterminatedString { line: usize },
    #[error("line {line}: list not closed")]
    UnterminatedList { line: usize },
    #[error("line {line}: unexpected ')'")]
    UnexpectedClose { line: usize },
    #[error("line {line}: escape \\{escape} is not one jaula writes")]
    BadEscape { line: usize, escape: char },
    #[error("line {line}: unexpected {token}")]
    Unexpected { line: usize, token: String },
    #[error("the profile does not start with (version 1)")]
    MissingVersion,
    #[error("line {line}: unsupported version {version}")]
    UnsupportedVersion { line: usize, version: String },
    #[error("line {line}: unknown form {form}")]
    UnknownForm { line: usize, form: String },
    #[error("line {line}: unknown operation {operation}")]
    UnknownOperation { line: usize, operation: String },
    #[error("line {line}: a rule needs at least one operation")]
    NoOperation { line: usize },
    #[error("line {line}: operations must come before filters")]
    OperationAfterFilter { line: usize },
    #[error("line {line}: `default` takes no filter")]
    DefaultWithFilter { line: usize },
    #[error("line {line}: unknown filter {filter}")]
    UnknownFilter { line: usize, filter: String },
    #[error("line {line}: ({filter} ...) takes {expected}")]
    BadFilterArgument {
        line: usize,
        filter: &'static str,
        expected: &'static str,
    },
    #[error("line {line}: ({filter} {path:?}) needs an absolute path")]
    RelativePath {
        line: usize,
        filter: &'static str,
        path: String,
    },
    #[error("line {line}: regex #\"{regex}\": {source}")]
    Regex {
        line: usize,
        regex: String,
        source: EreError,
    },
}

/// What a rule does when it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Allow,
    Deny,
}

/// An operation named in a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Default,
    FileRead,
    FileWrite,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Default => "default",
            Operation::FileRead => "file-read*",
            Operation::FileWrite => "file-write*",
        }
    }

    fn covers(self, op: FileOperation) -> bool {
        matches!(
            (self, op),
            (Operation::Default, _)
                | (Operation::FileRead, FileOperation::Read)
                | (Operation::FileWrite, FileOperation::Write)
        )
    }
}

/// What a process attempts, as Seatbelt classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOperation {
    Read,
    Write,
}

impl From<Access> for FileOperation {
    /// Seatbelt has no separate "create": making an entry is a `file-write*` operation
    /// (`file-write-create`) on the new path.
    fn from(access: Access) -> FileOperation {
        match access {
            Access::Read => FileOperation::Read,
            Access::Write | Access::Create => FileOperation::Write,
            // Not a file operation: Seatbelt decides a unix-socket connect with its
            // `network-outbound` rules, which this evaluator does not model yet. Writing
            // is the nearest file right (a socket that cannot be written to is never
            // reached), and nothing asks the evaluator about Connect today.
            Access::Connect => FileOperation::Write,
        }
    }
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
}

impl Filter {
    fn matches(&self, path: &[u8]) -> bool {
        match self {
            Filter::Literal(p) => path == p.as_bytes(),
            Filter::Subpath(root) => {
                let root = root.trim_end_matches('/').as_bytes();
                path == root || (path.starts_with(root) && path.get(root.len()) == Some(&b'/'))
            }
            Filter::Regex(re) => re.is_match(path),
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
        }
    }
}

/// One `allow` or `deny` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileRule {
    pub action: Action,
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

/// A parsed profile: its rules in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    rules: Vec<ProfileRule>,
}

/// Seatbelt's answer for one operation on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict<'p> {
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
    /// Parse profile text.
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

    pub fn rules(&self) -> &[ProfileRule] {
        &self.rules
    }

    /// What Seatbelt decides for `op` on `path`. The kernel hands Seatbelt resolved
    /// absolute paths; as `Policy::decide` does, a relative path is taken beneath `/` and
    /// `.`/`..` are applied lexically.
    pub fn evaluate(&self, op: FileOperation, path: &Path) -> Verdict<'_> {
        let path = normalize_lexically(&Path::new("/").join(path));
        let bytes = path.as_os_str().as_encoded_bytes();
        for rule in self.rules.iter().rev() {
            if !rule.operations.iter().any(|o| o.covers(op)) {
                continue;
            }
            let filter = if rule.filters.is_empty() {
                None
            } else {
                match rule.filters.iter().find(|f| f.matches(bytes)) {
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

    /// [`Profile::evaluate`] for a policy-level access (`Create` and `Write` are both
    /// `file-write*`).
    pub fn evaluate_access(&self, access: Access, path: &Path) -> Verdict<'_> {
        self.evaluate(FileOperation::from(access), path)
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
