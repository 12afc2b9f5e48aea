use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Holder {
    #[serde(with = "crate::serde_path")]
    one: PathBuf,
    #[serde(with = "crate::serde_path::option")]
    maybe: Option<PathBuf>,
    #[serde(with = "crate::serde_path::vec")]
    many: Vec<PathBuf>,
}

fn latin1() -> PathBuf {
    PathBuf::from(OsString::from_vec(b"/home/r\xe9po".to_vec()))
}

#[test]
fn utf8_paths_stay_plain_strings() {
    let h = Holder {
        one: "/a".into(),
        maybe: Some("/b".into()),
        many: vec!["/c".into()],
    };
    let json = serde_json::to_string(&h).unwrap();
    assert_eq!(json, r#"{"one":"/a","maybe":"/b","many":["/c"]}"#);
    assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), h);
}

#[test]
fn non_utf8_paths_round_trip_byte_exact() {
    let h = Holder {
        one: latin1(),
        maybe: Some(latin1()),
        many: vec![latin1(), "/plain".into()],
    };
    let json = serde_json::to_string(&h).unwrap();
    assert!(json.contains(r#"{"bytes":["#), "{json}");
    assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), h);
    let none = Holder { maybe: None, ..h };
    let json = serde_json::to_string(&none).unwrap();
    assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), none);
}
