//! seccomp deny-list layer.
