//! `jaula contract …`: the per-tenant commands, for runners to script. Every command
//! that prints data takes `--json`. The three global options fall back to
//! `JAULA_CONTRACT_ROOT`, `JAULA_CONTRACT_STATE`, `JAULA_CONTRACT_UIDS`, then the config
//! file's `[contract]` section, then the built-in defaults.
//!
//! This module holds no isolation logic: it parses, calls `jaula_contract`, and prints.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use jaula_contract::{
    check_git_dir, ContractError, ContractFlags, ContractId, ContractIsolation, RuntimeKind,
    WorkRecordId,
};
use jaula_policy::config::ContractSection;
use serde_json::json;

use crate::args::JsonFlag;
use crate::commands::contract_render::{self, KubeRenderArgs};
use crate::commands::contract_run::{self, RunArgs};
use crate::error::CliError;
use crate::ids;
use crate::Report;

/// Isolate tenants on a shared runner: one uid, one 0700 tree and one cage per Contract,
/// resource limits, hand-over and wipe (see docs/contracts.md).
///
/// The global options fall back to JAULA_CONTRACT_ROOT, JAULA_CONTRACT_STATE and
/// JAULA_CONTRACT_UIDS, then the config file's [contract] section, then the defaults.
#[derive(Debug, Args)]
pub struct ContractArgs {
    /// Workspace root holding one tree per Contract [env: JAULA_CONTRACT_ROOT].
    #[arg(long, value_name = "DIR", global = true)]
    pub root: Option<PathBuf>,
    /// The runner's state directory: uid map, lock, evidence log [env: JAULA_CONTRACT_STATE].
    #[arg(long, value_name = "DIR", global = true)]
    pub state_dir: Option<PathBuf>,
    /// uids handed to Contracts, inclusive [env: JAULA_CONTRACT_UIDS].
    #[arg(long, value_name = "MIN-MAX", global = true, value_parser = ids::uid_range)]
    pub uid_range: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: ContractCommand,
}

impl ContractArgs {
    /// `contract run`: its refusals exit 126 like `jaula run`'s.
    pub fn runs_a_command(&self) -> bool {
        matches!(self.command, ContractCommand::Run(_))
    }
}

/// The `contract` subcommands.
#[derive(Debug, Subcommand)]
pub enum ContractCommand {
    /// Show the Contract's uid, allocating one on first sight.
    Uid {
        /// The contract id ("" for the no-contract sentinel).
        #[arg(value_parser = ids::contract_id)]
        contract: ContractId,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Create the workspace for a work record and print its path.
    Prepare {
        /// The contract id.
        #[arg(value_parser = ids::contract_id)]
        contract: ContractId,
        /// The work record id.
        #[arg(value_parser = ids::work_record_id)]
        work_record: WorkRecordId,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Prepare the harness root and tmp, and print dirs, uid, limits and environment.
    Sandbox {
        /// The contract id.
        #[arg(value_parser = ids::contract_id)]
        contract: ContractId,
        /// The harness runtime (codex, claude, ...).
        #[arg(long, value_name = "KIND", value_parser = ids::runtime_kind)]
        runtime: RuntimeKind,
        /// RLIMIT_DATA in bytes, instead of the configured default.
        #[arg(long, value_name = "BYTES")]
        memory: Option<u64>,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Re-own a checkout to the Contract, everything but .git.
    Handover {
        /// The contract id.
        #[arg(value_parser = ids::contract_id)]
        contract: ContractId,
        /// The checkout, inside the Contract's tree.
        path: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Fail unless PATH/.git is a real directory owned by this process's uid.
    CheckGit {
        /// The workspace.
        path: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Run CMD as the Contract's uid inside its cage.
    Run(RunArgs),
    /// Print the Contract's cage for another enforcer: `render kubernetes` (see
    /// docs/kubernetes.md).
    Render(Box<KubeRenderArgs>),
    /// Delete the Contract's tree and retire its uid (only when the tree is gone).
    Wipe {
        /// The contract id.
        #[arg(value_parser = ids::contract_id)]
        contract: ContractId,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// List (contract, work record) pairs held on this runner.
    Held {
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Delete one workspace.
    RemoveWorkspace {
        /// The contract id.
        #[arg(value_parser = ids::contract_id)]
        contract: ContractId,
        /// The work record id.
        #[arg(value_parser = ids::work_record_id)]
        work_record: WorkRecordId,
        #[command(flatten)]
        out: JsonFlag,
    },
}

/// Run with the config file's `[contract]` section and the process environment; what the
/// command prints is in the report, for `main` to write.
pub fn run_with_config(args: &ContractArgs, config: &ContractSection) -> Result<Report, CliError> {
    let mut out = Vec::new();
    let code = run_to(args, config, &|k| std::env::var(k).ok(), &mut out)?;
    Ok(Report::printed(out, code))
}

/// The isolation these arguments describe.
pub fn isolation_for(
    args: &ContractArgs,
    config: &ContractSection,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ContractIsolation, ContractError> {
    let flags = ContractFlags {
        root: args.root.clone(),
        state_dir: args.state_dir.clone(),
        uid_range: args.uid_range.clone(),
    };
    ContractIsolation::new(flags.resolve(env, config)?)
}

fn print_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string(value).map_err(std::io::Error::other)?;
    writeln!(out, "{text}")?;
    Ok(())
}

fn uid_text(uid: Option<u32>) -> String {
    uid.map_or_else(|| "none".to_string(), |u| u.to_string())
}

/// The testable core: `env` is the environment lookup, `out` receives stdout. Returns
/// the exit code: 0, or 1 when `check-git` refuses or a wipe/removal is partial.
pub fn run_to(
    args: &ContractArgs,
    config: &ContractSection,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    // check-git needs no configuration: it judges a path against this process's uid.
    if let ContractCommand::CheckGit { path, out: o } = &args.command {
        return check_git(path, o.json, out);
    }
    let isolation = isolation_for(args, config, env)?;
    match &args.command {
        ContractCommand::Uid {
            contract: c,
            out: o,
        } => uid(&isolation, c, o.json, out),
        ContractCommand::Prepare {
            contract: c,
            work_record: w,
            out: o,
        } => prepare(&isolation, c, w, o.json, out),
        ContractCommand::Sandbox {
            contract: c,
            runtime: k,
            memory,
            out: o,
        } => sandbox(&isolation, c, k, *memory, o.json, out),
        ContractCommand::Handover {
            contract: c,
            path,
            out: o,
        } => handover(&isolation, c, path, o.json, out),
        ContractCommand::Wipe {
            contract: c,
            out: o,
        } => wipe(&isolation, c, o.json, out),
        ContractCommand::Held { out: o } => held(&isolation, o.json, out),
        ContractCommand::RemoveWorkspace {
            contract: c,
            work_record: w,
            out: o,
        } => remove_workspace(&isolation, c, w, o.json, out),
        ContractCommand::Run(r) => contract_run::run(&isolation, r, out),
        ContractCommand::Render(r) => contract_render::run(&isolation, r, out),
        ContractCommand::CheckGit { .. } => unreachable_check_git().map(|()| 0),
    }
}

/// `contract check-git PATH`: whether a `.git` directory is safe for this uid to use.
fn check_git(path: &Path, json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    let runner = jaula_contract::runner_uid();
    let result = check_git_dir(path, runner);
    if json {
        let reason = result.as_ref().err().map(|e| e.to_string());
        print_json(
            out,
            &json!({ "path": path, "ok": result.is_ok(), "reason": reason }),
        )?;
    } else if let Err(e) = &result {
        eprintln!("jaula: {e}");
    }
    Ok(if result.is_ok() { 0 } else { 1 })
}

/// `contract uid C`: the Contract's uid, allocated on first use.
fn uid(
    isolation: &ContractIsolation,
    c: &ContractId,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let had = isolation.has_uid(c)?;
    let uid = isolation.uid_for(c)?;
    if json {
        print_json(
            out,
            &json!({
                "contract": c,
                "uid": uid,
                "allocated": uid.is_some() && !had,
                "can_separate_uids": isolation.can_separate_uids(),
                "reason": isolation.separation().reason,
            }),
        )?;
    } else {
        writeln!(out, "{}", uid_text(uid))?;
    }
    Ok(0)
}

/// `contract prepare C W`: the layout `contract run` will need, reachable by the
/// Contract's uid (or a refusal naming the directory and the fix), and the workspace.
fn prepare(
    isolation: &ContractIsolation,
    c: &ContractId,
    w: &WorkRecordId,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    contract_run::report_layout(&isolation.ensure_layout(c)?);
    let path = isolation.prepare_workspace(c, w)?;
    if json {
        let uid = isolation.current_uid(c)?;
        print_json(
            out,
            &json!({ "contract": c, "work_record": w, "path": path, "uid": uid }),
        )?;
    } else {
        writeln!(out, "{}", path.display())?;
    }
    Ok(0)
}

/// `contract sandbox C`: the tree, limits and environment a spawn would get.
fn sandbox(
    isolation: &ContractIsolation,
    c: &ContractId,
    k: &RuntimeKind,
    memory: Option<u64>,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let sb = isolation.sandbox(c, k, memory)?;
    let limits = sb.floor.limits_in_force(isolation.runner_uid());
    if json {
        print_json(
            out,
            &json!({ "sandbox": sb, "limits_in_force": limits, "separation": isolation.separation() }),
        )?;
        return Ok(0);
    }
    writeln!(out, "uid={}", uid_text(sb.floor.uid))?;
    writeln!(out, "gid={}", uid_text(sb.floor.gid))?;
    writeln!(out, "home={}", sb.home_dir.display())?;
    writeln!(out, "harness={}", sb.harness_config_dir.display())?;
    writeln!(out, "tmp={}", sb.tmp_dir.display())?;
    for l in &limits {
        let state = if l.enforced { "" } else { " (not enforced)" };
        writeln!(out, "{}={}{state}", l.name, l.value)?;
    }
    for (k, v) in &sb.env {
        writeln!(out, "env {k}={}", v.display())?;
    }
    Ok(0)
}

/// `contract handover C PATH`: the checkout handed to the Contract's uid, `.git` kept.
fn handover(
    isolation: &ContractIsolation,
    c: &ContractId,
    path: &Path,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    // Lexical only: resolving symlinks here would follow whatever the Contract
    // planted; the library opens each component with O_NOFOLLOW instead.
    let path = std::path::absolute(path)?;
    let report = isolation.hand_over(c, &path)?;
    if json {
        print_json(out, &report)?;
    } else {
        writeln!(
            out,
            "handed {} entries to uid {} ({} symlinks, {} hard links, {} other-filesystem entries skipped; {} .git entries tightened)",
            report.counts.reowned,
            uid_text(report.uid),
            report.counts.symlinks_skipped,
            report.counts.hardlinks_skipped,
            report.counts.other_filesystem_skipped,
            report.counts.git_entries_tightened
        )?;
    }
    Ok(0)
}

/// `contract wipe C`: everything of the Contract's removed, or an honest partial report
/// (exit 1).
fn wipe(
    isolation: &ContractIsolation,
    c: &ContractId,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let report = isolation.wipe(c)?;
    if json {
        print_json(out, &report)?;
    } else if report.complete {
        writeln!(
            out,
            "wiped {}: {} workspaces, {} harness roots, uid {}",
            report.contract,
            report.workspaces_removed,
            report.harness_roots_removed,
            if report.uid_retired {
                "retired"
            } else {
                "not held"
            }
        )?;
    } else {
        writeln!(
            out,
            "partial wipe of {}: uid kept, nothing counted as removed",
            report.contract
        )?;
        for f in &report.failures {
            writeln!(out, "  {}: {}", f.path.display(), f.error)?;
        }
    }
    Ok(if report.complete { 0 } else { 1 })
}

/// `contract held`: each Contract with a workspace, and its work record.
fn held(isolation: &ContractIsolation, json: bool, out: &mut dyn Write) -> Result<i32, CliError> {
    let held = isolation.held()?;
    if json {
        print_json(out, &json!({ "held": held }))?;
    } else {
        for h in held {
            writeln!(out, "{}\t{}", h.contract, h.work_record)?;
        }
    }
    Ok(0)
}

/// `contract remove-workspace C W`: one workspace removed, or a partial report (exit 1).
fn remove_workspace(
    isolation: &ContractIsolation,
    c: &ContractId,
    w: &WorkRecordId,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let r = isolation.remove_workspace(c, w)?;
    if json {
        print_json(out, &r)?;
    } else if !r.existed {
        writeln!(out, "no workspace {} for {}", r.work_record, r.contract)?;
    } else if r.removed {
        writeln!(out, "removed workspace {} of {}", r.work_record, r.contract)?;
    } else {
        writeln!(
            out,
            "partial removal of workspace {} of {}",
            r.work_record, r.contract
        )?;
        for f in &r.failures {
            writeln!(out, "  {}: {}", f.path.display(), f.error)?;
        }
    }
    Ok(if r.existed && !r.removed { 1 } else { 0 })
}

// Handled before the configuration is resolved; kept as an error rather than a panic.
fn unreachable_check_git() -> Result<(), CliError> {
    Err(CliError::Output(std::io::Error::other(
        "check-git dispatched twice",
    )))
}
