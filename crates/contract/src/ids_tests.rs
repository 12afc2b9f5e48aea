use super::*;

#[test]
fn contract_ids_follow_the_segment_pattern() {
    for ok in ["a", "A9", "0c1d2e3f-0000-4000-8000-000000000000", "x.y_z-1"] {
        assert_eq!(ContractId::parse(ok).unwrap().as_str(), ok);
    }
    let max = "a".repeat(64);
    assert!(ContractId::parse(&max).is_ok());
    for bad in [
        "..",
        ".",
        ".hidden",
        "-dash",
        "_under",
        "a/b",
        "/abs",
        "a b",
        "é",
        "a\tb",
        &"a".repeat(65),
    ] {
        assert!(
            matches!(
                ContractId::parse(bad),
                Err(ContractError::InvalidContractId(_))
            ),
            "{bad:?} accepted"
        );
    }
}

#[test]
fn empty_contract_id_is_the_sentinel() {
    assert!(ContractId::parse("").unwrap().is_no_contract());
    assert!(ContractId::parse("  ").unwrap().is_no_contract());
    assert_eq!(ContractId::parse(" abc\n").unwrap().as_str(), "abc");
    assert!(!ContractId::parse("abc").unwrap().is_no_contract());
}

#[test]
fn work_record_ids_refuse_reserved_names() {
    assert!(WorkRecordId::parse("wr1").is_ok());
    for bad in ["tmp", "harness", "", "..", "a/b", ".git"] {
        assert!(WorkRecordId::parse(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn runtime_kinds_and_their_variables() {
    assert_eq!(
        RuntimeKind::parse("codex").unwrap().config_env_var(),
        Some("CODEX_HOME")
    );
    assert_eq!(
        RuntimeKind::parse("claude").unwrap().config_env_var(),
        Some("CLAUDE_CONFIG_DIR")
    );
    assert_eq!(
        RuntimeKind::parse("gemini_2").unwrap().config_env_var(),
        None
    );
    for bad in ["Codex", "1x", "", "a-b", "a.b", &"a".repeat(33)] {
        assert!(RuntimeKind::parse(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn uuid_recognition_is_canonical_only() {
    assert!(is_uuid("0c1d2e3f-0000-4000-8000-00000000000A"));
    for bad in [
        "0c1d2e3f000040008000000000000000",
        "{0c1d2e3f-0000-4000-8000-000000000000}",
        "0c1d2e3f-0000-4000-8000-00000000000g",
        "stray",
    ] {
        assert!(!is_uuid(bad), "{bad:?} accepted");
    }
}
