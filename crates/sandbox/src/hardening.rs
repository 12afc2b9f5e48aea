//! Process hardening applied before exec.
