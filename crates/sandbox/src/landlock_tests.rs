use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use jaula_policy::{EntryKind, HostFs, Platform, Policy, PolicySpec};

use super::*;

/// A filesystem held in memory, recording which directories were listed.
#[derive(Default)]
struct FakeFs {
    nodes: BTreeMap<PathBuf, EntryKind>,
    listed: RefCell<Vec<PathBuf>>,
    unlistable: Vec<PathBuf>,
}

impl FakeFs {
    fn new() -> FakeFs {
        let mut fs = FakeFs::default();
        fs.nodes.insert(PathBuf::from("/"), EntryKind::Directory);
        fs
    }
    fn parents(&mut self, path: &Path) {
        let mut cursor = path.parent();
        while let Some(p) = cursor {
            self.nodes.insert(p.to_path_buf(), EntryKind::Directory);
            cursor = p.parent();
        }
    }
    fn dir(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.parents(path.as_ref());
        self.nodes
            .insert(path.as_ref().to_path_buf(), EntryKind::Directory);
        self
    }
    fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.parents(path.as_ref());
        self.nodes
            .insert(path.as_ref().to_path_buf(), EntryKind::File);
        self
    }
    fn node(&mut self, path: impl AsRef<Path>, kind: EntryKind) -> &mut Self {
        self.parents(path.as_ref());
        self.nodes.insert(path.as_ref().to_path_buf(), kind);
        self
    }
    fn listed(&self) -> Vec<PathBuf> {
        let mut v = self.listed.borrow().clone();
        v.sort();
        v
    }
}

impl HostFs for FakeFs {
    fn kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        Ok(self.nodes.get(path).copied())
    }
    // The planner never follows a link: no fake tree here needs a link's target.
    fn resolved_kind(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        self.kind(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(OsString, EntryKind)>> {
        self.listed.borrow_mut().push(dir.to_path_buf());
        if self.unlistable.iter().any(|d| d == dir) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        if self.nodes.get(dir) != Some(&EntryKind::Directory) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        Ok(self
            .nodes
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .filter_map(|(p, k)| p.file_name().map(|n| (n.to_os_string(), *k)))
            .collect())
    }
}

const HOME: &str = "/home/u";

fn h(rel: &str) -> PathBuf {
    Path::new(HOME).join(rel)
}

/// The repo must exist on the real disk for the policy to resolve; the manifest dir does,
/// and lies neither under the fake home nor under `/tmp`.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn spec() -> PolicySpec {
    PolicySpec::with_defaults(Platform::Linux, PathBuf::from(HOME), repo())
}

fn policy(spec: PolicySpec) -> Policy {
    match spec.resolve() {
        Ok(p) => p,
        Err(e) => panic!("policy: {e}"),
    }
}

/// A machine-shaped tree: system dirs, a home with credentials, caches and state.
fn tree() -> FakeFs {
    let mut fs = FakeFs::new();
    for d in [
        "/bin",
        "/etc",
        "/usr/bin",
        "/proc/1",
        "/sys",
        "/tmp",
        "/var/tmp",
        "/run/user",
    ] {
        fs.dir(d);
    }
    fs.file("/etc/passwd");
    fs.node("/vmlinuz", EntryKind::Symlink);
    fs.node("/dev/null", EntryKind::Other)
        .node("/dev/tty", EntryKind::Other)
        .node("/dev/sda", EntryKind::Other)
        .node("/dev/ptmx", EntryKind::Other)
        .node("/dev/fd", EntryKind::Symlink)
        .dir("/dev/pts")
        .dir("/dev/shm");
    fs.dir(repo().join("src"));
    fs.file(h(".ssh/id_ed25519"))
        .file(h(".bashrc"))
        .file(h(".profile"))
        .file(h(".claude.json"))
        .file(h(".claude/.credentials.json"))
        .file(h(".claude/settings.json"))
        .file(h(".claude/projects/p/log.jsonl"))
        .file(h(".cargo/credentials.toml"))
        .file(h(".cargo/registry/cache/x.crate"))
        .file(h(".config/gh/hosts.yml"))
        .file(h(".config/jaula/config.toml"))
        .file(h(".config/other/x.conf"))
        .file(h(".cache/pip/x"))
        .file(h(".agents-city/.runtime/broker/w1.token"))
        .file(h(".agents-city/.runtime/broker/w2.token"))
        .file(h(".agents-city/.runtime/cage/w1.sb"))
        .file(h(".agents-city/state.json"))
        .file(h("Documents/deep/er/file.txt"));
    fs
}

fn plan_of(policy: &Policy, mode: PlanMode, fs: &FakeFs) -> Plan {
    match plan(policy, mode, fs) {
        Ok(p) => p,
        Err(e) => panic!("plan: {e}"),
    }
}

/// The default policy's plan over the default tree.
fn default_plan(mode: PlanMode) -> Plan {
    plan_of(&policy(spec()), mode, &tree())
}

fn rights(plan: &Plan, path: impl AsRef<Path>) -> Option<Rights> {
    plan.rule(path.as_ref()).map(|r| r.rights)
}

/// Each path's rights in `plan`, as expected (`None`: no rule of its own).
fn assert_rights(plan: &Plan, expected: impl IntoIterator<Item = (PathBuf, Option<Rights>)>) {
    for (path, want) in expected {
        assert_eq!(rights(plan, &path), want, "{}", path.display());
    }
}

/// Whether `plan` has no rule at or beneath `dir`.
fn names_nothing_under(plan: &Plan, dir: impl AsRef<Path>) -> bool {
    plan.rules.iter().all(|r| !r.path.starts_with(dir.as_ref()))
}

/// Whether `plan` splits `dir` for reads and for writes, if it splits it at all.
fn split_of(plan: &Plan, dir: impl AsRef<Path>) -> Option<(bool, bool)> {
    let split = plan.split.iter().find(|s| s.path == dir.as_ref())?;
    Some((split.read, split.write))
}

const READ_DIR: Rights = Rights::single(Right::ReadDir);

fn file(r: Rights) -> Rights {
    r & Rights::FILE
}

#[test]
fn complement_grants_names_on_ancestors_and_everything_beside() {
    let plan = default_plan(PlanMode::Native);

    for ancestor in ["/", "/home", HOME] {
        assert_eq!(rights(&plan, ancestor), Some(READ_DIR), "{ancestor}");
    }
    assert_eq!(rights(&plan, h(".ssh")), None);
    assert!(plan.holes.contains(&h(".ssh")));
    assert_eq!(rights(&plan, h(".ssh/id_ed25519")), None);
    assert_eq!(rights(&plan, h(".bashrc")), Some(file(Rights::READ)));
    assert_eq!(rights(&plan, h("Documents")), Some(Rights::READ));
    assert_eq!(rights(&plan, "/etc"), Some(Rights::READ));
    assert_eq!(rights(&plan, "/tmp"), Some(Rights::READ | Rights::WRITE));
    assert_eq!(rights(&plan, "/var"), Some(Rights::READ));
    assert_eq!(
        rights(&plan, "/var/tmp"),
        Some(Rights::READ | Rights::WRITE)
    );
    assert_eq!(
        rights(&plan, "/run/user"),
        Some(Rights::READ | Rights::WRITE)
    );
    assert_eq!(rights(&plan, repo()), Some(Rights::READ | Rights::WRITE));
    assert_eq!(
        rights(&plan, h(".cache")),
        Some(Rights::READ | Rights::WRITE)
    );
    // Symlinks get no rule: a rule would follow them, possibly into a sealed root.
    assert_eq!(rights(&plan, "/vmlinuz"), None);
    // Nothing beneath a sibling is ever named.
    assert!(names_nothing_under(&plan, h("Documents/deep")));
}

#[test]
fn only_ancestors_are_listed_so_a_huge_home_costs_one_rule_per_entry() {
    let policy = policy(spec());
    let mut fs = tree();
    for i in 0..2000 {
        fs.file(h(&format!("junk/{i}/x")));
        fs.file(h(&format!("f{i}")));
    }
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    let listed = fs.listed();
    // Every listed directory is split: an ancestor of something sealed or protected.
    let split: Vec<PathBuf> = plan.split.iter().map(|s| s.path.clone()).collect();
    for dir in &listed {
        assert!(
            split.contains(dir) || dir == &h(".claude/channels"),
            "{} listed but not split",
            dir.display()
        );
    }
    assert!(!listed.contains(&h("junk")));
    assert!(!listed.contains(&h("Documents")));
    let in_home = plan
        .rules
        .iter()
        .filter(|r| r.path.parent() == Some(Path::new(HOME)))
        .count();
    // 2000 files, junk, Documents, .bashrc, .profile, .claude.json, .cache; the split
    // directories (.claude, .cargo, .config, .agents-city) get their own entries elsewhere.
    assert!(
        (2000..2020).contains(&in_home),
        "{in_home} rules directly in the home"
    );
    assert_eq!(rights(&plan, h("junk")), Some(Rights::READ));
}

#[test]
fn a_sealed_file_inside_a_writable_root_splits_that_root() {
    let plan = default_plan(PlanMode::Native);
    // ~/.claude holds the sealed credentials: names only, no write of its own.
    assert_eq!(rights(&plan, h(".claude")), Some(READ_DIR));
    assert_eq!(rights(&plan, h(".claude/.credentials.json")), None);
    assert!(plan.holes.contains(&h(".claude/.credentials.json")));
    // Claude's settings run hooks for the owner later: readable, never writable.
    assert_eq!(
        rights(&plan, h(".claude/settings.json")),
        Some(file(Rights::READ))
    );
    assert_eq!(
        rights(&plan, h(".claude/projects")),
        Some(Rights::READ | Rights::WRITE)
    );
    assert_eq!(rights(&plan, h(".cargo")), Some(READ_DIR));
    assert_eq!(rights(&plan, h(".cargo/credentials.toml")), None);
    assert_eq!(
        rights(&plan, h(".cargo/registry")),
        Some(Rights::READ | Rights::WRITE)
    );
    assert_eq!(split_of(&plan, h(".claude")), Some((true, true)));
    // REFER only ever comes with the rest of the write rights.
    for rule in &plan.rules {
        if rule.rights.has(Right::Refer) {
            assert!(
                rule.rights.contains(Rights::WRITE),
                "{}",
                rule.path.display()
            );
        }
    }
}

#[test]
fn the_token_file_is_the_one_readable_file_inside_the_sealed_broker_dir() {
    let mut spec = spec();
    spec.token_file = Some(h(".agents-city/.runtime/broker/w1.token"));
    let policy = policy(spec);
    let fs = tree();
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    let broker = h(".agents-city/.runtime/broker");
    assert_eq!(rights(&plan, &broker), None);
    assert_eq!(
        rights(&plan, broker.join("w1.token")),
        Some(Rights::single(Right::ReadFile))
    );
    assert_eq!(rights(&plan, broker.join("w2.token")), None);
    assert_eq!(
        plan.rule(&broker.join("w1.token"))
            .map(|r| r.reasons.clone()),
        Some(vec![Reason::ReadableInSeal {
            source: jaula_policy::FileRuleSource::WindowToken
        }])
    );
    // The protected cage profiles stay readable, never writable.
    assert_eq!(
        rights(&plan, h(".agents-city/.runtime/cage")),
        Some(Rights::READ)
    );
    assert_eq!(rights(&plan, h(".agents-city/.runtime")), Some(READ_DIR));
    assert_eq!(
        rights(&plan, h(".agents-city/state.json")),
        Some(file(Rights::READ | Rights::WRITE))
    );
}

#[test]
fn absent_seals_get_no_rule_but_still_split_their_deepest_existing_ancestor() {
    let policy = policy(spec());
    let mut fs = FakeFs::new();
    fs.dir(repo());
    fs.file(h(".bashrc"))
        .file(h(".claude/settings.json"))
        .file(h(".config/other/x"))
        .dir(h(".cache"));
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    // ~/.aws and ~/.ssh are absent: nothing is created, nothing named.
    assert!(names_nothing_under(&plan, h(".aws")));
    assert!(plan.holes.is_empty());
    // The home is still split, so a ~/.ssh created later by the host stays unreadable.
    assert_eq!(rights(&plan, HOME), Some(READ_DIR));
    // ~/.claude/.credentials.json may not be created by the cage: ~/.claude is split.
    assert_eq!(rights(&plan, h(".claude")), Some(READ_DIR));
    // ~/.config/gh may not be planted: ~/.config is split, its other entries writable.
    assert_eq!(rights(&plan, h(".config")), Some(READ_DIR));
    assert_eq!(
        rights(&plan, h(".config/other")),
        Some(Rights::READ | Rights::WRITE)
    );
    // No rule of any plan may grant inside a sealed path.
    for rule in &plan.rules {
        assert!(
            !policy
                .decide(&rule.path, jaula_policy::Access::Read)
                .rule
                .describe(Path::new(HOME))
                .starts_with("sealed"),
            "{}",
            rule.path.display()
        );
    }
}

#[test]
fn protected_config_is_readable_never_writable_inside_writable_config() {
    let plan = default_plan(PlanMode::Native);
    assert_eq!(rights(&plan, h(".config/jaula")), Some(Rights::READ));
    assert_eq!(
        rights(&plan, h(".config/other")),
        Some(Rights::READ | Rights::WRITE)
    );
    assert_eq!(rights(&plan, h(".config")), Some(READ_DIR));
    assert!(names_nothing_under(&plan, h(".config/gh")));
}

#[test]
fn protected_path_alone_splits_writes_but_not_reads() {
    // Without any seal below ~/.config (a deny list can't remove defaults, so use a
    // relocated config dir inside a cache): the cache is split for writes only.
    let mut spec = spec();
    spec.config_dir = h(".cache/jaula");
    let policy = policy(spec);
    let mut fs = tree();
    fs.file(h(".cache/jaula/config.toml"));
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    assert_eq!(rights(&plan, h(".cache")), Some(Rights::READ));
    assert_eq!(rights(&plan, h(".cache/jaula")), None);
    assert_eq!(rights(&plan, h(".cache/pip")), Some(Rights::WRITE));
    assert_eq!(split_of(&plan, h(".cache")), Some((false, true)));
}

#[test]
fn channel_seats_are_split_so_no_token_can_be_created_or_read() {
    let policy = policy(spec());
    let mut fs = tree();
    fs.file(h(".claude/channels/seat1/.env"))
        .file(h(".claude/channels/seat1/other"))
        .dir(h(".claude/channels/seat2"));
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    assert_eq!(rights(&plan, h(".claude/channels")), Some(READ_DIR));
    assert_eq!(rights(&plan, h(".claude/channels/seat1")), Some(READ_DIR));
    assert_eq!(rights(&plan, h(".claude/channels/seat2")), Some(READ_DIR));
    assert_eq!(rights(&plan, h(".claude/channels/seat1/.env")), None);
    assert_eq!(
        rights(&plan, h(".claude/channels/seat1/other")),
        Some(file(Rights::READ | Rights::WRITE))
    );
}

#[test]
fn native_dev_grants_only_the_cage_devices() {
    let plan = default_plan(PlanMode::Native);
    let rw_dev = Rights::READ | Rights::WRITE | Rights::single(Right::IoctlDev);
    assert_eq!(rights(&plan, "/dev"), Some(READ_DIR));
    assert_eq!(rights(&plan, "/dev/null"), Some(file(rw_dev)));
    assert_eq!(rights(&plan, "/dev/tty"), Some(file(rw_dev)));
    assert_eq!(rights(&plan, "/dev/pts"), Some(rw_dev));
    assert_eq!(rights(&plan, "/dev/sda"), None);
    assert_eq!(rights(&plan, "/dev/fd"), None);
    // IOCTL_DEV is granted nowhere else.
    for rule in &plan.rules {
        if rule.rights.has(Right::IoctlDev) {
            assert!(rule.path.starts_with("/dev"), "{}", rule.path.display());
        }
    }
}

#[test]
fn bwrap_view_reads_slash_whole_and_writes_roots_whole() {
    let policy = policy(spec());
    let mut fs = tree();
    fs.file(h(".claude/channels/seat1/.env"))
        .file(h(".cargo/credentials"));
    let plan = plan_of(&policy, PlanMode::BwrapView, &fs);
    assert_eq!(rights(&plan, "/"), Some(Rights::READ));
    assert_eq!(
        plan.rule(Path::new("/")).map(|r| r.reasons.clone()),
        Some(vec![Reason::WorldReadable])
    );
    assert!(plan.holes.is_empty());
    // No read split anywhere: the view hides the sealed roots, so no names leak and
    // nothing is frozen.
    assert!(plan.split.iter().all(|s| !s.read));
    assert_eq!(rights(&plan, HOME), None);
    assert_eq!(rights(&plan, h(".ssh")), None);
    assert_eq!(
        rights(&plan, h(".cache")),
        Some(Rights::READ | Rights::WRITE)
    );
    assert_eq!(
        rights(&plan, "/dev"),
        Some(Rights::READ | Rights::WRITE | Rights::single(Right::IoctlDev))
    );
    assert_eq!(rights(&plan, repo()), Some(Rights::READ | Rights::WRITE));
    // ~/.cargo: both credential files exist and the view hides them: written whole.
    assert_eq!(
        rights(&plan, h(".cargo")),
        Some(Rights::READ | Rights::WRITE)
    );
}

#[test]
fn bwrap_view_grants_writable_roots_whole_and_splits_only_for_absent_protection() {
    let policy = policy(spec());
    let mut fs = tree();
    // No cargo credentials yet: the view cannot mount over an absent file, and that stays
    // the mount layer's documented deviation; Landlock does not split ~/.cargo for it,
    // which would forbid every new entry there (cargo's registry on first use).
    fs.nodes.remove(&h(".cargo/credentials.toml"));
    let plan = plan_of(&policy, PlanMode::BwrapView, &fs);
    assert!(rights(&plan, h(".cargo")).is_some_and(|r| r.contains(Rights::WRITE)));
    assert!(!plan.split.iter().any(|s| s.path == h(".cargo")));
    // The protected configuration exists, so the view binds it read-only: no split.
    assert!(fs.nodes.contains_key(&h(".config/jaula")));
    assert!(rights(&plan, h(".config")).is_some_and(|r| r.contains(Rights::WRITE)));
    // Absent protection is the one thing Landlock must still keep from being created.
    fs.nodes.retain(|p, _| !p.starts_with(h(".config/jaula")));
    let plan = plan_of(&policy, PlanMode::BwrapView, &fs);
    assert_eq!(rights(&plan, h(".config")), None);
    assert_eq!(rights(&plan, h(".config/other")), Some(Rights::WRITE));
    assert!(plan.split.iter().any(|s| s.path == h(".config") && s.write));
}

#[test]
fn symlinks_beside_a_seal_get_no_rule() {
    let policy = policy(spec());
    let mut fs = tree();
    // ~/keys -> ~/.ssh : a rule on it would be opened through the link, onto the seal.
    fs.node(h("keys"), EntryKind::Symlink);
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    assert_eq!(rights(&plan, h("keys")), None);
}

#[test]
fn an_unlistable_ancestor_grants_nothing_inside_and_says_so() {
    let policy = policy(spec());
    let mut fs = tree();
    fs.unlistable.push(PathBuf::from(HOME));
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    assert_eq!(rights(&plan, HOME), Some(READ_DIR));
    assert_eq!(rights(&plan, h(".bashrc")), None);
    assert!(plan
        .notes
        .iter()
        .any(|n| matches!(n, PlanNote::Unlistable { dir, .. } if dir == Path::new(HOME))));
}

#[test]
fn macos_policies_are_refused() {
    let mut spec = spec();
    spec.platform = Platform::MacOs;
    let policy = policy(spec);
    let err = plan(&policy, PlanMode::Native, &tree());
    assert!(matches!(err, Err(LandlockError::NotLinux { .. })));
}

#[test]
fn plan_prints_and_serializes() {
    let policy = policy(spec());
    let plan = plan_of(&policy, PlanMode::Native, &tree());
    let text = plan.to_string();
    assert!(text.contains("names only"), "{text}");
    assert!(
        text.contains(&format!("{}  [sealed]", h(".ssh").display())),
        "{text}"
    );
    assert!(
        text.contains("read+write   /home/u/.claude/projects"),
        "{text}"
    );
    let json = serde_json::to_value(&plan).unwrap_or_default();
    let root = &json["rules"][0];
    assert_eq!(root["path"], "/");
    assert_eq!(root["rights"], serde_json::json!(["read-dir"]));
    assert_eq!(root["reasons"][0]["reason"], "seal-ancestor");
}

#[test]
fn rights_display_and_abi_filter() {
    assert_eq!(Rights::READ.to_string(), "read");
    assert_eq!((Rights::READ | Rights::WRITE).to_string(), "read+write");
    assert_eq!(READ_DIR.to_string(), "read-dir");
    assert_eq!(Rights::EMPTY.to_string(), "none");
    assert_eq!(Rights::HANDLED.available_at(1), Rights::FLOOR);
    assert!(!Rights::HANDLED.available_at(2).has(Right::Truncate));
    assert!(Rights::HANDLED.available_at(3).has(Right::Truncate));
    assert_eq!(Rights::HANDLED.available_at(5), Rights::HANDLED);
    assert_eq!(Rights::FILE & READ_DIR, Rights::EMPTY);
}

#[test]
fn deviations_are_named_once() {
    let mut names: Vec<&str> = DEVIATIONS.iter().map(|d| d.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), DEVIATIONS.len());
}

#[test]
fn planting_paths_split_natively_only_where_it_costs_no_agent_work() {
    let mut spec = spec();
    spec.runtime_dir = Some(PathBuf::from("/run/user/1000"));
    let policy = policy(spec);
    let mut fs = tree();
    fs.dir(h(".local/share/uv"))
        .file(h(".codex/history.jsonl"))
        .dir("/run/user/1000");
    let plan = plan_of(&policy, PlanMode::Native, &fs);
    let rw = Some(Rights::READ | Rights::WRITE);
    assert_rights(
        &plan,
        [
            // The repo is never split: every new file there is the agent's work.
            (repo(), rw),
            // Nor ~/.local/share, ~/.codex and /run/user/UID (the protected-not-split
            // deviation).
            (h(".local/share"), rw),
            (h(".codex"), rw),
            (PathBuf::from("/run/user"), rw),
            // ~/.config and ~/.claude were split already (jaula's config, Claude's
            // credentials): the planting paths there cost nothing more and are enforced.
            (h(".config"), Some(READ_DIR)),
            (h(".claude/settings.json"), Some(file(Rights::READ))),
        ],
    );
    assert!(plan.split.iter().any(|s| s.path == h(".config") && s.write));
}

#[test]
fn inside_the_view_absent_planting_paths_split_nothing() {
    let plan = default_plan(PlanMode::BwrapView);
    // ~/.config/git, ~/.config/systemd and ~/.cargo/config.toml are absent from the tree:
    // the view keeps ~/.config and ~/.cargo open for new entries, and reports instead.
    assert!(rights(&plan, h(".config")).is_some_and(|r| r.contains(Rights::WRITE)));
    assert!(rights(&plan, h(".cargo")).is_some_and(|r| r.contains(Rights::WRITE)));
}

/// The planner renders rule kinds, not known files: each kind given for a path no default
/// names gets the grant (or the seal) of its kind.
#[test]
fn file_rule_kinds_are_planned_by_kind_for_any_path() {
    use crate::test_support::with_each_file_rule_kind;
    use jaula_policy::{FileMatch, FileRuleSource};
    let mut spec = spec();
    spec.extra_sealed = vec![h("vault")];
    let bare = policy(spec);
    let policy = with_each_file_rule_kind(
        bare.clone(),
        &h("vault/keep.txt"),
        &h("notes.db"),
        FileMatch::Exact,
        &h("Documents/tenants"),
        Vec::new(),
    );
    let mut fs = tree();
    fs.file(h("vault/keep.txt"))
        .file(h("vault/other.txt"))
        .file(h("notes.db"))
        .file(h("Documents/tenants/acme/secret.key"))
        .file(h("Documents/tenants/acme/readme"))
        .dir(h("Documents/tenants/beta"));

    let before = plan_of(&bare, PlanMode::Native, &fs);
    assert_eq!(rights(&before, h("vault/keep.txt")), None);
    assert_eq!(rights(&before, h("notes.db")), Some(file(Rights::READ)));
    assert_eq!(rights(&before, h("Documents")), Some(Rights::READ));

    let plan = plan_of(&policy, PlanMode::Native, &fs);
    // Readable inside the seal: READ_FILE on the file alone, the seal's other files held.
    assert_eq!(
        rights(&plan, h("vault/keep.txt")),
        Some(Rights::single(Right::ReadFile))
    );
    assert_eq!(
        plan.rule(&h("vault/keep.txt")).map(|r| r.reasons.clone()),
        Some(vec![Reason::ReadableInSeal {
            source: FileRuleSource::WindowToken
        }])
    );
    assert_eq!(rights(&plan, h("vault/other.txt")), None);
    assert_eq!(rights(&plan, h("vault")), None);
    // Writable in the read-only home: the file alone.
    assert_eq!(
        rights(&plan, h("notes.db")),
        Some(file(Rights::READ | Rights::WRITE))
    );
    assert_eq!(rights(&plan, HOME), Some(READ_DIR));
    // The pattern: its directory and each child split, the match a hole, the rest read.
    assert_rights(
        &plan,
        [
            (h("Documents"), Some(READ_DIR)),
            (h("Documents/tenants"), Some(READ_DIR)),
            (h("Documents/tenants/acme"), Some(READ_DIR)),
            (h("Documents/tenants/beta"), Some(READ_DIR)),
            (h("Documents/tenants/acme/secret.key"), None),
            (h("Documents/tenants/acme/readme"), Some(file(Rights::READ))),
        ],
    );
    assert!(plan.holes.contains(&h("Documents/tenants/acme/secret.key")));
}

#[test]
fn under_the_gate_the_supervisor_gets_split_directories_whole_and_the_command_the_split() {
    let plan = default_plan(PlanMode::Native);
    let Some(split) = plan.gate_split() else {
        panic!("the home tree has write-split directories")
    };
    let runtime = h(".agents-city/.runtime");
    let broker = runtime.join("broker");
    for dir in [&runtime, &h(".claude"), &h(".config"), &h(".cargo")] {
        assert!(split.widened.contains(dir), "{}", dir.display());
    }
    // The supervisor: the plan's reads, and every write right on the split directory
    // (its sealed and protected entries are the gate's to refuse).
    assert_eq!(
        rights(&split.supervisor, &runtime),
        Some(READ_DIR | Rights::WRITE)
    );
    assert_eq!(rights(&split.supervisor, &broker), None);
    assert!(split.supervisor.holes.contains(&broker));
    // Nothing but the split directories changed.
    for rule in &plan.rules {
        if split.widened.contains(&rule.path) {
            continue;
        }
        assert_eq!(rights(&split.supervisor, &rule.path), Some(rule.rights));
    }
    assert_eq!(
        split.supervisor.rules.len(),
        plan.rules.len()
            + split
                .widened
                .iter()
                .filter(|d| plan.rule(d).is_none())
                .count()
    );
    // The command: the plan's write grants alone (reads are the supervisor's domain's,
    // the same rules), so the stack of the two is the plan.
    assert_eq!(rights(&split.command_writes, &runtime), None);
    assert_eq!(
        rights(&split.command_writes, h(".agents-city/state.json")),
        Some(file(Rights::WRITE))
    );
    assert_eq!(
        rights(&split.command_writes, h(".cache")),
        Some(Rights::WRITE)
    );
    assert!(split
        .command_writes
        .rules
        .iter()
        .all(|r| (r.rights - Rights::WRITE).is_empty()));
    assert!(split.command_writes.rules.iter().all(|r| plan
        .rule(&r.path)
        .is_some_and(|p| p.rights & Rights::WRITE == r.rights)));
}

#[test]
fn a_plan_without_write_splits_has_nothing_for_the_gate_to_take() {
    let policy = policy(spec());
    let mut fs = FakeFs::new();
    fs.dir("/tmp").dir(repo().join("src"));
    let plan = plan_of(&policy, PlanMode::BwrapView, &fs);
    assert!(plan.split.iter().all(|d| !d.write));
    assert_eq!(plan.gate_split(), None);
}
