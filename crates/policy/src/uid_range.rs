//! The uid range handed to Contracts (`[contract] uid_range`, `--uid-range`): pure data,
//! checked where it is read so a range that would hand out a system or reserved uid is
//! refused before anything is created. The persisted `contract -> uid` map that draws from
//! it is jaula-contract's.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// uids below this are the distribution's system and first human users.
pub const DEFAULT_SYSTEM_UID_FLOOR: u32 = 1000;
/// The kernel's overflow uid ("nobody"): files it owns are not a tenant's.
const OVERFLOW_UID: u32 = 65534;
/// `(uid_t)-1` means "leave unchanged" to chown(2) and setresuid(2); `-2` is the
/// historical nfsnobody. Neither may be a tenant.
pub const RESERVED_TOP: u32 = u32::MAX - 1;

/// An inclusive range of uids handed to Contracts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
// Read from its `MIN-MAX` text; written as `{"min": .., "max": ..}`, as reports always had it.
#[serde(try_from = "String")]
pub struct UidRange {
    min: u32,
    max: u32,
}

/// A uid range that is malformed, empty, or overlaps uids that must never be handed out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("contract uid range {value:?} is invalid: {reason}")]
pub struct UidRangeError {
    /// The range as given.
    pub value: String,
    /// Why it was refused.
    pub reason: String,
}

impl UidRange {
    /// `min..=max`, refusing an empty range and any range that reaches below
    /// [`DEFAULT_SYSTEM_UID_FLOOR`].
    pub fn new(min: u32, max: u32) -> Result<UidRange, UidRangeError> {
        UidRange::with_floor(min, max, DEFAULT_SYSTEM_UID_FLOOR)
    }

    /// As [`UidRange::new`] with an explicit floor for hosts whose system uids end
    /// elsewhere.
    pub fn with_floor(min: u32, max: u32, floor: u32) -> Result<UidRange, UidRangeError> {
        let refuse = |reason: String| UidRangeError {
            value: format!("{min}-{max}"),
            reason,
        };
        if max < min {
            return Err(refuse("the range is empty (MAX < MIN)".into()));
        }
        if min == 0 || min < floor {
            return Err(refuse(format!(
                "it overlaps system uids (below {floor}); a Contract holding one would own their files"
            )));
        }
        if (min..=max).contains(&OVERFLOW_UID) {
            return Err(refuse(format!(
                "it contains the overflow uid {OVERFLOW_UID} (nobody)"
            )));
        }
        if max >= RESERVED_TOP {
            return Err(refuse("it reaches (uid_t)-2 / (uid_t)-1".into()));
        }
        Ok(UidRange { min, max })
    }

    /// Parse `MIN-MAX`.
    pub fn parse(text: &str) -> Result<UidRange, UidRangeError> {
        let refuse = |reason: &str| UidRangeError {
            value: text.to_string(),
            reason: reason.to_string(),
        };
        let (lo, hi) = text
            .trim()
            .split_once('-')
            .ok_or_else(|| refuse("expected MIN-MAX"))?;
        let lo: u32 = lo.trim().parse().map_err(|_| refuse("MIN is not a uid"))?;
        let hi: u32 = hi.trim().parse().map_err(|_| refuse("MAX is not a uid"))?;
        UidRange::new(lo, hi)
    }

    /// First uid.
    pub fn min(&self) -> u32 {
        self.min
    }

    /// Last uid.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Whether `uid` lies in the range.
    pub fn contains(&self, uid: u32) -> bool {
        (self.min..=self.max).contains(&uid)
    }
}

impl fmt::Display for UidRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.min, self.max)
    }
}

impl FromStr for UidRange {
    type Err = UidRangeError;
    fn from_str(text: &str) -> Result<UidRange, UidRangeError> {
        UidRange::parse(text)
    }
}

impl TryFrom<String> for UidRange {
    type Error = UidRangeError;
    fn try_from(text: String) -> Result<UidRange, UidRangeError> {
        UidRange::parse(&text)
    }
}

#[cfg(test)]
#[path = "uid_range_tests.rs"]
mod tests;
