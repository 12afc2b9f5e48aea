use std::fs;
use std::path::{Path, PathBuf};

use crate::sources::{CageFlags, EnvVars, Sources};
use crate::test_support::{assert_allowed_by, Scratch};
use crate::{Access, Platform, PolicyError, PolicySpec, Rule, SocketSource, UnixPreset, Warning};

fn scratch() -> (Scratch, PathBuf, PathBuf) {
    let s = Scratch::new();
    let (home, repo) = (s.home.clone(), s.repo.clone());
    (s, home, repo)
}

#[test]
fn preset_names_round_trip_and_unknown_names_are_none() {
    for preset in UnixPreset::ALL {
        assert_eq!(UnixPreset::parse(preset.name()), Some(preset));
    }
    assert_eq!(UnixPreset::parse("ssh_agent"), None);
    assert_eq!(UnixPreset::parse(""), None);
}

#[test]
fn presets_read_their_paths_from_the_environment() {
    let home = Path::new("/home/o");
    let env = EnvVars::from_pairs([
        ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
        ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ("DOCKER_HOST", "unix:///srv/d.sock"),
    ]);
    assert_eq!(
        UnixPreset::SshAgent.paths(&env, home),
        vec![PathBuf::from("/tmp/ssh-x/agent.1")]
    );
    assert_eq!(
        UnixPreset::GpgAgent.paths(&env, home),
        vec![
            PathBuf::from("/run/user/1000/gnupg/S.gpg-agent"),
            PathBuf::from("/home/o/.gnupg/S.gpg-agent")
        ]
    );
    let docker = UnixPreset::Docker.paths(&env, home);
    assert_eq!(docker[0], PathBuf::from("/srv/d.sock"));
    assert!(docker.contains(&PathBuf::from("/var/run/docker.sock")));
    assert!(docker.contains(&PathBuf::from("/run/user/1000/docker.sock")));
    // No SSH_AUTH_SOCK: the preset allows nothing rather than guessing.
    assert!(UnixPreset::SshAgent
        .paths(&EnvVars::default(), home)
        .is_empty());
}

#[test]
fn connect_is_refused_unless_the_socket_is_allowed() {
    let (_d, home, repo) = scratch();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, home.clone(), repo.clone());
    let allowed = home.join("run/agent.sock");
    spec.allowed_sockets = vec![(allowed.clone(), SocketSource::Preset(UnixPreset::SshAgent))];
    let p = spec.resolve().unwrap();
    let source = SocketSource::Preset(UnixPreset::SshAgent);
    let rule = Rule::AllowedSocket {
        path: allowed.clone(),
        source,
    };
    assert_allowed_by(&p, &allowed, Access::Connect, rule);
    // A socket in the writable repo or /tmp is still a host socket to `decide`: only the
    // enforcer knows whether this cage bound it.
    for path in [repo.join("s.sock"), PathBuf::from("/tmp/tmux-0/default")] {
        let d = p.decide(&path, Access::Connect);
        assert!(!d.allowed, "{}", path.display());
        assert_eq!(d.rule, Rule::HostSocket);
    }
    // Sealed wins over everything.
    let d = p.decide(&home.join(".ssh/ctl.sock"), Access::Connect);
    assert!(!d.allowed);
    assert!(matches!(d.rule, Rule::Sealed { .. }));
    // Connect is not a file access: reads of the socket path are unchanged.
    assert!(p.decide(&repo.join("s.sock"), Access::Read).allowed);
}

#[test]
fn an_allowed_socket_inside_a_seal_is_dropped_with_a_warning() {
    let (_d, home, repo) = scratch();
    let mut spec = PolicySpec::with_defaults(Platform::Linux, home.clone(), repo);
    let inside = home.join(".gnupg/S.gpg-agent");
    spec.allowed_sockets = vec![(inside.clone(), SocketSource::Owner)];
    let p = spec.resolve().unwrap();
    assert!(p.unix_sockets().is_empty());
    assert_eq!(
        p.warnings(),
        &[Warning::SocketInsideSealed {
            path: inside,
            sealed: home.join(".gnupg")
        }]
    );
}

#[test]
fn flags_and_config_add_sockets_and_a_bad_preset_is_refused_by_name() {
    let (_d, home, repo) = scratch();
    let config = home.join("c.toml");
    fs::write(
        &config,
        "[cage]\nallow_unix_socket = [\"/srv/a.sock\"]\nallow_unix_preset = [\"ssh-agent\"]\n",
    )
    .unwrap();
    let env = EnvVars::from_pairs([
        ("HOME", home.as_os_str()),
        ("SSH_AUTH_SOCK", "/tmp/s".as_ref()),
    ]);
    let flags = CageFlags {
        repo: Some(repo.clone()),
        config: Some(config.clone()),
        allow_unix_socket: vec![PathBuf::from("/srv/b.sock")],
        ..CageFlags::default()
    };
    let sources = Sources::gather(&flags, &env, &repo).unwrap();
    assert_eq!(
        sources.spec.allowed_sockets,
        vec![
            (
                PathBuf::from("/tmp/s"),
                SocketSource::Preset(UnixPreset::SshAgent)
            ),
            (PathBuf::from("/srv/a.sock"), SocketSource::Owner),
            (PathBuf::from("/srv/b.sock"), SocketSource::Owner),
        ]
    );
    let flags = CageFlags {
        allow_unix_preset: vec!["dockr".into()],
        ..flags
    };
    match Sources::gather(&flags, &env, &repo) {
        Err(PolicyError::UnknownSocketPreset { origin, name }) => {
            assert_eq!(origin, "--allow-unix-preset");
            assert_eq!(name, "dockr");
        }
        other => panic!("expected an unknown preset error, got {other:?}"),
    }
}

/// An allowed socket keeps the variable that names it, however the variable spells the
/// path (through a symlink, with tmux's and gpg's trailing fields); a variable naming a
/// socket that is not allowed is not kept.
#[test]
fn a_variable_naming_an_allowed_socket_is_found() {
    use crate::sockets::variables_naming;
    use crate::AllowedSocket;
    use std::ffi::OsString;
    let (_dir, home, _repo) = scratch();
    let real = home.join("agent.sock");
    fs::write(&real, b"").unwrap();
    std::os::unix::fs::symlink(&real, home.join("link.sock")).unwrap();
    let allowed = [AllowedSocket {
        path: real.clone(),
        source: SocketSource::Owner,
    }];
    let var = |k: &str, v: &Path| (OsString::from(k), v.as_os_str().to_owned());
    let mut tmux = home.join("link.sock").into_os_string();
    tmux.push(",123,0");
    let found = variables_naming(
        [
            var("SSH_AUTH_SOCK", &home.join("link.sock")),
            (OsString::from("TMUX"), tmux),
            var("GPG_AGENT_INFO", &home.join("other.sock")),
            var("HOME", &real),
        ],
        &allowed,
    );
    assert_eq!(found, ["SSH_AUTH_SOCK", "TMUX"]);
    assert!(
        variables_naming([var("SSH_AUTH_SOCK", &home.join("other.sock"))], &allowed).is_empty()
    );
}
