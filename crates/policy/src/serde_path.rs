//! Paths in serialized policies, byte-exact.
//!
//! serde writes a `PathBuf` as a string and fails on one that is not UTF-8, but a Linux
//! path is bytes: a repo named with a Latin-1 byte is still a repo to cage. A UTF-8 path is
//! written as the plain string it always was (so `explain --json` and friends read the
//! same); any other as `{"bytes": [...]}`, and both read back to the very same path.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Text(String),
    Bytes { bytes: Vec<u8> },
}

fn repr(path: &Path) -> Repr {
    match path.to_str() {
        Some(text) => Repr::Text(text.to_owned()),
        None => Repr::Bytes {
            bytes: path.as_os_str().as_bytes().to_vec(),
        },
    }
}

fn path(repr: Repr) -> PathBuf {
    match repr {
        Repr::Text(text) => PathBuf::from(text),
        Repr::Bytes { bytes } => PathBuf::from(std::ffi::OsString::from_vec(bytes)),
    }
}

/// Writes `value` as text when it is UTF-8, as its bytes otherwise.
pub fn serialize<S: Serializer>(value: &Path, s: S) -> Result<S::Ok, S::Error> {
    repr(value).serialize(s)
}

/// Reads a path written by [`serialize`], text or bytes.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    Repr::deserialize(d).map(path)
}

/// `Option<PathBuf>`.
pub mod option {
    use super::*;

    /// [`super::serialize`] for a path that may be absent.
    pub fn serialize<S: Serializer>(value: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
        value.as_deref().map(repr).serialize(s)
    }

    /// [`super::deserialize`] for a path that may be absent.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
        Option::<Repr>::deserialize(d).map(|r| r.map(path))
    }
}

/// `Vec<PathBuf>`.
pub mod vec {
    use super::*;

    /// [`super::serialize`] for each path of a list.
    pub fn serialize<S: Serializer>(value: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(value.iter().map(|p| repr(p)))
    }

    /// [`super::deserialize`] for each path of a list.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        Vec::<Repr>::deserialize(d).map(|v| v.into_iter().map(path).collect())
    }
}

#[cfg(test)]
#[path = "serde_path_tests.rs"]
mod tests;
