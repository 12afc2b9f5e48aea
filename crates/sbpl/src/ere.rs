//! The subset of POSIX extended regular expressions that jaula's profiles use, matched with
//! POSIX semantics over the bytes of a path.
//!
//! Supported: a leading `^`, a trailing `$`, literal characters, `\` followed by any
//! non-alphanumeric character (that character, literally), `.`, bracket expressions with
//! `^` negation and ASCII ranges, and the `*`, `+`, `?` quantifiers. Anything else (groups,
//! alternation, intervals, character classes, a `^`/`$` in the middle) is refused with an
//! error rather than guessed at: an evaluator that silently misreads a rule would certify a
//! profile that Seatbelt enforces differently.
//!
//! As POSIX without `REG_NEWLINE`: `$` matches only at the end of the path, and `.` and a
//! negated bracket match a newline. Matching is per character: a UTF-8 sequence is one
//! character, any byte that does not start a valid sequence is one character on its own
//! (paths need not be UTF-8). It runs in time linear in the path for a fixed pattern.

/// The characters with a meaning in a POSIX ERE, outside a bracket expression.
pub(crate) fn is_metachar(c: char) -> bool {
    matches!(
        c,
        '.' | '[' | ']' | '(' | ')' | '*' | '+' | '?' | '{' | '}' | '|' | '^' | '$' | '\\'
    )
}

/// Why a pattern is outside the supported subset. `offset` is a byte offset in the pattern.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EreError {
    /// A construct outside the subset: a group, an alternation, an interval, a stacked
    /// quantifier, or a `^`/`$` that is not at the pattern's edge.
    #[error("{construct:?} at offset {offset} is not supported")]
    Unsupported {
        /// The character that starts the construct.
        construct: char,
        /// Where it is.
        offset: usize,
    },
    /// The pattern ends in a `\` that escapes nothing.
    #[error("the pattern ends in a lone backslash")]
    TrailingBackslash,
    /// A `\` before a letter or digit: engines disagree on what `\d` or `\w` mean,
    /// so no meaning is assumed.
    #[error("\\{escaped} at offset {offset} has an engine-specific meaning")]
    EscapedAlphanumeric {
        /// The letter or digit after the backslash.
        escaped: char,
        /// Where the backslash is.
        offset: usize,
    },
    /// A `[` with no closing `]`.
    #[error("the bracket expression at offset {offset} is not closed")]
    UnterminatedBracket {
        /// Where the `[` is.
        offset: usize,
    },
    /// A bracket expression holding what the subset lacks: a character class, collating
    /// element or equivalence class, a reversed range, or a non-ASCII character.
    #[error("the bracket expression at offset {offset} uses {what}, which is not supported")]
    UnsupportedBracket {
        /// Where the `[` is.
        offset: usize,
        /// The unsupported part, in words.
        what: &'static str,
    },
    /// A quantifier with no atom before it (at the start, or right after the `^`).
    #[error("{quantifier:?} at offset {offset} has nothing to repeat")]
    NothingToRepeat {
        /// The quantifier (`*`, `+` or `?`).
        quantifier: char,
        /// Where it is.
        offset: usize,
    },
}

/// A compiled pattern: [`Ere::new`] refuses anything outside the subset, so a pattern that
/// compiled means the same here as in Seatbelt's engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ere {
    source: String,
    anchored_start: bool,
    anchored_end: bool,
    items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Item {
    atom: Atom,
    repeat: Repeat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repeat {
    Once,
    Optional,
    Star,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Atom {
    /// One character, as its UTF-8 bytes.
    Literal(Vec<u8>),
    /// A bracket expression (or `.`): `ascii[b]` says whether ASCII byte `b` is in the set;
    /// a non-ASCII character is in it exactly when the set is negated.
    Class {
        ascii: Box<[bool; 128]>,
        negated: bool,
    },
}

impl Ere {
    /// Compile `source`, the text of a `#"..."` literal with its backslashes intact.
    pub fn new(source: &str) -> Result<Ere, EreError> {
        let chars: Vec<(usize, char)> = source.char_indices().collect();
        let mut items: Vec<Item> = Vec::new();
        let mut anchored_start = false;
        let mut anchored_end = false;
        let mut i = 0;
        while i < chars.len() {
            let (offset, c) = chars[i];
            i += 1;
            let atom = match c {
                '^' if offset == 0 => {
                    anchored_start = true;
                    continue;
                }
                '$' if i == chars.len() => {
                    anchored_end = true;
                    continue;
                }
                '*' | '+' | '?' => {
                    let Some(last) = items.last_mut() else {
                        return Err(EreError::NothingToRepeat {
                            quantifier: c,
                            offset,
                        });
                    };
                    if last.repeat != Repeat::Once {
                        return Err(EreError::Unsupported {
                            construct: c,
                            offset,
                        });
                    }
                    match c {
                        '*' => last.repeat = Repeat::Star,
                        '?' => last.repeat = Repeat::Optional,
                        _ => {
                            // x+ is x followed by x*.
                            let again = Item {
                                atom: last.atom.clone(),
                                repeat: Repeat::Star,
                            };
                            items.push(again);
                        }
                    }
                    continue;
                }
                '\\' => {
                    let Some(&(_, escaped)) = chars.get(i) else {
                        return Err(EreError::TrailingBackslash);
                    };
                    i += 1;
                    if escaped.is_ascii_alphanumeric() {
                        return Err(EreError::EscapedAlphanumeric { escaped, offset });
                    }
                    literal(escaped)
                }
                '.' => Atom::Class {
                    ascii: Box::new([false; 128]),
                    negated: true,
                },
                '[' => {
                    let (atom, next) = bracket(&chars, i, offset)?;
                    i = next;
                    atom
                }
                '^' | '$' | '(' | ')' | '|' | '{' | '}' | ']' => {
                    return Err(EreError::Unsupported {
                        construct: c,
                        offset,
                    })
                }
                _ => literal(c),
            };
            items.push(Item {
                atom,
                repeat: Repeat::Once,
            });
        }
        Ok(Ere {
            source: source.to_string(),
            anchored_start,
            anchored_end,
            items,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches somewhere in `text` (everywhere it is anchored).
    pub fn is_match(&self, text: &[u8]) -> bool {
        let n = text.len();
        let width = self.items.len() + 1;
        // A state is (item about to be matched, position in text); each is explored at
        // most once, so the work is bounded by items x positions and, for the anchored
        // patterns jaula writes, is close to the length of the pattern.
        let mut seen = vec![false; (n + 1) * width];
        let mut stack: Vec<(usize, usize)> = if self.anchored_start {
            vec![(0, 0)]
        } else {
            (0..=n).rev().map(|start| (0, start)).collect()
        };
        while let Some((i, pos)) = stack.pop() {
            let slot = pos * width + i;
            if seen[slot] {
                continue;
            }
            seen[slot] = true;
            let Some(item) = self.items.get(i) else {
                if !self.anchored_end || pos == n {
                    return true;
                }
                continue;
            };
            if item.repeat != Repeat::Once {
                stack.push((i + 1, pos));
            }
            if let Some(len) = item.atom.match_at(text, pos) {
                let next = if item.repeat == Repeat::Star {
                    i
                } else {
                    i + 1
                };
                stack.push((next, pos + len));
            }
        }
        false
    }
}

fn literal(c: char) -> Atom {
    let mut buf = [0u8; 4];
    Atom::Literal(c.encode_utf8(&mut buf).as_bytes().to_vec())
}

/// Parse a bracket expression whose `[` was at `open`; `i` indexes the character after it.
/// Returns the atom and the index after the closing `]`.
fn bracket(chars: &[(usize, char)], mut i: usize, open: usize) -> Result<(Atom, usize), EreError> {
    let mut ascii = Box::new([false; 128]);
    let mut negated = false;
    if let Some(&(_, '^')) = chars.get(i) {
        negated = true;
        i += 1;
    }
    let first = i;
    loop {
        let Some(&(_, c)) = chars.get(i) else {
            return Err(EreError::UnterminatedBracket { offset: open });
        };
        // A `]` first in the list is a member, not the end (POSIX).
        if c == ']' && i > first {
            return Ok((Atom::Class { ascii, negated }, i + 1));
        }
        if c == '[' {
            if let Some(&(_, ':' | '.' | '=')) = chars.get(i + 1) {
                return Err(EreError::UnsupportedBracket {
                    offset: open,
                    what: "a character class, collating element or equivalence class",
                });
            }
        }
        let lo = ascii_member(c, open)?;
        // `a-z` is a range unless the `-` is the last character before `]`.
        match (chars.get(i + 1), chars.get(i + 2)) {
            (Some(&(_, '-')), Some(&(_, hi))) if hi != ']' => {
                let hi = ascii_member(hi, open)?;
                if hi < lo {
                    return Err(EreError::UnsupportedBracket {
                        offset: open,
                        what: "a reversed range",
                    });
                }
                for b in lo..=hi {
                    ascii[usize::from(b)] = true;
                }
                i += 3;
            }
            _ => {
                ascii[usize::from(lo)] = true;
                i += 1;
            }
        }
    }
}

fn ascii_member(c: char, open: usize) -> Result<u8, EreError> {
    u8::try_from(c)
        .ok()
        .filter(u8::is_ascii)
        .ok_or(EreError::UnsupportedBracket {
            offset: open,
            what: "a non-ASCII character",
        })
}

impl Atom {
    /// The length of the character this atom matches at `pos`, if it matches.
    fn match_at(&self, text: &[u8], pos: usize) -> Option<usize> {
        let rest = text.get(pos..)?;
        match self {
            Atom::Literal(bytes) => rest.starts_with(bytes).then_some(bytes.len()),
            Atom::Class { ascii, negated } => {
                let len = char_len(rest)?;
                let member = match rest[0] {
                    b if b.is_ascii() => ascii[usize::from(b)],
                    _ => false,
                };
                (member != *negated).then_some(len)
            }
        }
    }
}

/// The length of the character at the start of `rest`: a whole valid UTF-8 sequence, or a
/// single byte when the bytes there are not one.
fn char_len(rest: &[u8]) -> Option<usize> {
    let lead = *rest.first()?;
    let want = match lead {
        0x00..=0x7f => return Some(1),
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Some(1),
    };
    match rest.get(..want).map(std::str::from_utf8) {
        Some(Ok(_)) => Some(want),
        _ => Some(1),
    }
}

#[cfg(test)]
#[path = "ere_tests.rs"]
mod tests;
