//! jaula against the program it succeeds: agents-city's `cage.py` (extracted at test time
//! from `../shared/seeds/`, never copied into the project) and `jaula` are given the same home,
//! repo and environment, and their Linux cages are run live on the same probe matrix.
//! Every difference must be one of jaula's documented, deliberate tightenings.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

fn seeds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds")
}

/// Extract `cage.py` from its diff and write the `rutas` path helpers it imports, as
/// docs/compatibility.md describes them. Returns the directory, or None when the seeds are absent.
fn seed_cage(dir: &Path) -> Option<PathBuf> {
    let diff = fs::read_to_string(seeds_dir().join("000_10278aa537b303a1.txt")).ok()?;
    let body: String = diff
        .lines()
        .skip_while(|l| !l.starts_with("@@"))
        .skip(1)
        .filter_map(|l| l.strip_prefix('+'))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("cage.py"), body).unwrap();
    // Written under English names, then bound to the Spanish names cage.py calls them by.
    fs::write(
        dir.join("rutas.py"),
        "import os\n\
         def canonical(path):\n    return os.path.realpath(os.path.expanduser(path))\n\
         def lies_within(path, root):\n    path, root = os.path.normpath(path), os.path.normpath(root)\n    return os.path.commonpath([path, root]) == root\n\
         def refusal_reason(repo, sealed):\n    for root in sealed:\n        if lies_within(repo, root):\n            return repo + ' is inside the sealed root ' + root\n        if lies_within(root, repo):\n            return repo + ' contains the sealed root ' + root\n    return None\n\
         canonicaliza, dentro_de, motivo_bloqueo = canonical, lies_within, refusal_reason\n",
    )
    .unwrap();
    Some(dir.to_path_buf())
}

fn prefix_from(cmd: &mut Command) -> Vec<OsString> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.ends_with(b" "),
        "a prefix ends with one space: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    parse_shell_prefix(&out.stdout)
}

/// `line --repo REPO` from the seed's cage and from jaula, in the same environment.
fn both_lines(seed: &Path, env: &BTreeMap<String, String>, repo: &Path) -> (Output, Output) {
    let mut seed_cmd = Command::new("python3");
    seed_cmd.arg(seed.join("cage.py"));
    let line = |mut cmd: Command| {
        cmd.env_clear()
            .envs(env)
            .args(["line", "--repo"])
            .arg(repo)
            .output()
            .unwrap()
    };
    (line(seed_cmd), line(Command::new(jaula())))
}

fn env_for(h: &Home, extra: &[(&str, String)]) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert(
        "PATH".to_string(),
        std::env::var("PATH").unwrap_or_default(),
    );
    env.insert("HOME".to_string(), h.home.display().to_string());
    env.insert("CITY_CAGE_BWRAP".to_string(), "1".to_string());
    for (k, v) in extra {
        env.insert(k.to_string(), v.clone());
    }
    env
}

/// Probes where jaula is deliberately stricter than the seed: (relative path, op, reason).
/// Each is listed in docs/security.md.
const STRICTER: &[(&str, Op, &str)] = &[
    (
        "home/.config/jaula/config.toml",
        Op::Write,
        "the config file that shapes every cage is protected",
    ),
    (
        "home/.config/jaula/new",
        Op::Create,
        "the config directory is protected",
    ),
    (
        "home/.agents-city/.runtime/cage/new",
        Op::Create,
        "the profile directory is protected",
    ),
    (
        "home/.claude/settings.json",
        Op::Write,
        "planting guard: Claude Code's settings run hooks for the owner later",
    ),
    (
        "home/.cargo/config.toml",
        Op::Write,
        "planting guard: cargo's config names a rustc-wrapper the owner's next build runs",
    ),
];

fn compare(scenario: &str, extra_env: &[(&str, String)]) {
    if Command::new("bwrap").arg("--version").output().is_err() {
        return skip_or_fail("bwrap is not installed");
    }
    if Command::new("python3").arg("--version").output().is_err() {
        return skip_or_fail("python3 is not installed");
    }
    let (_keep, root) = scratch(scenario);
    let Some(seed) = seed_cage(&root.join("seed")) else {
        return skip_or_fail("../shared/seeds is absent (a clone outside the workplace)");
    };
    let mut results: Vec<Vec<bool>> = Vec::new();
    let probes = standard_probes();
    for who in ["seed", "jaula"] {
        let tree = root.join(who);
        let h = build_home(&tree);
        let extra: Vec<(&str, String)> = extra_env
            .iter()
            .map(|(k, v)| (*k, v.replace("{root}", &tree.display().to_string())))
            .collect();
        let env = env_for(&h, &extra);
        let mut cmd = if who == "seed" {
            let mut c = Command::new("python3");
            c.arg(seed.join("cage.py"));
            c
        } else {
            Command::new(jaula())
        };
        cmd.env_clear()
            .envs(&env)
            .args(["line", "--repo"])
            .arg(&h.repo)
            .arg("--home")
            .arg(&h.home);
        cmd.arg("--token-file").arg(&h.token);
        let prefix = prefix_from(&mut cmd);
        results.push(run_probes(
            &prefix,
            &tree,
            &probes,
            &root.join(format!("{who}-script")),
        ));
    }
    let mut unexplained = Vec::new();
    for (i, p) in probes.iter().enumerate() {
        let (seed, ours) = (results[0][i], results[1][i]);
        if seed == ours {
            continue;
        }
        let stricter = STRICTER
            .iter()
            .any(|(rel, op, _)| *rel == p.rel && *op == p.op);
        if !(stricter && seed && !ours) {
            unexplained.push(format!("{:?} {}: seed={seed} jaula={ours}", p.op, p.rel));
        }
    }
    assert!(
        unexplained.is_empty(),
        "{scenario}: jaula and the seed disagree:\n{}",
        unexplained.join("\n")
    );
    // Each documented tightening really is one: the seed allows it, jaula does not.
    for (rel, op, why) in STRICTER {
        let i = probes
            .iter()
            .position(|p| p.rel == *rel && p.op == *op)
            .unwrap();
        assert!(
            results[0][i] && !results[1][i],
            "{scenario}: {op:?} {rel} ({why}) is no longer a difference"
        );
    }
    // The comparison must have compared something real: the seed denies secrets and allows the repo.
    let idx = |rel: &str, op: Op| {
        probes
            .iter()
            .position(|p| p.rel == rel && p.op == op)
            .unwrap()
    };
    assert!(!results[0][idx("home/.ssh/id_x", Op::Read)]);
    assert!(results[0][idx("repo/file.txt", Op::Write)]);
    assert!(results[1][idx("home/.agents-city/.runtime/broker/w1.token", Op::Read)]);
    assert!(!results[1][idx("home/.agents-city/.runtime/broker/w2.token", Op::Read)]);
}

#[test]
fn linux_line_matches_the_seed_with_defaults() {
    compare("defaults", &[]);
}

#[test]
fn linux_line_matches_the_seed_with_the_seed_variables() {
    compare(
        "variables",
        &[
            (
                "CITY_CAGE_DENY",
                "{root}/home/.bashrc:{root}/home/.cache/c.txt".to_string(),
            ),
            (
                "CITY_CAGE_ALLOW_WRITE",
                "{root}/outside:{root}/home/.ssh/inner".to_string(),
            ),
            ("AGENTS_CITY_HOME", "{root}/home/.agents-city".to_string()),
        ],
    );
}

#[test]
fn line_is_empty_when_the_cage_is_off_in_both() {
    let (_keep, root) = scratch("off");
    let Some(seed) = seed_cage(&root.join("seed")) else {
        return skip_or_fail("../shared/seeds is absent (a clone outside the workplace)");
    };
    let h = build_home(&root.join("tree"));
    {
        let (k, v) = ("CITY_CAGE", "0");
        let env = env_for(&h, &[(k, v.to_string())]);
        let (seed_out, ours) = both_lines(&seed, &env, &h.repo);
        assert_eq!(seed_out.status.code(), Some(0));
        assert_eq!(
            ours.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(seed_out.stdout, b"");
        assert_eq!(ours.stdout, b"", "{k}={v}");
    }
    // Where the seed's only mechanism (bubblewrap) is declared unusable, jaula still cages
    // with Landlock; its prefix is then `jaula run`, whose own probe picks that backend.
    let env = env_for(&h, &[("CITY_CAGE_BWRAP", "0".to_string())]);
    let (seed_out, ours) = both_lines(&seed, &env, &h.repo);
    assert_eq!(seed_out.stdout, b"");
    let prefix = parse_shell_prefix(&ours.stdout);
    assert_eq!(
        prefix.get(1).map(|a| a.as_os_str()),
        Some(std::ffi::OsStr::new("run")),
        "{prefix:?}"
    );
    assert_eq!(
        prefix.last().map(|a| a.as_os_str()),
        Some(std::ffi::OsStr::new("--"))
    );
}

/// macOS: the seed's `profile` and jaula's, both parsed by jaula's SBPL evaluator, decide
/// the same on every probe path, except jaula's protected profile directory.
#[test]
fn macos_profile_matches_the_seed() {
    use jaula_sbpl::eval::{FileOperation, Profile};
    if Command::new("python3").arg("--version").output().is_err() {
        return skip_or_fail("python3 is not installed");
    }
    let (_keep, root) = scratch("profile");
    let Some(seed) = seed_cage(&root.join("seed")) else {
        return skip_or_fail("../shared/seeds is absent (a clone outside the workplace)");
    };
    let h = build_home(&root.join("tree"));
    for extra in [
        vec![],
        vec![
            (
                "CITY_CAGE_DENY",
                format!(
                    "{}:{}",
                    h.home.join(".bashrc").display(),
                    h.home.join(".cache/c.txt").display()
                ),
            ),
            (
                "CITY_CAGE_ALLOW_WRITE",
                root.join("tree/outside").display().to_string(),
            ),
        ],
    ] {
        let env = env_for(&h, &extra);
        let run = |mut c: Command| {
            let out = c
                .env_clear()
                .envs(&env)
                .args(["profile", "--repo"])
                .arg(&h.repo)
                .arg("--home")
                .arg(&h.home)
                .arg("--token-file")
                .arg(&h.token)
                .output()
                .unwrap();
            jaula_testkit::output::assert_ok(&out);
            String::from_utf8(out.stdout).unwrap()
        };
        let mut py = Command::new("python3");
        py.arg(seed.join("cage.py"));
        let seed_profile = Profile::parse(&run(py)).unwrap();
        let ours = Profile::parse(&run(Command::new(jaula()))).unwrap();
        let mut paths: Vec<std::path::PathBuf> = PRESENT_FILES
            .iter()
            .chain(CREATE_PATHS)
            .map(|r| root.join("tree").join(r))
            .collect();
        paths.extend(
            [
                "home/.ssh",
                "home/.sshx",
                "home/.claude.jsonx/y",
                "home/.claude/channels/.env",
                "home/.claude/channels/a/b/.env",
                "home/Library/Caches/x",
                "home/.config/gh",
            ]
            .iter()
            .map(|r| root.join("tree").join(r)),
        );
        paths.extend(
            ["/private/tmp/x", "/etc/passwd", "/dev/null"]
                .iter()
                .map(std::path::PathBuf::from),
        );
        let mut checked = 0;
        for path in &paths {
            for op in [FileOperation::Read, FileOperation::Write] {
                let (s, o) = (
                    seed_profile.evaluate(op, path).allowed,
                    ours.evaluate(op, path).allowed,
                );
                // The cage profiles, and the planting guard's paths (decide names them).
                let guarded = ours_policy_protects(&h.home, &h.repo, path);
                let stricter = op == FileOperation::Write
                    && (path.starts_with(h.home.join(".agents-city/.runtime/cage")) || guarded)
                    && s
                    && !o;
                assert!(
                    s == o || stricter,
                    "{op:?} {}: seed={s} jaula={o}",
                    path.display()
                );
                checked += 1;
            }
        }
        assert!(checked > 80);
        assert!(
            !ours
                .evaluate(FileOperation::Read, &h.home.join(".ssh/id_x"))
                .allowed
        );
        assert!(ours.evaluate(FileOperation::Read, &h.token).allowed);
    }
}

/// Whether jaula's own macOS policy protects `path` from writes (the planting guard).
fn ours_policy_protects(
    home: &std::path::Path,
    repo: &std::path::Path,
    path: &std::path::Path,
) -> bool {
    let spec = jaula_policy::PolicySpec::with_defaults(
        jaula_policy::Platform::MacOs,
        home.to_path_buf(),
        repo.to_path_buf(),
    );
    let Ok(policy) = spec.resolve() else {
        return false;
    };
    matches!(
        policy.decide(path, jaula_policy::Access::Write).rule,
        jaula_policy::Rule::Protected { .. }
    )
}
