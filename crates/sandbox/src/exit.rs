//! Leaving the way a child left: jaula waits for the command it cages (the socket gate's
//! supervisor on Linux, the Seatbelt launch's proxy supervision on macOS) and must end
//! with the same status, so a shell or launcher cannot tell it apart from the command.

/// Leave as `status` says the child left: the same exit code, or the same signal (its
/// default disposition restored first, so a shell sees "killed by SIGTERM", not 143).
pub fn exit_like(status: std::process::ExitStatus) -> ! {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        // SAFETY: restoring SIG_DFL for one signal, unblocking it and raising it touch only
        // this process's own dispositions and mask; if the signal does not end the process
        // (e.g. SIGCHLD), the exit below does.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
        std::process::exit(128 + signal);
    }
    std::process::exit(status.code().unwrap_or(126))
}
