use super::*;

fn bytes(text: &str) -> Result<u64> {
    Amount::parse("memory limit", text)?.bytes("memory limit")
}

#[test]
fn binary_and_decimal_suffixes_give_exact_bytes() {
    assert_eq!(bytes("8Gi").unwrap(), 8 << 30);
    assert_eq!(bytes("512Mi").unwrap(), 512 << 20);
    assert_eq!(bytes("1.5Gi").unwrap(), 3 << 29);
    assert_eq!(bytes("2G").unwrap(), 2_000_000_000);
    assert_eq!(bytes("1e9").unwrap(), 1_000_000_000);
    assert_eq!(bytes("1E3").unwrap(), 1000);
    assert_eq!(bytes("3E").unwrap(), 3_000_000_000_000_000_000);
    assert_eq!(bytes("123").unwrap(), 123);
    assert_eq!(bytes("+4k").unwrap(), 4000);
    assert_eq!(bytes(".5k").unwrap(), 500);
    assert_eq!(bytes("7.").unwrap(), 7);
}

#[test]
fn malformed_amounts_are_refused_with_the_value() {
    for text in [
        "", "8GB", "8gi", "Gi", "-1Gi", "0", "0Mi", "1..5", "1.2.3", "1e", "1e1.5", "1e999", "ten",
        "8 Gi", "0x10",
    ] {
        let err = bytes(text).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("{text:?}")) && msg.contains("memory limit"),
            "{text}: {msg}"
        );
    }
}

#[test]
fn fractional_bytes_and_overflow_are_refused() {
    assert!(bytes("100m").is_err());
    assert!(bytes("1.5").is_err());
    assert!(bytes("16Ei").is_err(), "2^64 does not fit");
    assert_eq!(bytes("15Ei").unwrap(), 15 << 60);
}

#[test]
fn cpu_takes_millicores_but_nothing_finer() {
    let cpu = |t: &str| Amount::parse("cpu limit", t).and_then(|a| a.check_millis("cpu limit"));
    assert!(cpu("2").is_ok());
    assert!(cpu("500m").is_ok());
    assert!(cpu("0.25").is_ok());
    assert!(cpu("1500u").is_err());
    assert!(cpu("0.0001").is_err());
}

#[test]
fn bytes_render_with_the_largest_exact_binary_suffix() {
    let text = |b: u64| Amount::from_bytes(b).unwrap().as_str().to_string();
    assert_eq!(text(8 << 30), "8Gi");
    assert_eq!(text(1536 << 20), "1536Mi");
    assert_eq!(text(1000), "1000");
    assert_eq!(text(4096), "4Ki");
    assert!(Amount::from_bytes(0).is_none());
    for b in [1u64, 1000, 4096, 8 << 30, u64::MAX, 3 << 61] {
        let a = Amount::from_bytes(b).unwrap();
        assert_eq!(a.bytes("x").unwrap(), b);
        assert_eq!(
            Amount::parse("x", a.as_str()).unwrap().bytes("x").unwrap(),
            b
        );
    }
}
