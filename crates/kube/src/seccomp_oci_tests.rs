use super::*;

fn in_union(patterns: &[(u32, u32)], x: u32) -> bool {
    patterns.iter().any(|(m, v)| x & m == *v)
}

fn probes(allowed: &[u32]) -> Vec<u32> {
    let mut xs: Vec<u32> = vec![0, 1, u32::MAX, u32::MAX - 1, 0x8000_0000, 0x0040_0000];
    for a in allowed {
        for d in [0u32, 1, 2, 0x100, 0x8000_0000] {
            xs.push(a.wrapping_add(d));
            xs.push(a.wrapping_sub(d));
            xs.push(a ^ d);
        }
        for b in 0..32 {
            xs.push(a ^ (1 << b));
        }
    }
    // A deterministic spread over the whole word.
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        xs.push(x);
    }
    xs
}

#[test]
fn complement_patterns_cover_exactly_the_values_not_allowed() {
    for allowed in [
        &[][..],
        &[0][..],
        &[u32::MAX][..],
        &[0, 8, 0x2_0000, 0x2_0008, 0xffff_ffff][..],
        &[5, 5, 6][..],
    ] {
        let patterns = complement_patterns(allowed);
        for x in probes(allowed) {
            assert_eq!(
                in_union(&patterns, x),
                !allowed.contains(&x),
                "allowed {allowed:x?}, value {x:#x}"
            );
        }
        // Disjoint subtrees: no value is matched twice, so the count is the trie's.
        for (i, (m1, v1)) in patterns.iter().enumerate() {
            for (m2, v2) in &patterns[i + 1..] {
                let common = m1 & m2;
                assert_ne!(v1 & common, v2 & common, "overlapping patterns");
            }
        }
    }
}

#[test]
fn a_single_value_has_one_pattern_per_bit() {
    assert_eq!(complement_patterns(&[0x1234]).len(), 32);
    assert_eq!(complement_patterns(&[]), vec![(0, 0)]);
}

/// One condition per argument (runc ORs several on one argument); a value is compared on
/// its low word only, a pointer's NULL test on all 64 bits.
#[test]
fn every_entry_has_at_most_one_condition_per_argument() {
    let Some(profile) = native_profile() else {
        eprintln!("skipped: no native seccomp filter on this target");
        return;
    };
    assert_eq!(profile.default_action, OciAction::Allow);
    assert_eq!(profile.architectures.len(), 1);
    for entry in &profile.syscalls {
        assert_eq!(entry.action, OciAction::Errno);
        assert!(matches!(entry.errno_ret, Some(1) | Some(38)), "{entry:?}");
        let mut indexes: Vec<u32> = entry.args.iter().map(|a| a.index).collect();
        indexes.dedup();
        assert_eq!(indexes.len(), entry.args.len(), "{entry:?}");
        for arg in &entry.args {
            if arg.op == OciOp::Ne {
                assert_eq!((arg.value, arg.value_two), (0, 0), "{entry:?}");
                continue;
            }
            assert_eq!(arg.op, OciOp::MaskedEq);
            assert!(arg.value <= LOW_WORD && arg.value != 0, "{arg:?}");
            assert_eq!(
                arg.value_two & !arg.value,
                0,
                "datum outside its mask: {arg:?}"
            );
        }
    }
    let clone3 = profile
        .syscalls
        .iter()
        .find(|e| e.names.iter().any(|n| n == "clone3"))
        .unwrap();
    assert_eq!(clone3.errno_ret, Some(38));
    assert!(clone3.args.is_empty());
    // prlimit64: every entry is "some other pid" AND "a new limit".
    let prlimit: Vec<_> = profile
        .syscalls
        .iter()
        .filter(|e| e.names.iter().any(|n| n == "prlimit64"))
        .collect();
    assert_eq!(prlimit.len(), 32);
    for entry in prlimit {
        assert_eq!(entry.args.len(), 2, "{entry:?}");
        assert_eq!((entry.args[0].index, entry.args[1].index), (0, 2));
        assert_eq!(entry.args[1].op, OciOp::Ne);
    }
}

#[test]
fn json_round_trips_with_the_formats_field_names() {
    let Some(profile) = native_profile() else {
        eprintln!("skipped: no native seccomp filter on this target");
        return;
    };
    let text = to_json(&profile).unwrap();
    for key in [
        "\"defaultAction\": \"SCMP_ACT_ALLOW\"",
        "\"errnoRet\"",
        "\"valueTwo\"",
        "\"SCMP_CMP_MASKED_EQ\"",
        "\"architectures\"",
    ] {
        assert!(text.contains(key), "{key} missing");
    }
    let back: OciProfile = serde_json::from_str(&text).unwrap();
    assert_eq!(back, profile);
}
