//! Per-tenant ("Contract") isolation. Not yet implemented: see issue 4.
#![forbid(unsafe_code)]
