//! `jaula-scratch-home`: make one of the scratch homes `bench/` launches cages in (see
//! `jaula_testkit::bench_home`), so the Python harness and the Rust tests build them from
//! one definition.

use std::path::Path;
use std::process::ExitCode;

use jaula_testkit::bench_home;

const USAGE: &str = "usage: jaula-scratch-home minimal HOME
       jaula-scratch-home real-sized HOME
       jaula-scratch-home entries N HOME";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let made = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["minimal", home] => bench_home::minimal(Path::new(home)),
        ["real-sized", home] => bench_home::real_sized(Path::new(home)),
        ["entries", n, home] => match n.parse() {
            Ok(n) if n >= 3 => bench_home::with_entries(Path::new(home), n),
            _ => {
                eprintln!(
                    "jaula-scratch-home: entries takes a whole number of at least 3, not {n:?}"
                );
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match made {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "jaula-scratch-home: {}: {err}",
                args.last().map_or("", String::as_str)
            );
            ExitCode::FAILURE
        }
    }
}
