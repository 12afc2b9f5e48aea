use std::os::unix::process::ExitStatusExt;

use super::*;

fn exited(code: i32) -> ExitStatus {
    ExitStatus::from_raw(code << 8)
}

#[test]
fn not_found_with_a_hidden_file_names_the_private_tmp_and_the_flag() {
    let hidden = [PathBuf::from("/tmp/work.sh")];
    let line = after_exit(exited(127), &hidden).unwrap();
    assert_eq!(
        line,
        "jaula: the command exited 127, and /tmp/work.sh is on the host's /tmp, which the \
         cage does not see: it has a private /tmp of its own; copy it into the repo, or pass \
         --allow-write /tmp/work.sh to bind it into the cage (writable)"
    );
    // Each interpreter fails its own way: dash and python exit 2, node 1, bash 126 on a
    // directory.
    for code in [1, 2, 126] {
        assert!(after_exit(exited(code), &hidden).is_some(), "{code}");
    }
}

#[test]
fn silent_for_success_a_signal_or_nothing_hidden() {
    let hidden = [PathBuf::from("/tmp/work.sh")];
    assert_eq!(after_exit(exited(0), &hidden), None);
    // Killed by a signal: no exit code at all.
    assert_eq!(after_exit(ExitStatus::from_raw(9), &hidden), None);
    assert_eq!(after_exit(exited(127), &[]), None);
}
