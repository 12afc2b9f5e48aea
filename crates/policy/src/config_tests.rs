use std::path::Path;

use super::*;
use crate::network::{DomainPattern, NetworkMode};

fn parse(text: &str) -> Result<ConfigFile, ConfigError> {
    ConfigFile::parse(text, Path::new("/home/o/.config/jaula/config.toml"))
}

/// A bad value is refused as the file is read, and the message names the file, the key
/// with its section, the line and what was wrong with the value.
fn assert_refused(text: &str, line: usize, key: &str, reason: &str) {
    let err = match parse(text) {
        Ok(config) => panic!("{text:?} accepted as {config:?}"),
        Err(err) => err.to_string(),
    };
    assert!(err.contains("config.toml"), "no file in {err}");
    assert!(
        err.contains(&format!("{key} (line {line}): ")),
        "no {key} (line {line}) in {err}"
    );
    assert!(err.contains(reason), "no {reason:?} in {err}");
}

#[test]
fn a_full_config_reads_into_typed_values() {
    let config = parse(
        "[run]\nbackend = \"bwrap\"\nquiet = true\n\
         [env]\nkeep = [\"AWS_REGION\"]\nscrub = [\"MY_*\"]\nhand_access_token = [\"claude\"]\n\
         [cage]\nallow_unix_preset = [\"ssh-agent\"]\n\
         [contract]\nuid_range = \"3000000-3000999\"\nmax_processes = 64\n\
         [network]\nmode = \"allow\"\nallow_domain = [\"*.Example.com.\"]\n\
         deny_domain = [\"bad.example.com\"]\nallow_preset = [\"github\"]\n\
         allow_address = [\"10.1.0.0/16\"]\nresolve = [\"Up.Test=127.0.0.1:8443\"]\n",
    )
    .unwrap();
    assert_eq!(config.run.backend, Some(crate::BackendChoice::Bwrap));
    assert_eq!(config.run.quiet, Some(true));
    assert_eq!(config.env.keep[0].to_string(), "AWS_REGION");
    assert_eq!(config.env.scrub[0].to_string(), "MY_*");
    assert_eq!(config.env.hand_access_token, [TokenAgentName::Claude]);
    assert_eq!(config.cage.allow_unix_preset, [UnixPreset::SshAgent]);
    let range = config.contract.uid_range.unwrap();
    assert_eq!((range.min(), range.max()), (3_000_000, 3_000_999));
    assert_eq!(config.contract.max_processes, Some(64));
    let network = &config.network;
    assert_eq!(network.mode, Some(NetworkMode::Allow));
    assert_eq!(
        network.allow_domain,
        [DomainPattern::Subdomains("example.com".into())]
    );
    assert_eq!(network.deny_domain[0].to_string(), "bad.example.com");
    assert_eq!(network.allow_preset[0].name, "github");
    assert_eq!(network.allow_address[0].to_string(), "10.1.0.0/16");
    assert_eq!(network.resolve[0].host, "up.test");
    assert_eq!(network.resolve[0].addr, "127.0.0.1:8443".parse().unwrap());
}

#[test]
fn a_bad_run_backend_is_refused_at_load() {
    assert_refused(
        "[run]\nbackend = \"docker\"\n",
        2,
        "run.backend",
        "unknown variant",
    );
}

#[test]
fn a_bad_network_mode_is_refused_at_load() {
    assert_refused(
        "[network]\n\nmode = \"open\"\n",
        3,
        "network.mode",
        "unknown variant `open`",
    );
}

#[test]
fn a_bad_domain_pattern_is_refused_at_load() {
    assert_refused(
        "[network]\nallow_domain = [\"ok.example\", \"https://x.example\"]\n",
        2,
        "network.allow_domain",
        "domain pattern \"https://x.example\"",
    );
    assert_refused(
        "[network]\ndeny_domain = [\"*.com\"]\n",
        2,
        "network.deny_domain",
        "domain pattern \"*.com\"",
    );
}

#[test]
fn an_unknown_preset_is_refused_at_load() {
    assert_refused(
        "[network]\nallow_preset = [\"everything\"]\n",
        2,
        "network.allow_preset",
        "unknown preset \"everything\"",
    );
}

#[test]
fn a_bad_allow_address_is_refused_at_load() {
    assert_refused(
        "[network]\nallow_address = [\"10.0.0.0/4\"]\n",
        2,
        "network.allow_address",
        "would open most of the address space",
    );
    assert_refused(
        "[network]\nallow_address = [\"intranet\"]\n",
        2,
        "network.allow_address",
        "not an IP address",
    );
}

#[test]
fn a_bad_resolve_entry_is_refused_at_load() {
    assert_refused(
        "[network]\nresolve = [\"up.test:443\"]\n",
        2,
        "network.resolve",
        "want HOST=ADDR:PORT",
    );
    assert_refused(
        "[network]\nresolve = [\"up.test=localhost:443\"]\n",
        2,
        "network.resolve",
        "want HOST=ADDR:PORT",
    );
}

#[test]
fn a_bad_environment_pattern_is_refused_at_load() {
    assert_refused(
        "[env]\nkeep = [\"TOKEN=1\"]\n",
        2,
        "env.keep",
        "contains '='",
    );
    assert_refused("[env]\nscrub = [\"\"]\n", 2, "env.scrub", "cannot be empty");
}

#[test]
fn an_unknown_token_agent_is_refused_at_load() {
    assert_refused(
        "[env]\nhand_access_token = [\"codex\"]\n",
        2,
        "env.hand_access_token",
        "unknown variant `codex`",
    );
    assert_refused(
        "[env]\nhand_access_token = [\"Claude\"]\n",
        2,
        "env.hand_access_token",
        "unknown variant `Claude`",
    );
}

#[test]
fn an_unknown_unix_socket_preset_is_refused_at_load() {
    assert_refused(
        "[cage]\nallow_unix_preset = [\"x11\"]\n",
        2,
        "cage.allow_unix_preset",
        "unknown variant `x11`",
    );
}

#[test]
fn a_bad_uid_range_is_refused_at_load() {
    assert_refused(
        "[contract]\nuid_range = \"0-100\"\n",
        2,
        "contract.uid_range",
        "overlaps system uids",
    );
    assert_refused(
        "[contract]\nuid_range = \"many\"\n",
        2,
        "contract.uid_range",
        "expected MIN-MAX",
    );
}

#[test]
fn a_negative_limit_is_refused_at_load() {
    assert_refused(
        "[contract]\nmax_processes = -1\n",
        2,
        "contract.max_processes",
        "",
    );
}

#[test]
fn a_multi_line_value_is_named_by_its_key_and_an_unknown_key_is_named() {
    // toml points at the whole array, which starts on the key's line.
    assert_refused(
        "[cage]\ndeny = []\n\n[network]\nallow_domain = [\n  \"ok.example\",\n  \"a/b\",\n]\n",
        5,
        "network.allow_domain",
        "domain pattern \"a/b\"",
    );
    assert_refused(
        "[cage]\nseal = []\n",
        2,
        "cage.seal",
        "unknown field `seal`",
    );
}

#[test]
fn the_config_file_is_read_from_the_host_asked() {
    let path = Path::new("/fake-host/home/.config/jaula/config.toml");
    let fs = crate::test_support::MemFs::default()
        .file(path.to_str().unwrap(), "[cage]\nprotect_path_dirs = true\n");
    let config = ConfigFile::load_from(path, &fs).unwrap();
    assert_eq!(config.cage.protect_path_dirs, Some(true));
    // The real disk has no such file: a read that went there would have failed.
    assert!(matches!(
        ConfigFile::load(path),
        Err(ConfigError::Read { .. })
    ));
}
