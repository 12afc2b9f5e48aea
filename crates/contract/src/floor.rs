//! The spawn floor: what every process of a Contract runs under, described as data so
//! the launcher (which owns `pre_exec` and the cage) can apply it and report it.

use std::path::PathBuf;

use jaula_policy::limits::ContractLimits;
use rustix::process::{setrlimit, Resource, Rlimit};
use serde::Serialize;

use crate::ids::{ContractId, RuntimeKind};

/// One limit as it will bind a spawned process, for `contract run`'s report and the
/// evidence log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LimitInForce {
    /// `RLIMIT_NPROC`, `RLIMIT_DATA`, `memory.max`, `pids.max`.
    pub name: String,
    /// The ceiling.
    pub value: u64,
    /// Whether the kernel will actually enforce it for this process.
    pub enforced: bool,
    /// Why not, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The identity and rlimits of one spawn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpawnFloor {
    /// The Contract's uid, or none when this runner cannot separate uids (or for the
    /// no-contract sentinel): then the process runs as the runner's own user.
    pub uid: Option<u32>,
    /// The Contract's gid (equal to its uid: no group is shared between tenants).
    pub gid: Option<u32>,
    /// The rlimits.
    pub limits: ContractLimits,
}

impl SpawnFloor {
    /// Set both rlimits, soft = hard, on the calling process.
    ///
    /// Meant for the child between fork and exec, *after* the identity drop (setgroups
    /// with an empty list, then setgid, then setuid; std's `Command::uid/gid` do exactly
    /// that when the parent is root): lowering a limit needs no privilege, and the
    /// limits then land on the Contract's uid. Two raw `setrlimit` calls, no allocation,
    /// so it is async-signal-safe in a forked child of a threaded runner.
    pub fn apply_rlimits(&self) -> std::io::Result<()> {
        let nproc = Rlimit {
            current: Some(self.limits.max_processes),
            maximum: Some(self.limits.max_processes),
        };
        let data = Rlimit {
            current: Some(self.limits.max_memory_bytes),
            maximum: Some(self.limits.max_memory_bytes),
        };
        setrlimit(Resource::Nproc, nproc)?;
        setrlimit(Resource::Data, data)?;
        Ok(())
    }

    /// The rlimits as they will bind a process spawned by a runner whose effective uid
    /// is `runner_euid`. The kernel never applies `RLIMIT_NPROC` to uid 0
    /// (`kernel/fork.c` exempts INIT_USER), so without a Contract uid a root runner's
    /// spawns have no process ceiling, and the report says so.
    pub fn limits_in_force(&self, runner_euid: u32) -> Vec<LimitInForce> {
        let effective_uid = self.uid.unwrap_or(runner_euid);
        let nproc_binds = effective_uid != 0;
        vec![
            LimitInForce {
                name: "RLIMIT_NPROC".into(),
                value: self.limits.max_processes,
                enforced: nproc_binds,
                note: (!nproc_binds)
                    .then(|| "the kernel does not apply RLIMIT_NPROC to uid 0".to_string()),
            },
            LimitInForce {
                name: "RLIMIT_DATA".into(),
                value: self.limits.max_memory_bytes,
                enforced: true,
                note: None,
            },
        ]
    }
}

/// Where a Contract's process lives and what it may not exceed: everything the
/// launcher needs besides the command and the cage policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpawnSetup {
    /// The Contract.
    pub contract: ContractId,
    /// The harness this setup was prepared for.
    pub runtime_kind: RuntimeKind,
    /// `HOME`: the Contract's own tree, holding the `.gitconfig` its git reads.
    pub home_dir: PathBuf,
    /// The harness's config root (`CODEX_HOME` / `CLAUDE_CONFIG_DIR`).
    pub harness_config_dir: PathBuf,
    /// `TMPDIR`. The host's `/tmp` is shared by every uid, so a harness's temp files
    /// would leak across the line the per-Contract tree draws; inside the 0700 tree
    /// they do not.
    pub tmp_dir: PathBuf,
    /// Identity and rlimits.
    pub floor: SpawnFloor,
    /// The variables to set in the spawned environment.
    pub env: Vec<(String, PathBuf)>,
}

impl SpawnSetup {
    pub(crate) fn new(
        contract: ContractId,
        runtime_kind: RuntimeKind,
        home_dir: PathBuf,
        harness_config_dir: PathBuf,
        tmp_dir: PathBuf,
        floor: SpawnFloor,
    ) -> SpawnSetup {
        let mut env = vec![
            ("HOME".to_string(), home_dir.clone()),
            ("TMPDIR".to_string(), tmp_dir.clone()),
        ];
        if let Some(var) = runtime_kind.config_env_var() {
            env.push((var.to_string(), harness_config_dir.clone()));
        }
        SpawnSetup {
            contract,
            runtime_kind,
            home_dir,
            harness_config_dir,
            tmp_dir,
            floor,
            env,
        }
    }
}
