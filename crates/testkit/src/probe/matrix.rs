//! The probe matrix: labelled targets (`~/…` under the scratch home, `@/…` under the
//! scratch root, or a system directory where a uniquely named entry is created), planted
//! on the host, probed by one tagged shell script, and judged by their host effect.
//!
//! "Allowed" is what happened to the HOST: a read is allowed when the caged process got
//! the host file's unique marker (for a directory: listed its marker entry), a write when
//! the host file changed (or its mode, or it is gone), a create when the new entry exists
//! on the host afterwards.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use jaula_policy::Access;

/// What a target is on the host, and so how it is probed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file holding a unique marker: probed for read and write.
    File,
    /// A directory holding an entry named after a unique marker: probed for read (listing).
    Dir,
    /// A symbolic link to a file holding the marker (the label is where the link points
    /// to): probed for read and write, decided on the canonical target, as the kernel
    /// resolves it.
    LinkTo(&'static str),
    /// A file probed for write by changing its mode (`chmod 600`).
    Chmod,
    /// A file probed for write by removing it.
    Remove,
    /// Absent before the run: probed for create, as a file.
    NewFile,
    /// Absent before the run: probed for create, as a directory.
    NewDir,
    /// A file in a writable root that is absent before the run (a fresh account's
    /// `~/.kimi`): `jaula run` creates the root.
    NewInAbsentRoot,
}

/// One path of the matrix: where it is, what `decide` is asked about and how it is probed.
#[derive(Clone, Debug)]
pub struct Target {
    /// The path as the tables name it (`~/.ssh/id_x`, `@/outside/f`, `/etc/x`).
    pub label: String,
    /// Where the probe acts.
    pub path: PathBuf,
    /// The canonical path `decide` is asked about (the link's target, for a link).
    pub decided: PathBuf,
    /// How it is probed.
    pub kind: Kind,
    /// The contents a read must return to count as a read.
    pub marker: String,
}

/// Where `label` lives: `~/x` under `home`, `@/x` under `root`, and a system path (say
/// `/tmp/x`) as a name unique to `tag` in that directory, labelled `/tmp/<new>`.
pub fn resolve(root: &Path, home: &Path, tag: &str, label: &str) -> (PathBuf, String) {
    if let Some(rest) = label.strip_prefix("~/") {
        (home.join(rest), label.to_string())
    } else if label == "~" {
        (home.to_path_buf(), label.to_string())
    } else if let Some(rest) = label.strip_prefix("@/") {
        (root.join(rest), label.to_string())
    } else {
        let dir = Path::new(label).parent().unwrap();
        (dir.join(tag), format!("{}/<new>", dir.display()))
    }
}

/// The policy the live matrices run under: the defaults for `home` and `repo` on Linux,
/// with this window's token at `token`. The matrices plant one channel token
/// (`~/.claude/channels/seat1/.env`); the policy must have seen it as an existing instance
/// of its sealed pattern, or the rows that probe it would test nothing.
pub fn linux_policy(home: &Path, repo: &Path, token: &Path) -> jaula_policy::Policy {
    use jaula_policy::{FileRule, Platform, PolicySpec};
    let mut spec =
        PolicySpec::with_defaults(Platform::Linux, home.to_path_buf(), repo.to_path_buf());
    spec.token_file = Some(token.to_path_buf());
    let policy = spec.resolve().unwrap();
    let seen: Vec<std::path::PathBuf> = policy
        .file_rules()
        .iter()
        .flat_map(|r| match r {
            FileRule::SealedPattern { existing, .. } => existing.clone(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(seen, [home.join(".claude/channels/seat1/.env")]);
    policy
}

/// The targets of `entries`, each with a marker unique to this run (`unique`, the scratch
/// root's name) and to its place in the list. The marker starts with `#`, so a config file
/// in the matrix still parses as TOML.
pub fn targets(root: &Path, home: &Path, suite: &str, entries: &[(&str, Kind)]) -> Vec<Target> {
    let unique = root.file_name().unwrap().to_string_lossy().into_owned();
    let tag = format!("jaula-{suite}-{unique}");
    entries
        .iter()
        .enumerate()
        .map(|(i, (label, kind))| {
            let (path, label) = resolve(root, home, &tag, label);
            let decided = match kind {
                Kind::LinkTo(to) => resolve(root, home, &tag, to).0,
                _ => path.clone(),
            };
            Target {
                label,
                path,
                decided,
                kind: *kind,
                marker: format!("#jaula-marker-{i}-{unique}"),
            }
        })
        .collect()
}

/// Put every target on the host: files with their marker (mode 0644), directories with
/// their marker entry, links to a marked file; a create's parent exists (inside `root`
/// it is made), so the parent's rules decide, and the entry itself does not.
pub fn plant(root: &Path, targets: &[Target]) {
    for t in targets {
        match t.kind {
            Kind::File | Kind::Chmod | Kind::Remove => {
                fs::create_dir_all(t.path.parent().unwrap()).unwrap();
                fs::write(&t.path, &t.marker).unwrap();
                fs::set_permissions(&t.path, fs::Permissions::from_mode(0o644)).unwrap();
            }
            Kind::Dir => {
                fs::create_dir_all(&t.path).unwrap();
                fs::write(t.path.join(&t.marker), "").unwrap();
            }
            _ => {}
        }
    }
    for t in targets {
        match t.kind {
            Kind::LinkTo(_) => {
                assert!(
                    !t.decided.exists(),
                    "{}: the target is probed directly",
                    t.label
                );
                fs::create_dir_all(t.decided.parent().unwrap()).unwrap();
                fs::write(&t.decided, &t.marker).unwrap();
                std::os::unix::fs::symlink(&t.decided, &t.path).unwrap();
            }
            Kind::NewFile | Kind::NewDir => {
                let parent = t.path.parent().unwrap();
                if parent.starts_with(root) {
                    fs::create_dir_all(parent).unwrap();
                }
                assert!(parent.is_dir(), "{}", t.label);
                assert!(fs::symlink_metadata(&t.path).is_err(), "{} exists", t.label);
            }
            Kind::NewInAbsentRoot => {
                let parent = t.path.parent().unwrap();
                assert!(fs::symlink_metadata(parent).is_err(), "{} exists", t.label);
            }
            _ => {}
        }
    }
}

/// `path` in POSIX single quotes, for the probe script.
pub fn quote(path: &Path) -> String {
    String::from_utf8(super::sh_quote(path)).unwrap()
}

/// The probe script's functions: each prints one line tagged with its letter and the
/// target's index (`R` read, `L` listing, `W` write, `C` create), and the first line
/// is `U 0 <uid>`, the identity the cage really ran as.
const PRELUDE: &str = r#"r() { if c=$(cat -- "$2" 2>/dev/null); then printf 'R %s ok %s\n' "$1" "$c"; else printf 'R %s err\n' "$1"; fi; }
l() { if ls -a -- "$2" 2>/dev/null | grep -qxF -- "$3"; then printf 'L %s yes\n' "$1"; else printf 'L %s no\n' "$1"; fi; }
w() { if ( printf '+w' >> "$2" ) 2>/dev/null; then printf 'W %s ok\n' "$1"; else printf 'W %s err\n' "$1"; fi; }
ch() { if chmod 600 -- "$2" 2>/dev/null; then printf 'W %s ok\n' "$1"; else printf 'W %s err\n' "$1"; fi; }
rm_() { if rm -f -- "$2" 2>/dev/null; then printf 'W %s ok\n' "$1"; else printf 'W %s err\n' "$1"; fi; }
cf() { if ( : > "$2" ) 2>/dev/null; then printf 'C %s ok\n' "$1"; else printf 'C %s err\n' "$1"; fi; }
cd_() { if mkdir -- "$2" 2>/dev/null; then printf 'C %s ok\n' "$1"; else printf 'C %s err\n' "$1"; fi; }
printf 'U 0 %s\n' "$(id -u)"
"#;

/// One `/bin/sh` script, one output line per probe: reads, then writes, then creates (so
/// no write or create can change what a read sees).
pub fn script(targets: &[Target]) -> String {
    let mut s = String::from(PRELUDE);
    let mut phase = |line: &dyn Fn(usize, &Target) -> Option<String>| {
        for (i, t) in targets.iter().enumerate() {
            if let Some(text) = line(i, t) {
                s.push_str(&text);
                s.push('\n');
            }
        }
    };
    phase(&|i, t| match t.kind {
        Kind::File | Kind::LinkTo(_) => Some(format!("r {i} {}", quote(&t.path))),
        Kind::Dir => Some(format!(
            "l {i} {} {}",
            quote(&t.path),
            quote(Path::new(&t.marker))
        )),
        _ => None,
    });
    phase(&|i, t| match t.kind {
        Kind::File | Kind::LinkTo(_) => Some(format!("w {i} {}", quote(&t.path))),
        Kind::Chmod => Some(format!("ch {i} {}", quote(&t.path))),
        Kind::Remove => Some(format!("rm_ {i} {}", quote(&t.path))),
        _ => None,
    });
    phase(&|i, t| match t.kind {
        Kind::NewFile | Kind::NewInAbsentRoot => Some(format!("cf {i} {}", quote(&t.path))),
        Kind::NewDir => Some(format!("cd_ {i} {}", quote(&t.path))),
        _ => None,
    });
    s
}

/// One probe's result: `live` is the host effect, `inside` what the caged shell printed.
pub struct Outcome {
    /// Index of the probed [`Target`].
    pub target: usize,
    /// The access tried.
    pub access: Access,
    /// Whether the access took effect, judged on the host.
    pub live: bool,
    /// The caged shell's own report, for the failure message.
    pub inside: String,
}

/// Judge the script's `stdout` by the host's state now: one [`Outcome`] per probe. The
/// cage must have run as `expected_uid`, and every probe must have printed its line.
pub fn outcomes(targets: &[Target], stdout: &str, expected_uid: u32) -> Vec<Outcome> {
    let mut lines: BTreeMap<(char, usize), String> = BTreeMap::new();
    for line in stdout.lines() {
        let mut parts = line.splitn(3, ' ');
        let tag = parts.next().unwrap().chars().next().unwrap();
        let id: usize = parts.next().unwrap().parse().unwrap();
        let rest = parts.next().unwrap_or("").to_string();
        assert!(lines.insert((tag, id), rest).is_none(), "duplicate {line}");
    }
    assert_eq!(lines.get(&('U', 0)), Some(&expected_uid.to_string()));

    let mut out = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let line = |tag: char| {
            lines
                .get(&(tag, i))
                .unwrap_or_else(|| panic!("no {tag} line for {}:\n{stdout}", t.label))
                .clone()
        };
        let mut push = |access: Access, live: bool, inside: String| {
            out.push(Outcome {
                target: i,
                access,
                live,
                inside,
            })
        };
        match t.kind {
            Kind::File | Kind::LinkTo(_) => {
                let read = line('R');
                push(Access::Read, read == format!("ok {}", t.marker), read);
                push(Access::Write, written(t), line('W'));
            }
            Kind::Dir => {
                let listed = line('L');
                push(Access::Read, listed == "yes", listed);
            }
            Kind::Chmod => {
                let mode = fs::metadata(&t.path).unwrap().mode() & 0o777;
                push(Access::Write, mode != 0o644, line('W'));
            }
            Kind::Remove => {
                let gone = fs::symlink_metadata(&t.path).is_err();
                push(Access::Write, gone, line('W'));
            }
            Kind::NewFile | Kind::NewDir | Kind::NewInAbsentRoot => {
                let created = fs::symlink_metadata(&t.path).is_ok();
                push(Access::Create, created, line('C'));
            }
        }
    }
    out
}

/// Whether the probe's write reached the host file (through the link, for a link); any
/// content other than the marker, with or without the probe's `+w`, fails the test.
fn written(t: &Target) -> bool {
    let host = fs::read_to_string(&t.decided).unwrap();
    match host.strip_prefix(&t.marker) {
        Some("") => false,
        Some("+w") => true,
        _ => panic!("{}: unexpected host content {host:?}", t.label),
    }
}

/// Remove what probes created outside the scratch tree (system directories).
pub fn remove_outside(root: &Path, targets: &[Target]) {
    for t in targets {
        if !t.path.starts_with(root) && fs::symlink_metadata(&t.path).is_ok() {
            let _ = fs::remove_file(&t.path).or_else(|_| fs::remove_dir(&t.path));
        }
    }
}

/// Run `cmd` (a cage around `/bin/sh` and the [`script`] of `targets`), require that it
/// succeeded, judge every probe ([`outcomes`]) and remove what probes left outside `root`.
pub fn run(mut cmd: Command, root: &Path, targets: &[Target], expected_uid: u32) -> Vec<Outcome> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "the caged probe shell failed ({}): {}\n{cmd:?}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let judged = outcomes(targets, &String::from_utf8_lossy(&out.stdout), expected_uid);
    remove_outside(root, targets);
    judged
}

/// One known disagreement between a backend and `Policy::decide` on one probe: `name` is
/// the backend's listed deviation it is an instance of (`Backend::deviations`), `live` is
/// what the kernel did, `decide` what the reference says, `why` how the deviation shows on
/// this probe.
pub struct Deviation {
    /// The name of the backend's listed deviation this probe is an instance of.
    pub name: &'static str,
    /// The target's label.
    pub label: &'static str,
    /// The access the backend and the reference disagree on.
    pub access: Access,
    /// What the kernel did.
    pub live: bool,
    /// What `decide` says.
    pub decide: bool,
    /// Why, in the words the security document uses.
    pub why: &'static str,
}

/// A [`Deviation`], for `const` tables.
pub const fn dev(
    name: &'static str,
    label: &'static str,
    access: Access,
    live: bool,
    decide: bool,
    why: &'static str,
) -> Deviation {
    Deviation {
        name,
        label,
        access,
        live,
        decide,
        why,
    }
}

/// bubblewrap's view: an entry absent at launch that no mount covers, so the cage can
/// create `label` where `decide` refuses it (the deviation `name`: a sealed or protected
/// path absent at launch).
pub const fn absent_creatable(
    name: &'static str,
    label: &'static str,
    why: &'static str,
) -> Deviation {
    dev(name, label, Access::Create, true, false, why)
}

/// bubblewrap's view, with or without jaula's stage inside: a declared-file seal that is
/// a directory on disk (`~/.pgpass/`) gets a read-only tmpfs, since `/dev/null` cannot be
/// bound on a directory, which also hides its entries: stricter than `decide`.
pub const BWRAP_SEAL_ON_DIRECTORY: Deviation = dev(
    "declared-file-seal-is-directory",
    "~/.pgpass/inner",
    Access::Read,
    false,
    true,
    "a declared-file seal that is a directory on disk gets a read-only tmpfs (/dev/null \
     cannot be bound on a directory), which also hides its entries: stricter than decide",
);

/// bubblewrap's view: `/dev` is the cage's own device tree (`--dev`), so a create there
/// succeeds but never reaches the host's `/dev`.
pub const BWRAP_OWN_DEV: Deviation = dev(
    "own-dev",
    "/dev/<new>",
    Access::Create,
    false,
    true,
    "/dev is the cage's own device tree (--dev): writes succeed there but never reach \
     the host's /dev",
);

/// Every probe deviation of `table` must be an instance of one the backend lists
/// (`listed`: each listed deviation's name and whether it is looser than `decide`), in the
/// same direction. Returns the failures.
pub fn unlisted(table: &[Deviation], listed: &[(&str, bool)]) -> Vec<String> {
    let mut failures = Vec::new();
    for d in table {
        match listed.iter().find(|(name, _)| *name == d.name) {
            Some((_, looser)) if *looser == d.live => {}
            Some((_, looser)) => failures.push(format!(
                "{} {}: deviation {} is listed as {}, but this probe is {}",
                d.access,
                d.label,
                d.name,
                if *looser { "looser" } else { "stricter" },
                if d.live { "looser" } else { "stricter" },
            )),
            None => failures.push(format!(
                "{} {}: deviation {} is not listed by the backend",
                d.access, d.label, d.name
            )),
        }
    }
    failures
}

/// What the reference says about one probe: allowed or not, and the rule, described.
pub struct Decided {
    /// Whether `decide` allows the access.
    pub allowed: bool,
    /// The deciding rule, described.
    pub rule: String,
}

/// Judge every outcome against `decide` (asked about the target's canonical path): a
/// disagreement must be listed in `table` with the same direction, and a listed one that
/// no longer disagrees is stale, so the table stays exactly the truth. Prints one line a
/// probe; returns the failures.
pub fn compare(
    targets: &[Target],
    outcomes: &[Outcome],
    table: &[Deviation],
    decide: impl Fn(&Path, Access) -> Decided,
) -> Vec<String> {
    let mut disagreements = HashSet::new();
    let mut failures = Vec::new();
    for o in outcomes {
        let t = &targets[o.target];
        let decision = decide(&t.decided, o.access);
        println!(
            "{:<48} {:<6} live={:<5} decide={:<5} [{}] {}",
            t.label,
            o.access.to_string(),
            o.live,
            decision.allowed,
            o.inside,
            decision.rule
        );
        if decision.allowed == o.live {
            continue;
        }
        disagreements.insert((t.label.clone(), o.access));
        match table
            .iter()
            .find(|d| d.label == t.label && d.access == o.access)
        {
            Some(d) if d.live == o.live && d.decide == decision.allowed => {}
            Some(d) => failures.push(format!(
                "deviation {} {} recorded as live={} decide={}, but live={} decide={}",
                o.access, t.label, d.live, d.decide, o.live, decision.allowed
            )),
            None => failures.push(format!(
                "unexplained: {} {}: live {} but decide {} ({})",
                o.access, t.label, o.live, decision.allowed, decision.rule
            )),
        }
    }
    for d in table {
        if !disagreements.contains(&(d.label.to_string(), d.access)) {
            failures.push(format!(
                "stale deviation: {} {} now agrees with decide ({}: {})",
                d.access, d.label, d.name, d.why
            ));
        }
    }
    failures
}
