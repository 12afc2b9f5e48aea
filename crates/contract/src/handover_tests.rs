use super::owner_alone_can_rename;

const RUNNER: u32 = 1000;
const CONTRACT: u32 = 200_001;

#[test]
fn a_directory_of_root_or_the_runner_without_group_or_other_write_is_stable() {
    assert!(owner_alone_can_rename(0, 0o40755, RUNNER));
    assert!(owner_alone_can_rename(RUNNER, 0o40755, RUNNER));
    assert!(owner_alone_can_rename(RUNNER, 0o40700, RUNNER));
    // Setgid and sticky bits give no one else a say over names.
    assert!(owner_alone_can_rename(0, 0o43755, RUNNER));
}

#[test]
fn a_directory_the_contract_or_anyone_else_can_write_is_not() {
    // The Contract's own (an earlier hand-over gave it this directory).
    assert!(!owner_alone_can_rename(CONTRACT, 0o40755, RUNNER));
    // Some third uid's.
    assert!(!owner_alone_can_rename(4242, 0o40755, RUNNER));
    // Group-writable (with a POSIX ACL these bits are the mask, capping every entry).
    assert!(!owner_alone_can_rename(0, 0o40775, RUNNER));
    // World-writable, as a runner with umask 000 leaves it.
    assert!(!owner_alone_can_rename(RUNNER, 0o40757, RUNNER));
    assert!(!owner_alone_can_rename(0, 0o41777, RUNNER));
}
