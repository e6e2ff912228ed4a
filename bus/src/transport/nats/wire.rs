// The wire contract with other nodes (the guide, `book/src/wire.md`): subjects,
// queue groups, headers, versions and failure names. Changing anything
// here breaks nodes built from an older codecbus and peers in other
// languages: what a node writes is pinned, byte for byte, by the corpus
// in `bus/tests/wire/corpus/` (the test `wire::` of the cluster tests);
// a change to it is a new `WireVersion`, announced in the CHANGELOG.

use std::str::FromStr;

use async_nats::{HeaderMap, HeaderName, HeaderValue};
use bytes::Bytes;

use crate::transport::cluster::Frame;

use crate::transport::cluster::{
    H_CODEC, H_FAILURE, H_SHAPE, Inbound, MAX_PREFIX_LEN, WireVersion, check_escaped_len,
    escape_address, is_reserved,
};

/// Subjects longer than this are refused: the server's control line
/// (`max_control_line`, 4096 bytes by default) must still hold the reply
/// subject and sizes, and a line over it closes the connection. An address
/// within the bus's limit (`cluster::MAX_ADDRESS_LEN`) under a prefix of at
/// most `MAX_PREFIX_LEN` bytes never makes one this long.
pub(crate) const MAX_SUBJECT_LEN: usize = 3072;

/// Checks a subject prefix: at most [`MAX_PREFIX_LEN`] bytes of
/// dot-separated non-empty tokens of printable ASCII without `*`, `>` or
/// spaces.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), String> {
    if prefix.len() > MAX_PREFIX_LEN {
        return Err(format!(
            "subject prefix of {} bytes is too long: at most {MAX_PREFIX_LEN} bytes",
            prefix.len()
        ));
    }
    let ok = !prefix.is_empty()
        && prefix.split('.').all(|token| {
            !token.is_empty()
                && token
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && b != b'*' && b != b'>')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "subject prefix {prefix:?} is not a NATS subject: use dot-separated, non-empty tokens of printable ASCII without `*`, `>` or spaces"
        ))
    }
}

/// `{prefix}.{kind}.{escaped address}`.
pub(crate) fn subject(prefix: &str, kind: char, address: &str) -> Result<String, String> {
    let mut s = String::with_capacity(prefix.len() + 3 + address.len());
    s.push_str(prefix);
    s.push('.');
    s.push(kind);
    s.push('.');
    let head = s.len();
    escape_address(address, &mut s);
    // The bus's limit, as the in-memory cluster applies it too.
    check_escaped_len(address, s.len() - head)?;
    if s.len() > MAX_SUBJECT_LEN {
        return Err(format!(
            "address of {} bytes is too long for NATS: its subject would be {} bytes, over {MAX_SUBJECT_LEN}",
            address.len(),
            s.len()
        ));
    }
    Ok(s)
}

/// The subject every node with a consumer of `address` subscribes to
/// (publish).
pub(crate) fn publish_subject(prefix: &str, address: &str) -> Result<String, String> {
    subject(prefix, 'p', address)
}

/// The subject of the per-address queue group (send and request).
pub(crate) fn send_subject(prefix: &str, address: &str) -> Result<String, String> {
    subject(prefix, 's', address)
}

/// The NATS headers of `frame`, written by a node of wire version
/// `version`: the failure header of a failure (`{version} {KIND}
/// {code}`), or the codec header of a body in version 1 (`1 {codec}`),
/// then the user's, which [`frame`](crate::transport::cluster::frame)
/// checked can travel. In version 2 a body's codec is named in its
/// payload ([`CODEC_MARK`](crate::transport::cluster::CODEC_MARK)), so a
/// message without user headers has none: `async-nats` parses and
/// allocates every header on both sides, which costs more than a codec
/// call.
pub(crate) fn headers(frame: &Frame, version: WireVersion) -> HeaderMap {
    let head = &frame.head;
    let mut map = HeaderMap::new();
    if let Some(kind) = &head.failure {
        let code = head
            .failure_code
            .unwrap_or(crate::base::error::NO_FAILURE_CODE);
        let value = format!("{} {kind} {code}", version.as_str());
        map.insert(HeaderName::from_static(H_FAILURE), HeaderValue::from(value));
    }
    if let Some((version, codec)) = frame.codec_header() {
        let mut value = String::with_capacity(version.len() + 1 + codec.len());
        value.push_str(version);
        value.push(' ');
        value.push_str(codec);
        // A codec name a header cannot carry (CR, LF) leaves none: the
        // receiving node refuses the message as naming no codec.
        if let Ok(value) = HeaderValue::from_str(&value) {
            map.insert(HeaderName::from_static(H_CODEC), value);
        }
    }
    if let Some(shape) = head.shape {
        map.insert(
            HeaderName::from_static(H_SHAPE),
            HeaderValue::from(format!("{shape:016x}")),
        );
    }
    for (name, value) in head.user.iter() {
        // Checked when the frame was made; a header that still cannot
        // travel is left out rather than risking a panic.
        if let (Ok(n), Ok(v)) = (HeaderName::from_str(name), HeaderValue::from_str(value)) {
            map.append(n, v);
        }
    }
    map
}

/// A message's NATS headers and payload as a frame; a compressed body is
/// decompressed when it declares at most `limit` bytes (the server's
/// `max_payload`).
pub(crate) fn frame(headers: Option<&HeaderMap>, payload: Bytes, limit: usize) -> Frame {
    Frame::arrived(parse_headers(headers), payload, limit)
}

/// Splits NATS headers into the bus's and the user's.
pub(crate) fn parse_headers(map: Option<&HeaderMap>) -> Inbound {
    let mut inbound = Inbound::default();
    let Some(map) = map else {
        return inbound;
    };
    for (name, values) in map.iter() {
        let name: &str = name.as_ref();
        if !is_reserved(name) {
            for v in values {
                inbound.user.append(name, v.as_str());
            }
            continue;
        }
        let Some(first) = values.first().map(HeaderValue::as_str) else {
            continue;
        };
        let (version, rest) = first.split_once(' ').unwrap_or((first, ""));
        if name.eq_ignore_ascii_case(H_CODEC) {
            inbound.version = Some(version.to_owned().into());
            inbound.codec = Some(rest.to_owned().into());
        } else if name.eq_ignore_ascii_case(H_FAILURE) {
            let (kind, code) = rest.split_once(' ').unwrap_or((rest, ""));
            inbound.failure = Some(kind.to_owned().into());
            inbound.failure_code = code.trim().parse().ok();
        } else if name.eq_ignore_ascii_case(H_SHAPE) {
            inbound.shape = u64::from_str_radix(first.trim(), 16).ok();
        }
    }
    inbound
}

/// A permission the server refused, from the text of its `-ERR`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Violation<'a> {
    /// A publish to this subject.
    Publish(&'a str),
    /// A subscription to this subject.
    Subscribe(&'a str),
}

/// Reads nats-server's permission errors: `Permissions Violation for
/// Publish to "SUBJECT"` and `Permissions Violation for Subscription to
/// "SUBJECT"` (followed by ` using queue "GROUP"` for a queue
/// subscription). Any other text is `None`, as is a publish refused for
/// its reply subject (`… for Publish with Reply of "…"`), which names no
/// subject a request waits on.
pub(crate) fn permission_violation(text: &str) -> Option<Violation<'_>> {
    const PREFIX: &str = "Permissions Violation for ";
    let head = text.get(..PREFIX.len())?;
    if !head.eq_ignore_ascii_case(PREFIX) {
        return None;
    }
    let rest = &text[PREFIX.len()..];
    let (publish, rest) = if let Some(r) = rest.strip_prefix("Publish to ") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix("Subscription to ") {
        (false, r)
    } else {
        return None;
    };
    let subject = rest.strip_prefix('"')?;
    let subject = &subject[..subject.find('"')?];
    if subject.is_empty() {
        return None;
    }
    Some(if publish {
        Violation::Publish(subject)
    } else {
        Violation::Subscribe(subject)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::RequestErrorKind;
    use crate::base::headers::Headers;
    use crate::transport::cluster::is_plain;
    use crate::transport::cluster::{Writing, check_user_headers, encode, failure_kind};

    fn esc(a: &str) -> String {
        let mut s = String::new();
        escape_address(a, &mut s);
        s
    }

    #[test]
    fn addresses_map_to_subject_tokens() {
        assert_eq!(esc("news.feed"), "news.feed");
        assert_eq!(esc("user:7/cart"), "user:7/cart");
        assert_eq!(esc("a b"), "a%20b");
        assert_eq!(esc("a.*.>"), "a.%2A.%3E");
        assert_eq!(esc("100%"), "100%25");
        assert_eq!(esc("a..b"), "a%2E%2Eb");
        assert_eq!(esc(".a"), "%2Ea");
        assert_eq!(esc(""), "%");
        assert_eq!(esc("é"), "%C3%A9");
        assert_eq!(esc("tab\there"), "tab%09here");
    }

    #[test]
    fn the_whole_address_fast_path_escapes_as_the_byte_rule_does() {
        // The rule byte by byte, as the wire contract states it.
        fn by_bytes(a: &str) -> String {
            if a.is_empty() {
                return "%".to_owned();
            }
            let keep_dots = a.split('.').all(|t| !t.is_empty());
            let mut s = String::new();
            for &b in a.as_bytes() {
                if is_plain(b) || (b == b'.' && keep_dots) {
                    s.push(b as char);
                } else {
                    s.push_str(&format!("%{b:02X}"));
                }
            }
            s
        }
        // Every address of up to five of these characters.
        let alphabet = ["a", ".", "*", "%", " ", "é"];
        let mut addresses = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..5 {
            last = last
                .iter()
                .flat_map(|a| alphabet.iter().map(move |c| format!("{a}{c}")))
                .collect();
            addresses.extend(last.iter().cloned());
        }
        for a in &addresses {
            assert_eq!(esc(a), by_bytes(a), "{a:?}");
        }
    }

    #[test]
    fn kept_bytes_are_the_wire_contracts_ranges() {
        // book/src/wire.md: 0x21-0x24, 0x26-0x29, 0x2B-0x2D,
        // 0x2F-0x3D and 0x3F-0x7E are kept, every other byte is `%XX`
        // (upper-case hex); `.` is the separator.
        let kept = |b: u8| matches!(b, 0x21..=0x24 | 0x26..=0x29 | 0x2B..=0x2D | 0x2F..=0x3D | 0x3F..=0x7E);
        for b in 0u8..=0x7F {
            let c = char::from(b);
            let want = if kept(b) || b == b'.' {
                format!("x{c}x")
            } else {
                format!("x%{b:02X}x")
            };
            assert_eq!(esc(&format!("x{c}x")), want, "byte {b:#04x}");
        }
        assert_eq!(esc("\u{7f}\u{ff}"), "%7F%C3%BF");
    }

    #[test]
    fn escaping_is_injective_on_tricky_pairs() {
        let pairs = [
            ("a.b", "a%2Eb"),
            ("", "%"),
            ("a..b", "a%2E%2Eb"),
            ("%", "%25"),
        ];
        for (x, y) in pairs {
            assert_ne!(esc(x), esc(y), "{x:?} vs {y:?}");
        }
    }

    #[test]
    fn subjects() {
        assert_eq!(
            publish_subject("codecbus", "news").unwrap(),
            "codecbus.p.news"
        );
        assert_eq!(send_subject("app.v1", "a.b").unwrap(), "app.v1.s.a.b");
        let long = "x".repeat(MAX_SUBJECT_LEN);
        let err = send_subject("codecbus", &long).unwrap_err();
        assert!(err.contains("too long to leave its node"), "{err}");
        // The longest address under the longest prefix fits, durable too.
        let prefix = "p".repeat(MAX_PREFIX_LEN);
        let longest = "x".repeat(crate::transport::cluster::MAX_ADDRESS_LEN);
        send_subject(&format!("{prefix}.js"), &longest).unwrap();
        publish_subject(&prefix, &longest).unwrap();
    }

    #[test]
    fn prefixes() {
        assert!(check_prefix("codecbus").is_ok());
        assert!(check_prefix("app.v1").is_ok());
        for bad in ["", "a..b", "a.*", "a b", ".a", "a.>"] {
            assert!(check_prefix(bad).is_err(), "{bad:?}");
        }
        assert!(check_prefix(&"p".repeat(MAX_PREFIX_LEN)).is_ok());
        let err = check_prefix(&"p".repeat(MAX_PREFIX_LEN + 1)).unwrap_err();
        assert!(err.contains("at most 64 bytes"), "{err}");
    }

    /// The size limit the tests read frames with.
    const LIMIT: usize = 1 << 20;

    /// The version a node writes unless told otherwise.
    const V2: WireVersion = WireVersion::V2;

    /// A frame this node makes: a `String` body encoded with the codec
    /// named `codec`, in the default version.
    fn body_frame(codec: &'static str, user: Headers, value: &str) -> Frame {
        versioned_frame(WireVersion::default(), codec, user, value)
    }

    /// A frame this node makes in `version`.
    fn versioned_frame(
        version: WireVersion,
        codec: &'static str,
        user: Headers,
        value: &str,
    ) -> Frame {
        let registration = codecbus_core::CodecRegistration::of::<String>(codec);
        let body = std::sync::Arc::new(value.to_owned()) as codecbus_core::AnyBody;
        let writing = Writing {
            version,
            compress_above: Some(0),
        };
        Frame::encoded(
            codec,
            user,
            encode(&registration, &body, writing).unwrap(),
            None,
        )
    }

    #[test]
    fn the_codec_travels_in_the_payload_and_user_headers_as_headers() {
        let user: Headers = [("Trace-Id", "42"), ("tag", "a"), ("tag", "b")]
            .into_iter()
            .collect();
        let sent = body_frame("my quote", user, "abc");
        let map = headers(&sent, V2);
        assert!(map.get(H_CODEC).is_none());
        assert_eq!(map.len(), 2);
        // 0xC1, version 2, the name as a fixstr of 8, then "abc".
        assert_eq!(&sent.payload[..], b"\xc1\x02\xa8my quote\xa3abc".as_slice());
        let arrived = frame(Some(&map), sent.payload.clone(), LIMIT);
        assert_eq!(arrived.head.version.as_deref(), Some("2"));
        assert!(arrived.head.prefixed);
        assert_eq!(arrived.head.codec.as_deref(), Some("my quote"));
        assert_eq!(arrived.body(), b"\xa3abc");
        assert_eq!(arrived.head.user.get("trace-id"), Some("42"));
        assert_eq!(
            arrived.head.user.get_all("tag").collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(arrived.head.user.len(), 3);
        // Without user headers, no header at all: a plain PUB.
        assert!(headers(&body_frame("c", Headers::new(), "x"), V2).is_empty());
    }

    #[test]
    fn version_1_names_the_codec_in_a_header_and_never_compresses() {
        let user: Headers = [("Trace-Id", "42")].into_iter().collect();
        let long = "abc".repeat(100);
        let sent = versioned_frame(WireVersion::V1, "my quote", user, &long);
        // The body alone, plain although over the threshold of 0.
        assert_eq!(sent.payload, codecbus_core::to_vec(&long).unwrap());
        assert_eq!(sent.head.inflated, None);
        let map = headers(&sent, WireVersion::V1);
        assert_eq!(
            map.get(H_CODEC).map(HeaderValue::as_str),
            Some("1 my quote")
        );
        assert_eq!(map.get("Trace-Id").map(HeaderValue::as_str), Some("42"));
        assert_eq!(map.len(), 2);
        assert_eq!(
            sent.wire_len(WireVersion::V1),
            12 + H_CODEC.len() + 2 + 10 + 2 + "Trace-Id".len() + 2 + 2 + 2 + sent.payload.len()
        );
        let arrived = frame(Some(&map), sent.payload.clone(), LIMIT);
        assert_eq!(arrived.head.version.as_deref(), Some("1"));
        assert!(!arrived.head.prefixed);
        assert_eq!(arrived.head.codec.as_deref(), Some("my quote"));
        assert_eq!(arrived.body(), &sent.payload[..]);
        // Without user headers, the codec header alone.
        let bare = versioned_frame(WireVersion::V1, "string", Headers::new(), "x");
        assert_eq!(headers(&bare, WireVersion::V1).len(), 1);
        // As the in-memory cluster hands it over: the header's codec kept.
        let received = bare.received(LIMIT);
        assert_eq!(received.head.codec.as_deref(), Some("string"));
        assert_eq!(received.body(), b"\xa1x");
    }

    #[test]
    fn a_failure_states_the_version_its_node_writes() {
        let failure = Frame::failure(RequestErrorKind::RecipientFailure, 422, "no".to_owned());
        for (version, value) in [
            (WireVersion::V1, "1 RECIPIENT_FAILURE 422"),
            (V2, "2 RECIPIENT_FAILURE 422"),
        ] {
            let map = headers(&failure, version);
            assert_eq!(map.get(H_FAILURE).map(HeaderValue::as_str), Some(value));
            assert!(map.get(H_CODEC).is_none());
            assert_eq!(map.len(), 1);
        }
    }

    #[test]
    fn a_peer_may_name_the_codec_in_a_header_instead() {
        let mut map = HeaderMap::new();
        map.insert(H_CODEC, "1 string");
        let arrived = frame(Some(&map), Bytes::from_static(b"\xa2hi"), LIMIT);
        assert_eq!(arrived.head.version.as_deref(), Some("1"));
        assert!(!arrived.head.prefixed);
        assert_eq!(arrived.head.codec.as_deref(), Some("string"));
        assert_eq!(arrived.body(), b"\xa2hi");
        // The header wins: the payload is the body, whatever it starts with.
        let arrived = frame(Some(&map), Bytes::from_static(b"\xc1\x02\xa1x\xc0"), LIMIT);
        assert_eq!(arrived.head.codec.as_deref(), Some("string"));
        assert_eq!(arrived.body().len(), 5);
    }

    #[test]
    fn a_prefix_of_version_1_or_2_names_its_codec() {
        for (payload, version) in [
            (b"\xc1\x01\xa6string\xa2hi".as_slice(), "1"),
            (b"\xc1\x02\xa6string\xa2hi", "2"),
        ] {
            let arrived = frame(None, Bytes::copy_from_slice(payload), LIMIT);
            assert_eq!(arrived.head.version.as_deref(), Some(version));
            assert!(arrived.head.prefixed);
            assert_eq!(arrived.head.codec.as_deref(), Some("string"));
            assert_eq!(arrived.body(), b"\xa2hi");
        }
    }

    #[test]
    fn a_prefix_of_another_version_or_without_a_name_names_no_codec() {
        for payload in [b"\xc1\x07\xa1x\xc0".as_slice(), b"\xc1\x03\xa1x\xc0"] {
            let arrived = frame(None, Bytes::copy_from_slice(payload), LIMIT);
            assert_eq!(arrived.head.version, Some(payload[1].to_string().into()));
            assert_eq!(arrived.head.codec, None);
        }
        for payload in [
            b"\xc1\x02".as_slice(),
            b"\xc1\x02\x05",
            b"\xc1\x02\xa3ab",
            b"\xc1\x02\xa2\xff\xfe",
        ] {
            let arrived = frame(None, Bytes::copy_from_slice(payload), LIMIT);
            assert_eq!(arrived.head.version.as_deref(), Some("2"));
            assert_eq!(arrived.head.codec, None, "{payload:?}");
            assert!(arrived.body().is_empty());
        }
        // No mark: no codec named; the whole payload is the body.
        for payload in [b"".as_slice(), b"\xc1", b"\xa2hi"] {
            let arrived = frame(None, Bytes::copy_from_slice(payload), LIMIT);
            assert_eq!(arrived.head.version, None);
            assert_eq!(arrived.head.codec, None);
            assert_eq!(arrived.body(), payload);
        }
    }

    proptest::proptest! {
        /// Whatever a payload holds, reading its prefix never panics, and
        /// the body is what follows the prefix (all of it without one).
        #[test]
        fn any_payload_is_read_without_panic(payload in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let arrived = frame(None, Bytes::from(payload.clone()), LIMIT);
            proptest::prop_assert!(payload.ends_with(arrived.body()));
            if payload.first() != Some(&0xc1) || payload.len() < 2 {
                proptest::prop_assert_eq!(arrived.body(), &payload[..]);
                proptest::prop_assert!(arrived.head.codec.is_none());
            }
        }

        /// Compressed or not, a body reads back the same.
        #[test]
        fn compressed_bodies_round_trip(value in "[a-c]{0,300}|\\PC{0,100}", above in 0usize..64) {
            let sent = compressed_frame(&value, above);
            let arrived = frame(None, sent.payload.clone(), LIMIT);
            proptest::prop_assert_eq!(&arrived.head.unreadable, &None);
            proptest::prop_assert_eq!(arrived.body(), &codecbus_core::to_vec(&value).unwrap()[..]);
        }

        /// Whatever follows the mark, reading never panics.
        #[test]
        fn any_compressed_payload_is_read_without_panic(rest in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let mut payload = b"\xc1\x02\xa6string\xc1".to_vec();
            payload.extend_from_slice(&rest);
            let _ = frame(None, Bytes::from(payload), 4096);
        }

        /// A name and body written by a node read back the same.
        #[test]
        fn prefixes_round_trip(name in "\\PC{1,40}", value in "\\PC{0,40}") {
            let name: &'static str = Box::leak(name.into_boxed_str());
            let sent = body_frame(name, Headers::new(), &value);
            let arrived = frame(None, sent.payload.clone(), LIMIT);
            proptest::prop_assert_eq!(arrived.head.codec.as_deref(), Some(name));
            proptest::prop_assert_eq!(arrived.body(), &codecbus_core::to_vec(&value).unwrap()[..]);
        }
    }

    /// A `String` body encoded with the codec `string`, compressed when
    /// over `above` bytes.
    fn compressed_frame(value: &str, above: usize) -> Frame {
        let registration = codecbus_core::CodecRegistration::of::<String>("string");
        let body = std::sync::Arc::new(value.to_owned()) as codecbus_core::AnyBody;
        let writing = Writing {
            compress_above: Some(above),
            ..Writing::default()
        };
        Frame::encoded(
            "string",
            Headers::new(),
            encode(&registration, &body, writing).unwrap(),
            None,
        )
    }

    #[test]
    fn a_large_body_travels_compressed_and_reads_back() {
        let value = "abcd".repeat(100);
        let sent = compressed_frame(&value, 64);
        // The codec prefix, the mark 0xC1, the body's size (a str8 of 400
        // bytes: 403, uint16 0x0193), then the LZ4 block.
        assert_eq!(
            &sent.payload[..13],
            b"\xc1\x02\xa6string\xc1\xcd\x01\x93".as_slice()
        );
        assert!(sent.payload.len() < 60, "{} bytes", sent.payload.len());
        assert_eq!(sent.head.inflated, Some(2 + 7 + 403));
        let arrived = frame(None, sent.payload.clone(), LIMIT);
        assert_eq!(arrived.head.codec.as_deref(), Some("string"));
        assert_eq!(arrived.head.unreadable, None);
        assert_eq!(arrived.body(), &codecbus_core::to_vec(&value).unwrap()[..]);
        // At or under the threshold, or not smaller compressed: plain.
        let small = compressed_frame(&value, 403);
        assert_eq!(small.head.inflated, None);
        assert_eq!(small.payload[9], 0xda);
        assert_eq!(compressed_frame("xyz", 0).head.inflated, None);
    }

    #[test]
    fn a_compressed_body_is_an_lz4_block() {
        // A block by hand, as another implementation writes it: one
        // sequence of 6 literals (token 0x60) and no match.
        let mut payload = b"\xc1\x01\xa6string\xc1\x06\x60".to_vec();
        payload.extend_from_slice(b"\xa5hello");
        let arrived = frame(None, Bytes::from(payload), LIMIT);
        assert_eq!(arrived.head.unreadable, None);
        assert_eq!(arrived.body(), b"\xa5hello");
    }

    #[test]
    fn a_compressed_body_over_the_limit_or_broken_is_refused() {
        // Declares 1 GiB in a few bytes: refused before anything is
        // allocated.
        let bomb = b"\xc1\x01\xa6string\xc1\xce\x40\x00\x00\x00\x1f\x00\x01\x00";
        let arrived = frame(None, Bytes::from_static(bomb), LIMIT);
        let why = arrived.head.unreadable.unwrap();
        assert!(
            why.contains("declares 1073741824 bytes, over the limit of 1048576"),
            "{why}"
        );
        for (payload, needle) in [
            (b"\xc1\x01\xa6string\xc1".as_slice(), "without its size"),
            (
                b"\xc1\x01\xa6string\xc1\x06\x60\xa5he",
                "cannot be decompressed",
            ),
            (
                b"\xc1\x01\xa6string\xc1\x09\x60\xa5hello",
                "not the 9 it declares",
            ),
        ] {
            let arrived = frame(None, Bytes::copy_from_slice(payload), LIMIT);
            let why = arrived.head.unreadable.unwrap_or_default();
            assert!(why.contains(needle), "{payload:?}: {why}");
        }
    }

    #[test]
    fn bad_user_headers_are_refused() {
        let reserved: Headers = [("codecbus-codec", "x")].into_iter().collect();
        assert!(
            check_user_headers(&reserved)
                .unwrap_err()
                .contains("reserves")
        );
        let newline: Headers = [("a", "x\r\ny")].into_iter().collect();
        assert!(
            check_user_headers(&newline)
                .unwrap_err()
                .contains("CR or LF")
        );
        let colon: Headers = [("a:b", "x")].into_iter().collect();
        assert!(
            check_user_headers(&colon)
                .unwrap_err()
                .contains("cannot travel")
        );
        // The client trims a value it reads: whitespace at an end is lost.
        for padded in [" a", "a ", "\ta", "a\u{a0}", " "] {
            let padded: Headers = [("a", padded)].into_iter().collect();
            let err = check_user_headers(&padded).unwrap_err();
            assert!(err.contains("no whitespace at its start or end"), "{err}");
        }
        // What the check lets through, the client's header types take.
        let fine: Headers = [("X-Tag", "a b\tc"), ("Empty", "")].into_iter().collect();
        check_user_headers(&fine).unwrap();
        assert_eq!(headers(&body_frame("c", fine, ""), V2).len(), 2);
    }

    #[test]
    fn a_frames_length_is_what_the_server_counts() {
        let user: Headers = [("Trace-Id", "42"), ("tag", "a")].into_iter().collect();
        let frame = body_frame("my quote", user, "abc");
        let map = headers(&frame, V2);
        let mut len = 12;
        for (name, values) in map.iter() {
            let name: &str = name.as_ref();
            for v in values {
                len += name.len() + 2 + v.as_str().len() + 2;
            }
        }
        assert_eq!(frame.wire_len(V2), len + frame.payload.len());
        // No header: no header block.
        let bare = body_frame("my quote", Headers::new(), "abc");
        assert_eq!(bare.wire_len(V2), bare.payload.len());
        let failure = Frame::failure(RequestErrorKind::Timeout, -1, "late".to_owned());
        let map = headers(&failure, V2);
        let value = map.get(H_FAILURE).map(HeaderValue::as_str).unwrap();
        assert_eq!(
            failure.wire_len(V2),
            12 + H_FAILURE.len() + 2 + value.len() + 2 + 4
        );
    }

    #[test]
    fn failure_headers_round_trip() {
        let map = headers(
            &Frame::failure(RequestErrorKind::RecipientFailure, -7, String::new()),
            V2,
        );
        let inbound = parse_headers(Some(&map));
        assert_eq!(inbound.version, None);
        assert_eq!(inbound.codec, None);
        assert_eq!(inbound.failure.as_deref(), Some("RECIPIENT_FAILURE"));
        assert_eq!(inbound.failure_code, Some(-7));
    }

    #[test]
    fn the_version_is_the_codec_headers_whatever_the_order() {
        // A HeaderMap iterates in no fixed order: a failure header of
        // another version must not decide how the codec header is read.
        for _ in 0..32 {
            let mut map = HeaderMap::new();
            map.insert(H_CODEC, "1 string");
            map.insert(
                HeaderName::from_static(H_FAILURE),
                HeaderValue::from_str("9 SOMETHING_NEW 5").unwrap(),
            );
            map.insert("Codecbus-Future", "9 x");
            let inbound = parse_headers(Some(&map));
            assert_eq!(inbound.version.as_deref(), Some("1"));
            assert_eq!(inbound.codec.as_deref(), Some("string"));
            assert_eq!(inbound.failure.as_deref(), Some("SOMETHING_NEW"));
            assert_eq!(inbound.failure_code, Some(5));
            assert!(
                inbound.user.is_empty(),
                "reserved names are not user headers"
            );
        }
    }

    #[test]
    fn failure_names_round_trip() {
        for kind in [
            RequestErrorKind::NoHandlers,
            RequestErrorKind::Timeout,
            RequestErrorKind::RecipientFailure,
            RequestErrorKind::TypeMismatch,
            RequestErrorKind::QueueFull,
            RequestErrorKind::Dropped,
            RequestErrorKind::Codec,
            RequestErrorKind::PayloadTooLarge,
            RequestErrorKind::Transport,
        ] {
            assert_eq!(failure_kind(kind.as_str()), kind);
        }
        assert_eq!(
            failure_kind("SOMETHING_NEW"),
            RequestErrorKind::RecipientFailure
        );
    }

    #[test]
    fn permission_violations() {
        assert_eq!(
            permission_violation(r#"Permissions Violation for Publish to "codecbus.s.payments""#),
            Some(Violation::Publish("codecbus.s.payments"))
        );
        assert_eq!(
            permission_violation(
                r#"Permissions Violation for Subscription to "codecbus.s.x" using queue "codecbus""#
            ),
            Some(Violation::Subscribe("codecbus.s.x"))
        );
        for other in [
            r#"Permissions Violation for Publish with Reply of "_INBOX.a""#,
            "Permissions Violation for Publish to",
            r#"Permissions Violation for Publish to "unterminated"#,
            r#"Permissions Violation for Publish to """#,
            "Authorization Violation",
            "Maximum Payload Violation",
            "",
            "Permissions",
        ] {
            assert_eq!(permission_violation(other), None, "{other:?}");
        }
    }
}
