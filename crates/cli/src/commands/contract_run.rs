//! `jaula contract run`: prepare a Contract's tree, hand its workspace over, and run CMD as
//! the Contract's uid inside a tenant cage, recording the run as evidence.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;

use clap::Args;
use jaula_contract::{
    CgroupStatus, ContractCgroup, ContractId, ContractIsolation, LimitInForce, RunRecord,
    RuntimeKind, SpawnSetup, WorkRecordId,
};
use jaula_policy::paths::is_within;
use jaula_policy::run_argv::RunArgv;
use jaula_policy::Platform;
use jaula_sandbox::cage::linux::{spawn_tenant, TenantPlacement};
use jaula_sandbox::identity::Identity;

use crate::args::JsonFlag;
use crate::commands::cage_request::{self, Disabled};
use crate::error::CliError;
use crate::ids;

/// `jaula contract run CONTRACT --runtime KIND [--work-record ID] -- CMD...`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The contract id.
    #[arg(value_parser = ids::contract_id)]
    pub contract: ContractId,
    /// The harness runtime (codex, claude, ...).
    #[arg(long, value_name = "KIND", value_parser = ids::runtime_kind)]
    pub runtime: RuntimeKind,
    /// Run in this work record's workspace (created and handed over first).
    #[arg(long, value_name = "ID", value_parser = ids::work_record_id)]
    pub work_record: WorkRecordId,
    /// RLIMIT_DATA in bytes, instead of the configured default.
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<u64>,
    /// RLIMIT_NPROC, instead of the configured default.
    #[arg(long, value_name = "N")]
    pub max_procs: Option<u64>,
    #[command(flatten)]
    pub out: JsonFlag,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

/// The layers a tenant cage applies: `jaula run --backend landlock` needs no user
/// namespace and no external binary, so the answer does not depend on the host.
const LAYERS: &[&str] = &["uid", "rlimits", "landlock", "seccomp", "hardening"];

/// Run, and record the run in the evidence log whatever happens: a run refused before
/// its command started leaves a `run` line with the reason (`refused`), so the log shows
/// every attempt, not only the ones that got as far as a process.
pub fn run(
    isolation: &ContractIsolation,
    args: &RunArgs,
    out: &mut dyn Write,
) -> Result<i32, CliError> {
    let contract = &args.contract;
    let mut recorded = false;
    let result = spawn(isolation, contract, args, out, &mut recorded);
    if let (Err(e), false) = (&result, recorded) {
        let record = RunRecord {
            contract: contract.clone(),
            argv: args.cmd.clone(),
            uid: None,
            limits: Vec::new(),
            layers: Vec::new(),
            exit_code: None,
            signal: None,
            refused: Some(e.to_string()),
        };
        if let Err(log) = isolation.record_run(record) {
            eprintln!("jaula: the refused run could not be recorded either: {log}");
        }
    }
    result
}

fn spawn(
    isolation: &ContractIsolation,
    contract: &ContractId,
    args: &RunArgs,
    out: &mut dyn Write,
    recorded: &mut bool,
) -> Result<i32, CliError> {
    let contract = contract.clone();
    let runtime = &args.runtime;
    let work_record = &args.work_record;
    // The layout first, checked before and after it is created: can the tenant's uid enter
    // its workspace? Otherwise its command meets a bare EACCES on the way.
    let me = std::env::current_exe().map_err(CliError::OwnBinary)?;
    report_layout(&isolation.ensure_layout(&contract)?);
    let mut sandbox = isolation.sandbox(&contract, runtime, args.memory)?;
    if let Some(n) = args.max_procs {
        sandbox.floor.limits.max_processes = n;
    }
    let workspace = isolation.prepare_workspace(&contract, work_record)?;
    isolation.hand_over(&contract, &workspace)?;

    let run = tenant_run_argv(isolation, &sandbox, &workspace);
    let (cgroup_status, cgroup) = contract_cgroup(&contract, &sandbox)?;
    // The runner plans the tenant's cage (resolved once, from the same command line
    // `jaula run` would be given) and a stage it starts applies it: the limits, the
    // cgroup through a descriptor the runner opened, then the tenant's uid and gid, then
    // the cage. This process keeps its own uid, so it can record the run afterwards.
    let argv = run.argv(&me, args.cmd.iter().map(OsString::from));
    let run_args = crate::commands::run::parse_run_argv(&argv)?;
    let vars = tenant_env(&sandbox.env);
    let request = match cage_request::ask(&run_args, Platform::Linux, vars, workspace.clone())? {
        Ok(asked) => asked.request,
        Err(Disabled) => {
            return Err(CliError::TenantCageDisabled {
                reason: crate::commands::availability::DISABLED,
            })
        }
    };
    let inherited = match &cgroup {
        Some(cg) => Some(rustix::io::dup(cg.procs_fd()).map_err(|e| CliError::CgroupFd(e.into()))?),
        None => None,
    };
    let placement = TenantPlacement {
        cgroup_fd: inherited.as_ref().map(std::os::fd::AsRawFd::as_raw_fd),
        identity: match (sandbox.floor.uid, sandbox.floor.gid) {
            (Some(uid), Some(gid)) => Some(Identity { uid, gid }),
            _ => None,
        },
    };
    let status = spawn_tenant(request, placement)?;
    drop(inherited);
    let mut limits: Vec<LimitInForce> = sandbox.floor.limits_in_force(isolation.runner_uid());
    if let Some(cg) = cgroup {
        limits.extend(cg.limits_in_force());
        // Every process of the spawn has exited when `status` returns, unless one escaped
        // to the background; then the kernel keeps the cgroup (EBUSY) and says so here.
        if let Err(e) = cg.remove() {
            eprintln!("jaula: {e}");
        }
    }
    let record = RunRecord {
        contract: contract.clone(),
        argv: args.cmd.clone(),
        uid: sandbox.floor.uid,
        limits: limits.clone(),
        layers: LAYERS.iter().map(|s| s.to_string()).collect(),
        exit_code: status.code(),
        signal: status.signal(),
        refused: None,
    };
    isolation.record_run(record)?;
    *recorded = true;
    let report = serde_json::json!({
        "contract": contract.as_str(),
        "work_record": work_record.as_str(),
        "workspace": workspace,
        "uid": sandbox.floor.uid,
        "limits": limits,
        "cgroup": cgroup_status,
        "layers": LAYERS,
        "exit_code": status.code(),
        "signal": status.signal(),
    });
    if args.out.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&report).map_err(std::io::Error::other)?
        )?;
    } else {
        say_ran(&contract, sandbox.floor.uid, &limits, status);
    }
    Ok(status.code().unwrap_or(128 + status.signal().unwrap_or(0)))
}

/// The `jaula run` command line of a tenant's cage: Landlock, the tenant's writable set
/// (its workspace, harness config and TMPDIR), its home and limits, and the runner's own
/// home sealed.
fn tenant_run_argv(
    isolation: &ContractIsolation,
    sandbox: &SpawnSetup,
    workspace: &std::path::Path,
) -> RunArgv {
    let limits = jaula_policy::limits::ResourceLimits::from(sandbox.floor.limits);
    let mut run = RunArgv {
        backend: Some("landlock"),
        tenant: true,
        repo: Some(workspace.to_path_buf()),
        home: Some(sandbox.home_dir.clone()),
        allow_write: vec![sandbox.harness_config_dir.clone(), sandbox.tmp_dir.clone()],
        max_processes: limits.max_processes,
        max_data_bytes: limits.max_data_bytes,
        ..RunArgv::default()
    };
    // The runner's own home holds the credentials only the runner may touch: sealed, unless
    // the workspace root lives inside it (then the uid and the 0700 trees are the line).
    if let Some(runner_home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let runner_home = std::path::PathBuf::from(runner_home);
        if runner_home.is_absolute()
            && !is_within(isolation.workspace_root(), &runner_home)
            && runner_home.parent().is_some()
        {
            run.deny.push(runner_home);
        }
    }
    run
}

/// cgroup v2 limits where the host delegates a subtree: the spawn moves itself in through
/// a descriptor the runner opened, before it confines itself and execs. What was found,
/// and the cgroup made for this spawn when one could be.
fn contract_cgroup(
    contract: &ContractId,
    sandbox: &SpawnSetup,
) -> Result<(CgroupStatus, Option<ContractCgroup>), CliError> {
    let cgroup_status = jaula_contract::cgroup::detect();
    let cgroup = match &cgroup_status {
        CgroupStatus::Delegated { parent } => {
            let name = format!("jaula-{}-{}", contract.as_str(), std::process::id());
            Some(ContractCgroup::create(
                parent,
                &name,
                &sandbox.floor.limits,
            )?)
        }
        _ => None,
    };
    Ok((cgroup_status, cgroup))
}

/// The one line a spawn leaves on stderr: who it ran as, its limits and layers, how it
/// ended.
fn say_ran(
    contract: &ContractId,
    uid: Option<u32>,
    limits: &[LimitInForce],
    status: std::process::ExitStatus,
) {
    let summary: Vec<String> = limits
        .iter()
        .map(|l| {
            format!(
                "{}={}{}",
                l.name,
                l.value,
                if l.enforced { "" } else { " (not enforced)" }
            )
        })
        .collect();
    eprintln!(
        "jaula: contract {} ran as uid {}; limits: {}; layers: {}; {}",
        contract.as_str(),
        uid.map_or("none (runner's own)".to_string(), |u| u.to_string()),
        summary.join(", "),
        LAYERS.join(", "),
        match (status.code(), status.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            _ => "ended".to_string(),
        }
    );
}

/// The environment `jaula run` would have been started with for the tenant: the runner's,
/// with the Contract's own variables (its home, TMPDIR, config dirs) set over it.
fn tenant_env(contract_env: &[(String, std::path::PathBuf)]) -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            !contract_env
                .iter()
                .any(|(n, _)| name.as_os_str() == n.as_str())
        })
        .collect();
    vars.extend(
        contract_env
            .iter()
            .map(|(n, v)| (OsString::from(n), v.clone().into_os_string())),
    );
    vars
}

/// Say on stderr what [`ContractIsolation::ensure_layout`] changed outside the Contract's
/// own tree: the operator owns those directories and should know.
pub fn report_layout(report: &jaula_contract::LayoutReport) {
    for dir in &report.repaired {
        eprintln!(
            "jaula: {} was mode 0700 (an older jaula created it so); now 0711, so Contract uids can pass through it to their own trees (they cannot list it)",
            dir.display()
        );
    }
}
