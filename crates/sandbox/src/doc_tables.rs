//! The layers' and the backends' data tables as Markdown, so `docs/security.md` is
//! generated from the same lists the code enforces (`cargo run -p jaula-sandbox --example
//! doc_tables`) and a test fails when the two drift apart.

use jaula_policy::env::{default_keep_table, default_scrub_table};
use jaula_policy::seccomp::{deny_list, ArgMatch};

/// One row per seccomp deny rule: syscall, condition, errno, reason.
pub fn seccomp_table() -> String {
    let mut out = String::from("| syscall | refused when | returns | why |\n|---|---|---|---|\n");
    for rule in deny_list() {
        let when = if rule.when.is_empty() {
            "always".to_string()
        } else {
            let conds: Vec<String> = rule.when.iter().map(condition).collect();
            conds.join(" and ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            rule.syscall,
            when,
            rule.errno,
            one_line(rule.reason)
        ));
    }
    out
}

fn condition(cond: &ArgMatch) -> String {
    match *cond {
        ArgMatch::Equals { arg, value } => format!("arg{arg} (low 32 bits) = {value:#x}"),
        ArgMatch::AnyBitOf { arg, mask } => format!("arg{arg} has any of {mask:#x}"),
        ArgMatch::NoneOf {
            arg,
            allowed: [only],
        } => format!("arg{arg} (low 32 bits) ≠ {only:#x}"),
        ArgMatch::NoneOf { arg, allowed } => {
            let list: Vec<String> = allowed.iter().map(|v| format!("{v:#x}")).collect();
            format!("arg{arg} not in {{{}}}", list.join(", "))
        }
        ArgMatch::NonNull { arg } => format!("arg{arg} (all 64 bits) ≠ NULL"),
    }
}

/// The default environment scrub and keep lists.
pub fn env_tables() -> String {
    let mut out = String::from("Scrubbed by default:\n\n| pattern | why |\n|---|---|\n");
    for (pattern, why) in default_scrub_table() {
        out.push_str(&format!("| `{pattern}` | {} |\n", one_line(why)));
    }
    out.push_str("\nKept by default (the agent's own model credentials, and non-secrets):\n\n| pattern | why |\n|---|---|\n");
    for (pattern, why) in default_keep_table() {
        out.push_str(&format!("| `{pattern}` | {} |\n", one_line(why)));
    }
    out
}

/// One table per backend of [`crate::backends::all`]: every deviation it lists, its
/// direction and its reason.
pub fn deviation_tables() -> String {
    let mut out = String::new();
    for backend in crate::backends::all() {
        out.push_str(&format!(
            "`{}`:\n\n| name | direction | why |\n|---|---|---|\n",
            backend.name()
        ));
        for d in backend.deviations() {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                d.name,
                d.direction(),
                one_line(d.why)
            ));
        }
        out.push('\n');
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}
