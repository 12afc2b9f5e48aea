use std::ffi::OsStr;

use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn env(pairs: &[(&str, &str)]) -> EnvVars {
    EnvVars::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn home() -> (tempfile::TempDir, PathBuf) {
    let dir = crate::test_scratch();
    let home = fs::canonicalize(dir.path()).unwrap();
    (dir, home)
}

/// A scratch home, and flags that name it.
fn home_flags() -> (tempfile::TempDir, PathBuf, CageFlags) {
    let (dir, h) = home();
    let flags = CageFlags {
        home: Some(h.clone()),
        ..Default::default()
    };
    (dir, h, flags)
}

/// Write the default config file of `home`.
fn write_config(home: &Path, text: &str) {
    fs::create_dir_all(home.join(".config/jaula")).unwrap();
    fs::write(home.join(".config/jaula/config.toml"), text).unwrap();
}

#[test]
fn colon_lists_skip_empty_entries() {
    assert_eq!(
        split_colon_list(OsStr::new("a::b:")),
        vec![PathBuf::from("a"), PathBuf::from("b")]
    );
    assert!(split_colon_list(OsStr::new("")).is_empty());
}

#[test]
fn city_cage_disables_only_on_exact_zero() {
    let (_d, h, flags) = home_flags();
    for (value, enabled) in [("0", false), ("1", true), ("no", true), ("", true)] {
        let s = Sources::gather(&flags, &env(&[("CITY_CAGE", value)]), &h).unwrap();
        assert_eq!(s.enabled, enabled, "CITY_CAGE={value:?}");
    }
    assert!(Sources::gather(&flags, &env(&[]), &h).unwrap().enabled);
}

#[test]
fn bwrap_hint_comes_from_the_environment_then_the_config() {
    let (_d, h, flags) = home_flags();
    let hint = |pairs: &[(&str, &str)]| Sources::gather(&flags, &env(pairs), &h).unwrap().bwrap;
    assert_eq!(hint(&[("CITY_CAGE_BWRAP", "0")]), BwrapHint::DoesNotWork);
    assert_eq!(hint(&[("CITY_CAGE_BWRAP", "1")]), BwrapHint::Works);
    assert_eq!(hint(&[("CITY_CAGE_BWRAP", "maybe")]), BwrapHint::Probe);
    assert_eq!(hint(&[]), BwrapHint::Probe);
    write_config(&h, "[cage]\nbwrap = false\n");
    assert_eq!(hint(&[]), BwrapHint::DoesNotWork);
    assert_eq!(hint(&[("CITY_CAGE_BWRAP", "1")]), BwrapHint::Works);
}

#[test]
fn precedence_is_defaults_config_env_flags() {
    let (_d, h) = home();
    write_config(&h, "[cage]\nenabled = false\ndeny = [\"~/from-config\"]\nallow_write = [\"/cfg-w\"]\nstate_home = \"/cfg-state\"\n");
    let mut flags = CageFlags {
        home: Some(h.clone()),
        ..Default::default()
    };
    let s = Sources::gather(&flags, &env(&[]), &h).unwrap();
    assert!(s.config_loaded);
    assert!(!s.enabled);
    assert_eq!(s.spec.state_home, Some(PathBuf::from("/cfg-state")));
    assert_eq!(s.spec.extra_sealed, vec![PathBuf::from("~/from-config")]);

    let e = env(&[
        ("CITY_CAGE", "1"),
        ("AGENTS_CITY_HOME", "/env-state"),
        ("CITY_CAGE_DENY", "~/from-env:/abs"),
        ("CITY_CAGE_ALLOW_WRITE", "/env-w"),
    ]);
    let s = Sources::gather(&flags, &e, &h).unwrap();
    assert!(s.enabled);
    assert_eq!(s.spec.state_home, Some(PathBuf::from("/env-state")));
    assert_eq!(
        s.spec.extra_sealed,
        vec![
            PathBuf::from("~/from-config"),
            PathBuf::from("~/from-env"),
            PathBuf::from("/abs")
        ]
    );
    assert_eq!(
        s.spec.extra_writable,
        vec![PathBuf::from("/cfg-w"), PathBuf::from("/env-w")]
    );

    flags.state_home = Some(PathBuf::from("/flag-state"));
    flags.deny = vec![PathBuf::from("/flag-deny")];
    flags.mounts = Some("/m1::/m2".into());
    let s = Sources::gather(&flags, &e, &h).unwrap();
    assert_eq!(s.spec.state_home, Some(PathBuf::from("/flag-state")));
    assert_eq!(
        s.spec.extra_sealed.last(),
        Some(&PathBuf::from("/flag-deny"))
    );
    assert_eq!(
        s.spec.mounts,
        vec![PathBuf::from("/m1"), PathBuf::from("/m2")]
    );
}

#[test]
fn empty_agents_city_home_means_unset() {
    let (_d, h, flags) = home_flags();
    let s = Sources::gather(&flags, &env(&[("AGENTS_CITY_HOME", "")]), &h).unwrap();
    assert_eq!(s.spec.state_home, None);
}

#[test]
fn home_comes_from_the_flag_then_home() {
    let (_d, h) = home();
    let s = Sources::gather(
        &CageFlags::default(),
        &env(&[("HOME", h.to_str().unwrap())]),
        &h,
    )
    .unwrap();
    assert_eq!(s.spec.home, h);
    assert!(matches!(
        Sources::gather(&CageFlags::default(), &env(&[]), &h),
        Err(PolicyError::NoHome)
    ));
}

#[test]
fn an_explicit_config_must_exist_and_parse() {
    let (_d, h) = home();
    let mut flags = CageFlags {
        home: Some(h.clone()),
        config: Some(h.join("missing.toml")),
        ..Default::default()
    };
    assert!(matches!(
        Sources::gather(&flags, &env(&[]), &h),
        Err(PolicyError::Config(ConfigError::Read { .. }))
    ));
    fs::write(h.join("typo.toml"), "[cage]\ndenny = []\n").unwrap();
    flags.config = Some(h.join("typo.toml"));
    let err = Sources::gather(&flags, &env(&[]), &h).unwrap_err();
    assert!(err.to_string().contains("denny"), "{err}");
    assert!(err.to_string().contains("typo.toml"), "{err}");
    // JAULA_CONFIG names one too.
    fs::write(h.join("ok.toml"), "[cage]\nenabled = false\n").unwrap();
    flags.config = None;
    let s = Sources::gather(
        &flags,
        &env(&[("JAULA_CONFIG", h.join("ok.toml").to_str().unwrap())]),
        &h,
    )
    .unwrap();
    assert!(!s.enabled);
    assert_eq!(s.config_path, h.join("ok.toml"));
}

#[test]
fn the_config_in_use_is_protected_after_resolution() {
    let (_d, h) = home();
    fs::create_dir_all(h.join("repo")).unwrap();
    fs::write(h.join("repo/cfg.toml"), "").unwrap();
    let flags = CageFlags {
        home: Some(h.clone()),
        repo: Some(h.join("repo")),
        config: Some(h.join("repo/cfg.toml")),
        ..Default::default()
    };
    let s = Sources::gather(&flags, &env(&[]), &h).unwrap();
    let p = s.spec.resolve().unwrap();
    let d = p.decide(&h.join("repo/cfg.toml"), crate::Access::Write);
    assert!(!d.allowed, "{d:?}");
    assert!(
        p.decide(&h.join("repo/other"), crate::Access::Create)
            .allowed
    );
}

#[test]
fn network_section_is_read_and_unknown_network_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[network]\nmode = \"allow\"\nallow_domain = [\"a.example\"]\n\
         deny_domain = [\"b.example\"]\nallow_preset = [\"rust\"]\n",
    )
    .unwrap();
    let config = crate::ConfigFile::load(&path).unwrap();
    assert_eq!(
        config.network.mode,
        Some(crate::network::NetworkMode::Allow)
    );
    let names = |list: &[crate::network::DomainPattern]| -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    };
    assert_eq!(names(&config.network.allow_domain), ["a.example"]);
    assert_eq!(names(&config.network.deny_domain), ["b.example"]);
    assert_eq!(config.network.allow_preset.len(), 1);
    assert_eq!(config.network.allow_preset[0].name, "rust");
    std::fs::write(&path, "[network]\nallow_domains = [\"a.example\"]\n").unwrap();
    assert!(crate::ConfigFile::load(&path).is_err());
}

#[test]
fn unprotect_and_path_dirs_merge_config_and_flags_and_the_runtime_dir_comes_from_xdg() {
    let (_d, h) = home();
    write_config(
        &h,
        "[cage]\nunprotect = [\"~/.config/nvim\"]\nprotect_path_dirs = true\n",
    );
    let flags = CageFlags {
        home: Some(h.clone()),
        unprotect: vec![PathBuf::from("~/.vimrc")],
        launcher_exe: Some(PathBuf::from("/opt/jaula/bin/jaula")),
        ..Default::default()
    };
    let s = Sources::gather(&flags, &env(&[("XDG_RUNTIME_DIR", "/run/user/1000")]), &h).unwrap();
    assert_eq!(
        s.spec.unprotected,
        vec![PathBuf::from("~/.config/nvim"), PathBuf::from("~/.vimrc")]
    );
    assert!(s.spec.protect_path_dirs);
    assert_eq!(s.spec.runtime_dir, Some(PathBuf::from("/run/user/1000")));
    assert_eq!(
        s.spec.launcher_exe,
        Some(PathBuf::from("/opt/jaula/bin/jaula"))
    );
    // A relative XDG_RUNTIME_DIR names nothing: ignored.
    let s = Sources::gather(&flags, &env(&[("XDG_RUNTIME_DIR", "run")]), &h).unwrap();
    assert_eq!(s.spec.runtime_dir, None);
    // A typo in the new keys is refused like any other.
    write_config(&h, "[cage]\nunprotected = [\"x\"]\n");
    assert!(Sources::gather(&flags, &env(&[]), &h).is_err());
}
