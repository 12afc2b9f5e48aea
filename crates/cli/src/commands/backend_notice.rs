//! The one stderr line `jaula run` prints when `auto` cages with Landlock alone: the
//! bubblewrap view carries layers Landlock cannot (a private `/tmp`, a PID namespace,
//! sealed entries' names hidden), so losing them is said, never left to `check` or `-v`.

use jaula_sandbox::bwrap::{Availability, Unavailable};

/// What Landlock alone lacks that the bubblewrap view gives, in the line's words.
pub const MISSING_LAYERS: &str =
    "no private /tmp, no PID namespace, and the names of sealed entries stay visible";

/// The line for a launch that wanted the view and got Landlock alone because bubblewrap is
/// `bwrap`. None when the owner declared bubblewrap not working (`CITY_CAGE_BWRAP=0`,
/// config `bwrap = false`): that is a choice, as `--backend landlock` is.
pub fn landlock_alone(bwrap: &Availability) -> Option<String> {
    let why = match bwrap {
        Availability::Available { .. } => return None,
        Availability::Unavailable(Unavailable::Declared) => return None,
        Availability::Unavailable(why) => why,
    };
    Some(format!(
        "jaula: caging with Landlock alone ({MISSING_LAYERS}): {why}; to get them: {}, or \
         pass --backend landlock to choose Landlock alone and silence this line",
        why.remedy()
    ))
}

#[cfg(test)]
#[path = "backend_notice_tests.rs"]
mod tests;
