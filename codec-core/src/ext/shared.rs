//! Strings and bytes that share the buffer they were decoded from.
#![forbid(unsafe_code)]

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use bytes::Bytes;

use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};
use crate::error::{DecodeError, EncodeError};
use crate::msgpack::read::Reader;
use crate::msgpack::write::Writer;
use crate::shape::Shape;

/// An immutable UTF-8 string held in a reference-counted [`Bytes`]
/// buffer: decoded from a payload read with [`Reader::shared`] (as the bus
/// reads every message from NATS), it points into that payload instead of
/// being copied out of it, and it is `'static`, so a message of the bus can
/// hold it. Cloning it is a reference count.
///
/// On the wire it is a MessagePack `str`, the same bytes a `String` writes.
/// From any other reader it copies, as a `String` does.
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use codecbus_core::ext::SharedStr;
/// use codecbus_core::{from_bytes, to_vec, MessageCodec};
///
/// #[derive(MessageCodec, Debug)]
/// #[codec(immutable)]
/// struct Page {
///     title: SharedStr,
///     body: Bytes,
/// }
///
/// let payload = Bytes::from(to_vec(&Page { title: "Intro".into(), body: Bytes::from_static(b"...") }).unwrap());
/// let page: Page = from_bytes(&payload).unwrap();
/// assert_eq!(page.title, "Intro");
/// // Both fields point into `payload`:
/// let inside = |p: *const u8| payload.as_ptr_range().contains(&p);
/// assert!(inside(page.title.as_ptr()) && inside(page.body.as_ptr()));
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Bytes);

impl SharedStr {
    /// A string over `bytes`, when they are UTF-8.
    ///
    /// # Errors
    ///
    /// The UTF-8 error, and the bytes are dropped.
    pub fn from_utf8(bytes: Bytes) -> Result<Self, std::str::Utf8Error> {
        std::str::from_utf8(&bytes)?;
        Ok(Self(bytes))
    }

    /// A string of `'static` text, without copying it.
    pub const fn from_static(s: &'static str) -> Self {
        Self(Bytes::from_static(s.as_bytes()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Built only from `str`s and checked bytes.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The buffer behind the text.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        Self(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        Self(Bytes::from(s))
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> Self {
        s.as_str().to_owned()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl Immutable for SharedStr {}
impl Immutable for Bytes {}

impl Encode for SharedStr {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(self.as_str())
    }
}

impl<'de> Decode<'de> for SharedStr {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let s = r.read_str()?;
        Ok(Self(shared_or_copied(r, s.as_bytes())?))
    }
}

impl MessageType for SharedStr {}
impl MessageCodec for SharedStr {
    crate::impls::share!();
    crate::impls::describe!(Shape::Str);
}

/// `bytes::Bytes` is a MessagePack `bin`, shared with the buffer it was
/// decoded from when read with [`Reader::shared`].
impl Encode for Bytes {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_bin(self)
    }
}

impl<'de> Decode<'de> for Bytes {
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let data = r.read_bin()?;
        shared_or_copied(r, data)
    }
}

impl MessageType for Bytes {}
impl MessageCodec for Bytes {
    crate::impls::share!();
    crate::impls::describe!(Shape::Bin);
}

/// `part` of the input as a shared slice of its buffer, or a copy charged
/// to the allocation budget.
#[inline]
fn shared_or_copied(r: &mut Reader<'_>, part: &[u8]) -> Result<Bytes, DecodeError> {
    if let Some(shared) = r.share(part) {
        return Ok(shared);
    }
    r.charge_alloc(part.len())?;
    Ok(Bytes::copy_from_slice(part))
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::SharedStr;
    use crate::codec::{from_bytes, from_slice, to_vec};
    use crate::error::DecodeErrorKind;

    #[test]
    fn shares_the_buffer_it_was_read_from_and_copies_otherwise() {
        let payload = Bytes::from(to_vec(&("héllo", Bytes::from_static(b"\x00\x01"))).unwrap());
        let (s, b): (SharedStr, Bytes) = from_bytes(&payload).unwrap();
        assert_eq!((s.as_str(), &b[..]), ("héllo", &b"\x00\x01"[..]));
        let inside = |p: *const u8| payload.as_ptr_range().contains(&p);
        assert!(inside(s.as_ptr()) && inside(b.as_ptr()));

        let (s, b): (SharedStr, Bytes) = from_slice(&payload).unwrap();
        assert_eq!((s.as_str(), &b[..]), ("héllo", &b"\x00\x01"[..]));
        assert!(!inside(s.as_ptr()) && !inside(b.as_ptr()));
    }

    #[test]
    fn writes_what_string_and_bin_write() {
        assert_eq!(
            to_vec(&SharedStr::from("ab")).unwrap(),
            to_vec("ab").unwrap()
        );
        assert_eq!(
            to_vec(&Bytes::from_static(b"ab")).unwrap(),
            to_vec(&b"ab"[..]).unwrap()
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        let payload = Bytes::from_static(b"\xa2\xff\xfe");
        let e = from_bytes::<SharedStr>(&payload).unwrap_err();
        assert!(matches!(e.kind(), DecodeErrorKind::InvalidUtf8), "{e}");
        // A `bin` of 5 bytes with 2 left: refused before anything is shared.
        let e = from_bytes::<Bytes>(&Bytes::from_static(b"\xc4\x05ab")).unwrap_err();
        assert!(matches!(e.kind(), DecodeErrorKind::Truncated), "{e}");
        assert!(SharedStr::from_utf8(Bytes::from_static(b"\xff")).is_err());
    }
}
