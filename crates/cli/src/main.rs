//! `jaula`: confine AI coding agents, and every command they spawn, with kernel-enforced
//! sandboxes. This binary wires the crates together and prints; it holds no policy logic.

mod access_token;
mod args;
mod commands;
mod context;
mod error;
#[cfg(target_os = "linux")]
mod ids;
mod report;
#[cfg(test)]
mod test_support;

use clap::{Parser, Subcommand};

use std::io::Write;

use crate::error::CliError;

pub use crate::report::{Outcome, Report};

const ABOUT: &str =
    "Confine AI coding agents, and every command they spawn, with kernel-enforced sandboxes.";

const LONG_ABOUT: &str = "\
Confine AI coding agents, and every command they spawn, with kernel-enforced sandboxes.

One policy per agent window: the owner's credentials (~/.ssh, ~/.aws, cloud and registry
tokens, ...) sealed for read and write; writes allowed only to the window's repo and the
runtime state and caches an agent legitimately owns. The same meaning is rendered as a
macOS Seatbelt profile or a Linux bubblewrap mount view.

Commands a tmux launcher calls: line, profile, check (docs/compatibility.md).
Inspection: explain (why a path is allowed or denied), render (print a backend's artifact).

Sources, lowest precedence first: built-in defaults, the config file
(~/.config/jaula/config.toml, JAULA_CONFIG, --config), environment variables
(CITY_CAGE, CITY_CAGE_DENY, CITY_CAGE_ALLOW_WRITE, CITY_CAGE_BWRAP, AGENTS_CITY_HOME),
command-line flags. See docs/configuration.md.";

#[derive(Parser, Debug)]
#[command(name = "jaula", version, about = ABOUT, long_about = LONG_ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Line(commands::line::LineArgs),
    Profile(commands::profile::ProfileArgs),
    Check(commands::check::CheckArgs),
    Explain(commands::explain::ExplainArgs),
    Render(commands::render::RenderArgs),
    Run(Box<commands::run_args::RunArgs>),
    Contract(commands::contract::ContractArgs),
    /// The live cages of this owner, one line each (a cage lives while any process it
    /// started runs).
    ///
    /// Each line: the window, the repo, the backend, when the cage started, how many
    /// processes are still under it, its state and the command. `live`: its supervisor
    /// answers; `dead`: its supervisor was killed from outside, so its processes' gated
    /// calls fail (closed); `starting`: the launch has not started its supervisor yet.
    /// Records of ended cages are removed as they are read.
    #[cfg(target_os = "linux")]
    Ps(commands::cages::PsArgs),
    /// End one window's cage and every process under it.
    ///
    /// The cage's supervisor, the child subreaper of every process the window started,
    /// kills them with SIGKILL and leaves; `stop` returns when it has. Exit 0 when a cage
    /// was stopped, 1 when no live cage has that window name.
    #[cfg(target_os = "linux")]
    Stop(commands::cages::StopArgs),
    /// Internal: jaula's own launch stage. Its only input is the launch plan the outer
    /// `jaula run` hands it on an inherited sealed memfd; no flags, no environment.
    #[cfg(target_os = "linux")]
    #[command(name = jaula_sandbox::start::STAGE_SUBCOMMAND, hide = true)]
    Stage,
}

fn main() {
    // `jaula --version` is what a launcher calls to learn whether (and which) jaula is
    // installed, often once per window: answered before clap builds its command tree (every
    // subcommand's arguments and help), which is most of what that call would cost. The
    // line is clap's own (`tests/all/cli.rs` checks it against `jaula help`'s version).
    if version_asked(std::env::args_os()) {
        print_version();
    }
    let cli = Cli::parse();
    // Whether this command runs something: its refusals then exit 126 (error.rs).
    let runs = matches!(&cli.command, Command::Run(_))
        || is_stage(&cli.command)
        || matches!(&cli.command, Command::Contract(c) if c.runs_a_command());
    let result = match cli.command {
        Command::Line(a) => commands::line::run(&a),
        Command::Profile(a) => commands::profile::run(&a),
        Command::Check(a) => commands::check::run(&a),
        Command::Explain(a) => commands::explain::run(&a),
        Command::Render(a) => commands::render::run(&a),
        Command::Run(a) => commands::run::run(&a),
        #[cfg(target_os = "linux")]
        Command::Stage => commands::run_stage::from_inherited(),
        #[cfg(target_os = "linux")]
        Command::Ps(a) => commands::cages::ps(&a),
        #[cfg(target_os = "linux")]
        Command::Stop(a) => commands::cages::stop(&a),
        #[cfg(target_os = "linux")]
        Command::Contract(a) => commands::contract_wiring::run(&a),
        #[cfg(not(target_os = "linux"))]
        Command::Contract(a) => commands::contract::run(&a),
    };
    // The one place anything a command decided is written out.
    match result {
        Ok(report) => {
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout
                .write_all(&report.stdout)
                .and_then(|()| stdout.flush())
            {
                eprintln!("cannot print: {e}");
                std::process::exit(1);
            }
            std::process::exit(report.code)
        }
        Err(err) if runs => {
            eprintln!("{}", with_prefix(&err));
            std::process::exit(err.refusal_code());
        }
        Err(err) => {
            eprintln!("{}", with_prefix(&err));
            std::process::exit(err.exit_code());
        }
    }
}

/// Exactly `jaula --version` or `jaula -V`: the only argument lists the fast path takes.
/// Anything else (`jaula run --version`, `jaula --version extra`) goes to clap as before.
fn version_asked(mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let _program = args.next();
    matches!(
        (args.next(), args.next()),
        (Some(flag), None) if flag == "--version" || flag == "-V"
    )
}

/// clap's `--version` output for this binary (`NAME VERSION` and a newline), then exit 0.
fn print_version() -> ! {
    let mut stdout = std::io::stdout().lock();
    let line = concat!("jaula ", env!("CARGO_PKG_VERSION"), "\n");
    if stdout
        .write_all(line.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        std::process::exit(1);
    }
    std::process::exit(0)
}

#[cfg(target_os = "linux")]
fn is_stage(command: &Command) -> bool {
    matches!(command, Command::Stage)
}

#[cfg(not(target_os = "linux"))]
fn is_stage(_: &Command) -> bool {
    false
}

/// `jaula: ` before an error that does not carry it yet, so every refusal of every command
/// reads the same; `--repo is required` stays word for word, the one message launchers
/// match on (docs/compatibility.md).
fn with_prefix(err: &CliError) -> String {
    let message = err.to_string();
    if message.starts_with("jaula:") || matches!(err, CliError::RepoRequired) {
        message
    } else {
        format!("jaula: {message}")
    }
}

#[cfg(test)]
mod version_tests {
    use super::*;
    use clap::CommandFactory;

    fn asked(args: &[&str]) -> bool {
        version_asked(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn the_fast_path_prints_what_clap_would() {
        assert_eq!(
            Cli::command().render_version(),
            concat!("jaula ", env!("CARGO_PKG_VERSION"), "\n")
        );
    }

    #[test]
    fn only_the_bare_flag_takes_the_fast_path() {
        assert!(asked(&["jaula", "--version"]));
        assert!(asked(&["jaula", "-V"]));
        assert!(!asked(&["jaula"]));
        assert!(!asked(&["jaula", "--version", "x"]));
        assert!(!asked(&["jaula", "run", "--version"]));
        assert!(!asked(&["jaula", "--versio"]));
    }
}
