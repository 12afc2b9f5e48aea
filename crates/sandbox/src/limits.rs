//! Resource ceilings, set soft and hard to the same value: lowering a limit needs no
//! privilege, and a hard limit the caged command cannot raise again is the point.

use rustix::process::{setrlimit, Resource, Rlimit};

/// Set each `(resource, name, value)` whose value is given; stops at the first failure and
/// names its limit.
pub(crate) fn set_all(
    limits: &[(Resource, &'static str, Option<u64>)],
) -> Result<Vec<(&'static str, u64)>, (&'static str, std::io::Error)> {
    let mut set = Vec::new();
    for &(resource, name, value) in limits {
        if let Some(v) = value {
            setrlimit(
                resource,
                Rlimit {
                    current: Some(v),
                    maximum: Some(v),
                },
            )
            .map_err(|e| (name, e.into()))?;
            set.push((name, v));
        }
    }
    Ok(set)
}
