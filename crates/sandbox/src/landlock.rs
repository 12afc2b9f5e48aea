//! Landlock layer: writes only beneath writable roots, reads everywhere but sealed roots.
