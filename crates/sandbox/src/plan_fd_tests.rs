use std::io::Write;
use std::os::fd::OwnedFd;

use rustix::fs::{MemfdFlags, SealFlags};

use super::*;
use crate::launch_plan::tests::sample_plan;

fn memfd_with(bytes: &[u8], seals: SealFlags) -> OwnedFd {
    let fd =
        rustix::fs::memfd_create("test", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).unwrap();
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes).unwrap();
    if !seals.is_empty() {
        rustix::fs::fcntl_add_seals(&file, seals).unwrap();
    }
    file.into()
}

#[test]
fn a_sealed_plan_reads_back_whole() {
    let (_dir, plan) = sample_plan();
    let sealed = SealedPlan::new(&plan).unwrap();
    let seals = rustix::fs::fcntl_get_seals(&sealed.fd).unwrap();
    assert!(seals.contains(required_seals()), "{seals:?}");
    let copy = rustix::io::dup(&sealed.fd).unwrap();
    assert_eq!(read_sealed(copy).unwrap(), plan);
}

#[test]
fn a_sealed_plan_cannot_be_rewritten() {
    let (_dir, plan) = sample_plan();
    let sealed = SealedPlan::new(&plan).unwrap();
    let mut file = std::fs::File::from(rustix::io::dup(&sealed.fd).unwrap());
    assert!(
        file.write_all(b"{}").is_err(),
        "F_SEAL_WRITE/GROW must refuse writes"
    );
    assert!(
        file.set_len(1).is_err(),
        "F_SEAL_SHRINK must refuse truncation"
    );
}

#[test]
fn an_unsealed_memfd_is_refused() {
    let (_dir, plan) = sample_plan();
    let bytes = plan.to_bytes().unwrap();
    let unsealed = memfd_with(&bytes, SealFlags::empty());
    let err = read_sealed(unsealed).unwrap_err();
    assert!(matches!(err, PlanError::NotInherited { .. }), "{err}");
    // Sealed against writes but not against new seals or growth: still refused.
    let partial = memfd_with(&bytes, SealFlags::WRITE);
    let err = read_sealed(partial).unwrap_err();
    assert!(matches!(err, PlanError::NotInherited { .. }), "{err}");
}

#[test]
fn a_plain_file_is_refused() {
    let (_dir, plan) = sample_plan();
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(&plan.to_bytes().unwrap()).unwrap();
    let err = read_sealed(file.into()).unwrap_err();
    assert!(matches!(err, PlanError::NotInherited { .. }), "{err}");
}

#[test]
fn a_sealed_but_malformed_plan_is_refused() {
    // The current version, so the refusal is about the missing fields.
    let text = format!("{{\"version\": {}}}", crate::launch_plan::PLAN_VERSION);
    let sealed = memfd_with(text.as_bytes(), required_seals());
    let err = read_sealed(sealed).unwrap_err();
    assert!(matches!(err, PlanError::Malformed(_)), "{err}");
}

#[test]
fn the_child_finds_the_plan_on_the_fixed_descriptor() {
    let (_dir, plan) = sample_plan();
    let sealed = SealedPlan::new(&plan).unwrap();
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.args(["-c", &format!("cat /proc/self/fd/{PLAN_FD}")]);
    sealed.hand_to(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(LaunchPlan::from_bytes(&out.stdout).unwrap(), plan);
}
