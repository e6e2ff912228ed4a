// An address as it leaves its node: escaped into one token sequence of a
// NATS subject (`book/src/wire.md`, `A'`), and held to the bus's length
// limit, which every cluster transport applies the same way before a
// message leaves (a NATS subject must fit the server's control line; the
// in-memory cluster has no subjects, but refuses what NATS would).

use std::fmt::Write as _;

/// The longest address that may leave its node, in bytes of its escaped
/// form (`A'` of the wire contract; the address itself for plain ASCII
/// without `%`, `*`, `>` or empty tokens). With a subject prefix of at
/// most [`MAX_PREFIX_LEN`] bytes, every subject of such an address
/// (`{prefix}.s.`, `{prefix}.js.p.`) stays within the NATS transport's
/// `MAX_SUBJECT_LEN` of 3 072 bytes.
pub(crate) const MAX_ADDRESS_LEN: usize = 3000;

/// The longest subject prefix (`NatsOptions::subject_prefix`), so that no
/// subject of an address within [`MAX_ADDRESS_LEN`] is too long for NATS.
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) const MAX_PREFIX_LEN: usize = 64;

#[inline]
pub(crate) fn is_plain(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b'.' | b'*' | b'>' | b'%')
}

/// Whether the dots of `address` are kept as token separators: unless a
/// token would be empty.
#[inline]
fn keeps_dots(bytes: &[u8]) -> bool {
    !bytes.starts_with(b".")
        && !bytes.ends_with(b".")
        && !bytes.windows(2).any(|pair| pair == b"..")
}

/// Appends the escaped `address` to `out`: printable ASCII other than `%`,
/// `*`, `>` is kept, `.` separates tokens, every other byte is `%XX`
/// (upper-case hex). When splitting at dots would leave an empty token
/// (an empty address, a leading, trailing or doubled dot) every dot is
/// escaped as `%2E` too; the empty address is the single token `%`. The
/// mapping is injective: distinct addresses get distinct subjects.
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) fn escape_address(address: &str, out: &mut String) {
    if address.is_empty() {
        out.push('%');
        return;
    }
    let bytes = address.as_bytes();
    let keep_dots = keeps_dots(bytes);
    // Most addresses need no escape: copied whole.
    if bytes
        .iter()
        .all(|&b| is_plain(b) || (b == b'.' && keep_dots))
    {
        out.push_str(address);
        return;
    }
    for &b in bytes {
        if is_plain(b) || (b == b'.' && keep_dots) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

/// The address whose escaped form ([`escape_address`]) is `escaped`:
/// `None` when no address escapes so (a `%` not followed by two
/// upper-case hex digits, bytes that are not UTF-8).
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) fn unescape_address(escaped: &str) -> Option<String> {
    if escaped == "%" {
        return Some(String::new());
    }
    let mut bytes = Vec::with_capacity(escaped.len());
    let mut rest = escaped.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let (&[hi, lo], tail) = tail.split_first_chunk::<2>()?;
            let digit = |d: u8| match d {
                b'0'..=b'9' => Some(d - b'0'),
                b'A'..=b'F' => Some(d - b'A' + 10),
                _ => None,
            };
            bytes.push(digit(hi)? << 4 | digit(lo)?);
            rest = tail;
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// The length of the escaped `address` ([`escape_address`]), without
/// writing it.
pub(crate) fn escaped_len(address: &str) -> usize {
    let bytes = address.as_bytes();
    if bytes.is_empty() {
        return 1;
    }
    let keep_dots = keeps_dots(bytes);
    bytes
        .iter()
        .map(|&b| {
            if is_plain(b) || (b == b'.' && keep_dots) {
                1
            } else {
                3
            }
        })
        .sum()
}

/// Checks that `address`, `escaped` bytes long once escaped, may leave its
/// node: the error of an address over [`MAX_ADDRESS_LEN`], the same on
/// every cluster transport.
pub(crate) fn check_escaped_len(address: &str, escaped: usize) -> Result<(), String> {
    if escaped <= MAX_ADDRESS_LEN {
        return Ok(());
    }
    let raw = address.len();
    let how = if escaped == raw {
        String::new()
    } else {
        format!(" ({escaped} bytes escaped for the wire)")
    };
    Err(format!(
        "address of {raw} bytes{how} is too long to leave its node: the cluster's limit is {MAX_ADDRESS_LEN} bytes, escaped"
    ))
}

/// Checks that `address` may leave its node ([`check_escaped_len`]).
pub(crate) fn check_address(address: &str) -> Result<(), String> {
    if address.len() <= MAX_ADDRESS_LEN / 3 {
        // Short enough whatever its escaping.
        return Ok(());
    }
    check_escaped_len(address, escaped_len(address))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escaped_length_is_the_escaped_addresss() {
        for address in [
            "",
            "a",
            "a.b",
            "a..b",
            ".a",
            "a.",
            "é",
            "100%",
            "a b.*",
            "x".repeat(10).as_str(),
        ] {
            let mut s = String::new();
            escape_address(address, &mut s);
            assert_eq!(escaped_len(address), s.len(), "{address:?}");
        }
    }

    #[test]
    fn unescaping_gives_the_address_back() {
        for address in ["", "a.b", ".a", "a..b", "a b%*>", "é.x", "%", "a.b."] {
            let mut escaped = String::new();
            escape_address(address, &mut escaped);
            assert_eq!(
                unescape_address(&escaped).as_deref(),
                Some(address),
                "{escaped}"
            );
        }
        assert_eq!(unescape_address("a%2"), None);
        assert_eq!(unescape_address("a%zz"), None);
        assert_eq!(unescape_address("%FF"), None);
    }

    #[test]
    fn the_limit_counts_the_escaped_form() {
        check_address(&"a".repeat(MAX_ADDRESS_LEN)).unwrap();
        let err = check_address(&"a".repeat(MAX_ADDRESS_LEN + 1)).unwrap_err();
        assert_eq!(
            err,
            "address of 3001 bytes is too long to leave its node: the cluster's limit is 3000 bytes, escaped"
        );
        check_address(&" ".repeat(MAX_ADDRESS_LEN / 3)).unwrap();
        let err = check_address(&" ".repeat(MAX_ADDRESS_LEN / 3 + 1)).unwrap_err();
        assert!(
            err.starts_with("address of 1001 bytes (3003 bytes escaped for the wire) is too long"),
            "{err}"
        );
    }
}
