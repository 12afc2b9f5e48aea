//! Every value of the config file is checked as the file is read (jaula-policy reads each
//! into its typed form and refuses a bad one with its key and line). What is left here is
//! what only makes sense across values: the `[network]` lists resolved together.
//! `check` lists the problems and `run` refuses on the first (exit 126), whether or not
//! this run would have used the value: a config that is wrong is wrong for the next run
//! too, and saying so now is cheaper.

use jaula_policy::network::{NetworkMode, NetworkSpec};
use jaula_policy::Sources;

/// One line per problem, each naming the file and the key.
pub fn problems(sources: &Sources) -> Vec<String> {
    let file = sources.config_path.display();
    let mut out = Vec::new();
    let network = &sources.network;
    let lists = NetworkSpec {
        mode: NetworkMode::Allow,
        allow_domains: network
            .allow_domain
            .iter()
            .map(ToString::to_string)
            .collect(),
        deny_domains: network
            .deny_domain
            .iter()
            .map(ToString::to_string)
            .collect(),
        presets: network
            .allow_preset
            .iter()
            .map(|p| p.name.to_owned())
            .collect(),
    };
    if let Err(e) = lists.resolve() {
        out.push(format!("config {file}: network: {e}"));
    }
    out
}
