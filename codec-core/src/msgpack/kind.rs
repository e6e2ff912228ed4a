//! What the reader reports about a value before decoding it: an integer
//! before narrowing, a marker's kind, a struct's header.

/// An integer as read from the wire, before it is narrowed to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int {
    /// A non-negative value (any marker).
    Unsigned(u64),
    /// A negative value.
    Negative(i64),
}

/// The family of a MessagePack marker, for error messages and dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueKind {
    /// `nil`.
    Nil,
    /// `true` / `false`.
    Bool,
    /// Any integer form.
    Int,
    /// `float 32` or `float 64`.
    Float,
    /// Any string form.
    Str,
    /// Any `bin` form.
    Bin,
    /// Any array form.
    Array,
    /// Any map form.
    Map,
    /// Any extension form.
    Ext,
    /// The reserved byte `0xc1`.
    Reserved,
}

impl ValueKind {
    /// The kind of the value that starts with `marker`.
    #[inline]
    pub fn of(marker: u8) -> Self {
        match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xcc..=0xd3 => Self::Int,
            0x80..=0x8f | 0xde | 0xdf => Self::Map,
            0x90..=0x9f | 0xdc | 0xdd => Self::Array,
            0xa0..=0xbf | 0xd9..=0xdb => Self::Str,
            0xc0 => Self::Nil,
            0xc1 => Self::Reserved,
            0xc2 | 0xc3 => Self::Bool,
            0xc4..=0xc6 => Self::Bin,
            0xc7..=0xc9 | 0xd4..=0xd8 => Self::Ext,
            0xca | 0xcb => Self::Float,
        }
    }

    /// A lowercase name for messages (`"string"`, `"map"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Nil => "nil",
            Self::Bool => "boolean",
            Self::Int => "integer",
            Self::Float => "float",
            Self::Str => "string",
            Self::Bin => "binary",
            Self::Array => "array",
            Self::Map => "map",
            Self::Ext => "extension",
            Self::Reserved => "reserved marker 0xc1",
        }
    }
}

/// The header of a struct on the wire: which layout, and how many entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructHeader {
    /// A map of this many key/value pairs (fields by name).
    Map(usize),
    /// An array of this many elements (fields by position).
    Array(usize),
}
