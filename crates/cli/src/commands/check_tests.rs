use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::probe_seatbelt;
use crate::test_support::scratch;

/// A stand-in for `/usr/bin/sandbox-exec`: exits 0 when called as `-p PROFILE CMD` with a
/// profile that starts with `(version 1)`, else says why on stderr and exits 65, as the
/// real one does for a profile it cannot compile.
fn fake_sandbox_exec(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("sandbox-exec");
    std::fs::write(
        &path,
        "#!/bin/sh\n[ \"$1\" = -p ] || { echo 'usage' >&2; exit 64; }\n\
         case \"$2\" in '(version 1)'*) exec \"$3\" ;; esac\n\
         echo 'sandbox-exec: syntax error' >&2; exit 65\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn the_probe_runs_the_profile_and_reports_a_refusal_with_its_stderr() {
    let (_dir, root) = scratch("check-seatbelt-");
    let exec = fake_sandbox_exec(&root);
    let t = Path::new("/bin/true");
    assert_eq!(probe_seatbelt(&exec, super::TRIVIAL_PROFILE, t), Ok(()));
    let err = probe_seatbelt(&exec, "(allow default)", t).unwrap_err();
    assert!(err.contains("syntax error"), "{err}");
    // The command's own failure is a failure too.
    assert!(probe_seatbelt(&exec, super::TRIVIAL_PROFILE, Path::new("/bin/false")).is_err());
    let err = probe_seatbelt(&root.join("absent"), "x", t).unwrap_err();
    assert!(err.contains("cannot execute"), "{err}");
}
