//! Print the seccomp and environment tables for docs/security.md.
fn main() {
    println!("{}", jaula_sandbox::doc_tables::seccomp_table());
    println!("{}", jaula_sandbox::doc_tables::env_tables());
}
