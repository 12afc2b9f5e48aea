//! The cage's DNS stub under `--network allow`, answered by the proxy.
//!
//! The stage binds UDP port 53 on the namespace's nameserver addresses and hands the
//! sockets out with the proxy's listener (`jaula_policy::network::dns_stub`). A name the
//! rules allow is answered with one A record, the steering address
//! ([`STEERING_ADDRESS`]), where listeners judge each connection on its TLS SNI or HTTP
//! Host; AAAA and other types get an empty NOERROR, so a client falls back to the A
//! answer instead of waiting. A refused name gets REFUSED and is logged and summarised
//! like a refused CONNECT, with the same rule. No name is ever resolved for real here:
//! the answer only says "ask jaula", and the address a connection finally reaches is
//! still chosen, and checked, by the proxy.

use std::net::Ipv4Addr;

use jaula_policy::network::dns::{self, Query, CLASS_IN, TYPE_A};
use jaula_policy::network::STEERING_ADDRESS;
use jaula_policy::network::{HostDecision, INVALID_HOST_RULE};

use crate::log::{Verdict, Via};
use crate::Proxy;

/// Seconds a client may cache an answer: short, so an answer does not outlive the run
/// (a process cached across runs could otherwise keep dialling the steering address).
pub const ANSWER_TTL: u32 = 5;

/// Serve `socket` until the future is dropped.
pub async fn serve_dns(socket: tokio::net::UdpSocket, proxy: Proxy) {
    let mut buf = vec![0u8; 4096];
    loop {
        let (n, peer) = match socket.recv_from(&mut buf).await {
            Ok(got) => got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if let Some(answer) = answer(&proxy, &buf[..n]) {
            let _ = socket.send_to(&answer, peer).await;
        }
    }
}

/// The answer to one datagram, recorded; `None` for what is not a query at all.
pub(crate) fn answer(proxy: &Proxy, msg: &[u8]) -> Option<Vec<u8>> {
    let query = match dns::parse_query(msg) {
        Ok(query) => query,
        Err(e) => return dns::error_for(msg, e),
    };
    let name = &query.question.name;
    let host = name.as_host();
    let decision = match &host {
        Some(h) => proxy.config().rules.decide(h),
        None => HostDecision {
            allowed: false,
            rule: INVALID_HOST_RULE.to_owned(),
        },
    };
    let shown = host.unwrap_or_else(|| name.to_string());
    let verdict = if decision.allowed {
        Verdict::LookupAnswered {
            rule: &decision.rule,
        }
    } else {
        Verdict::NameDenied {
            rule: &decision.rule,
        }
    };
    proxy.recorder().record_with(
        "DNS",
        &shown,
        dns::DNS_PORT,
        Via::Proxy,
        verdict,
        Some(query.question.qtype.to_string()),
    );
    Some(reply(&query, decision.allowed, STEERING_ADDRESS))
}

fn reply(query: &Query, allowed: bool, steering: Ipv4Addr) -> Vec<u8> {
    let question = &query.question;
    match (allowed, question.qtype.0, question.qclass) {
        (false, _, _) => dns::refused(query),
        (true, TYPE_A, CLASS_IN) => dns::a_record(query, steering, ANSWER_TTL),
        (true, _, _) => dns::no_data(query),
    }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
