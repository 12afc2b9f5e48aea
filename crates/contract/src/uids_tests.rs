use super::*;

#[test]
fn ranges_refuse_empty_system_and_reserved() {
    assert!(UidRange::new(200000, 200999).is_ok());
    assert!(UidRange::new(1000, 1000).is_ok());
    for (lo, hi) in [
        (200, 100),
        (0, 10),
        (999, 2000),
        (60000, 70000),
        (5000, u32::MAX),
    ] {
        assert!(
            matches!(
                UidRange::new(lo, hi),
                Err(ContractError::InvalidUidRange { .. })
            ),
            "{lo}-{hi} accepted"
        );
    }
    assert!(UidRange::with_floor(500, 600, 500).is_ok());
}

#[test]
fn range_parsing() {
    let r = UidRange::parse("200000-200999").unwrap();
    assert_eq!((r.min(), r.max()), (200000, 200999));
    assert!(r.contains(200000) && r.contains(200999) && !r.contains(201000));
    for bad in ["", "5", "a-b", "10-", "-10", "200000-100", "1-2-3"] {
        assert!(UidRange::parse(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn map_parsing_refuses_everything_dubious() {
    assert_eq!(parse_map("{}").unwrap().len(), 0);
    let m = parse_map(r#"{"a": 200000, "b": 200001}"#).unwrap();
    assert_eq!(m["b"], 200001);
    for bad in [
        "",
        "{",
        "[]",
        r#"{"a": "200000"}"#,
        r#"{"a": -1}"#,
        r#"{"a": 0}"#,
        r#"{"a": 1.5}"#,
        r#"{"a": 4294967295}"#,
        r#"{"a": 200000, "b": 200000}"#,
        r#"{"../x": 200000}"#,
        r#"{"no-contract": 200000}"#,
    ] {
        assert!(parse_map(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn first_free_fills_holes() {
    let range = UidRange::new(200000, 200002).unwrap();
    let mut m = BTreeMap::new();
    assert_eq!(first_free(range, &m), Some(200000));
    m.insert("a".to_string(), 200000);
    m.insert("c".to_string(), 200002);
    assert_eq!(first_free(range, &m), Some(200001));
    m.insert("b".to_string(), 200001);
    assert_eq!(first_free(range, &m), None);
}
