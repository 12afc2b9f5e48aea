use super::*;

#[test]
fn good_ids_parse() {
    assert_eq!(contract_id("c-1.x").unwrap().as_str(), "c-1.x");
    assert!(contract_id("").unwrap().is_no_contract());
    assert_eq!(work_record_id("w_1").unwrap().as_str(), "w_1");
    assert_eq!(runtime_kind("codex").unwrap().as_str(), "codex");
    assert_eq!(uid_range("23000-23099").unwrap(), "23000-23099");
}

/// Each refusal names the rule, so the user can fix the id without reading the source.
#[test]
fn bad_ids_name_their_rule() {
    for (got, rule) in [
        (
            contract_id("bad/id").unwrap_err(),
            "[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
        ),
        (contract_id("..").unwrap_err(), "one path segment"),
        (work_record_id("tmp").unwrap_err(), "reserved"),
        (
            work_record_id("a b").unwrap_err(),
            "[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
        ),
        (runtime_kind("Codex").unwrap_err(), "[a-z][a-z0-9_]{0,31}"),
        (uid_range("5-1").unwrap_err(), "uid range"),
    ] {
        assert!(got.contains(rule), "{got:?} does not name {rule:?}");
    }
}
