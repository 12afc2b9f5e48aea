use super::*;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn flags_beat_env_beat_config_beat_defaults() {
    let config = ContractSection {
        root: Some("/cfg/root".into()),
        state_dir: Some("/cfg/state".into()),
        uid_range: Some(UidRange::parse("300000-300009").unwrap()),
        max_processes: Some(7),
        max_memory_bytes: None,
    };
    let env = env_of(&[(ENV_ROOT, "/env/root"), (ENV_UIDS, "")]);
    let flags = ContractFlags {
        uid_range: Some("200000-200999".into()),
        ..Default::default()
    };
    let r = flags.resolve(&env, &config).unwrap();
    assert_eq!(r.workspace_root, PathBuf::from("/env/root"));
    assert_eq!(r.state_dir, PathBuf::from("/cfg/state"));
    assert_eq!((r.uids.min(), r.uids.max()), (200000, 200999));
    assert_eq!(r.limits.max_processes, 7);
    assert_eq!(
        r.limits.max_memory_bytes,
        ContractLimits::default().max_memory_bytes
    );

    let d = ContractFlags::default()
        .resolve(&env_of(&[]), &ContractSection::default())
        .unwrap();
    assert_eq!(d.workspace_root, PathBuf::from(DEFAULT_ROOT));
    assert_eq!(d.state_dir, PathBuf::from(DEFAULT_STATE));
    assert_eq!(d.uids, UidRange::parse(DEFAULT_UIDS).unwrap());
}

#[test]
fn bad_range_from_any_source_is_refused() {
    let env = env_of(&[(ENV_UIDS, "10-20")]);
    assert!(matches!(
        ContractFlags::default().resolve(&env, &ContractSection::default()),
        Err(ContractError::InvalidUidRange { .. })
    ));
}
