//! Encode and decode errors.
//!
//! Contract: a `DecodeError` is built at the innermost failure with the byte
//! offset, and each enclosing decoder adds one path segment while the error
//! travels outwards (`in_field`, `in_index`, ...). Segments are therefore
//! stored innermost first and reversed for display. The success path pays
//! nothing for the path.
//!
//! A location is shown as a JSON Pointer (RFC 6901), the notation the JSON
//! specs use for their violations: `/items/3/price`, with `~` written `~0`
//! and `/` written `~1` inside a segment. The empty pointer is the whole
//! value; `Display` then names no location. A failure in a map key is
//! reported at the map's pointer: a key has no pointer of its own.

use std::error::Error as StdError;
use std::fmt;

/// What went wrong while decoding MessagePack.
///
/// Every kind is `Copy` so that callers can match on it; details that need
/// an allocation (the unknown key, the source error) live on [`DecodeError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended before the value was complete.
    Truncated,
    /// A marker of another type was found where `expected` was needed.
    TypeMismatch {
        /// What the decoder needed, e.g. `"string"` or `"map or array"`.
        expected: &'static str,
        /// What the input held, e.g. `"integer"`.
        found: &'static str,
    },
    /// The byte is not a MessagePack marker (`0xc1` is reserved by the spec).
    InvalidMarker(u8),
    /// A string was not valid UTF-8.
    InvalidUtf8,
    /// An integer does not fit the target type (`300` into a `u8`).
    IntegerOutOfRange {
        /// The Rust type that was being decoded.
        target: &'static str,
    },
    /// A declared length is larger than the bytes left in the input could
    /// ever hold, or larger than [`DecodeLimits::max_collection_len`](crate::DecodeLimits).
    LengthOverflow,
    /// Values were nested deeper than [`DecodeLimits::max_depth`](crate::DecodeLimits).
    DepthLimitExceeded,
    /// Decoding would allocate more than [`DecodeLimits::max_alloc_bytes`](crate::DecodeLimits).
    AllocLimitExceeded,
    /// An enum variant name (or index) that the type does not have.
    UnknownVariant,
    /// A struct field that is neither optional nor defaulted is absent.
    MissingField(&'static str),
    /// A struct field appeared twice in one map.
    DuplicateField(&'static str),
    /// An array-encoded value has the wrong number of elements.
    WrongLength {
        /// The number of elements the type has.
        expected: usize,
        /// The number of elements the input declared.
        found: usize,
    },
    /// An extension value of another type id was found.
    UnexpectedExtType {
        /// The extension type id that was needed.
        expected: i8,
        /// The extension type id in the input.
        found: i8,
    },
    /// An extension payload does not have a valid layout for its type.
    InvalidExtData(&'static str),
    /// A value is outside the domain of the target type (a `char` above
    /// `U+10FFFF`, nanoseconds above 999 999 999, ...).
    InvalidValue(&'static str),
    /// `from_slice` decoded a whole value but bytes were left over.
    TrailingBytes(usize),
    /// A user-supplied decoder (`#[codec(with = ...)]`, a hand-written
    /// codec) reported a problem of its own.
    Custom,
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated => f.write_str("unexpected end of input"),
            Self::TypeMismatch { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            Self::InvalidMarker(b) => write!(f, "invalid marker byte 0x{b:02x}"),
            Self::InvalidUtf8 => f.write_str("invalid UTF-8 in string"),
            Self::IntegerOutOfRange { target } => write!(f, "integer out of range for {target}"),
            Self::LengthOverflow => {
                f.write_str("declared length exceeds the input or the length limit")
            }
            Self::DepthLimitExceeded => f.write_str("nesting depth limit exceeded"),
            Self::AllocLimitExceeded => f.write_str("allocation limit exceeded"),
            Self::UnknownVariant => f.write_str("unknown enum variant"),
            Self::MissingField(name) => write!(f, "missing field `{name}`"),
            Self::DuplicateField(name) => write!(f, "duplicate field `{name}`"),
            Self::WrongLength { expected, found } => {
                write!(f, "expected an array of {expected} elements, found {found}")
            }
            Self::UnexpectedExtType { expected, found } => {
                write!(f, "expected extension type {expected}, found {found}")
            }
            Self::InvalidExtData(what) => write!(f, "invalid extension data: {what}"),
            Self::InvalidValue(what) => write!(f, "invalid value: {what}"),
            Self::TrailingBytes(n) => write!(f, "{n} trailing bytes after the value"),
            Self::Custom => f.write_str("custom decode error"),
        }
    }
}

/// One step of the path to the value that failed to decode: one reference
/// token of its JSON Pointer.
///
/// Each segment names where the value sits in the MessagePack data, so the
/// pointer can be followed through the data as through JSON:
///
/// | segment | token | data |
/// |---|---|---|
/// | `Field("price")` | `/price` | `{"price": ..}` |
/// | `Variant("Shipped")` | `/Shipped` | `{"Shipped": ..}` (the externally tagged payload) |
/// | `Index(3)` | `/3` | the fourth element of an array, tuple or tuple struct |
/// | `Key("7")` | `/7` | `{7: ..}` (a key that is not a string, as text) |
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathSegment {
    /// A struct field or struct-variant field, by its name on the wire.
    Field(&'static str),
    /// The payload of an enum variant, under its name in the one-entry map
    /// `{"Variant": payload}`.
    Variant(&'static str),
    /// A position in an array, a tuple or a tuple struct.
    Index(usize),
    /// The value under a map key: a string key as it is, any other key as
    /// its text (an integer in decimal, `true`, `null`, `[1,2]`, ...).
    Key(String),
}

impl PathSegment {
    /// The segment's text before escaping.
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Field(name) | Self::Variant(name) => (*name).into(),
            Self::Key(key) => key.as_str().into(),
            Self::Index(i) => i.to_string().into(),
        }
    }
}

/// The segment as a JSON Pointer reference token, without the leading `/`:
/// `~` is written `~0` and `/` is written `~1`.
impl fmt::Display for PathSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_pointer_token(f, &self.text())
    }
}

/// Writes `token` as a JSON Pointer reference token (RFC 6901), without
/// the leading `/`: `~` as `~0`, `/` as `~1`, everything else as it is.
///
/// # Errors
///
/// Only those of `out`.
///
/// # Examples
///
/// ```
/// let mut s = String::new();
/// codecbus_core::write_pointer_token(&mut s, "a/b~c").unwrap();
/// assert_eq!(s, "a~1b~0c");
/// ```
pub fn write_pointer_token(out: &mut impl fmt::Write, token: &str) -> fmt::Result {
    let mut rest = token;
    while let Some(at) = rest.find(['~', '/']) {
        out.write_str(&rest[..at])?;
        out.write_str(if rest.as_bytes()[at] == b'~' {
            "~0"
        } else {
            "~1"
        })?;
        rest = &rest[at + 1..];
    }
    out.write_str(rest)
}

/// A path written as a JSON Pointer: `/` before each segment.
struct Pointer<'a>(&'a [PathSegment]);

impl fmt::Display for Pointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Stored innermost first.
        for seg in self.0.iter().rev() {
            write!(f, "/{seg}")?;
        }
        Ok(())
    }
}

/// A MessagePack decode failure: its kind, the byte offset, and where the
/// value that failed sits, as a JSON Pointer (`/items/3/price`).
///
/// `Display` prints the kind, the detail, the pointer and the offset:
/// ``integer out of range for u8 at `/items/3/qty` (byte 42)``. At the top
/// level (the empty pointer) the location is left out.
///
/// # Examples
///
/// ```
/// use codecbus_core::{from_slice, to_vec, DecodeErrorKind};
///
/// // 0xa5 declares a 5-byte string but only 2 bytes follow.
/// let err = from_slice::<String>(&[0xa5, b'h', b'i']).unwrap_err();
/// assert_eq!(err.kind(), DecodeErrorKind::Truncated);
/// assert_eq!(err.pointer(), "");
/// assert_eq!(err.to_string(), "unexpected end of input (byte 0)");
///
/// // 300 does not fit the `u8` of the second element of the second list.
/// let bytes = to_vec(&vec![vec![1u16], vec![2, 300]]).unwrap();
/// let err = from_slice::<Vec<Vec<u8>>>(&bytes).unwrap_err();
/// assert_eq!(err.pointer(), "/1/1");
/// assert_eq!(err.to_string(), "integer out of range for u8 at `/1/1` (byte 5)");
/// ```
pub struct DecodeError {
    inner: Box<DecodeDetails>,
}

struct DecodeDetails {
    kind: DecodeErrorKind,
    offset: usize,
    // innermost first
    path: Vec<PathSegment>,
    detail: Option<String>,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl DecodeError {
    /// Creates an error of `kind` at byte `offset` of the input.
    #[cold]
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        Self {
            inner: Box::new(DecodeDetails {
                kind,
                offset,
                path: Vec::new(),
                detail: None,
                source: None,
            }),
        }
    }

    /// Creates a [`DecodeErrorKind::Custom`] error with a message, for
    /// hand-written codecs and `#[codec(with = ...)]` modules.
    #[cold]
    pub fn custom(message: impl fmt::Display, offset: usize) -> Self {
        Self::new(DecodeErrorKind::Custom, offset).with_detail(message.to_string())
    }

    /// Attaches a human-readable detail (shown after the kind).
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.inner.detail = Some(detail.into());
        self
    }

    /// Attaches the underlying error, returned by [`source`](StdError::source).
    #[must_use]
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> DecodeErrorKind {
        self.inner.kind
    }

    /// The byte offset in the input where the failure was detected.
    pub fn offset(&self) -> usize {
        self.inner.offset
    }

    /// The detail text, if any (the unknown variant's name, a custom message).
    pub fn detail(&self) -> Option<&str> {
        self.inner.detail.as_deref()
    }

    /// The path from the outermost value to the one that failed, one
    /// segment per level; [`pointer`](Self::pointer) writes it as text.
    pub fn path(&self) -> impl Iterator<Item = &PathSegment> {
        self.inner.path.iter().rev()
    }

    /// Where the value that failed sits, as JSON Pointer text (RFC 6901):
    /// `/items/3/price`, with `~0` and `~1` escapes; `""` for the whole
    /// value. An error in a map key has the map's pointer.
    pub fn pointer(&self) -> String {
        Pointer(&self.inner.path).to_string()
    }

    /// Adds the enclosing struct field to the path (called while unwinding).
    #[cold]
    #[must_use]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.inner.path.push(PathSegment::Field(name));
        self
    }

    /// Adds the enclosing enum variant to the path.
    #[cold]
    #[must_use]
    pub fn in_variant(mut self, name: &'static str) -> Self {
        self.inner.path.push(PathSegment::Variant(name));
        self
    }

    /// Adds the enclosing array position to the path.
    #[cold]
    #[must_use]
    pub fn in_index(mut self, index: usize) -> Self {
        self.inner.path.push(PathSegment::Index(index));
        self
    }

    /// Adds the enclosing map key to the path: the key as text (a key
    /// that is not a string as its textual form, e.g. an integer in
    /// decimal).
    #[cold]
    #[must_use]
    pub fn in_key(mut self, key: impl Into<String>) -> Self {
        self.inner.path.push(PathSegment::Key(key.into()));
        self
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("kind", &self.inner.kind)
            .field("offset", &self.inner.offset)
            .field("pointer", &self.pointer())
            .field("detail", &self.inner.detail)
            .finish()
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner.kind)?;
        if let Some(detail) = &self.inner.detail {
            write!(f, " ({detail})")?;
        }
        if !self.inner.path.is_empty() {
            write!(f, " at `{}`", Pointer(&self.inner.path))?;
        }
        write!(f, " (byte {})", self.inner.offset)
    }
}

impl StdError for DecodeError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

/// What went wrong while encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A string, binary, array, map or extension is longer than
    /// MessagePack's 2^32 − 1 limit.
    LengthOverflow,
    /// An `i128`/`u128` value does not fit in 64 bits.
    IntegerOutOfRange,
    /// A value cannot be represented (e.g. a time before the supported range).
    InvalidValue,
    /// A user-supplied encoder reported a problem of its own.
    Custom,
}

impl fmt::Display for EncodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::LengthOverflow => "length exceeds the MessagePack limit of 2^32 - 1",
            Self::IntegerOutOfRange => "integer does not fit in 64 bits",
            Self::InvalidValue => "value cannot be encoded",
            Self::Custom => "custom encode error",
        })
    }
}

/// A MessagePack encode failure.
///
/// # Examples
///
/// ```
/// use codecbus_core::{to_vec, EncodeErrorKind};
///
/// let err = to_vec(&u128::MAX).unwrap_err();
/// assert_eq!(err.kind(), EncodeErrorKind::IntegerOutOfRange);
/// ```
#[derive(Debug)]
pub struct EncodeError {
    // Boxed, so `Result<(), EncodeError>` is one pointer, returned in a
    // register from every encode call that is not inlined.
    inner: Box<EncodeDetails>,
}

#[derive(Debug)]
struct EncodeDetails {
    kind: EncodeErrorKind,
    detail: Option<String>,
}

impl EncodeError {
    /// Creates an error of `kind`.
    #[cold]
    pub fn new(kind: EncodeErrorKind) -> Self {
        Self {
            inner: Box::new(EncodeDetails { kind, detail: None }),
        }
    }

    /// Creates a [`EncodeErrorKind::Custom`] error with a message.
    #[cold]
    pub fn custom(message: impl fmt::Display) -> Self {
        Self::new(EncodeErrorKind::Custom).with_detail(message.to_string())
    }

    /// Attaches a human-readable detail.
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.inner.detail = Some(detail.into());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> EncodeErrorKind {
        self.inner.kind
    }

    /// The detail text, if any.
    pub fn detail(&self) -> Option<&str> {
        self.inner.detail.as_deref()
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner.kind)?;
        if let Some(detail) = &self.inner.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

impl StdError for EncodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_escapes_tilde_and_slash_and_is_empty_at_the_top() {
        let err = DecodeError::new(DecodeErrorKind::Truncated, 3);
        assert_eq!(err.pointer(), "");
        assert_eq!(err.to_string(), "unexpected end of input (byte 3)");
        let err = err
            .in_key("c~d")
            .in_index(2)
            .in_field("a/b")
            .in_variant("V~/");
        assert_eq!(err.pointer(), "/V~0~1/a~1b/2/c~0d");
        assert_eq!(
            err.to_string(),
            "unexpected end of input at `/V~0~1/a~1b/2/c~0d` (byte 3)"
        );
        assert_eq!(PathSegment::Key("~1/".into()).to_string(), "~01~1");
    }

    #[test]
    fn results_are_one_pointer() {
        // Both errors are boxed, so a `Result<(), _>` needs no stack slot on
        // return and a `Result<T, _>` only T's niche or one more word.
        assert_eq!(
            std::mem::size_of::<Result<(), EncodeError>>(),
            std::mem::size_of::<usize>()
        );
        assert_eq!(
            std::mem::size_of::<Result<(), DecodeError>>(),
            std::mem::size_of::<usize>()
        );
    }
}
