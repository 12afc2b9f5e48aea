//! Micro-benchmarks of the pure parts whose cost grows with their input:
//! policy resolution, the Landlock complement (plan), SBPL rendering, and `decide` on
//! 10,000 paths. `bench/run` runs them and reads criterion's `estimates.json`; the
//! group and function names below are the keys it looks for.
//!
//! The plan is computed over a filesystem held in memory, so only the planner's own
//! work is timed, not `getdents64`/`lstat` (the launch benchmarks time those).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use jaula_policy::{Access, EntryKind, HostFs, Platform, Policy, PolicySpec};
use jaula_sandbox::landlock::{plan, PlanMode};
use jaula_sandbox::seatbelt::render_profile;

const HOME: &str = "/home/bench";

/// A home with every default secret present and `n` more entries at its top level.
struct FakeFs {
    kinds: HashMap<PathBuf, EntryKind>,
    children: HashMap<PathBuf, Vec<(OsString, EntryKind)>>,
}

impl FakeFs {
    fn new() -> FakeFs {
        let mut fs = FakeFs {
            kinds: HashMap::new(),
            children: HashMap::new(),
        };
        fs.kinds.insert(PathBuf::from("/"), EntryKind::Directory);
        fs
    }

    fn add(&mut self, path: &Path, kind: EntryKind) {
        if self.kinds.contains_key(path) {
            return;
        }
        if let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
            self.add(parent, EntryKind::Directory);
            self.children
                .entry(parent.to_path_buf())
                .or_default()
                .push((name.to_os_string(), kind));
        }
        self.kinds.insert(path.to_path_buf(), kind);
    }

    fn machine(home_entries: usize, extra_roots: &[PathBuf]) -> FakeFs {
        let mut fs = FakeFs::new();
        for d in [
            "/bin", "/etc", "/usr/bin", "/usr/lib", "/var/tmp", "/tmp", "/proc/1",
        ] {
            fs.add(Path::new(d), EntryKind::Directory);
        }
        for node in ["null", "zero", "urandom", "random", "tty", "ptmx", "sda"] {
            fs.add(&Path::new("/dev").join(node), EntryKind::Other);
        }
        let home = Path::new(HOME);
        for rel in SECRETS {
            fs.add(&home.join(rel), EntryKind::File);
        }
        for i in 0..home_entries {
            let kind = if i % 4 == 0 {
                EntryKind::Directory
            } else {
                EntryKind::File
            };
            fs.add(&home.join(format!("entry{i:06}")), kind);
        }
        for root in extra_roots {
            fs.add(root, EntryKind::Directory);
        }
        fs
    }
}

impl HostFs for FakeFs {
    fn kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        Ok(self.kinds.get(path).copied())
    }
    fn resolved_kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        self.kind(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(OsString, EntryKind)>> {
        match self.kinds.get(dir) {
            Some(EntryKind::Directory) => Ok(self.children.get(dir).cloned().unwrap_or_default()),
            _ => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }
}

const SECRETS: &[&str] = &[
    ".ssh/id_ed25519",
    ".ssh/config",
    ".aws/credentials",
    ".kube/config",
    ".gnupg/pubring.kbx",
    ".config/gcloud/credentials.db",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".git-credentials",
    ".netrc",
    ".claude/.credentials.json",
    ".claude/channels/seat1/.env",
    ".cargo/credentials.toml",
    ".agents-city/.runtime/broker/w1.token",
];

/// The repo must exist for the spec to resolve; the manifest directory does.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `n` extra roots, half sealed and half writable, under a directory of their own.
fn extra_roots(n: usize) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let base = Path::new("/srv/bench-roots");
    let sealed = (0..n / 2).map(|i| base.join(format!("s{i:04}"))).collect();
    let writable = (0..n - n / 2)
        .map(|i| base.join(format!("w{i:04}")))
        .collect();
    (sealed, writable)
}

fn spec(platform: Platform, roots: usize) -> PolicySpec {
    let mut spec = PolicySpec::with_defaults(platform, PathBuf::from(HOME), repo());
    let (sealed, writable) = extra_roots(roots);
    spec.extra_sealed = sealed;
    spec.extra_writable = writable;
    spec
}

fn resolve(spec: &PolicySpec) -> Policy {
    match spec.resolve() {
        Ok(policy) => policy,
        Err(e) => panic!("the bench policy does not resolve: {e}"),
    }
}

fn policy_resolution(c: &mut Criterion) {
    let mut group = c.benchmark_group("policy_resolve");
    for roots in [0usize, 100, 1000] {
        let spec = spec(Platform::Linux, roots);
        group.bench_with_input(BenchmarkId::from_parameter(roots), &spec, |b, spec| {
            b.iter(|| black_box(resolve(spec)))
        });
    }
    group.finish();
}

fn landlock_plan_home(c: &mut Criterion) {
    let policy = resolve(&spec(Platform::Linux, 0));
    let mut group = c.benchmark_group("landlock_plan_home_entries");
    for entries in [10usize, 1_000, 10_000, 100_000] {
        let fs = FakeFs::machine(entries, &[]);
        group.bench_with_input(BenchmarkId::from_parameter(entries), &fs, |b, fs| {
            b.iter(|| match plan(&policy, PlanMode::Native, fs) {
                Ok(p) => black_box(p.rules.len()),
                Err(e) => panic!("plan: {e}"),
            })
        });
    }
    group.finish();
}

fn landlock_plan_roots(c: &mut Criterion) {
    let mut group = c.benchmark_group("landlock_plan_roots");
    for roots in [10usize, 100, 1_000] {
        let policy = resolve(&spec(Platform::Linux, roots));
        let (sealed, writable) = extra_roots(roots);
        let all: Vec<PathBuf> = sealed.into_iter().chain(writable).collect();
        let fs = FakeFs::machine(100, &all);
        group.bench_with_input(BenchmarkId::from_parameter(roots), &fs, |b, fs| {
            b.iter(|| match plan(&policy, PlanMode::Native, fs) {
                Ok(p) => black_box(p.rules.len()),
                Err(e) => panic!("plan: {e}"),
            })
        });
    }
    group.finish();
}

fn sbpl_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("sbpl_render");
    for roots in [0usize, 100, 1000] {
        let policy = resolve(&spec(Platform::MacOs, roots));
        group.bench_with_input(BenchmarkId::from_parameter(roots), &policy, |b, policy| {
            b.iter(|| match render_profile(policy) {
                Ok(text) => black_box(text.len()),
                Err(e) => panic!("render: {e}"),
            })
        });
    }
    group.finish();
}

/// 10,000 paths of every kind `decide` meets: home entries, secrets and paths inside
/// them, the repo, caches, system files, channel tokens.
fn decide_paths() -> Vec<PathBuf> {
    let home = Path::new(HOME);
    let repo = repo();
    let mut paths = Vec::with_capacity(10_000);
    let mut i = 0usize;
    while paths.len() < 10_000 {
        let p = match i % 8 {
            0 => home.join(format!("entry{i:06}")),
            1 => home.join(SECRETS[i % SECRETS.len()]),
            2 => home.join(".ssh").join(format!("k{i}")),
            3 => repo.join(format!("src/m{i}.rs")),
            4 => home.join(format!(".cargo/registry/cache/c{i}")),
            5 => PathBuf::from(format!("/usr/lib/x86_64-linux-gnu/lib{i}.so")),
            6 => home.join(format!(".claude/channels/seat{i}/.env")),
            _ => PathBuf::from(format!("/tmp/scratch{i}")),
        };
        paths.push(p);
        i += 1;
    }
    paths
}

fn decide_10k(c: &mut Criterion) {
    let policy = resolve(&spec(Platform::Linux, 0));
    let paths = decide_paths();
    let mut group = c.benchmark_group("decide_10000_paths");
    for (name, access) in [("read", Access::Read), ("write", Access::Write)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                paths
                    .iter()
                    .filter(|p| policy.decide(p, access).allowed)
                    .count()
            })
        });
    }
    group.finish();
}

fn short() -> Criterion {
    // Sized for bench/run's 15-minute budget on 2 cores: each case gets ~2 s.
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
}

criterion_group! {
    name = benches;
    config = short();
    targets = policy_resolution, landlock_plan_home, landlock_plan_roots, sbpl_render, decide_10k
}
criterion_main!(benches);
