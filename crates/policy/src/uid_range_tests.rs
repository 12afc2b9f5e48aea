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
            matches!(UidRange::new(lo, hi), Err(UidRangeError { .. })),
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
fn a_range_reads_from_its_text_and_prints_back() {
    let r: UidRange = "2000000-2099999".parse().unwrap();
    assert_eq!(r.to_string(), "2000000-2099999");
    let err = UidRange::parse("0-10").unwrap_err();
    assert_eq!(err.value, "0-10");
    assert!(err.reason.contains("system uids"), "{err}");
}
