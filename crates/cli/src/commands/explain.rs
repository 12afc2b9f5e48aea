//! `jaula explain`: why a path is allowed or denied, and what each backend does with it.
//! Each backend's answer is computed from its own artifact (the parsed profile, the
//! rendered argv, the Landlock plan), not from `decide`, so a disagreement shows.

use std::path::{Path, PathBuf};

use clap::Args;
use jaula_policy::paths::canonicalize_lenient;
use jaula_policy::{Access, Platform, Policy, RealHostFs};
use jaula_sandbox::absent_roots::AfterCreation;
use jaula_sandbox::backends;

use crate::args::{PlatformArg, PolicyArgs};
use crate::error::CliError;
use crate::{context, Outcome, Report};

/// Explain the decision on PATH: allowed or denied, the rule that decided, and what each
/// backend would do with it.
#[derive(Args, Debug, Clone)]
pub struct ExplainArgs {
    /// The path to explain (resolved through symlinks, as the kernel would).
    pub path: PathBuf,
    /// Explain a write to the path instead of a read.
    #[arg(long, conflicts_with = "create")]
    pub write: bool,
    /// Explain creating the path instead of reading it.
    #[arg(long, conflicts_with = "connect")]
    pub create: bool,
    /// Explain connect(2) to a unix socket at the path instead of reading it.
    #[arg(long, conflicts_with = "write")]
    pub connect: bool,
    /// Decide for this kernel's cage (default: this host's).
    #[arg(long, value_enum)]
    pub platform: Option<PlatformArg>,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ExplainArgs) -> Outcome {
    // Like `jaula run`: the repo is the current directory unless `--repo` says otherwise.
    let mut args = args.clone();
    let defaulted = args.policy.repo.is_none();
    if defaulted {
        args.policy.repo = Some(std::env::current_dir().map_err(CliError::Cwd)?);
    }
    let args = &args;
    let access = asked_access(args);
    let platform = args
        .platform
        .map(Platform::from)
        .unwrap_or_else(Platform::host);
    let sources = context::sources(&args.policy, Some(platform))?;
    let policy = context::resolve(&sources, &args.policy).map_err(|e| {
        e.for_defaulted_repo(
            defaulted,
            "explain",
            "pass --repo DIR, the directory jaula run would cage",
        )
    })?;
    let cwd = std::env::current_dir().map_err(CliError::Cwd)?;
    let path = canonicalize_lenient(&args.path, &cwd);
    let decision = policy.decide(&path, access);
    let rule = decision.rule.describe(policy.home());
    let backends = backend_views(args, &path, access)?;
    let bound_by = if access == Access::Connect {
        peer_binder(&policy, &path)
    } else {
        None
    };
    // A decision that rests on a root `jaula run` has yet to create: say so, or "allowed"
    // would read as a promise about the disk as it is now.
    let created = policy
        .roots_to_create()
        .find(|a| jaula_policy::paths::is_within(&path, &a.path) && !a.path.exists())
        .map(|a| a.path.clone());
    if args.json {
        return Report::json(
            &serde_json::json!({
                "path": context::json_path(&path)?,
                "access": access,
                "platform": platform,
                "allowed": decision.allowed,
                "rule": rule,
                "rule_detail": decision.rule,
                "backends": backends,
                "created_at_launch": created.as_deref().map(context::json_path).transpose()?,
                "bound_by": bound_by,
            }),
            0,
        );
    }
    let text = as_text(&Answer {
        path: &path,
        access,
        platform,
        allowed: decision.allowed,
        rule: &rule,
        backends: &backends,
        bound_by: bound_by.as_ref(),
        created: created.as_deref(),
    });
    Ok(Report::printed(text, 0))
}

/// The access asked about: `--write`, `--create`, `--connect`, else a read.
fn asked_access(args: &ExplainArgs) -> Access {
    if args.write {
        Access::Write
    } else if args.create {
        Access::Create
    } else if args.connect {
        Access::Connect
    } else {
        Access::Read
    }
}

/// What `explain` found, for the text answer.
struct Answer<'a> {
    path: &'a Path,
    access: Access,
    platform: Platform,
    allowed: bool,
    rule: &'a str,
    backends: &'a [BackendView],
    bound_by: Option<&'a serde_json::Value>,
    created: Option<&'a Path>,
}

/// The answer for people: the decision and its rule, what bound a socket, a root still to
/// be created, each backend's own answer, and a note where one parts from the decision.
fn as_text(answer: &Answer) -> String {
    let Answer {
        path,
        access,
        platform,
        allowed,
        rule,
        backends,
        bound_by,
        created,
    } = *answer;
    let mut lines = vec![
        format!("path:     {}", path.display()),
        format!("access:   {access} ({platform} cage)"),
        format!("decision: {}", if allowed { "allowed" } else { "denied" }),
        format!("rule:     {rule}"),
    ];
    if let Some(binder) = bound_by {
        lines.push(format!(
            "socket:   bound by {}: connectable from this owner's cages while that socket \
             lives",
            binder["cage"].as_str().unwrap_or_default()
        ));
    }
    if let Some(root) = created {
        lines.push(format!(
            "note:     {} does not exist yet; jaula run creates it (0700) before caging \
             (config cage.create_cache_roots)",
            root.display()
        ));
    }
    // The backends answer from their own artifacts: where one parts from the decision,
    // say so, or "allowed" above and "denied" below read as a contradiction.
    let differ: Vec<&str> = backends
        .iter()
        .filter(|v| v.allowed != allowed)
        .map(|v| v.backend)
        .collect();
    for view in backends {
        lines.push(format!(
            "{:<9} {}",
            format!("{}:", view.backend),
            view.summary
        ));
    }
    if !differ.is_empty() {
        lines.push(format!(
            "note:     {} {} the decision: each backend judges its own artifact, and its \
             line above gives the rule or deviation that makes it {}",
            differ.join(" and "),
            if differ.len() == 1 {
                "differs from"
            } else {
                "differ from"
            },
            if allowed { "stricter" } else { "looser" }
        ));
    }
    lines.join("\n") + "\n"
}

/// The live cage of this owner that bound the socket at `path` (see `call_gate::peers`),
/// as JSON: its window, repo, supervisor pid and a description. A path another cage bound
/// is reachable from this owner's cages whatever the path's own rule says.
#[cfg(target_os = "linux")]
fn peer_binder(policy: &Policy, path: &Path) -> Option<serde_json::Value> {
    let binder = jaula_sandbox::call_gate::cage_that_bound(policy.state_home(), path).ok()??;
    let opening = binder.opening.as_ref();
    Some(serde_json::json!({
        "cage": binder.describe(),
        "window": opening.and_then(|o| o.window.clone()),
        "repo": opening.map(|o| o.repo.clone()),
        "supervisor_pid": binder.supervisor.map(|p| p.pid),
        "record": binder.record,
    }))
}

#[cfg(not(target_os = "linux"))]
fn peer_binder(_policy: &Policy, _path: &Path) -> Option<serde_json::Value> {
    None
}

/// One backend's answer, as printed and as JSON.
#[derive(Debug, serde::Serialize)]
struct BackendView {
    backend: &'static str,
    allowed: bool,
    summary: String,
}

/// Every backend's own answer for `access` to `path`, each against the policy resolved for
/// its platform and the disk as `jaula run` leaves it before caging (absent cache roots
/// created).
fn backend_views(
    args: &ExplainArgs,
    path: &Path,
    access: Access,
) -> Result<Vec<BackendView>, CliError> {
    let mut views = Vec::new();
    for backend in backends::all() {
        let policy = policy_for(args, backend.platform())?;
        let fs = AfterCreation::new(&policy, RealHostFs);
        let verdict = backend.render_and_judge(&policy, &fs, path, access)?;
        views.push(BackendView {
            backend: backend.name(),
            allowed: verdict.allowed,
            summary: verdict.summary,
        });
    }
    Ok(views)
}

fn policy_for(args: &ExplainArgs, platform: Platform) -> Result<Policy, CliError> {
    let sources = context::sources(&args.policy, Some(platform))?;
    Ok(sources.spec.resolve()?)
}
