use super::*;

/// glibc's `getaddrinfo("pypi.org")` A query as it goes on the wire (res_mkquery: RD set,
/// one question, no EDNS), id 0x3f1a.
const GLIBC_A_PYPI: &[u8] = &[
    0x3f, 0x1a, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
    0x04, b'p', b'y', b'p', b'i', 0x03, b'o', b'r', b'g', 0x00, //
    0x00, 0x01, 0x00, 0x01,
];

/// `dig example.test AAAA` (RD and AD set, an EDNS OPT record with a cookie option in
/// the additional section), id 0xbeef.
const DIG_AAAA_WITH_EDNS: &[u8] = &[
    0xbe, 0xef, 0x01, 0x20, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, //
    0x07, b'E', b'x', b'a', b'm', b'p', b'l', b'e', 0x04, b't', b'e', b's', b't', 0x00, //
    0x00, 0x1c, 0x00, 0x01, //
    0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, //
    0x00, 0x0a, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8,
];

#[test]
fn reads_a_glibc_query() {
    let q = parse_query(GLIBC_A_PYPI).unwrap();
    assert_eq!(q.id, 0x3f1a);
    assert!(q.recursion_desired);
    assert_eq!(q.question.name.to_string(), "pypi.org");
    assert_eq!(q.question.name.as_host().as_deref(), Some("pypi.org"));
    assert_eq!(q.question.qtype, QType(TYPE_A));
    assert_eq!(q.question.qclass, CLASS_IN);
}

#[test]
fn reads_a_query_with_edns_and_lowercases_the_name() {
    let q = parse_query(DIG_AAAA_WITH_EDNS).unwrap();
    assert_eq!(q.id, 0xbeef);
    assert_eq!(q.question.name.to_string(), "example.test");
    assert_eq!(q.question.qtype.to_string(), "AAAA");
}

/// The answer `make` gives the glibc query: its id and question echoed, QR and RD set,
/// one question and no records; the fourth header byte returned.
fn echoed(make: fn(&Query) -> Vec<u8>) -> u8 {
    let q = parse_query(GLIBC_A_PYPI).unwrap();
    let r = make(&q);
    assert_eq!(&r[..2], &[0x3f, 0x1a]);
    assert_eq!(r[2], 0x81, "QR and RD");
    assert_eq!(&r[4..12], &[0, 1, 0, 0, 0, 0, 0, 0], "no records at all");
    assert_eq!(&r[12..], &GLIBC_A_PYPI[12..]);
    r[3]
}

#[test]
fn refused_echoes_id_and_question_with_rcode_5() {
    assert_eq!(echoed(refused) & 0x0f, 5);
}

#[test]
fn nx_domain_echoes_id_and_question_with_rcode_3() {
    assert_eq!(echoed(nx_domain), 0x80 | 3, "RA and NXDOMAIN");
}

#[test]
fn an_a_answer_carries_one_address_with_its_ttl() {
    let q = parse_query(GLIBC_A_PYPI).unwrap();
    let r = a_record(&q, Ipv4Addr::new(127, 0, 2, 1), 5);
    assert_eq!(r[3] & 0x0f, 0);
    assert_eq!(&r[4..12], &[0, 1, 0, 1, 0, 0, 0, 0]);
    let answer = &r[GLIBC_A_PYPI.len()..];
    assert_eq!(
        answer,
        &[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 127, 0, 2, 1]
    );
}

#[test]
fn no_data_is_noerror_without_an_answer() {
    let q = parse_query(DIG_AAAA_WITH_EDNS).unwrap();
    let r = no_data(&q);
    assert_eq!(r[3] & 0x0f, 0);
    assert_eq!(&r[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
    // The question is echoed as parsed (lower case), without the OPT record.
    let q2 = parse_query(&{
        let mut m = r.clone();
        m[2] &= 0x7f;
        m
    })
    .unwrap();
    assert_eq!(q2.question, q.question);
}

#[test]
fn refuses_malformed_queries() {
    assert_eq!(parse_query(&GLIBC_A_PYPI[..11]), Err(DnsError::Short));
    let mut response = GLIBC_A_PYPI.to_vec();
    response[2] |= 0x80;
    assert_eq!(parse_query(&response), Err(DnsError::NotAQuery));
    let mut notify = GLIBC_A_PYPI.to_vec();
    notify[2] |= 4 << 3;
    assert_eq!(parse_query(&notify), Err(DnsError::Opcode(4)));
    let mut none = GLIBC_A_PYPI.to_vec();
    none[5] = 0;
    assert_eq!(parse_query(&none), Err(DnsError::NoQuestion));
    assert_eq!(
        parse_query(&GLIBC_A_PYPI[..GLIBC_A_PYPI.len() - 1]),
        Err(DnsError::Truncated)
    );
    assert_eq!(parse_query(&GLIBC_A_PYPI[..15]), Err(DnsError::Truncated));
    // A pointer to the question itself, and one into the header (`\x01\x00` there would
    // read as a one-byte label).
    for offset in [0x0c, 0x02] {
        let mut pointer = GLIBC_A_PYPI[..12].to_vec();
        pointer.extend_from_slice(&[0xc0, offset, 0, 1, 0, 1]);
        assert_eq!(parse_query(&pointer), Err(DnsError::LabelType), "{offset}");
    }
    let mut long = GLIBC_A_PYPI[..12].to_vec();
    for _ in 0..5 {
        long.push(63);
        long.extend_from_slice(&[b'a'; 63]);
    }
    long.extend_from_slice(&[0, 0, 1, 0, 1]);
    assert_eq!(parse_query(&long), Err(DnsError::NameTooLong));
}

#[test]
fn a_refused_message_with_a_query_header_gets_formerr_or_notimp() {
    let mut pointer = GLIBC_A_PYPI[..12].to_vec();
    pointer.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1]);
    let e = parse_query(&pointer).unwrap_err();
    let r = error_for(&pointer, e).unwrap();
    assert_eq!(&r[..2], &[0x3f, 0x1a]);
    assert_eq!(r[3] & 0x0f, 1);
    assert_eq!(&r[4..], &[0; 8]);
    let mut notify = GLIBC_A_PYPI.to_vec();
    notify[2] |= 4 << 3;
    let r = error_for(&notify, DnsError::Opcode(4)).unwrap();
    assert_eq!(r[3] & 0x0f, 4);
    assert_eq!(error_for(&GLIBC_A_PYPI[..5], DnsError::Short), None);
    assert_eq!(error_for(GLIBC_A_PYPI, DnsError::NotAQuery), None);
}

#[test]
fn odd_bytes_are_escaped_and_not_a_host() {
    let mut msg = GLIBC_A_PYPI[..12].to_vec();
    msg.extend_from_slice(&[
        4, 0x1b, b'[', b'.', b'\\', 3, b'o', b'r', b'g', 0, 0, 1, 0, 1,
    ]);
    let q = parse_query(&msg).unwrap();
    assert_eq!(q.question.name.to_string(), "\\027[\\046\\092.org");
    assert_eq!(q.question.name.as_host(), None);
    let mut root = GLIBC_A_PYPI[..12].to_vec();
    root.extend_from_slice(&[0, 0, 2, 0, 1]);
    let q = parse_query(&root).unwrap();
    assert_eq!(q.question.name.to_string(), ".");
    assert_eq!(q.question.name.as_host(), None);
    assert_eq!(q.question.qtype.to_string(), "NS");
    assert_eq!(QType(999).to_string(), "TYPE999");
}

proptest::proptest! {
    #[test]
    fn never_panics_on_arbitrary_bytes(msg in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
        match parse_query(&msg) {
            Ok(q) => {
                // Whatever was read can be answered, and the answer reads back the same.
                for answer in [refused(&q), nx_domain(&q), no_data(&q), a_record(&q, Ipv4Addr::LOCALHOST, 5)] {
                    let mut again = answer.clone();
                    again[2] &= 0x7f;
                    let back = parse_query(&again).unwrap();
                    proptest::prop_assert_eq!(&back.question, &q.question);
                    proptest::prop_assert_eq!(back.id, q.id);
                }
                let _ = q.question.name.to_string();
                let _ = q.question.name.as_host();
            }
            Err(e) => {
                let _ = error_for(&msg, e);
            }
        }
    }

    #[test]
    fn reads_back_every_wellformed_question(
        id in proptest::num::u16::ANY,
        labels in proptest::collection::vec(proptest::collection::vec(b'a'..=b'z', 1..20), 0..6),
        qtype in proptest::num::u16::ANY,
    ) {
        let mut msg = id.to_be_bytes().to_vec();
        msg.extend_from_slice(&[1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        for l in &labels {
            msg.push(l.len() as u8);
            msg.extend_from_slice(l);
        }
        msg.push(0);
        msg.extend_from_slice(&qtype.to_be_bytes());
        msg.extend_from_slice(&[0, 1]);
        let q = parse_query(&msg).unwrap();
        proptest::prop_assert_eq!(q.id, id);
        proptest::prop_assert_eq!(q.question.name.labels(), &labels[..]);
        proptest::prop_assert_eq!(q.question.qtype, QType(qtype));
    }
}
