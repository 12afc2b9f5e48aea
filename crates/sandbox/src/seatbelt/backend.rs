//! The Seatbelt profile as a [`Backend`]: its answer for a path is the rendered profile's
//! own, parsed back and evaluated with Seatbelt's last-match-wins rule by `jaula_sbpl`.

use std::path::Path;

use jaula_policy::{Access, HostFs, Platform, Policy};
use jaula_sbpl::eval::Profile;

use super::{deviation, render_profile_with, ProfileOptions, DEVIATIONS};
use crate::backend::{Backend, BackendError, Deviation, Verdict};

impl From<crate::seatbelt::SeatbeltError> for BackendError {
    fn from(e: crate::seatbelt::SeatbeltError) -> BackendError {
        BackendError::from_backend(e)
    }
}

/// The renderer wrote text its own evaluator cannot read: a renderer bug, refused rather
/// than answered with a guess.
#[derive(Debug, thiserror::Error)]
#[error("the rendered profile does not parse: {0}")]
struct UnreadableProfile(jaula_sbpl::eval::ProfileError);

impl From<jaula_sbpl::eval::ProfileError> for BackendError {
    fn from(e: jaula_sbpl::eval::ProfileError) -> BackendError {
        BackendError::from_backend(UnreadableProfile(e))
    }
}

/// The macOS profile, rendered with these options.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeatbeltBackend {
    /// The network mode the profile is rendered for.
    pub(crate) options: ProfileOptions,
}

impl Backend for SeatbeltBackend {
    /// The profile's text, as `sandbox-exec -p` receives it.
    type Artifact = String;

    fn name(&self) -> &'static str {
        "seatbelt"
    }

    fn platform(&self) -> Platform {
        Platform::MacOs
    }

    fn deviations(&self) -> &'static [Deviation] {
        DEVIATIONS
    }

    /// Pure: the profile names paths and patterns, so it asks the disk nothing.
    fn render(&self, policy: &Policy, _fs: &dyn HostFs) -> Result<String, BackendError> {
        Ok(render_profile_with(policy, &self.options)?)
    }

    fn verdict(
        &self,
        policy: &Policy,
        profile: &String,
        _fs: &dyn HostFs,
        path: &Path,
        access: Access,
    ) -> Result<Verdict, BackendError> {
        let parsed = Profile::parse(profile)?;
        let verdict = parsed.evaluate_access(access, path);
        let mut summary = format!(
            "{} by {}",
            if verdict.allowed { "allowed" } else { "denied" },
            verdict.describe()
        );
        if access == Access::Connect {
            match deviation(policy, &self.options, path, access) {
                Some(d) => summary.push_str(&format!("; deviation {}: {}", d.name, d.why)),
                // A socket this cage bound is admitted by the gate on Linux, never by the
                // profile.
                None if !verdict.allowed => summary
                    .push_str("; even a socket this cage bound (deviation cage-socket-refused)"),
                None => {}
            }
        }
        Ok(Verdict {
            allowed: verdict.allowed,
            summary,
        })
    }
}
