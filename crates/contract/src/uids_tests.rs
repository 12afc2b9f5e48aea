use super::*;

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
