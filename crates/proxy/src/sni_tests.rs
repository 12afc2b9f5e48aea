use super::*;
use proptest::prelude::*;

/// An extension: type, then its data with a 2-byte length.
fn extension(kind: u16, data: &[u8]) -> Vec<u8> {
    let mut out = kind.to_be_bytes().to_vec();
    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
    out.extend_from_slice(data);
    out
}

fn server_name(names: &[(u8, &[u8])]) -> Vec<u8> {
    let mut list = Vec::new();
    for (kind, name) in names {
        list.push(*kind);
        list.extend_from_slice(&(name.len() as u16).to_be_bytes());
        list.extend_from_slice(name);
    }
    let mut data = (list.len() as u16).to_be_bytes().to_vec();
    data.extend_from_slice(&list);
    extension(EXT_SERVER_NAME, &data)
}

/// A ClientHello body as a TLS 1.3 client sends it, with `extensions` (None: the list is
/// left out altogether, as a TLS 1.2 client may).
fn body(extensions: Option<&[u8]>) -> Vec<u8> {
    let mut b = vec![0x03, 0x03];
    b.extend_from_slice(&[7u8; 32]);
    b.push(32);
    b.extend_from_slice(&[9u8; 32]);
    b.extend_from_slice(&[0x00, 0x04, 0x13, 0x01, 0x13, 0x02]);
    b.extend_from_slice(&[0x01, 0x00]);
    if let Some(ext) = extensions {
        b.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        b.extend_from_slice(ext);
    }
    b
}

fn handshake(body: &[u8]) -> Vec<u8> {
    let mut m = vec![HANDSHAKE_CLIENT_HELLO];
    m.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    m.extend_from_slice(body);
    m
}

/// `message` split into records of at most `chunk` bytes.
fn records(message: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in message.chunks(chunk) {
        out.extend_from_slice(&[CONTENT_HANDSHAKE, 0x03, 0x01]);
        out.extend_from_slice(&(piece.len() as u16).to_be_bytes());
        out.extend_from_slice(piece);
    }
    out
}

fn hello(extensions: &[u8]) -> Vec<u8> {
    records(&handshake(&body(Some(extensions))), MAX_FRAGMENT)
}

fn found(name: Option<&str>, ech: bool) -> Sniffed<ClientHelloNames> {
    Sniffed::Found(ClientHelloNames {
        server_name: name.map(str::to_owned),
        ech,
    })
}

#[test]
fn takes_the_host_name_among_other_extensions() {
    let mut ext = extension(0x000a, &[0x00, 0x02, 0x00, 0x1d]);
    ext.extend(server_name(&[(0, b"example.test")]));
    ext.extend(extension(0x002b, &[0x02, 0x03, 0x04]));
    assert_eq!(
        client_hello(&hello(&ext)),
        found(Some("example.test"), false)
    );
}

#[test]
fn every_prefix_asks_for_more_and_the_whole_is_judged() {
    let bytes = hello(&server_name(&[(0, b"example.test")]));
    for cut in 0..bytes.len() {
        assert_eq!(client_hello(&bytes[..cut]), Sniffed::NeedMore, "cut {cut}");
    }
    assert_eq!(client_hello(&bytes), found(Some("example.test"), false));
}

#[test]
fn a_hello_spanning_records_is_reassembled() {
    let message = handshake(&body(Some(&server_name(&[(0, b"split.example.test")]))));
    for chunk in [1, 3, 40, 100] {
        let bytes = records(&message, chunk);
        assert_eq!(
            client_hello(&bytes),
            found(Some("split.example.test"), false),
            "chunk {chunk}"
        );
    }
}

#[test]
fn bytes_after_the_hello_records_are_not_its_business() {
    let mut bytes = hello(&server_name(&[(0, b"example.test")]));
    // A ChangeCipherSpec and early data follow in middlebox-compatibility mode.
    bytes.extend_from_slice(&[0x14, 0x03, 0x03, 0x00, 0x01, 0x01, 0x17, 0x03, 0x03]);
    assert_eq!(client_hello(&bytes), found(Some("example.test"), false));
}

#[test]
fn no_name_is_reported_as_none() {
    assert_eq!(
        client_hello(&hello(&extension(0x002b, &[0x02, 0x03, 0x04]))),
        found(None, false)
    );
    let bare = records(&handshake(&body(None)), MAX_FRAGMENT);
    assert_eq!(client_hello(&bare), found(None, false));
}

#[test]
fn ech_is_reported_with_the_outer_name() {
    let mut ext = server_name(&[(0, b"public.example.test")]);
    ext.extend(extension(EXT_ENCRYPTED_CLIENT_HELLO, &[0x00, 0x01, 0x02]));
    assert_eq!(
        client_hello(&hello(&ext)),
        found(Some("public.example.test"), true)
    );
}

#[test]
fn ambiguity_is_malformed() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            [
                server_name(&[(0, b"a.test")]),
                server_name(&[(0, b"b.test")]),
            ]
            .concat(),
            "two server_name extensions",
        ),
        (
            server_name(&[(0, b"a.test"), (0, b"b.test")]),
            "two host_name entries in server_name",
        ),
        (
            server_name(&[]),
            "server_name extension without a host_name",
        ),
        (
            server_name(&[(0, b"bad\x1b[2Jname")]),
            "server name is not printable ASCII",
        ),
        (
            server_name(&[(0, b"")]),
            "server name is not printable ASCII",
        ),
        (
            [
                extension(EXT_ENCRYPTED_CLIENT_HELLO, &[]),
                extension(EXT_ENCRYPTED_CLIENT_HELLO, &[]),
            ]
            .concat(),
            "two encrypted_client_hello extensions",
        ),
    ];
    for (ext, why) in cases {
        assert_eq!(client_hello(&hello(&ext)), Sniffed::Malformed(why));
    }
}

#[test]
fn lengths_that_overrun_are_malformed() {
    // A server_name whose list claims more than the extension holds.
    let mut ext = server_name(&[(0, b"example.test")]);
    ext[5] += 1;
    assert!(matches!(client_hello(&hello(&ext)), Sniffed::Malformed(_)));
    // An extension list whose last entry claims more than the list holds.
    let mut body = body(Some(&server_name(&[(0, b"example.test")])));
    let last = body.len() - 1;
    body.push(0);
    body[last - 18] = 0xff;
    assert!(matches!(
        client_hello(&records(&handshake(&body), MAX_FRAGMENT)),
        Sniffed::Malformed(_)
    ));
}

#[test]
fn other_protocols_are_refused_at_once() {
    assert_eq!(
        client_hello(b"GET / HTTP/1.1\r\n"),
        Sniffed::Malformed("not a TLS handshake record")
    );
    assert_eq!(
        client_hello(&[0x16, 0x02, 0x00, 0x00, 0x05]),
        Sniffed::Malformed("not a TLS record version")
    );
    assert_eq!(
        client_hello(&[0x16, 0x03, 0x01, 0x00, 0x00]),
        Sniffed::Malformed("TLS record length out of range")
    );
    assert_eq!(
        client_hello(&[0x16, 0x03, 0x01, 0x00, 0x04, 0x02]),
        Sniffed::Malformed("the first handshake message is not a ClientHello")
    );
}

#[test]
fn a_hello_beyond_the_bound_is_refused_before_it_is_read() {
    let bytes = [0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x01, 0x00, 0x00];
    assert_eq!(
        client_hello(&bytes),
        Sniffed::Malformed("ClientHello larger than the steering bound")
    );
}

#[test]
fn a_second_message_in_the_hello_record_is_malformed() {
    let mut message = handshake(&body(Some(&server_name(&[(0, b"a.test")]))));
    message.extend_from_slice(&[0x0b, 0x00, 0x00, 0x00]);
    assert_eq!(
        client_hello(&records(&message, MAX_FRAGMENT)),
        Sniffed::Malformed("bytes after the ClientHello in its record")
    );
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = client_hello(&bytes);
    }

    #[test]
    fn never_panics_on_a_mutated_hello(
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = hello(&server_name(&[(0, b"example.test")]));
        for (at, value) in flips {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        let cut = cut % (bytes.len() + 1);
        let _ = client_hello(&bytes[..cut]);
    }
}
