use super::*;

const ACCESS: &str = "sk-ant-oat01-access";
const REFRESH: &str = "sk-ant-ort01-refresh";

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn login(expires_ms: i64) -> String {
    format!(
        r#"{{"claudeAiOauth":{{"accessToken":"{ACCESS}","refreshToken":"{REFRESH}",
        "expiresAt":{expires_ms},"scopes":["user:inference"],"subscriptionType":"pro"}}}}"#
    )
}

fn path() -> PathBuf {
    PathBuf::from("/home/o/.claude/.credentials.json")
}

#[test]
fn takes_the_access_token_and_its_expiry_only() {
    let handed = claude_token(&login(2_000_000_000_000), &path(), at(1_999_990_000)).unwrap();
    assert_eq!(handed.variable, "CLAUDE_CODE_OAUTH_TOKEN");
    assert_eq!(handed.token, ACCESS);
    assert_eq!(handed.expires_at, at(2_000_000_000));
    assert!(!format!("{handed:?}").contains(REFRESH));
}

#[test]
fn an_expired_or_nearly_expired_token_is_refused_with_the_time_left() {
    let expires = 2_000_000_000_000;
    let past = claude_token(&login(expires), &path(), at(2_000_000_100)).unwrap_err();
    assert_eq!(
        past,
        TokenError::Expired {
            path: path(),
            left: -100
        }
    );
    let nearly = claude_token(&login(expires), &path(), at(1_999_999_970)).unwrap_err();
    assert!(
        matches!(nearly, TokenError::Expired { left: 30, .. }),
        "{nearly:?}"
    );
    // Exactly the minimum is enough.
    assert!(claude_token(&login(expires), &path(), at(1_999_999_940)).is_ok());
}

/// An expired token is said to be expired, never to have a negative time left.
#[test]
fn the_refusal_says_expired_or_how_little_is_left() {
    let p = path();
    let expired = TokenError::Expired {
        path: p.clone(),
        left: -10,
    }
    .to_string();
    assert!(
        expired.starts_with(&format!(
            "the access token in {} expired 10 s ago; run `claude`",
            p.display()
        )),
        "{expired}"
    );
    assert!(!expired.contains("-10"), "{expired}");
    let now = TokenError::Expired {
        path: p.clone(),
        left: 0,
    }
    .to_string();
    assert!(now.contains("has just expired"), "{now}");
    let nearly = TokenError::Expired { path: p, left: 30 }.to_string();
    assert!(
        nearly.contains("has only 30 s left (want at least 60 s)"),
        "{nearly}"
    );
}

#[test]
fn what_is_not_a_login_is_refused() {
    for text in [
        "",
        "{}",
        "not json",
        r#"{"claudeAiOauth":{}}"#,
        r#"{"claudeAiOauth":{"accessToken":"x"}}"#,
        r#"{"claudeAiOauth":{"accessToken":"","expiresAt":9999999999999}}"#,
        r#"{"claudeAiOauth":{"accessToken":"a b","expiresAt":9999999999999}}"#,
        r#"{"claudeAiOauth":{"accessToken":"a\nb","expiresAt":9999999999999}}"#,
        r#"{"claudeAiOauth":{"accessToken":"a","expiresAt":-5}}"#,
        r#"{"claudeAiOauth":{"accessToken":"a","expiresAt":"soon"}}"#,
    ] {
        let err = claude_token(text, &path(), at(0)).unwrap_err();
        assert_eq!(err, TokenError::NotALogin { path: path() }, "{text:?}");
    }
}

#[test]
fn a_missing_file_names_its_path() {
    let home = Path::new("/nonexistent-jaula-home");
    let err = read_token(TokenAgent::Claude, home, at(0)).unwrap_err();
    match err {
        TokenError::Unreadable { path, .. } => {
            assert_eq!(path, home.join(".claude/.credentials.json"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_token_joins_the_environment_unless_the_owner_set_one() {
    let handed = claude_token(&login(2_000_000_000_000), &path(), at(0)).unwrap();
    let mut env = vec![("PATH".into(), "/bin".into())];
    add_to_env(&mut env, &handed).unwrap();
    assert_eq!(
        env.last().unwrap(),
        &("CLAUDE_CODE_OAUTH_TOKEN".into(), ACCESS.into())
    );
    let err = add_to_env(&mut env, &handed).unwrap_err();
    assert_eq!(
        err,
        TokenError::AlreadySet {
            variable: "CLAUDE_CODE_OAUTH_TOKEN"
        }
    );
}

#[test]
fn the_notice_names_the_variable_and_the_minutes_left_but_not_the_token() {
    let handed = claude_token(&login(2_000_000_000_000), &path(), at(0)).unwrap();
    let line = notice(TokenAgent::Claude, &handed, at(2_000_000_000 - 3600));
    assert!(line.contains("CLAUDE_CODE_OAUTH_TOKEN"), "{line}");
    assert!(line.contains("60 min"), "{line}");
    assert!(!line.contains(ACCESS), "{line}");
}

/// Unknown and miscased names are refused as the config is read (jaula-policy's
/// config tests); a known one maps to its agent.
#[test]
fn config_names_map_to_agents() {
    assert_eq!(
        TokenAgent::from(jaula_policy::config::TokenAgentName::Claude),
        TokenAgent::Claude
    );
}

/// A config entry follows only the agent's own program, named bare or by path.
#[test]
fn only_the_agents_own_program_is_started_by_it() {
    use std::ffi::OsStr;
    let claude = TokenAgent::Claude;
    assert!(claude.is_started_by(OsStr::new("claude")));
    assert!(claude.is_started_by(OsStr::new("/home/u/.local/bin/claude")));
    for other in ["true", "sh", "codex", "claude-x", "/claude/bin/sh", ""] {
        assert!(!claude.is_started_by(OsStr::new(other)), "{other}");
    }
}
