use super::*;

#[test]
fn labels_follow_rfc1123() {
    for ok in ["a", "jaula-0f8e", "0abc", &"a".repeat(63)] {
        assert!(is_dns1123_label(ok), "{ok}");
    }
    for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
        assert!(!is_dns1123_label(bad), "{bad}");
    }
}

#[test]
fn subdomains_are_dotted_labels() {
    assert!(is_dns1123_subdomain("jaula-1.example"));
    assert!(!is_dns1123_subdomain("a..b"));
    assert!(!is_dns1123_subdomain(".a"));
    assert!(!is_dns1123_subdomain("Gvisor"));
}

#[test]
fn label_values_allow_case_dots_and_underscores() {
    assert!(is_label_value(""));
    assert!(is_label_value("Contract_1.a-B"));
    assert!(!is_label_value("-a"));
    assert!(!is_label_value("a."));
    assert!(!is_label_value(&"a".repeat(64)));
}
