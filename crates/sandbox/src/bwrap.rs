//! bubblewrap argv rendering and the availability probe.
