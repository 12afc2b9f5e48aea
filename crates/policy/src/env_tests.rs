use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use super::*;

fn pat(text: &str) -> EnvPattern {
    EnvPattern::parse(text).unwrap()
}

fn var(name: &str, value: &str) -> (OsString, OsString) {
    (OsString::from(name), OsString::from(value))
}

fn action(rules: &EnvRules, name: &str) -> EnvAction {
    rules.decide(OsStr::new(name)).action
}

/// `rules` keep every name of `kept` and scrub every name of `scrubbed` (each separated
/// by spaces).
fn assert_actions(rules: &EnvRules, kept: &str, scrubbed: &str) {
    for name in kept.split_whitespace() {
        assert_eq!(action(rules, name), EnvAction::Keep, "{name}");
    }
    for name in scrubbed.split_whitespace() {
        assert_eq!(action(rules, name), EnvAction::Scrub, "{name}");
    }
}

#[test]
fn every_default_pattern_parses_and_has_a_reason() {
    for (pattern, reason) in default_scrub_table().iter().chain(default_keep_table()) {
        EnvPattern::parse(pattern).unwrap();
        assert!(!reason.trim().is_empty(), "{pattern} has no reason");
    }
}

#[test]
fn default_keep_entries_are_reachable() {
    // A keep entry that no scrub pattern matches would be dead data, and a reader of the
    // table would wrongly believe it overrides something.
    for (keep, _) in default_keep_table() {
        assert!(
            first_match(DEFAULT_SCRUB, OsStr::new(keep)).is_some(),
            "{keep} is kept by default but nothing would scrub it"
        );
    }
}

#[test]
fn defaults_scrub_the_documented_credentials() {
    let rules = EnvRules::default();
    let documented = "
        AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE
        AWS_SHARED_CREDENTIALS_FILE AWS_CONTAINER_CREDENTIALS_FULL_URI AZURE_CLIENT_SECRET
        AZURE_CLIENT_CERTIFICATE_PATH AZURE_FEDERATED_TOKEN_FILE
        GOOGLE_APPLICATION_CREDENTIALS CLOUDSDK_AUTH_ACCESS_TOKEN_FILE CLOUDSDK_CONFIG
        GH_TOKEN GITHUB_TOKEN GH_ENTERPRISE_TOKEN GITHUB_PAT GITLAB_TOKEN GL_TOKEN
        CI_JOB_TOKEN CI_JOB_JWT_V2 ACTIONS_ID_TOKEN_REQUEST_TOKEN NPM_TOKEN NODE_AUTH_TOKEN
        npm_config__authToken npm_config_//registry.npmjs.org/:_authToken
        CARGO_REGISTRY_TOKEN CARGO_REGISTRIES_MY_CORP_TOKEN TWINE_PASSWORD UV_PUBLISH_TOKEN
        POETRY_PYPI_TOKEN_PYPI DOCKER_PASSWORD DOCKER_AUTH_CONFIG HF_TOKEN DATABASE_URL
        TEST_DATABASE_URL PGPASSWORD MYSQL_PWD REDIS_PASSWORD VAULT_TOKEN
        DIGITALOCEAN_ACCESS_TOKEN HEROKU_API_KEY STRIPE_SECRET_KEY SECRET_KEY JWT_SECRET
        SENDGRID_API_KEY TF_TOKEN_app_terraform_io POSTGRES_PASSWORD_FILE OP_SESSION_my
        BW_SESSION SSH_AUTH_SOCK GPG_AGENT_INFO TMUX TMUX_PANE KUBECONFIG
        VSCODE_GIT_IPC_HANDLE GIT_ASKPASS SLACK_WEBHOOK_URL";
    for name in documented.split_whitespace() {
        assert_eq!(action(&rules, name), EnvAction::Scrub, "{name}");
    }
}

#[test]
fn defaults_keep_model_keys_and_ordinary_variables() {
    let rules = EnvRules::default();
    let models = "
        ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN OPENAI_API_KEY
        GEMINI_API_KEY GOOGLE_API_KEY OPENROUTER_API_KEY MOONSHOT_API_KEY MISTRAL_API_KEY
        DEEPSEEK_API_KEY AWS_REGION";
    // Ordinary variables that a careless pattern would hit.
    let ordinary = "
        PATH LD_LIBRARY_PATH PWD OLDPWD HOME TERM LANG TOKENIZERS_PARALLELISM GITHUB_ACTIONS
        SSH_CONNECTION ANTHROPIC_BASE_URL";
    for name in models.split_whitespace().chain(ordinary.split_whitespace()) {
        assert_eq!(action(&rules, name), EnvAction::Keep, "{name}");
    }
}

#[test]
fn decision_names_the_rule_that_made_it() {
    let rules = EnvRules::default();
    let decision = rules.decide(OsStr::new("GITHUB_TOKEN"));
    assert!(matches!(
        decision.rule,
        EnvRule::DefaultScrub {
            pattern: "*_TOKEN",
            ..
        }
    ));
    let decision = rules.decide(OsStr::new("ANTHROPIC_API_KEY"));
    assert!(matches!(
        decision.rule,
        EnvRule::DefaultKeep {
            pattern: "ANTHROPIC_API_KEY",
            ..
        }
    ));
    assert_eq!(rules.decide(OsStr::new("EDITOR")).rule, EnvRule::NoRule);
}

#[test]
fn matching_ignores_ascii_case() {
    let rules = EnvRules::default();
    assert_actions(
        &rules,
        "anthropic_api_key",
        "github_token Aws_Secret_Access_Key",
    );
}

#[test]
fn glob_semantics() {
    // Each line: a pattern, `=>`, names it matches, `|`, names it does not (`""`: empty).
    let table = r#"
        GITHUB_TOKEN => GITHUB_TOKEN | GITHUB_TOKENS XGITHUB_TOKEN
        AWS_* => AWS_ | AWS XAWS_KEY
        *_TOKEN => _TOKEN | A_TOKEN_B
        *_TOKEN_* => A_TOKEN_B |
        CARGO_REGISTRIES_*_TOKEN => CARGO_REGISTRIES_A_B_TOKEN | CARGO_REGISTRIES_TOKEN
        *SECRET* => SECRET |
        *A*A* => AA | A
        * => "" ANYTHING |
        **X => X |
        A*B*C => AXXBXXBXC | AXXBXXBX"#;
    let mut count = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let (pattern, names) = line.trim().split_once(" => ").unwrap();
        let (hits, misses) = names.split_once('|').unwrap();
        for (list, expected) in [(hits, true), (misses, false)] {
            for name in list.split_whitespace().map(|n| n.trim_matches('"')) {
                let found = pat(pattern).matches(OsStr::new(name));
                assert_eq!(found, expected, "{pattern} vs {name}");
                count += 1;
            }
        }
    }
    assert_eq!(count, 19);
}

#[test]
fn pattern_validation() {
    assert_eq!(EnvPattern::parse(""), Err(EnvPatternError::Empty));
    assert_eq!(
        EnvPattern::parse("A=B"),
        Err(EnvPatternError::ContainsEquals {
            pattern: "A=B".into()
        })
    );
    assert!(matches!(
        EnvPattern::parse("A\0"),
        Err(EnvPatternError::ContainsNul { .. })
    ));
    assert_eq!("FOO_*".parse::<EnvPattern>().unwrap().as_str(), "FOO_*");
}

#[test]
fn user_keep_wins_over_default_scrub() {
    let rules = EnvRules::default().keep(pat("GITHUB_TOKEN"));
    assert_actions(&rules, "GITHUB_TOKEN", "GH_TOKEN");

    let rules = EnvRules::default().keep(pat("AWS_*"));
    assert_actions(&rules, "AWS_SECRET_ACCESS_KEY", "");
    assert!(matches!(
        rules.decide(OsStr::new("AWS_SESSION_TOKEN")).rule,
        EnvRule::UserKeep { .. }
    ));
}

#[test]
fn user_scrub_wins_over_default_keep() {
    // (the user's scrub pattern, names still kept, names scrubbed)
    for (pattern, kept, scrubbed) in [
        ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
        ("*_API_KEY", "", "ANTHROPIC_API_KEY"),
    ] {
        assert_actions(&EnvRules::default().scrub(pat(pattern)), kept, scrubbed);
    }
}

#[test]
fn user_scrub_adds_to_the_list() {
    let rules = EnvRules::default().scrub(pat("MY_COMPANY_*"));
    assert_eq!(action(&rules, "MY_COMPANY_SIGNING"), EnvAction::Scrub);
    assert_eq!(action(&rules, "MY_OTHER"), EnvAction::Keep);
}

#[test]
fn between_user_rules_the_more_specific_wins_and_ties_scrub() {
    let rules = EnvRules::default()
        .scrub(pat("GITHUB_*"))
        .keep(pat("GITHUB_TOKEN"));
    assert_eq!(action(&rules, "GITHUB_TOKEN"), EnvAction::Keep);
    assert_eq!(action(&rules, "GITHUB_PAT"), EnvAction::Scrub);

    let rules = EnvRules::default()
        .keep(pat("ACME_*"))
        .scrub(pat("ACME_DEPLOY_KEY"));
    assert_eq!(action(&rules, "ACME_DEPLOY_KEY"), EnvAction::Scrub);
    assert_eq!(action(&rules, "ACME_REGION"), EnvAction::Keep);

    let rules = EnvRules::default().keep(pat("X_*")).scrub(pat("X_*"));
    assert_eq!(action(&rules, "X_Y"), EnvAction::Scrub);
}

#[test]
fn without_defaults_only_user_rules_apply() {
    let rules = EnvRules::default().without_defaults();
    assert_eq!(action(&rules, "GITHUB_TOKEN"), EnvAction::Keep);
    let rules = rules.scrub(pat("GITHUB_TOKEN"));
    assert_eq!(action(&rules, "GITHUB_TOKEN"), EnvAction::Scrub);
    assert_eq!(action(&rules, "AWS_SECRET_ACCESS_KEY"), EnvAction::Keep);
}

#[test]
fn scrub_env_splits_keeps_order_and_reports_names_once() {
    let scrubbed = scrub_env(
        [
            var("PATH", "/usr/bin"),
            var("GITHUB_TOKEN", "ghp_value"),
            var("ANTHROPIC_API_KEY", "sk-ant"),
            var("AWS_SECRET_ACCESS_KEY", "aws"),
            var("GITHUB_TOKEN", "ghp_again"),
            var("HOME", "/home/u"),
        ],
        &EnvRules::default(),
    );
    assert_eq!(
        scrubbed.kept,
        vec![
            var("PATH", "/usr/bin"),
            var("ANTHROPIC_API_KEY", "sk-ant"),
            var("HOME", "/home/u")
        ]
    );
    assert_eq!(
        scrubbed.removed_names,
        vec![
            OsString::from("GITHUB_TOKEN"),
            OsString::from("AWS_SECRET_ACCESS_KEY")
        ]
    );
}

#[test]
fn non_utf8_names_and_values_survive_untouched_when_kept() {
    let name = OsString::from_vec(b"CAF\xc9_DIR".to_vec());
    let value = OsString::from_vec(b"/srv/\xff\xfe".to_vec());
    let secret_name = OsString::from_vec(b"\xffBAD_TOKEN".to_vec());
    let scrubbed = scrub_env(
        [
            (name.clone(), value.clone()),
            (secret_name.clone(), OsString::from("v")),
        ],
        &EnvRules::default(),
    );
    assert_eq!(scrubbed.kept, vec![(name, value)]);
    // A non-UTF-8 name is matched on its bytes, not waved through.
    assert_eq!(scrubbed.removed_names, vec![secret_name]);
    assert_eq!(scrubbed.kept[0].1.as_bytes(), b"/srv/\xff\xfe");
}

#[test]
fn reports_show_names_never_values() {
    let scrubbed = scrub_env(
        [
            var("GITHUB_TOKEN", "ghp_SUPERSECRETVALUE"),
            var("ANTHROPIC_API_KEY", "sk-ant-KEPTSECRET"),
        ],
        &EnvRules::default(),
    );
    let shown = [
        format!("{scrubbed}"),
        format!("{scrubbed:?}"),
        serde_json::to_string(&scrubbed).unwrap(),
    ];
    for text in &shown {
        assert!(text.contains("GITHUB_TOKEN"), "{text}");
        assert!(!text.contains("SUPERSECRETVALUE"), "{text}");
        assert!(!text.contains("KEPTSECRET"), "{text}");
    }
    assert_eq!(shown[0], "removed 1 credential variable: GITHUB_TOKEN");
    let json: serde_json::Value = serde_json::from_str(&shown[2]).unwrap();
    assert_eq!(json["removed_names"], serde_json::json!(["GITHUB_TOKEN"]));
    assert_eq!(json["kept_names"], serde_json::json!(["ANTHROPIC_API_KEY"]));
}

#[test]
fn apply_to_replaces_the_inherited_environment() {
    let scrubbed = scrub_env([var("ONLY", "1")], &EnvRules::default());
    let mut command = Command::new("/bin/true");
    command.env("GITHUB_TOKEN", "leak");
    scrubbed.apply_to(&mut command);
    let envs: Vec<_> = command.get_envs().collect();
    // env_clear() drops explicit and inherited variables alike; only the kept one is set.
    assert_eq!(envs, vec![(OsStr::new("ONLY"), Some(OsStr::new("1")))]);
}

#[test]
fn rules_deserialize_from_config_and_reject_bad_patterns() {
    let rules: EnvRules =
        serde_json::from_str(r#"{"keep": ["AWS_*"], "scrub": ["ACME_KEY"]}"#).unwrap();
    assert!(rules.defaults);
    assert_eq!(rules.keep, vec![pat("AWS_*")]);
    assert_eq!(rules.scrub, vec![pat("ACME_KEY")]);
    assert!(serde_json::from_str::<EnvRules>(r#"{"keep": ["A=B"]}"#).is_err());
    assert!(serde_json::from_str::<EnvRules>(r#"{"keeps": []}"#).is_err());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn an_exact_pattern_matches_only_its_name(a in "[A-Z_]{1,12}", b in "[A-Z_]{1,12}") {
            prop_assert_eq!(pat(&a).matches(OsStr::new(&b)), a == b);
        }

        #[test]
        fn prefix_pattern_is_starts_with(prefix in "[A-Z_]{0,6}", name in "[A-Z_]{0,10}") {
            let pattern = pat(&format!("{prefix}*"));
            prop_assert_eq!(pattern.matches(OsStr::new(&name)), name.starts_with(&prefix));
        }

        #[test]
        fn scrub_partitions_the_input(names in proptest::collection::vec("[A-Z_]{1,16}", 0..20)) {
            let vars: Vec<_> = names.iter().map(|n| var(n, "v")).collect();
            let scrubbed = scrub_env(vars.clone(), &EnvRules::default());
            for (name, _) in &vars {
                let kept = scrubbed.kept.iter().any(|(k, _)| k == name);
                let removed = scrubbed.removed_names.contains(name);
                prop_assert!(kept != removed, "{:?} kept={} removed={}", name, kept, removed);
            }
        }
    }
}
