//! Host directories several tests use at once (`/run/user/UID`, `/tmp/.X11-unix`): made
//! when the machine has none, and removed by the last test of this process that used
//! them, only if this process made them. A crate's suites run as threads of one process,
//! so two suites that each made and removed such a directory on their own would pull it
//! from under each other.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A hold on a shared host directory; the directory lives at least as long as the hold.
pub struct SharedDir {
    path: PathBuf,
}

/// Per path: how many holds there are, and whether this process made the directory.
static SHARED_DIRS: Mutex<Option<HashMap<PathBuf, (usize, bool)>>> = Mutex::new(None);

impl SharedDir {
    /// Hold `path`, making it (mode `mode`, owned by `uid`) if it does not exist.
    pub fn acquire(path: &Path, mode: u32, uid: u32) -> SharedDir {
        let mut guard = SHARED_DIRS.lock().unwrap_or_else(|e| e.into_inner());
        let map = guard.get_or_insert_with(HashMap::new);
        let entry = map.entry(path.to_path_buf()).or_insert((0, false));
        if entry.0 == 0 && !path.exists() {
            fs::create_dir_all(path).unwrap();
            fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
            entry.1 = true;
        }
        entry.0 += 1;
        SharedDir {
            path: path.to_path_buf(),
        }
    }

    /// The shared directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SharedDir {
    fn drop(&mut self) {
        let mut guard = SHARED_DIRS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(map) = guard.as_mut() else { return };
        if let Some(entry) = map.get_mut(&self.path) {
            entry.0 -= 1;
            if entry.0 == 0 {
                if entry.1 {
                    let _ = fs::remove_dir(&self.path);
                }
                map.remove(&self.path);
            }
        }
    }
}
