//! The stage that applies a [`LaunchPlan`] and execs the command: in-process for the
//! native launch, or as `jaula stage` (hidden), started by the outer `jaula run` with the
//! plan on an inherited sealed memfd: inside the bubblewrap view, as the `--network allow`
//! child, or as the child a planting-reporting parent waits for. It never resolves a
//! policy; everything it needs is in the plan.

use jaula_sandbox::landlock::PlanMode;
use jaula_sandbox::launch::{launch, AfterExit};
use jaula_sandbox::launch_plan::LaunchPlan;
use jaula_sandbox::plan_fd;
use jaula_sandbox::planting::{self, Snapshot};

use jaula_sandbox::bwrap::describe_pid_ns;

use crate::commands::{network_notice, none_log, write_notice};
use crate::error::Refusal;
use crate::Outcome;

/// `jaula stage`: read the inherited plan, refuse (126) one that is missing, of another
/// version or malformed, else launch it.
pub fn from_inherited() -> Outcome {
    let plan = plan_fd::take_inherited().map_err(Refusal::NoPlan)?;
    launch_here(&plan)
}

/// Apply `plan` to this process and exec its command; returns only with a refusal, which
/// carries its exit code.
pub fn launch_here(plan: &LaunchPlan) -> Outcome {
    // `--log`: taken before Landlock, so the supervisor can write it wherever it is; every
    // refusal goes there as it happens.
    take_log(plan).map_err(Refusal::NoneLog)?;
    // Before the Landlock rules are listed: the evidence log (and its directory) must exist
    // then, or the supervisor could not read back what it snapshots there.
    let after_exit = if plan.socket_gate {
        with_write_note(with_network_note(planting_hook(plan), plan), plan)
    } else {
        None
    };
    let verbose = plan.verbose;
    let backend = match plan.stage {
        PlanMode::Native => "landlock",
        PlanMode::BwrapView => "bwrap (inner stage)",
    };
    if verbose && plan.stage == PlanMode::Native {
        eprintln!("jaula: pid namespace: {}", describe_pid_ns(false));
    }
    let err = launch(plan, after_exit, |report| {
        if verbose {
            eprintln!("jaula: backend {backend}; layers in force:\n{report}");
        }
    });
    Err(Refusal::Launch(err).into())
}

/// The `--log` file, inherited on the plan's descriptor: handed to the socket gate's
/// supervisor as the sink of every refused write, and under `none` of every refusal of
/// the closed network too (under `allow` the proxy writes its own records to the file).
fn take_log(plan: &LaunchPlan) -> Result<(), jaula_sandbox::network::netns::NetnsError> {
    let Some(fd) = plan.network.log_fd else {
        return Ok(());
    };
    if !plan.socket_gate {
        return Ok(());
    }
    let file = jaula_sandbox::network::netns::take_log_fd(fd)?;
    if plan.network.mode.loopback_only() {
        let none = file
            .try_clone()
            .map_err(|source| jaula_sandbox::network::netns::NetnsError::Handoff { source })?;
        jaula_sandbox::network::none_log::set_sink(none_log::sink(none));
    }
    jaula_sandbox::call_gate::write_refusals::set_sink(write_notice::sink(file));
    Ok(())
}

/// The planting report the socket gate's supervisor makes after the command: the snapshot
/// and the evidence log are taken now, before this process confines itself. Natively
/// only: in the bwrap view the jaula waiting for bubblewrap reports.
fn planting_hook(plan: &LaunchPlan) -> Option<AfterExit> {
    if plan.stage != PlanMode::Native || !plan.reports.planting {
        return None;
    }
    let policy = &plan.policy;
    // The log first: opening it may create it, which must not show as a change.
    let log = planting::EvidenceLog::open(policy);
    let snapshot = Snapshot::take(policy);
    if plan.verbose {
        eprintln!(
            "jaula: planting guard: {} protected paths snapshotted; changes are reported \
             after the command exits (evidence: {})",
            snapshot.len(),
            planting::evidence_path(policy).display()
        );
    }
    let policy = policy.clone();
    Some(Box::new(move |_status| {
        planting::report_after_into(&snapshot, &policy, log);
    }))
}

/// Natively the socket gate's supervisor is the one that sees the command end: add the
/// `--network none` reminder to what it runs then (the bwrap and `allow` paths print it
/// from the jaula that waits).
fn with_network_note(hook: Option<AfterExit>, plan: &LaunchPlan) -> Option<AfterExit> {
    if !plan.network.mode.loopback_only() || !plan.reports.network_none {
        return hook;
    }
    // The refused addresses are known only to this process, the gate's supervisor (in the
    // bwrap view, the inner stage); the failure reminder is printed by the outermost
    // jaula, which under bwrap is the one waiting for bwrap.
    let remind = plan.stage == PlanMode::Native;
    Some(Box::new(move |status| {
        if let Some(hook) = hook {
            hook(status);
        }
        let lookups = jaula_sandbox::network::dns_stub::refused_lookups();
        let refused = jaula_sandbox::call_gate::unreachable_destinations();
        if let Some(note) = network_notice::refused_under_none(&lookups, &refused) {
            eprintln!("{note}");
        }
        if let Some(note) = remind.then(|| network_notice::after_none(status)).flatten() {
            eprintln!("{note}");
        }
    }))
}

/// The refused writes, said by the socket gate's supervisor when the command ends (it is
/// the only process that saw them; in the bwrap view, the inner stage): after the other
/// reports, so the line that names what to change is the last.
fn with_write_note(hook: Option<AfterExit>, plan: &LaunchPlan) -> Option<AfterExit> {
    let home = plan.policy.home().to_path_buf();
    Some(Box::new(move |status| {
        if let Some(hook) = hook {
            hook(status);
        }
        let refused = jaula_sandbox::call_gate::write_refusals::refused_writes();
        if let Some(line) = write_notice::summary(&refused, &home) {
            eprintln!("{line}");
        }
    }))
}
