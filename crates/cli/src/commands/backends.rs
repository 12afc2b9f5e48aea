//! What each backend would do with one path, for `explain`: each computed from the
//! backend's own artifact (the parsed profile, the rendered argv, the Landlock plan), not
//! from `decide`, so a disagreement shows.

use std::path::Path;

use jaula_policy::{Access, Platform, Policy, Sources};
use jaula_sandbox::absent_roots::AfterCreation;
use jaula_sandbox::{bwrap, landlock, seatbelt};

use crate::commands::explain::ExplainArgs;
use crate::context;
use crate::error::CliError;

#[derive(Debug, serde::Serialize)]
pub struct BackendView {
    pub backend: &'static str,
    pub allowed: bool,
    pub summary: String,
}

pub fn views(
    args: &ExplainArgs,
    _sources: &Sources,
    path: &Path,
    access: Access,
) -> Result<Vec<BackendView>, CliError> {
    if access == Access::Connect {
        return connect_views(args, path);
    }
    let mut out = Vec::new();
    let mac = policy_for(args, Platform::MacOs)?;
    let profile = seatbelt::render_profile(&mac)?;
    let parsed = jaula_sbpl::eval::Profile::parse(&profile)
        .map_err(|e| CliError::Launch(format!("the rendered profile does not parse: {e}")))?;
    let verdict = parsed.evaluate_access(access, path);
    out.push(BackendView {
        backend: "seatbelt",
        allowed: verdict.allowed,
        summary: format!(
            "{} by {}",
            if verdict.allowed { "allowed" } else { "denied" },
            verdict.describe()
        ),
    });
    let linux = policy_for(args, Platform::Linux)?;
    // The disk as `jaula run` leaves it before caging: absent cache roots created.
    let disk = AfterCreation::new(&linux, jaula_policy::RealHostFs);
    let effect = bwrap::view_effect(&linux, &bwrap::BwrapOptions::default(), &disk, path, access)?;
    out.push(BackendView {
        backend: "bwrap",
        allowed: effect.reaches_host,
        summary: format!(
            "{} ({}){}",
            if effect.reaches_host {
                "reaches the host"
            } else {
                "does not reach the host"
            },
            effect.op,
            run_private_note(&linux, path)
        ),
    });
    let fs = AfterCreation::new(&linux, jaula_policy::RealHostFs);
    let plan = landlock::plan(&linux, landlock::PlanMode::Native, &fs)
        .map_err(|e| CliError::Launch(e.to_string()))?;
    let (mut allowed, mut why) = landlock::effect(&plan, path, access);
    // A protected path Landlock leaves writable is the named deviation; what closes it is
    // the gate's supervisor, which refuses the write itself: say both.
    if allowed {
        if let jaula_policy::Rule::Protected { .. } = linux.decide(path, access).rule {
            allowed = false;
            why.push_str(
                "; deviation protected-not-split, closed by the gate: its supervisor \
                 refuses this write (EACCES)",
            );
        }
    }
    out.push(BackendView {
        backend: "landlock",
        allowed,
        summary: format!("{} ({why})", if allowed { "allowed" } else { "denied" }),
    });
    Ok(out)
}

/// The argv modelled above is the bare view (`jaula render bwrap`); `jaula run` replaces
/// the host's `/tmp`, `/var/tmp` and `/run/user` with the window's own wherever the policy
/// makes them writable, so an access beneath them lands there, not on the host.
fn run_private_note(policy: &Policy, path: &Path) -> &'static str {
    let writable = |root: &str| policy.writable().iter().any(|w| w.path == Path::new(root));
    let beneath = |root: &str| path.starts_with(root) && path != Path::new(root);
    if (beneath("/tmp") && writable("/tmp")) || (beneath("/var/tmp") && writable("/var/tmp")) {
        "; under `jaula run` the window's own directory (<state home>/.runtime/tmp/WINDOW) \
         stands there instead, so the access lands in it, not on the host"
    } else if beneath("/run/user") && writable("/run/user") {
        "; under `jaula run` the cage's own empty /run/user/UID stands there instead, so the \
         access lands in it, not on the host"
    } else {
        ""
    }
}

/// A connect is not a file access: on Linux the socket gate decides it in both backends,
/// from the same `decide` (plus the cage's own bound sockets, which only exist at run time).
fn connect_views(args: &ExplainArgs, path: &Path) -> Result<Vec<BackendView>, CliError> {
    let linux = policy_for(args, Platform::Linux)?;
    let decision = linux.decide(path, Access::Connect);
    let seatbelt_view = seatbelt_connect_view(args, path)?;
    let gate = if decision.allowed {
        "the socket gate connects it (allowed socket)".to_owned()
    } else {
        "the socket gate refuses it with EACCES unless a process of this cage bound it".to_owned()
    };
    let effect = bwrap::view_effect(
        &linux,
        &bwrap::BwrapOptions::default(),
        &jaula_policy::RealHostFs,
        path,
        Access::Connect,
    )?;
    Ok(vec![
        seatbelt_view,
        BackendView {
            backend: "bwrap",
            allowed: decision.allowed,
            summary: format!(
                "{gate}; the view {} ({}){}",
                if effect.reaches_host {
                    "shows the host's file"
                } else {
                    "does not show the host's file"
                },
                effect.op,
                run_private_note(&linux, path)
            ),
        },
        BackendView {
            backend: "landlock",
            allowed: decision.allowed,
            summary: format!("{gate}; Landlock below ABI 9 has no connect right"),
        },
    ])
}

/// The Seatbelt profile's own answer for a connect (host network mode), from the parsed
/// profile, with the deviation that makes it differ from `decide` when there is one.
fn seatbelt_connect_view(args: &ExplainArgs, path: &Path) -> Result<BackendView, CliError> {
    let mac = policy_for(args, Platform::MacOs)?;
    let options = seatbelt::ProfileOptions::default();
    let profile = seatbelt::render_profile_with(&mac, &options)?;
    let parsed = jaula_sbpl::eval::Profile::parse(&profile)
        .map_err(|e| CliError::Launch(format!("the rendered profile does not parse: {e}")))?;
    let verdict = parsed.evaluate_access(Access::Connect, path);
    let mut summary = format!(
        "{} by {}",
        if verdict.allowed { "allowed" } else { "denied" },
        verdict.describe()
    );
    match seatbelt::deviation(&mac, &options, path, Access::Connect) {
        Some(d) => summary.push_str(&format!("; deviation {}: {}", d.name, d.why)),
        // A socket this cage bound is admitted by the gate on Linux, never by the profile.
        None if !verdict.allowed => {
            summary.push_str("; even a socket this cage bound (deviation cage-socket-refused)")
        }
        None => {}
    }
    Ok(BackendView {
        backend: "seatbelt",
        allowed: verdict.allowed,
        summary,
    })
}

fn policy_for(args: &ExplainArgs, platform: Platform) -> Result<Policy, CliError> {
    let sources = context::sources(&args.policy, Some(platform))?;
    Ok(sources.spec.resolve()?)
}
