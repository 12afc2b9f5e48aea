//! Processes a test starts beside the cage (servers, agents, victims): never left running
//! after the test, whether it passed or panicked.

use std::process::Child;

/// A child process that is killed and reaped when dropped (or when [`Reaped::stop`] is
/// called first, for a test that must order its clean-up).
pub struct Reaped(pub Child);

impl Reaped {
    /// Kill and reap the process; a process already gone is no error.
    pub fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        self.stop();
    }
}
