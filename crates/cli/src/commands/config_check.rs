//! Every value of the config file that the policy resolver does not check itself: the
//! `[run]`, `[network]` and `[env]` values `jaula run` reads. `check` lists them and `run`
//! refuses on the first (exit 126), whether or not this run would have used the value: a
//! config that is wrong is wrong for the next run too, and saying so now is cheaper.

use jaula_policy::Sources;
use jaula_sandbox::hardening::env::EnvPattern;
use jaula_sandbox::network::{NetworkMode, NetworkSpec};

use crate::commands::run::Backend;

/// One line per problem, each naming the file and the key.
pub fn problems(sources: &Sources) -> Vec<String> {
    let file = sources.config_path.display();
    let mut out = Vec::new();
    if let Some(name) = &sources.run.backend {
        if <Backend as clap::ValueEnum>::from_str(name, true).is_err() {
            out.push(format!(
                "config {file}: run.backend = {name:?} is not one of auto, landlock, bwrap"
            ));
        }
    }
    let network = &sources.network;
    if let Some(mode) = &network.mode {
        if let Err(e) = mode.parse::<NetworkMode>() {
            out.push(format!("config {file}: network.mode: {e}"));
        }
    }
    let lists = NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: network.allow_domain.clone(),
        deny_domains: network.deny_domain.clone(),
        presets: network.allow_preset.clone(),
    };
    if let Err(e) = lists.resolve() {
        out.push(format!("config {file}: network: {e}"));
    }
    for address in &network.allow_address {
        if let Err(e) = address.parse::<jaula_proxy::AddressRange>() {
            out.push(format!("config {file}: network.allow_address: {e}"));
        }
    }
    if let Err(e) = crate::commands::run::resolve_overrides(sources) {
        out.push(e.to_string());
    }
    for (key, patterns) in [
        ("env.keep", &sources.env.keep),
        ("env.scrub", &sources.env.scrub),
    ] {
        for p in patterns {
            if let Err(e) = EnvPattern::parse(p) {
                out.push(format!(
                    "config {file}: {key}: bad environment pattern {p:?}: {e}"
                ));
            }
        }
    }
    for name in &sources.env.hand_access_token {
        if crate::commands::access_token::TokenAgent::from_config(name).is_none() {
            out.push(format!(
                "config {file}: env.hand_access_token: {name:?} is not one of claude"
            ));
        }
    }
    out
}
