//! Shapes: what a codec writes, as data.
//!
//! Every codec can say what its MessagePack looks like
//! ([`MessageCodec::shape`](crate::MessageCodec::shape)): a derived type
//! gives its layout (a map by field name, an array by position, or an
//! array indexed by stable keys), each field's name, position or key,
//! whether it may be missing, and the field's own shape; an enum its
//! variants, by name or by integer tag. The vocabulary is closed
//! ([`Shape`]), and a type that cannot say more (a codec written by hand
//! that does not describe itself) is [`Shape::Opaque`].
//!
//! A codec's shape with the shapes of every named codec it refers to is a
//! [`CodecShape`]. It has one canonical JSON form
//! ([`CodecShape::canonical_json`]): keys in a fixed order, the fields of
//! a map layout sorted by name, no Rust type path (a codec is named by its
//! codec name), so renaming a Rust type or moving it to another module
//! changes nothing; and a 64-bit fingerprint of that form
//! ([`CodecShape::fingerprint`], FNV-1a).
//!
//! The codecs of a build are a [`ShapeSet`]; [`check`] holds one set to
//! another (or to a history of them) the way Schema Registry does, each
//! incompatibility with a witness built by [`sample`]; with the feature
//! `schema`, a set is written to and read from a JSON snapshot file
//! (module `snapshot`), which the `codecbus` command line compares
//! (`codecbus schema diff OLD NEW`).
//!
//! ```
//! use codecbus_core::MessageCodec;
//! use codecbus_core::shape::{CodecShape, Layout, Shape};
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(name = "shop.order")]
//! struct Order {
//!     id: u64,
//!     note: Option<String>,
//! }
//!
//! let shape = CodecShape::of::<Order>("shop.order");
//! let Shape::Record(record) = &shape.shape else { unreachable!() };
//! assert_eq!(record.layout, Layout::Map);
//! assert_eq!(
//!     shape.canonical_json(),
//!     r#"{"aliases":[],"name":"shop.order","refs":{},"shape":{"record":{"fields":[{"name":"id","optional":false,"shape":"u64"},{"name":"note","optional":true,"shape":{"option":"str"}}],"layout":"map","reserved":[]}}}"#
//! );
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

pub mod check;
#[cfg(feature = "schema")]
mod contract;
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub mod json_schema;
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub mod render;
pub mod sample;
mod set;
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub mod snapshot;

#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub use contract::{BLESS_VAR, SnapshotCheck, check_snapshot, compare_snapshot};

pub use set::ShapeSet;

/// The MessagePack a value of some type is written as: a closed
/// vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Shape {
    /// `nil` only (`()`).
    Nil,
    /// A boolean.
    Bool,
    /// An integer of this signedness and width in bits (8, 16, 32, 64 or
    /// 128), written in MessagePack's smallest form for its value.
    Int {
        /// Whether negative values are possible.
        signed: bool,
        /// The width of the Rust type: the range a reader of it accepts.
        bits: u8,
    },
    /// A 32-bit float.
    F32,
    /// A 64-bit float.
    F64,
    /// A UTF-8 string.
    Str,
    /// A byte string (`bin`).
    Bin,
    /// An extension value of this type code.
    Ext(i8),
    /// An array of any length, each element of this shape.
    Array(Box<Shape>),
    /// An array of exactly these elements (a tuple, a fixed-size array).
    Tuple(Vec<Shape>),
    /// A map from keys of the first shape to values of the second.
    Map(Box<Shape>, Box<Shape>),
    /// `nil`, or a value of this shape.
    Option(Box<Shape>),
    /// Another codec, by its codec name; its definition is in the
    /// [`CodecShape`]'s `refs`.
    Ref(String),
    /// A struct: its layout and fields.
    Record(Record),
    /// An enum written with its variants' names (`"Unit"`,
    /// `{"Variant": payload}`).
    Enum(Enum),
    /// An enum written as `[tag, payload]` (`#[codec(union)]`).
    Union(Union),
    /// Any MessagePack value read as JSON: the immutable JSON value, and
    /// `serde_json::Value`.
    Json,
    /// A codec that does not describe itself (one written by hand, or a
    /// field with `#[codec(serde)]` or `#[codec(with = "...")]`): any
    /// change of it goes unnoticed.
    Opaque,
}

/// How a struct's fields are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// A map keyed by field name (the default).
    Map,
    /// An array by position (`#[codec(as_array)]`, a tuple struct).
    Array,
    /// An array indexed by stable integer keys (`#[codec(key = N)]`),
    /// gaps written as `nil`.
    Keyed,
}

impl Layout {
    /// Its name in the canonical form: `map`, `array` or `keyed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Map => "map",
            Self::Array => "array",
            Self::Keyed => "keyed",
        }
    }
}

/// A struct's fields (or a struct variant's).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record {
    /// How the fields are written.
    pub layout: Layout,
    /// The fields written, in the canonical order: by name in the map
    /// layout, by position or key otherwise.
    pub fields: Vec<FieldShape>,
    /// Keys, positions or names taken by fields that were removed, never
    /// to be reused (`#[codec(reserved(...))]`).
    pub reserved: Vec<Reserved>,
}

impl Record {
    /// A record of `fields`, put in the canonical order.
    pub fn new(layout: Layout, mut fields: Vec<FieldShape>, mut reserved: Vec<Reserved>) -> Self {
        match layout {
            Layout::Map => fields.sort_by(|a, b| a.name.cmp(&b.name)),
            Layout::Array | Layout::Keyed => fields.sort_by_key(|f| f.key),
        }
        reserved.sort();
        reserved.dedup();
        Self {
            layout,
            fields,
            reserved,
        }
    }

    /// The field written under `name` (map layout) or `key` (the others).
    pub fn field(&self, name: &str, key: Option<u32>) -> Option<&FieldShape> {
        match self.layout {
            Layout::Map => self.fields.iter().find(|f| f.name == name),
            Layout::Array | Layout::Keyed => self.fields.iter().find(|f| f.key == key),
        }
    }
}

/// One field of a [`Record`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldShape {
    /// Its name on the wire (after `rename`); in the array layouts, the
    /// Rust name, for messages only.
    pub name: String,
    /// Its position (array layout) or key (keyed layout); `None` in the map
    /// layout.
    pub key: Option<u32>,
    /// Whether a reader takes a value without it: an `Option` (a type
    /// whose [`Decode::value_when_missing`](crate::Decode::value_when_missing)
    /// has a value), or a field with a default. A field the writer leaves
    /// out when it holds some value (`skip_if`) is optional only so: its
    /// reader asks for it otherwise.
    pub optional: bool,
    /// The shape of its value.
    pub shape: Shape,
}

/// A key, position, tag or name that a removed field or variant held,
/// reserved so that no later one takes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reserved {
    /// A key (keyed layout), a position (array layout) or a tag (union).
    Int(u32),
    /// A field name (map layout) or a variant name (named enum).
    Name(String),
}

/// An enum written with its variants' names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Enum {
    /// The variants, sorted by name.
    pub variants: Vec<VariantShape>,
    /// Names of removed variants, never to be reused.
    pub reserved: Vec<Reserved>,
}

impl Enum {
    /// An enum of `variants`, put in the canonical order.
    pub fn new(mut variants: Vec<VariantShape>, mut reserved: Vec<Reserved>) -> Self {
        variants.sort_by(|a, b| a.name.cmp(&b.name));
        reserved.sort();
        reserved.dedup();
        Self { variants, reserved }
    }
}

/// An enum written as `[tag, payload]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Union {
    /// The tagged variants, sorted by tag.
    pub variants: Vec<VariantShape>,
    /// The name of the catch-all variant (`#[codec(other)]`), which takes
    /// any tag no other variant has.
    pub catch_all: Option<String>,
    /// Tags of removed variants, never to be reused.
    pub reserved: Vec<Reserved>,
}

impl Union {
    /// A union of `variants`, put in the canonical order.
    pub fn new(
        mut variants: Vec<VariantShape>,
        catch_all: Option<String>,
        mut reserved: Vec<Reserved>,
    ) -> Self {
        variants.sort_by_key(|v| v.tag);
        reserved.sort();
        reserved.dedup();
        Self {
            variants,
            catch_all,
            reserved,
        }
    }
}

/// One variant of an [`Enum`] or a [`Union`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VariantShape {
    /// Its name (on the wire in an [`Enum`]; for messages in a
    /// [`Union`]).
    pub name: String,
    /// Its tag, in a [`Union`].
    pub tag: Option<u32>,
    /// What follows the name or tag.
    pub payload: Payload,
}

/// What a variant carries.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Payload {
    /// Nothing: the name alone (an [`Enum`]), or `nil` (a [`Union`]).
    Unit,
    /// One value.
    Newtype(Shape),
    /// An array of these values.
    Tuple(Vec<Shape>),
    /// Named fields.
    Record(Record),
}

/// The named codecs met while describing a type: each definition once, so
/// that a recursive type refers to itself by name.
#[derive(Debug, Default, Clone)]
pub struct Definitions {
    /// `None` while the definition is being made.
    defs: BTreeMap<String, Option<Shape>>,
    /// The transparent codecs met again while being described.
    recursive: BTreeSet<String>,
}

impl Definitions {
    /// No definition yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A reference to the codec `name`, defined by `define` the first time
    /// it is met (a recursive reference meets it while it is being
    /// defined, and is a reference too).
    pub fn named(&mut self, name: &str, define: impl FnOnce(&mut Self) -> Shape) -> Shape {
        if !self.defs.contains_key(name) {
            self.defs.insert(name.to_owned(), None);
            let shape = define(self);
            self.defs.insert(name.to_owned(), Some(shape));
        }
        Shape::Ref(name.to_owned())
    }

    /// The shape of the codec `name` written as another value (a newtype
    /// struct, written as its field): `describe`'s shape, without a
    /// definition of its own. When the description meets `name` again (a
    /// recursive newtype, `struct N(Option<Box<N>>)`), that shape needs a
    /// name: it becomes the definition of `name`, and the result a
    /// reference to it, as for [`named`](Self::named).
    pub fn transparent(&mut self, name: &str, describe: impl FnOnce(&mut Self) -> Shape) -> Shape {
        if self.defs.contains_key(name) {
            // Met inside its own description, or defined by a recursion
            // before.
            self.recursive.insert(name.to_owned());
            return Shape::Ref(name.to_owned());
        }
        self.defs.insert(name.to_owned(), None);
        let shape = describe(self);
        if self.recursive.remove(name) {
            self.defs.insert(name.to_owned(), Some(shape));
            Shape::Ref(name.to_owned())
        } else {
            self.defs.remove(name);
            shape
        }
    }

    /// The definition of `name`, when met and finished.
    pub fn get(&self, name: &str) -> Option<&Shape> {
        self.defs.get(name).and_then(Option::as_ref)
    }

    /// The finished definitions, by codec name.
    pub fn into_map(self) -> BTreeMap<String, Shape> {
        self.defs
            .into_iter()
            .filter_map(|(name, shape)| Some((name, shape?)))
            .collect()
    }
}

/// One codec's written contract: its name and aliases, its shape, and the
/// shapes of the named codecs it refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecShape {
    /// The codec name.
    pub name: String,
    /// Its aliases (older names it is still read under), sorted.
    pub aliases: Vec<String>,
    /// Its shape: for a derived type, its record, enum or union.
    pub shape: Shape,
    /// The definitions of the codecs its shape refers to
    /// ([`Shape::Ref`]), by name, itself excluded.
    pub refs: BTreeMap<String, Shape>,
}

impl CodecShape {
    /// The shape made by `describe` (a type's `MessageCodec::shape`) for
    /// the codec `name` with `aliases`.
    pub fn from_parts(
        name: &str,
        aliases: &[&str],
        describe: fn(&mut Definitions) -> Shape,
    ) -> Self {
        let mut defs = Definitions::new();
        let shape = describe(&mut defs);
        let mut refs = defs.into_map();
        // A derived type refers to itself by its own name: its definition
        // is the codec's shape.
        let shape = match shape {
            Shape::Ref(own) => match refs.remove(&own) {
                Some(definition) if own == name => definition,
                Some(definition) => {
                    // Registered under another name than the derive's.
                    refs.insert(own.clone(), definition);
                    Shape::Ref(own)
                }
                None => Shape::Ref(own),
            },
            other => other,
        };
        let mut aliases: Vec<String> = aliases.iter().map(|a| (*a).to_owned()).collect();
        aliases.sort();
        aliases.dedup();
        Self {
            name: name.to_owned(),
            aliases,
            shape,
            refs,
        }
    }

    /// The definition a [`Shape::Ref`] inside this codec points to: the
    /// codec's own shape for its own name, else one of its `refs`.
    pub fn resolve(&self, name: &str) -> Option<&Shape> {
        if name == self.name {
            Some(&self.shape)
        } else {
            self.refs.get(name)
        }
    }

    /// The canonical JSON form: object keys sorted, no whitespace, fields
    /// and variants in their canonical order.
    pub fn canonical_json(&self) -> String {
        let mut out = String::new();
        out.push_str("{\"aliases\":[");
        for (i, alias) in self.aliases.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_str(&mut out, alias);
        }
        out.push_str("],\"name\":");
        json_str(&mut out, &self.name);
        out.push_str(",\"refs\":{");
        for (i, (name, shape)) in self.refs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_str(&mut out, name);
            out.push(':');
            shape.write_json(&mut out);
        }
        out.push_str("},\"shape\":");
        self.shape.write_json(&mut out);
        out.push('}');
        out
    }

    /// The FNV-1a 64-bit hash of the [canonical form](Self::canonical_json).
    pub fn fingerprint(&self) -> u64 {
        fingerprint(self.canonical_json().as_bytes())
    }
}

/// FNV-1a, 64 bits.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

impl Shape {
    /// An integer of this signedness and width.
    pub const fn int(signed: bool, bits: u8) -> Self {
        Self::Int { signed, bits }
    }

    /// The canonical JSON form of this shape.
    pub fn canonical_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Self::Nil => out.push_str("\"nil\""),
            Self::Bool => out.push_str("\"bool\""),
            Self::Int { signed, bits } => {
                let _ = write!(out, "\"{}{bits}\"", if *signed { 'i' } else { 'u' });
            }
            Self::F32 => out.push_str("\"f32\""),
            Self::F64 => out.push_str("\"f64\""),
            Self::Str => out.push_str("\"str\""),
            Self::Bin => out.push_str("\"bin\""),
            Self::Json => out.push_str("\"json\""),
            Self::Opaque => out.push_str("\"opaque\""),
            Self::Ext(code) => {
                let _ = write!(out, "{{\"ext\":{code}}}");
            }
            Self::Array(elem) => {
                out.push_str("{\"array\":");
                elem.write_json(out);
                out.push('}');
            }
            Self::Tuple(elems) => {
                out.push_str("{\"tuple\":");
                write_list(out, elems);
                out.push('}');
            }
            Self::Map(k, v) => {
                out.push_str("{\"map\":[");
                k.write_json(out);
                out.push(',');
                v.write_json(out);
                out.push_str("]}");
            }
            Self::Option(inner) => {
                out.push_str("{\"option\":");
                inner.write_json(out);
                out.push('}');
            }
            Self::Ref(name) => {
                out.push_str("{\"ref\":");
                json_str(out, name);
                out.push('}');
            }
            Self::Record(record) => {
                out.push_str("{\"record\":");
                record.write_json(out);
                out.push('}');
            }
            Self::Enum(e) => {
                out.push_str("{\"enum\":{\"reserved\":");
                write_reserved(out, &e.reserved);
                out.push_str(",\"variants\":[");
                for (i, v) in e.variants.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push_str("]}}");
            }
            Self::Union(u) => {
                out.push_str("{\"union\":{\"catch_all\":");
                match &u.catch_all {
                    Some(name) => json_str(out, name),
                    None => out.push_str("null"),
                }
                out.push_str(",\"reserved\":");
                write_reserved(out, &u.reserved);
                out.push_str(",\"variants\":[");
                for (i, v) in u.variants.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push_str("]}}");
            }
        }
    }
}

impl Record {
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"fields\":[");
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('{');
            if let Some(key) = f.key {
                let _ = write!(out, "\"key\":{key},");
            }
            out.push_str("\"name\":");
            json_str(out, &f.name);
            let _ = write!(out, ",\"optional\":{},\"shape\":", f.optional);
            f.shape.write_json(out);
            out.push('}');
        }
        let _ = write!(
            out,
            "],\"layout\":\"{}\",\"reserved\":",
            self.layout.as_str()
        );
        write_reserved(out, &self.reserved);
        out.push('}');
    }
}

impl VariantShape {
    fn write_json(&self, out: &mut String) {
        out.push_str("{\"name\":");
        json_str(out, &self.name);
        out.push_str(",\"payload\":");
        match &self.payload {
            Payload::Unit => out.push_str("\"unit\""),
            Payload::Newtype(shape) => {
                out.push_str("{\"newtype\":");
                shape.write_json(out);
                out.push('}');
            }
            Payload::Tuple(shapes) => {
                out.push_str("{\"tuple\":");
                write_list(out, shapes);
                out.push('}');
            }
            Payload::Record(record) => {
                out.push_str("{\"record\":");
                record.write_json(out);
                out.push('}');
            }
        }
        if let Some(tag) = self.tag {
            let _ = write!(out, ",\"tag\":{tag}");
        }
        out.push('}');
    }
}

fn write_list(out: &mut String, shapes: &[Shape]) {
    out.push('[');
    for (i, s) in shapes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        s.write_json(out);
    }
    out.push(']');
}

fn write_reserved(out: &mut String, reserved: &[Reserved]) {
    out.push('[');
    for (i, r) in reserved.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match r {
            Reserved::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Reserved::Name(name) => json_str(out, name),
        }
    }
    out.push(']');
}

/// `s` as a JSON string.
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_published_values() {
        assert_eq!(fingerprint(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fingerprint(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_map_layout_is_canonical_whatever_the_field_order() {
        let field = |name: &str| FieldShape {
            name: name.into(),
            key: None,
            optional: false,
            shape: Shape::Str,
        };
        let a = Record::new(Layout::Map, vec![field("b"), field("a")], vec![]);
        let b = Record::new(Layout::Map, vec![field("a"), field("b")], vec![]);
        assert_eq!(a, b);
    }

    #[test]
    fn a_transparent_codec_is_named_only_when_recursive() {
        let mut defs = Definitions::new();
        let shape = defs.transparent("meters", |_| Shape::F64);
        assert_eq!(shape, Shape::F64);
        assert!(defs.into_map().is_empty());

        // `struct N(Option<Box<N>>)`
        fn n(defs: &mut Definitions) -> Shape {
            defs.transparent("n", |defs| Shape::Option(Box::new(n(defs))))
        }
        let mut defs = Definitions::new();
        assert_eq!(n(&mut defs), Shape::Ref("n".into()));
        assert_eq!(n(&mut defs), Shape::Ref("n".into()));
        assert_eq!(
            defs.into_map().into_iter().collect::<Vec<_>>(),
            [("n".into(), Shape::Option(Box::new(Shape::Ref("n".into()))))]
        );
        let shape = CodecShape::from_parts("n", &[], n);
        assert_eq!(shape.shape, Shape::Option(Box::new(Shape::Ref("n".into()))));
        assert!(shape.refs.is_empty());
    }

    #[test]
    fn strings_are_escaped() {
        let mut out = String::new();
        json_str(&mut out, "a\"b\\c\u{1}é");
        assert_eq!(out, "\"a\\\"b\\\\c\\u0001é\"");
    }
}
