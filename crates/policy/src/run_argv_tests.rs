use super::*;

fn strings(argv: Vec<OsString>) -> Vec<String> {
    argv.into_iter().map(|a| a.into_string().unwrap()).collect()
}

#[test]
fn an_empty_argv_is_a_bare_prefix() {
    let argv = RunArgv::default().argv("/bin/jaula", Vec::<OsString>::new());
    assert_eq!(strings(argv), ["/bin/jaula", "run", "--"]);
}

#[test]
fn every_flag_comes_out_in_the_one_order() {
    let argv = RunArgv {
        backend: Some("landlock"),
        no_pid_ns: true,
        tenant: true,
        repo: Some("/r".into()),
        home: Some("/h".into()),
        state_home: Some("/s".into()),
        token_file: Some("/t".into()),
        mounts: "/m1:/m2".into(),
        config: Some("/c".into()),
        deny: vec!["/d1".into(), "/d2".into()],
        allow_write: vec!["/w".into()],
        allow_unix_socket: vec!["/sock".into()],
        allow_unix_preset: vec!["docker".into()],
        unprotect: vec!["/u".into()],
        protect_path_dirs: true,
        window: Some("w1".into()),
        max_processes: Some(64),
        max_data_bytes: Some(1 << 30),
        network: Some("allow"),
        allow_domain: vec!["example.org".into()],
        deny_domain: vec!["bad.example.org".into()],
        allow_preset: vec!["github".into()],
        allow_address: vec!["10.0.0.1".into()],
        network_log: Some("/l".into()),
        hand_access_token: vec!["claude"],
    }
    .argv("jaula", ["sh", "-c", "echo hi"]);
    assert_eq!(
        strings(argv),
        [
            "jaula",
            "run",
            "--backend",
            "landlock",
            "--no-pid-ns",
            "--tenant",
            "--repo",
            "/r",
            "--home",
            "/h",
            "--state-home",
            "/s",
            "--token-file",
            "/t",
            "--mounts",
            "/m1:/m2",
            "--config",
            "/c",
            "--deny",
            "/d1",
            "--deny",
            "/d2",
            "--allow-write",
            "/w",
            "--allow-unix-socket",
            "/sock",
            "--allow-unix-preset",
            "docker",
            "--unprotect",
            "/u",
            "--protect-path-dirs",
            "--window",
            "w1",
            "--max-procs",
            "64",
            "--max-data",
            "1073741824",
            "--network",
            "allow",
            "--allow-domain",
            "example.org",
            "--deny-domain",
            "bad.example.org",
            "--allow-preset",
            "github",
            "--allow-address",
            "10.0.0.1",
            "--log",
            "/l",
            "--hand-access-token",
            "claude",
            "--",
            "sh",
            "-c",
            "echo hi",
        ]
    );
}

#[test]
fn a_command_that_looks_like_a_flag_stays_after_the_separator() {
    let argv = RunArgv::default().argv("jaula", ["--tenant"]);
    assert_eq!(strings(argv), ["jaula", "run", "--", "--tenant"]);
}
