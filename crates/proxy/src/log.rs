//! The decision log (JSON lines) and the blocked-host summary printed at exit.
//!
//! One line per request. A name the rules refuse is logged at once; an allowed name is
//! logged after its address check, with the address connected to (`allow`) or the
//! address refused and the reason (`deny`, rule `address A is CLASS`), so a refusal by
//! address is told apart from a refusal by name. An allowed name whose upstream could
//! not be reached is neither: `failed`, with the allow rule, the address tried, the
//! `reason` (`connection-refused`, `unreachable`, `timed-out`, `name-not-resolved`,
//! `connect-failed`) and the system's `error`. A connection that reached the proxy by
//! steering rather than through the proxy variables carries `"via":"steered"`.
//!
//! The summary at exit keeps the same three apart, one line each: what the rules
//! blocked (with a second line naming the rules), what was refused by address, and what
//! was allowed but failed upstream.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::IpAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::upstream::UpstreamFailure;
use crate::ProxyError;
use jaula_policy::network::address::Refusal;

/// One line of the log.
#[derive(Clone, Debug, Serialize)]
pub struct DecisionRecord<'a> {
    /// RFC 3339, UTC, milliseconds.
    pub time: String,
    /// `CONNECT` (tunnels, steered TLS included) or the HTTP method of a forwarded request.
    pub method: &'a str,
    /// The host the client asked for, normalised.
    pub host: &'a str,
    /// The port the client asked for.
    pub port: u16,
    /// `allow`, `deny`, or `failed` (allowed, but the upstream could not be reached).
    pub decision: &'static str,
    /// The rule that decided, described.
    pub rule: &'a str,
    /// The resolved address connected to (`allow`), refused (`deny` by address) or tried
    /// last (`failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// On a refusal by address: the address's class (`loopback`, `link-local`,
    /// `private`, ...). On a failure: what failed (`connection-refused`, `unreachable`,
    /// `timed-out`, `name-not-resolved`, `connect-failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Set only on a failure: the error as the system gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Set only on a DNS lookup (method `DNS`): the record type asked for (`A`, `AAAA`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qtype: Option<String>,
    /// `steered` when the client ignored the proxy variables and connected to the
    /// steering address; absent for requests made to the proxy itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<&'static str>,
}

impl DecisionRecord<'_> {
    /// The record as one log line, newline included.
    pub fn to_line(&self) -> Option<Vec<u8>> {
        let mut line = serde_json::to_vec(self).ok()?;
        line.push(b'\n');
        Some(line)
    }
}

/// How a connection reached the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// A request to the proxy's own listener (`CONNECT`, absolute-URI HTTP).
    Proxy,
    /// A direct connection to the steering address, judged on its TLS SNI or HTTP Host.
    Steered,
}

/// What happened to one request, as the log records it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Verdict<'a> {
    /// The rules refused the name.
    NameDenied { rule: &'a str },
    /// The name was allowed; `address` is the one connected to, if any was reached.
    Allowed {
        rule: &'a str,
        address: Option<IpAddr>,
    },
    /// The name was allowed but every address it resolved to was refused.
    AddressRefused { refusal: Refusal },
    /// The name was allowed; its upstream could not be reached.
    UpstreamFailed {
        rule: &'a str,
        failure: &'a UpstreamFailure,
    },
    /// A DNS lookup of an allowed name, answered by the stub: logged, not counted as a
    /// request (nothing has reached the proxy's upstream side yet).
    // Answered only by the DNS stub, which exists on Linux alone.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    LookupAnswered { rule: &'a str },
}

/// Blocked hosts and counts, for the summary at exit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Requests and connections let through.
    pub allowed: u64,
    /// Refused by name: host -> count.
    pub blocked: BTreeMap<String, u64>,
    /// Refused by name: rule -> the hosts it refused.
    pub blocked_rules: BTreeMap<String, BTreeSet<String>>,
    /// Allowed by name, refused by address: `host -> address (class)` -> count.
    pub refused_addresses: BTreeMap<String, u64>,
    /// Of `blocked`, the refusals of steered connections: host -> count.
    pub blocked_steered: BTreeMap<String, u64>,
    /// Allowed, but the upstream could not be reached:
    /// `host:port -> address (what failed)` -> count.
    pub upstream_failures: BTreeMap<String, u64>,
}

impl Summary {
    /// Nothing was refused and nothing failed: no summary to print.
    pub fn is_empty(&self) -> bool {
        self.blocked.is_empty()
            && self.refused_addresses.is_empty()
            && self.upstream_failures.is_empty()
    }
}

impl fmt::Display for Summary {
    /// One line per kind of outcome that happened: blocked by name (and a line naming
    /// the rules), refused by address, failed upstream.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        if !self.blocked.is_empty() {
            let total: u64 = self.blocked.values().sum();
            write!(
                f,
                "jaula: network: blocked {total} request(s) to {} host(s):",
                self.blocked.len()
            )?;
            for (host, n) in &self.blocked {
                match self.blocked_steered.get(host) {
                    Some(s) if s == n => write!(f, " {host} ({n} steered)")?,
                    Some(s) => write!(f, " {host} ({n}, {s} steered)")?,
                    None => write!(f, " {host} ({n})")?,
                }
            }
            let rules: Vec<String> = self
                .blocked_rules
                .iter()
                .map(|(rule, hosts)| {
                    let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
                    format!("{rule} ({})", hosts.join(", "))
                })
                .collect();
            if !rules.is_empty() {
                write!(
                    f,
                    "\njaula: network: the rules that blocked them: {}",
                    rules.join("; ")
                )?;
            }
            first = false;
        }
        if !self.refused_addresses.is_empty() {
            if !first {
                writeln!(f)?;
            }
            let total: u64 = self.refused_addresses.values().sum();
            write!(
                f,
                "jaula: network: refused {total} connection(s) to non-public addresses \
                 (see --allow-address):"
            )?;
            for (what, n) in &self.refused_addresses {
                write!(f, " {what} ({n})")?;
            }
            first = false;
        }
        if !self.upstream_failures.is_empty() {
            if !first {
                writeln!(f)?;
            }
            let total: u64 = self.upstream_failures.values().sum();
            write!(
                f,
                "jaula: network: {total} allowed request(s) failed upstream (not refused by \
                 jaula):"
            )?;
            for (what, n) in &self.upstream_failures {
                write!(f, " {what} ({n})")?;
            }
        }
        Ok(())
    }
}

pub(crate) struct Recorder {
    file: Option<Mutex<File>>,
    summary: Mutex<Summary>,
}

impl Recorder {
    pub(crate) fn open(path: Option<&Path>) -> Result<Recorder, ProxyError> {
        let file = match path {
            Some(path) => Some(Mutex::new(open_log(path)?)),
            None => None,
        };
        Ok(Recorder {
            file,
            summary: Mutex::new(Summary::default()),
        })
    }

    pub(crate) fn record(
        &self,
        method: &str,
        host: &str,
        port: u16,
        via: Via,
        verdict: Verdict<'_>,
    ) {
        self.record_with(method, host, port, via, verdict, None);
    }

    /// [`Recorder::record`], with the record type of a DNS lookup.
    pub(crate) fn record_with(
        &self,
        method: &str,
        host: &str,
        port: u16,
        via: Via,
        verdict: Verdict<'_>,
        qtype: Option<String>,
    ) {
        if let Ok(mut s) = self.summary.lock() {
            match verdict {
                Verdict::Allowed { .. } => s.allowed += 1,
                Verdict::LookupAnswered { .. } => {}
                Verdict::NameDenied { rule } => {
                    *s.blocked.entry(host.to_owned()).or_insert(0) += 1;
                    s.blocked_rules
                        .entry(rule.to_owned())
                        .or_default()
                        .insert(host.to_owned());
                    if via == Via::Steered {
                        *s.blocked_steered.entry(host.to_owned()).or_insert(0) += 1;
                    }
                }
                Verdict::AddressRefused { refusal } => {
                    let key = format!("{host} -> {} ({})", refusal.address, refusal.class);
                    *s.refused_addresses.entry(key).or_insert(0) += 1;
                }
                Verdict::UpstreamFailed { failure, .. } => {
                    let key = failure.summary_key(host, port);
                    *s.upstream_failures.entry(key).or_insert(0) += 1;
                }
            }
        }
        let Some(file) = &self.file else { return };
        let refusal_rule;
        let mut error = None;
        let (decision, rule, address, reason) = match verdict {
            Verdict::NameDenied { rule } => ("deny", rule, None, None),
            Verdict::Allowed { rule, address } => {
                ("allow", rule, address.map(|a| a.to_string()), None)
            }
            Verdict::LookupAnswered { rule } => ("allow", rule, None, None),
            Verdict::AddressRefused { refusal } => {
                refusal_rule = refusal.rule();
                (
                    "deny",
                    refusal_rule.as_str(),
                    Some(refusal.address.to_string()),
                    Some(refusal.class.name()),
                )
            }
            Verdict::UpstreamFailed { rule, failure } => {
                error = Some(failure.detail.clone());
                (
                    "failed",
                    rule,
                    failure.address.map(|a| a.ip().to_string()),
                    Some(failure.kind.name()),
                )
            }
        };
        let record = DecisionRecord {
            time: rfc3339_now(),
            method,
            host,
            port,
            decision,
            rule,
            address,
            reason,
            error,
            qtype,
            via: match via {
                Via::Proxy => None,
                Via::Steered => Some("steered"),
            },
        };
        if let (Some(line), Ok(mut file)) = (record.to_line(), file.lock()) {
            // One write(2) per line on an O_APPEND file: lines from concurrent
            // connections never interleave. A failed write loses a log line, not the
            // decision, which was already taken.
            let _ = file.write_all(&line);
        }
    }

    pub(crate) fn summary(&self) -> Summary {
        self.summary.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// Open (or create, mode 0600) the decision log for appending: one `write(2)` per line
/// on an O_APPEND file, so lines from concurrent writers never interleave.
pub fn open_log(path: &Path) -> Result<File, ProxyError> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| ProxyError::Log {
            path: path.to_path_buf(),
            source,
        })
}

/// Now, as the log writes it: RFC 3339, UTC, milliseconds.
pub fn rfc3339_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
