//! `--log FILE` under `--network none`: one JSON line per refusal of the closed network,
//! in the proxy's log shape (`crates/proxy/src/log.rs`), each with the rule
//! [`NONE_RULE`]: a name the cage looked up (method `DNS`, the name, port 53, `qtype`) and
//! an address its connect was refused at (method `connect`, the address as host and
//! `address`). Written by the socket gate's supervisor as each refusal happens, on a file
//! the outermost jaula opened before anything was confined.

use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

use jaula_proxy::{rfc3339_now, DecisionRecord};
use jaula_sandbox::network::none_log::{NoneRefusal, Sink};

/// The rule every refusal under `none` names.
pub const NONE_RULE: &str = "network none";

/// The line for one refusal.
pub fn line(refusal: &NoneRefusal<'_>) -> Option<Vec<u8>> {
    let (method, host, port, address, qtype) = match refusal {
        NoneRefusal::Lookup { name, qtype } => (
            "DNS",
            (*name).to_owned(),
            jaula_policy::network::dns::DNS_PORT,
            None,
            Some(qtype.to_string()),
        ),
        NoneRefusal::Connect(addr) => (
            "connect",
            addr.ip().to_string(),
            addr.port(),
            Some(addr.ip().to_string()),
            None,
        ),
    };
    DecisionRecord {
        time: rfc3339_now(),
        method,
        host: &host,
        port,
        decision: "deny",
        rule: NONE_RULE,
        address,
        reason: None,
        error: None,
        qtype,
        via: None,
    }
    .to_line()
}

/// A sink appending each refusal to `file`. A failed write loses a line, not the
/// refusal, which already happened.
pub fn sink(file: File) -> Sink {
    let file = Mutex::new(file);
    Box::new(move |refusal| {
        if let (Some(line), Ok(mut file)) = (line(refusal), file.lock()) {
            let _ = file.write_all(&line);
        }
    })
}

#[cfg(test)]
#[path = "none_log_tests.rs"]
mod tests;
