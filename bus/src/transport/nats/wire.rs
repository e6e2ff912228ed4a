// The wire contract with other nodes (the guide, `book/src/wire.md`): subjects,
// queue groups, headers, versions and failure names. Changing anything
// here breaks nodes built from an older codecbus; bump `WIRE_VERSION` when
// the meaning of the bytes or headers changes.

use std::fmt::Write as _;
use std::str::FromStr;

use async_nats::{HeaderMap, HeaderName, HeaderValue};
use bytes::Bytes;

use crate::transport::cluster::Frame;

use crate::transport::cluster::{H_CODEC, H_FAILURE, Inbound, WIRE_VERSION, is_reserved};

/// Subjects longer than this are refused: the server's control line
/// (`max_control_line`, 4096 bytes by default) must still hold the reply
/// subject and sizes, and a line over it closes the connection.
pub(crate) const MAX_SUBJECT_LEN: usize = 3072;

/// Checks a subject prefix: dot-separated non-empty tokens of printable
/// ASCII without `*`, `>` or spaces.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), String> {
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

#[inline]
fn is_plain(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b'.' | b'*' | b'>' | b'%')
}

/// Appends the escaped `address` to `out`: printable ASCII other than `%`,
/// `*`, `>` is kept, `.` separates tokens, every other byte is `%XX`
/// (upper-case hex). When splitting at dots would leave an empty token
/// (an empty address, a leading, trailing or doubled dot) every dot is
/// escaped as `%2E` too; the empty address is the single token `%`. The
/// mapping is injective: distinct addresses get distinct subjects.
pub(crate) fn escape_address(address: &str, out: &mut String) {
    if address.is_empty() {
        out.push('%');
        return;
    }
    let keep_dots = address.split('.').all(|t| !t.is_empty());
    for &b in address.as_bytes() {
        if is_plain(b) || (b == b'.' && keep_dots) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

/// `{prefix}.{kind}.{escaped address}`.
pub(crate) fn subject(prefix: &str, kind: char, address: &str) -> Result<String, String> {
    let mut s = String::with_capacity(prefix.len() + 3 + address.len());
    s.push_str(prefix);
    s.push('.');
    s.push(kind);
    s.push('.');
    escape_address(address, &mut s);
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

/// The NATS headers of `frame`: the bus's own header (the codec, or the
/// failure), then the user's, which [`frame`](crate::transport::cluster::frame)
/// checked can travel.
///
/// Why one bus header: `async-nats` parses and allocates every header on
/// both sides, and a header costs about as much as a codec call; the
/// version rides in front of the codec name.
pub(crate) fn headers(frame: &Frame) -> HeaderMap {
    let head = &frame.head;
    let mut map = HeaderMap::new();
    if let Some(codec) = &head.codec {
        let mut value = String::with_capacity(WIRE_VERSION.len() + 1 + codec.len());
        value.push_str(WIRE_VERSION);
        value.push(' ');
        value.push_str(codec);
        map.insert(HeaderName::from_static(H_CODEC), HeaderValue::from(value));
    }
    if let Some(kind) = &head.failure {
        let code = head
            .failure_code
            .unwrap_or(crate::base::error::NO_FAILURE_CODE);
        let value = format!("{WIRE_VERSION} {kind} {code}");
        map.insert(HeaderName::from_static(H_FAILURE), HeaderValue::from(value));
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

/// A message's NATS headers and payload as a frame.
pub(crate) fn frame(headers: Option<&HeaderMap>, payload: Bytes) -> Frame {
    Frame {
        head: parse_headers(headers),
        payload,
    }
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
    use crate::transport::cluster::{check_user_headers, failure_kind};

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
        assert!(err.contains("too long"), "{err}");
    }

    #[test]
    fn prefixes() {
        assert!(check_prefix("codecbus").is_ok());
        assert!(check_prefix("app.v1").is_ok());
        for bad in ["", "a..b", "a.*", "a b", ".a", "a.>"] {
            assert!(check_prefix(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn headers_round_trip() {
        let user: Headers = [("Trace-Id", "42"), ("tag", "a"), ("tag", "b")]
            .into_iter()
            .collect();
        let map = headers(&Frame::body("my quote", user, Bytes::new()));
        assert_eq!(
            map.get(H_CODEC).map(HeaderValue::as_str),
            Some("1 my quote")
        );
        let inbound = parse_headers(Some(&map));
        assert_eq!(inbound.version.as_deref(), Some(WIRE_VERSION));
        assert_eq!(inbound.codec.as_deref(), Some("my quote"));
        assert_eq!(inbound.user.get("trace-id"), Some("42"));
        assert_eq!(inbound.user.get_all("tag").collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(inbound.user.len(), 3);
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
        // What the check lets through, the client's header types take.
        let fine: Headers = [("X-Tag", "a b\tc")].into_iter().collect();
        check_user_headers(&fine).unwrap();
        assert_eq!(headers(&Frame::body("c", fine, Bytes::new())).len(), 2);
    }

    #[test]
    fn a_frames_length_is_what_the_server_counts() {
        let user: Headers = [("Trace-Id", "42"), ("tag", "a")].into_iter().collect();
        let frame = Frame::body("my quote", user, Bytes::from_static(b"abc"));
        let map = headers(&frame);
        let mut len = 12;
        for (name, values) in map.iter() {
            let name: &str = name.as_ref();
            for v in values {
                len += name.len() + 2 + v.as_str().len() + 2;
            }
        }
        assert_eq!(frame.wire_len(), len + 3);
        let failure = Frame::failure(RequestErrorKind::Timeout, -1, "late".to_owned());
        let map = headers(&failure);
        let value = map.get(H_FAILURE).map(HeaderValue::as_str).unwrap();
        assert_eq!(
            failure.wire_len(),
            12 + H_FAILURE.len() + 2 + value.len() + 2 + 4
        );
    }

    #[test]
    fn failure_headers_round_trip() {
        let map = headers(&Frame::failure(
            RequestErrorKind::RecipientFailure,
            -7,
            String::new(),
        ));
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
            let mut map = headers(&Frame::body("string", Headers::default(), Bytes::new()));
            map.insert(
                HeaderName::from_static(H_FAILURE),
                HeaderValue::from_str("2 SOMETHING_NEW 5").unwrap(),
            );
            map.insert("Codecbus-Future", "9 x");
            let inbound = parse_headers(Some(&map));
            assert_eq!(inbound.version.as_deref(), Some(WIRE_VERSION));
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
