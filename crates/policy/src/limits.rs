//! Resource ceilings, as data. Two shapes of one thing, each where it belongs:
//!
//! - [`ContractLimits`]: what every process of a Contract runs under, always set (the
//!   cgroup needs a `memory.max` and a `pids.max`), with defaults;
//! - [`ResourceLimits`]: what one `jaula run` sets before confining, each optional (a
//!   launcher's run sets none unless asked, `--max-procs`, `--max-data`).
//!
//! A Contract's spawn hands its limits to the `jaula run` it starts through
//! [`ResourceLimits::from`]. Setting them is the kernel's half:
//! `jaula_sandbox::launch::set_resource_limits` for a run, `jaula_contract::SpawnFloor` for
//! a spawn.

use serde::{Deserialize, Serialize};

/// Resource ceilings applied to every spawn of a Contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ContractLimits {
    /// `RLIMIT_NPROC` (and the cgroup's `pids.max`). The kernel counts the rlimit per *real
    /// uid*, across the host, which is what makes one uid per Contract turn it into a
    /// per-Contract process budget.
    pub max_processes: u64,
    /// `RLIMIT_DATA` (and the cgroup's `memory.max`), in bytes.
    ///
    /// Not `RLIMIT_AS`: both harness CLIs run on node, and V8 reserves a
    /// multi-gigabyte `PROT_NONE` region for its pointer-compression cage at start-up.
    /// An address-space ceiling of a few GiB kills node before its first turn, while
    /// `RLIMIT_DATA` counts only private writable mappings (the heap that actually
    /// grows), so it stops the runaway rather than the start-up.
    pub max_memory_bytes: u64,
}

impl Default for ContractLimits {
    fn default() -> ContractLimits {
        ContractLimits {
            max_processes: 512,
            max_memory_bytes: 8 << 30,
        }
    }
}

/// Resource ceilings set (soft and hard) before confining, inherited by the command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLimits {
    /// `RLIMIT_NPROC`: counted per real uid across the host, so per tenant with one uid each.
    pub max_processes: Option<u64>,
    /// `RLIMIT_DATA`, bytes. Not `RLIMIT_AS`: V8 reserves gigabytes of address space at
    /// start-up, and an address-space ceiling kills node before it runs.
    pub max_data_bytes: Option<u64>,
}

impl From<ContractLimits> for ResourceLimits {
    /// The run a Contract's spawn starts sets both of the Contract's rlimits.
    fn from(limits: ContractLimits) -> ResourceLimits {
        ResourceLimits {
            max_processes: Some(limits.max_processes),
            max_data_bytes: Some(limits.max_memory_bytes),
        }
    }
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
