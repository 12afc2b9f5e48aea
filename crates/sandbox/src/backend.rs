//! The one shape every backend has, and the list of them.
//!
//! A backend turns a [`Policy`] into an artifact its kernel enforces (a Seatbelt profile,
//! a bubblewrap argv, a Landlock plan), reading the host only through [`HostFs`]; answers
//! for one path and one access what *that artifact* does, computed from the artifact and
//! never from `decide`, so a disagreement shows; and lists, as data, every way it is known
//! to differ from `decide`. `jaula explain`, the conformance suites and the generated
//! deviation tables of `docs/security.md` loop over [`crate::backends::all`] instead of
//! naming each one (the list is a module of its own: each backend imports this one).
//!
//! Which backend a Linux launch actually gets is `start::choose`'s answer.

use std::path::Path;

use jaula_policy::{Access, HostFs, Platform, Policy};

/// A named, documented difference between a backend and `Policy::decide`. The same shape
/// for every backend, so one judge (the conformance matrix) and one table generator read
/// them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Deviation {
    /// A stable kebab-case name: the conformance matrix's probes and the documentation
    /// tables cite a deviation by it.
    pub name: &'static str,
    /// Whether the backend allows more than `decide` (`true`) or less (`false`).
    pub looser: bool,
    /// What differs and why the backend cannot do otherwise, in one sentence for people.
    pub(crate) why: &'static str,
}

impl Deviation {
    /// "looser" or "stricter", as the documentation tables say it.
    pub(crate) fn direction(&self) -> &'static str {
        if self.looser {
            "looser"
        } else {
            "stricter"
        }
    }
}

/// A backend's own answer for one access to one path.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    /// Whether the access reaches the host's file (or socket).
    pub allowed: bool,
    /// Which part of the artifact decided, and any deviation that applies, in one line.
    pub summary: String,
}

/// Why a backend could not render its artifact or answer for a path: the backend's own
/// error, kept whole (a policy with no Seatbelt spelling, a renderer bug its own
/// evaluator caught, a bubblewrap view that cannot be modelled, a Landlock plan that
/// cannot be made). Each backend converts its errors into this one, so this module names
/// none of them.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct BackendError(Box<dyn std::error::Error + Send + Sync + 'static>);

impl BackendError {
    /// `source`, as a backend's error.
    pub(crate) fn from_backend(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        BackendError(Box::new(source))
    }
}

/// One backend: render, answer, list deviations.
pub(crate) trait Backend {
    /// What it renders: profile text, an argv, a Landlock plan.
    type Artifact;

    /// The name `jaula explain`, `jaula render` and the documentation use.
    fn name(&self) -> &'static str;
    /// The kernel whose policy it renders (a policy is resolved per platform).
    fn platform(&self) -> Platform;
    /// Every known difference from `decide`.
    fn deviations(&self) -> &'static [Deviation];
    /// The artifact for `policy`, asking `fs` about the host.
    fn render(&self, policy: &Policy, fs: &dyn HostFs) -> Result<Self::Artifact, BackendError>;
    /// What `artifact` does with `access` to `path` (canonical), asking `fs` about the host.
    fn verdict(
        &self,
        policy: &Policy,
        artifact: &Self::Artifact,
        fs: &dyn HostFs,
        path: &Path,
        access: Access,
    ) -> Result<Verdict, BackendError>;
}

/// One backend as the rest of the workspace sees it: its artifact type (profile text, an
/// argv, a Landlock plan) hidden, so a caller can loop over all of them.
pub trait AnyBackend {
    /// The name `jaula explain`, `jaula render` and the documentation use.
    fn name(&self) -> &'static str;
    /// The kernel whose policy it renders (a policy is resolved per platform).
    fn platform(&self) -> Platform;
    /// Every known difference from `decide`.
    fn deviations(&self) -> &'static [Deviation];
    /// Render the artifact for `policy`, then answer what it does with `access` to `path`
    /// (canonical), asking `fs` about the host.
    fn render_and_judge(
        &self,
        policy: &Policy,
        fs: &dyn HostFs,
        path: &Path,
        access: Access,
    ) -> Result<Verdict, BackendError>;
}

impl<B: Backend> AnyBackend for B {
    fn name(&self) -> &'static str {
        Backend::name(self)
    }
    fn platform(&self) -> Platform {
        Backend::platform(self)
    }
    fn deviations(&self) -> &'static [Deviation] {
        Backend::deviations(self)
    }
    fn render_and_judge(
        &self,
        policy: &Policy,
        fs: &dyn HostFs,
        path: &Path,
        access: Access,
    ) -> Result<Verdict, BackendError> {
        let artifact = self.render(policy, fs)?;
        self.verdict(policy, &artifact, fs, path, access)
    }
}

/// What the socket gate does with a connect `decide` answered: the words every Linux
/// backend's verdict uses (the gate is the same under each).
pub(crate) fn gate_says(allowed: bool) -> &'static str {
    if allowed {
        "the socket gate connects it (allowed socket)"
    } else {
        "the socket gate refuses it with EACCES unless a process of this cage, or of \
         another live cage of this owner, bound it"
    }
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
