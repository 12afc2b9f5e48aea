//! Print the seccomp, environment and backend deviation tables for docs/security.md.
fn main() {
    println!("{}", jaula_sandbox::doc_tables::seccomp_table());
    println!("{}", jaula_sandbox::doc_tables::env_tables());
    println!("{}", jaula_sandbox::doc_tables::deviation_tables());
}
