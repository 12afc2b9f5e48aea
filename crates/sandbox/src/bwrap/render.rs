//! The argv: a policy turned into an ordered list of bubblewrap mounts.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use jaula_policy::{FileRule, Policy, ProtectKind};

use jaula_policy::HostFs;

use super::{BwrapError, BwrapOptions};

/// The base every cage starts from, and exactly what the availability probe runs: "bwrap
/// works here" must mean the sandbox an agent gets, not a smaller one.
///
/// `--cap-drop ALL` is there because bubblewrap started by real root
/// leaves the caged process every capability, and a process with CAP_SYS_ADMIN simply
/// unmounts the tmpfs over `~/.ssh` and reads the key beneath (pinned by a live test).
/// For an unprivileged owner bubblewrap drops them anyway, so the flag changes nothing
/// there.
pub(crate) const BASE_FLAGS: [&str; 7] =
    ["--ro-bind", "/", "/", "--dev", "/dev", "--cap-drop", "ALL"];

/// The cage's own device tree comes from `--dev`; binding the host's `/dev` over it would
/// hand the cage every host device node (disks, ttys) and undo that.
const DEV: &str = "/dev";
const DEV_NULL: &str = "/dev/null";
/// Replaced by the cage's own when [`BwrapOptions::private_tmp`] and
/// [`BwrapOptions::private_run_user`] say so: they hold the host's service sockets.
const TMP: &str = "/tmp";
const VAR_TMP: &str = "/var/tmp";
const RUN_USER: &str = "/run/user";

/// `program` followed by [`BASE_FLAGS`].
pub(crate) fn base_argv(options: &BwrapOptions) -> Vec<OsString> {
    let mut argv = vec![options.program.clone()];
    argv.extend(BASE_FLAGS.iter().map(OsString::from));
    argv
}

/// The flags [`BwrapOptions`] turns on, in the order they are appended.
pub(crate) fn option_flags(options: &BwrapOptions) -> Vec<&'static str> {
    let mut flags = Vec::new();
    if options.proc_fs {
        flags.extend(["--unshare-pid", "--proc", "/proc"]);
    }
    if options.die_with_parent {
        flags.push("--die-with-parent");
    }
    if options.unshare_net {
        flags.push("--unshare-net");
    }
    if options.net_bind_service {
        flags.extend(["--cap-add", "CAP_NET_BIND_SERVICE"]);
    }
    flags
}

/// The bubblewrap prefix that cages one window; the caller appends the command.
///
/// Pure: the only facts taken from outside `policy` are `disk`'s answers. The order, in
/// which a later mount covers an earlier one:
///
/// 1. `--ro-bind / / --dev /dev`: the whole host read-only, with the cage's own `/dev`.
/// 2. The cage's own temporary directories, when the options carry them, before every
///    other writable root so that a repo under `/tmp` is still bound over them:
///    `--bind-fd N /tmp`, `--bind-fd M /var/tmp`, and `--tmpfs /run/user --perms 0700
///    --dir /run/user/UID`. Then every writable root as `--bind-try P P`, except `/dev` and
///    the ones just replaced. `-try` because a build cache nobody has created yet is not an
///    error.
/// 3. Each [`FileRule::WritableFile`] as `--bind-try`. It comes before
///    the seals, so an owner who seals the file with a deny gets the seal, as `decide` says.
/// 4. Protected entries (`.git`) that exist as `--bind P P`: a directory bound onto itself
///    is a mount point, which rename(2) and rmdir(2) refuse with EBUSY, so the cage cannot
///    move `.git` away or put another in its place, while git still writes beneath it.
///    Then every other protected path that exists (cage configuration and the planting
///    guard) and that a writable mount touches (lies at, beneath or above it) as
///    `--ro-bind-try P P`: read-only even beneath a writable root or the entry's
///    self-bind, and still covered by any seal beneath or above it. One beneath the
///    cage's own `/tmp`, `/var/tmp` or `/run/user` that no host mount touches is not in
///    the view at all, and gets nothing (a bind would bring the host's in). One no writable mount
///    touches (`~/.bashrc` in the read-only home) is read-only through step 1 already, and
///    renaming over it needs a write to its read-only parent: it gets no mount of its own,
///    since each bind costs bubblewrap a full read of /proc/self/mountinfo. An absent protected
///    path gets nothing (a mount point would be left on the host as an empty placeholder);
///    `jaula run` reports it if the cage creates it.
/// 5. Seals that exist (see below): a directory as `--tmpfs P`, a file as
///    `--ro-bind-try /dev/null P`.
/// 6. The files of each [`FileRule::SealedPattern`] that existed at resolution, sealed as
///    in step 5. One made later is not covered: the `absent-sealed-creatable` deviation.
/// 7. Each [`FileRule::ReadableInSeal`] as `--ro-bind-try P P`: readable above every
///    seal.
/// 8. `--remount-ro P` for every tmpfs of step 5 and 6, so that a write into a sealed
///    directory fails, as `decide` says, instead of landing in a throwaway tmpfs where a
///    process could stage files under a trusted name. The
///    remounts come after step 7 because bubblewrap creates each mount point inside the
///    mount that holds it: a readable-in-seal file lives inside a sealed directory, and a
///    tmpfs already read-only there makes bubblewrap abort with EROFS ("Can't create
///    file"). `--remount-ro` changes only the flags of the topmost mount at `P`, so
///    deferring it changes nothing else.
/// 9. The options: `--unshare-pid --proc /proc`, `--die-with-parent`, `--unshare-net`,
///    `--cap-add CAP_NET_BIND_SERVICE`.
///
/// Only what exists is sealed, because a seal over a missing path is worse
/// than none: bubblewrap has no `--tmpfs-try` and creates a missing mount point with
/// mkdir(2) or open(O_CREAT). Over the read-only `/` that aborts the launch; beneath a
/// writable root it succeeds and leaves an empty directory or file on the owner's disk, so
/// a later `cargo login` or `aws configure` fails for reasons nobody traces back to the
/// cage. The cost is bounded and tested: `$HOME` itself is read-only in the cage, and a
/// missing secret beneath a writable root (`~/.cargo/credentials`) can be created by the
/// cage, which then only holds what the cage wrote.
///
/// A seal is rendered by what the disk holds, not by its declared kind, because the kernel
/// refuses the other way round (mount(2) fails with ENOTDIR putting a tmpfs on a file or
/// `/dev/null` on a directory, and bubblewrap then refuses to start). A declared directory
/// that is a file gets `/dev/null`, which covers everything a directory seal would (there
/// is nothing beneath a file). A declared file that is a directory gets the read-only
/// tmpfs, which hides the directory's entries too: stricter than `decide`, which seals only
/// the path itself, and never open.
pub fn render_argv(
    policy: &Policy,
    options: &BwrapOptions,
    disk: &dyn HostFs,
) -> Result<Vec<OsString>, BwrapError> {
    if options.program.is_empty() {
        return Err(BwrapError::EmptyProgram);
    }
    if options.program.as_bytes().contains(&0) {
        return Err(BwrapError::NulByte {
            what: "bubblewrap program",
            path: options.program.clone().into(),
        });
    }
    let mut argv = Argv(base_argv(options));
    let mut remounts: Vec<&Path> = Vec::new();

    let replaced = own_directories(&mut argv, options);
    for root in policy.writable() {
        if replaced.contains(&root.path.as_path()) {
            continue;
        }
        argv.op2("--bind-try", "writable root", &root.path, &root.path)?;
    }

    let files = FileMounts::of(policy);
    for (file, what) in &files.writable {
        argv.op2("--bind-try", what, file, file)?;
    }

    // Host sockets the owner allowed: the private /tmp and /run/user above hide where they
    // usually live (an ssh-agent in /tmp/ssh-*, gpg-agent in /run/user/UID/gnupg), so each
    // one that exists is bound in at its own path. The socket gate still decides every
    // connect; a read-only mount does not stop one, and the cage cannot unlink a mount.
    for socket in policy.unix_sockets() {
        if disk.exists(&socket.path) {
            argv.op2(
                "--ro-bind-try",
                "allowed unix socket",
                &socket.path,
                &socket.path,
            )?;
        }
    }

    protected_binds(&mut argv, policy, &files, options, disk)?;

    for sealed in policy.sealed() {
        argv.seal("sealed root", &sealed.path, disk, &mut remounts)?;
    }
    for (file, what) in &files.sealed {
        argv.seal(what, file, disk, &mut remounts)?;
    }

    for (file, what) in &files.readable_in_seal {
        argv.op2("--ro-bind-try", what, file, file)?;
    }

    for path in remounts {
        argv.op1("--remount-ro", "sealed root", path)?;
    }
    argv.0
        .extend(option_flags(options).into_iter().map(OsString::from));
    Ok(argv.0)
}

/// The view's own directories in place of the host's: the private `/tmp` and `/var/tmp`
/// by descriptor, and an empty `/run/user` with only this uid's directory. What they
/// replace (with `/dev`) is never bound from the host.
fn own_directories(argv: &mut Argv, options: &BwrapOptions) -> Vec<&'static Path> {
    let mut replaced: Vec<&Path> = vec![Path::new(DEV)];
    if let Some(fds) = options.private_tmp {
        argv.bind_fd(fds.tmp, TMP);
        argv.bind_fd(fds.var_tmp, VAR_TMP);
        replaced.extend([Path::new(TMP), Path::new(VAR_TMP)]);
    }
    if let Some(uid) = options.private_run_user {
        argv.0.extend(["--tmpfs".into(), RUN_USER.into()]);
        argv.0.extend([
            "--perms".into(),
            "0700".into(),
            "--dir".into(),
            format!("{RUN_USER}/{uid}").into(),
        ]);
        replaced.push(Path::new(RUN_USER));
    }
    replaced
}

/// The protected paths, read-only over the writable mounts that would expose them:
/// `.git`-like entries first (bound onto themselves), then every other protected path a
/// writable mount touches.
fn protected_binds(
    argv: &mut Argv,
    policy: &Policy,
    files: &FileMounts,
    options: &BwrapOptions,
    disk: &dyn HostFs,
) -> Result<(), BwrapError> {
    // Entries first: a protected path beneath a `.git` entry (its config, its hooks) must
    // be bound read-only on top of the entry's self-bind, not hidden under it.
    for protected in policy.protected() {
        if protected.kind == ProtectKind::Entry
            && disk.is_dir(&protected.path)
            && !disk.is_symlink(&protected.path)
        {
            argv.op2(
                "--bind",
                "protected entry",
                &protected.path,
                &protected.path,
            )?;
        }
    }
    // A protected path no writable mount touches is read-only already (`--ro-bind / /`):
    // binding it onto itself again would only cost bubblewrap another pass over
    // /proc/self/mountinfo, the most expensive step of building the view.
    let writable_mounts = writable_mounts(policy, files, options, disk);
    let own = own_mounts(options);
    let host_mounts: Vec<&Path> = writable_mounts
        .iter()
        .filter(|m| !own.contains(m))
        .copied()
        .collect();
    for protected in policy.protected() {
        if protected.kind != ProtectKind::Entry
            && disk.exists(&protected.path)
            && !disk.is_symlink(&protected.path)
            && touches_any(&protected.path, &writable_mounts)
            && !hidden_by_own(&protected.path, &own, &host_mounts)
        {
            argv.op2(
                "--ro-bind-try",
                "protected path",
                &protected.path,
                &protected.path,
            )?;
        }
    }
    Ok(())
}

/// The policy's [`FileRule`]s, sorted by the argv step their mounts belong to, each with
/// what it is (for error messages). One arm per kind: a new kind does not compile until
/// it has a place in the view.
struct FileMounts<'p> {
    /// Step 3: bound writable onto themselves.
    writable: Vec<(&'p Path, &'static str)>,
    /// Step 6: covered like sealed files.
    sealed: Vec<(&'p Path, &'static str)>,
    /// Step 7: bound read-only onto themselves, above the seals.
    readable_in_seal: Vec<(&'p Path, &'static str)>,
}

impl<'p> FileMounts<'p> {
    fn of(policy: &'p Policy) -> FileMounts<'p> {
        let mut files = FileMounts {
            writable: Vec::new(),
            sealed: Vec::new(),
            readable_in_seal: Vec::new(),
        };
        for rule in policy.file_rules() {
            let what = rule.source().noun();
            match rule {
                // A mount names one path: a name-prefix match (macOS only) binds the file.
                FileRule::WritableFile { path, .. } => files.writable.push((path, what)),
                FileRule::SealedPattern { existing, .. } => {
                    files
                        .sealed
                        .extend(existing.iter().map(|f| (f.as_path(), what)));
                }
                FileRule::ReadableInSeal { path, .. } => {
                    files.readable_in_seal.push((path, what));
                }
            }
        }
        files
    }
}

/// Every place the view mounts writable, as a superset: `/dev` (bubblewrap's `--dev` is a
/// writable tmpfs), the cage's own temporary directories, every writable root (whether or
/// not its `--bind-try` finds it), each writable file, and the protected entries bound
/// onto themselves (`.git`). Everything else in the view is the read-only `/`.
fn writable_mounts<'p>(
    policy: &'p Policy,
    files: &FileMounts<'p>,
    options: &BwrapOptions,
    disk: &dyn HostFs,
) -> Vec<&'p Path> {
    let mut mounts: Vec<&Path> = vec![Path::new(DEV)];
    if options.private_tmp.is_some() {
        mounts.extend([Path::new(TMP), Path::new(VAR_TMP)]);
    }
    if options.private_run_user.is_some() {
        mounts.push(Path::new(RUN_USER));
    }
    mounts.extend(policy.writable().iter().map(|w| w.path.as_path()));
    mounts.extend(files.writable.iter().map(|(file, _)| *file));
    mounts.extend(
        policy
            .protected()
            .iter()
            .filter(|p| p.kind == ProtectKind::Entry && disk.is_dir(&p.path))
            .map(|p| p.path.as_path()),
    );
    mounts
}

/// The cage's own directories that replace the host's in the view (`/tmp`, `/var/tmp`,
/// `/run/user`), when the options carry them.
fn own_mounts(options: &BwrapOptions) -> Vec<&'static Path> {
    let mut own = Vec::new();
    if options.private_tmp.is_some() {
        own.extend([Path::new(TMP), Path::new(VAR_TMP)]);
    }
    if options.private_run_user.is_some() {
        own.push(Path::new(RUN_USER));
    }
    own
}

/// Whether the host's `path` is absent from the view: it lies beneath one of the cage's own
/// directories and no mount of a host directory (`host`) touches it. Binding it read-only
/// would bring the host's file into the view: `/run/user/UID/systemd` (protected for its
/// units) holds the user manager's private socket.
fn hidden_by_own(path: &Path, own: &[&Path], host: &[&Path]) -> bool {
    own.iter().any(|m| path.starts_with(m)) && !touches_any(path, host)
}

/// Whether `path` lies at, beneath or above one of `mounts` (by component): only then can
/// a writable mount make it, or something beneath it, writable in the view. Protected paths
/// are canonical and not symlinks (checked by the caller), so the comparison is the one the
/// kernel's path walk makes.
fn touches_any(path: &Path, mounts: &[&Path]) -> bool {
    mounts
        .iter()
        .any(|m| path.starts_with(m) || m.starts_with(path))
}

struct Argv(Vec<OsString>);

impl Argv {
    fn op1(&mut self, op: &str, what: &'static str, path: &Path) -> Result<(), BwrapError> {
        check(what, path)?;
        self.0.push(op.into());
        self.0.push(path.into());
        Ok(())
    }

    fn bind_fd(&mut self, fd: std::os::fd::RawFd, dest: &str) {
        self.0
            .extend(["--bind-fd".into(), fd.to_string().into(), dest.into()]);
    }

    fn op2(
        &mut self,
        op: &str,
        what: &'static str,
        source: &Path,
        dest: &Path,
    ) -> Result<(), BwrapError> {
        check(what, source)?;
        check(what, dest)?;
        self.0.push(op.into());
        self.0.push(source.into());
        self.0.push(dest.into());
        Ok(())
    }

    /// Cover `path` by what it is on disk; nothing when it does not exist.
    fn seal<'p>(
        &mut self,
        what: &'static str,
        path: &'p Path,
        disk: &dyn HostFs,
        remounts: &mut Vec<&'p Path>,
    ) -> Result<(), BwrapError> {
        if !disk.exists(path) {
            return Ok(());
        }
        if disk.is_dir(path) {
            self.op1("--tmpfs", what, path)?;
            remounts.push(path);
        } else {
            self.op2("--ro-bind-try", what, Path::new(DEV_NULL), path)?;
        }
        Ok(())
    }
}

fn check(what: &'static str, path: &Path) -> Result<(), BwrapError> {
    if OsStr::as_bytes(path.as_os_str()).contains(&0) {
        return Err(BwrapError::NulByte {
            what,
            path: path.to_path_buf(),
        });
    }
    if !path.is_absolute() {
        return Err(BwrapError::NotAbsolute {
            what,
            path: path.to_path_buf(),
        });
    }
    Ok(())
}
