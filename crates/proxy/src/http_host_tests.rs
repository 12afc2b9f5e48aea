use super::*;
use proptest::prelude::*;

fn head(method: &str, host: &str) -> Sniffed<RequestHead> {
    Sniffed::Found(RequestHead {
        method: method.to_owned(),
        host: host.to_owned(),
    })
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = request_head(&bytes);
    }

    #[test]
    fn never_panics_on_header_like_text(text in "[A-Z]{1,7} [ -~]{0,20} HTTP/1\\.[01]\r\n([ -~\t]{0,30}\r?\n){0,6}\r\n") {
        let _ = request_head(text.as_bytes());
    }
}

#[test]
fn takes_method_and_host_without_port() {
    let cases = [
        ("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n", "GET", "example.test"),
        (
            "POST /a?b=1 HTTP/1.1\r\nUser-Agent: x\r\nhOsT:\texample.test:8080 \r\nAccept: */*\r\n\r\n",
            "POST",
            "example.test",
        ),
        ("OPTIONS * HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", "OPTIONS", "[::1]"),
        ("GET / HTTP/1.0\r\nHost: 192.0.2.7\r\n\r\nbody", "GET", "192.0.2.7"),
    ];
    for (text, method, host) in cases {
        assert_eq!(
            request_head(text.as_bytes()),
            head(method, host),
            "{text:?}"
        );
    }
}

#[test]
fn every_prefix_of_a_head_asks_for_more() {
    let text = b"GET /x HTTP/1.1\r\nHost: example.test\r\n\r\n";
    for cut in 0..text.len() {
        assert_eq!(request_head(&text[..cut]), Sniffed::NeedMore, "cut {cut}");
    }
    assert_eq!(request_head(text), head("GET", "example.test"));
}

#[test]
fn what_servers_could_read_differently_is_malformed() {
    let cases = [
        (
            "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
            "two Host fields",
        ),
        ("GET / HTTP/1.1\r\nX: y\r\n\r\n", "no Host field"),
        (
            "GET / HTTP/1.1\r\nHost : a.test\r\n\r\n",
            "a header name is not a token",
        ),
        (
            "GET / HTTP/1.1\r\nX: y\r\n Host: a.test\r\n\r\n",
            "obsolete line folding in the request head",
        ),
        (
            "GET / HTTP/1.1\nHost: a.test\r\n\r\n",
            "a request line does not end in CRLF",
        ),
        (
            "GET / HTTP/1.1\r\nHost: a\rb.test\r\n\r\n",
            "bare CR in the request head",
        ),
        (
            "GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
            "the request target is not a path (absolute-form is refused)",
        ),
        (
            "CONNECT b.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n",
            "the request target is not a path (absolute-form is refused)",
        ),
        (
            "GET / HTTP/2.0\r\nHost: a.test\r\n\r\n",
            "not an HTTP/1.0 or HTTP/1.1 request",
        ),
        (
            "GET  / HTTP/1.1\r\nHost: a.test\r\n\r\n",
            "the request line is not METHOD TARGET VERSION",
        ),
        (
            "GET / HTTP/1.1\r\nHost:\r\n\r\n",
            "the Host field is empty or not printable ASCII",
        ),
        (
            "GET / HTTP/1.1\r\nHost: a.test:http\r\n\r\n",
            "the Host field's port is not a number",
        ),
        (
            "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
            "the Host field is empty or not printable ASCII",
        ),
        (
            "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
            "the Host field's IPv6 literal is not closed",
        ),
        (
            "GET / HTTP/1.1\r\nHost: \x1b]0;x\x07\r\n\r\n",
            "the Host field is empty or not printable ASCII",
        ),
        (
            "GET / HTTP/1.1\r\nHost: :80\r\n\r\n",
            "the Host field names no host",
        ),
        (
            "GET / HTTP/1.1\r\nX: a\x01b\r\nHost: a.test\r\n\r\n",
            "a header value holds a control character",
        ),
        (
            "G(T / HTTP/1.1\r\nHost: a.test\r\n\r\n",
            "the request method is not a token",
        ),
        (
            "GET\r\nHost: a.test\r\n\r\n",
            "the request line is not METHOD TARGET VERSION",
        ),
    ];
    for (text, why) in cases {
        assert_eq!(
            request_head(text.as_bytes()),
            Sniffed::Malformed(why),
            "{text:?}"
        );
    }
}

#[test]
fn tls_on_the_http_port_is_refused_at_once() {
    assert_eq!(
        request_head(&[0x16, 0x03, 0x01]),
        Sniffed::Malformed("not an HTTP/1.x request")
    );
}
