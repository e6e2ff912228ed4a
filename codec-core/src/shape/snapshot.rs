//! Snapshot files: a build's codec shapes as JSON, kept in the repository
//! and checked against by the next build ([`check`](super::check)).
//!
//! A snapshot is `{"format": 1, "codecs": [...]}`: each codec its
//! [canonical object](super::CodecShape::canonical_json) with its
//! `"fingerprint"` (16 hex digits), sorted by name and written one block
//! per codec, short objects on one line, so that a change shows in a diff
//! as the lines of what changed.
//!
//! ```
//! use codecbus_core::shape::{CodecShape, Shape, ShapeSet};
//! use std::collections::BTreeMap;
//!
//! let set = ShapeSet::from_codecs([CodecShape {
//!     name: "shop.note".into(),
//!     aliases: vec![],
//!     shape: Shape::Option(Box::new(Shape::Str)),
//!     refs: BTreeMap::new(),
//! }]);
//! let text = set.to_snapshot();
//! assert_eq!(
//!     text,
//!     r#"{
//!   "format": 1,
//!   "codecs": [
//!     {
//!       "name": "shop.note",
//!       "aliases": [],
//!       "fingerprint": "c622ffe5e777b5ab",
//!       "refs": {},
//!       "shape": {"option": "str"}
//!     }
//!   ]
//! }
//! "#
//! );
//! assert_eq!(ShapeSet::from_snapshot(&text, "shapes.json").unwrap(), set);
//!
//! let err = ShapeSet::from_snapshot(&text[..40], "shapes.json").unwrap_err();
//! assert_eq!(err.to_string(), "shapes.json:5:3: EOF while parsing an object");
//! ```
//!
//! Reading refuses, with the file, line and column where it can: text
//! that is not JSON or not a snapshot (saying what was expected there), a
//! `"format"` above 1 (a newer codecbus wrote it), a codec whose
//! fingerprint does not match its shape (an edit by hand), two codecs of
//! one name, and a record or enum no codec has (two fields of one name,
//! two fields of one key, a keyed field without a key, two variants of one
//! name or tag, a field or variant that takes what its own type reserves). JSON nested deeper than serde_json's limit (128 levels)
//! is refused too, so a shape may nest about 40 levels deep.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{
    CodecShape, Enum, FieldShape, Layout, Payload, Record, Reserved, Shape, ShapeSet, Union,
    VariantShape,
};

/// The snapshot format this crate writes and reads.
pub const FORMAT: u64 = 1;

/// Where a line is wider than this, its object or array is written over
/// several lines.
const WIDTH: usize = 100;

impl ShapeSet {
    /// The set as a snapshot file (module [`snapshot`](self)).
    pub fn to_snapshot(&self) -> String {
        let mut out = format!("{{\n  \"format\": {FORMAT},\n  \"codecs\": [");
        for (i, codec) in self.iter().enumerate() {
            out.push_str(if i == 0 { "\n    " } else { ",\n    " });
            let canonical = codec.canonical_json();
            let fingerprint = format!("\"{:016x}\"", codec.fingerprint());
            let block = match Json::parse(&canonical) {
                Some(Json::Object(members)) => {
                    let mut members: Vec<(Cow<'_, str>, Json<'_>)> = members;
                    members.push((
                        Cow::Borrowed("\"fingerprint\""),
                        Json::Atom(Cow::Owned(fingerprint)),
                    ));
                    // The name first, then the rest in the canonical order.
                    let rank = |k: &str| match k {
                        "\"name\"" => 0,
                        "\"aliases\"" => 1,
                        "\"fingerprint\"" => 2,
                        "\"refs\"" => 3,
                        "\"shape\"" => 4,
                        _ => 5,
                    };
                    members.sort_by_key(|(k, _)| rank(k));
                    Json::Object(members)
                }
                // Not reached: the canonical form is an object.
                _ => Json::Atom(Cow::Owned(canonical.clone())),
            };
            block.write(&mut out, 4, true);
        }
        out.push_str(if self.is_empty() {
            "]\n}\n"
        } else {
            "\n  ]\n}\n"
        });
        out
    }

    /// Reads a snapshot file; `file` names it in errors.
    ///
    /// # Errors
    ///
    /// [`SnapshotError`], for text that is not a snapshot of a format this
    /// crate reads or whose codecs do not match their fingerprints (module
    /// [`snapshot`](self)).
    pub fn from_snapshot(text: &str, file: &str) -> Result<ShapeSet, SnapshotError> {
        read(text, file, true)
    }
}

/// Reads a snapshot; `fingerprints`: whether each codec is held to its
/// fingerprint (the fuzz target reaches the check with shapes edited at
/// random without).
fn read(text: &str, file: &str, fingerprints: bool) -> Result<ShapeSet, SnapshotError> {
    let error = |e: serde_json::Error| SnapshotError::from_json(file, &e);
    // serde would read a struct from an array too.
    let start = text.len() - text.trim_start().len();
    if let Some(c) = text[start..].chars().next()
        && c != '{'
    {
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
        return Err(SnapshotError::new(
            file,
            (line, column),
            SnapshotErrorKind::Invalid(
                "expected a snapshot: an object `{\"format\": 1, \"codecs\": [...]}`".to_owned(),
            ),
        ));
    }
    let head: Head = serde_json::from_str(text).map_err(error)?;
    match head.format {
        None => {
            return Err(SnapshotError::new(
                file,
                (0, 0),
                SnapshotErrorKind::Invalid(
                    "not a codecbus snapshot: no \"format\" member".to_owned(),
                ),
            ));
        }
        Some(n) if n > FORMAT => {
            return Err(SnapshotError::new(
                file,
                (0, 0),
                SnapshotErrorKind::NewerFormat(n),
            ));
        }
        Some(n) if n < FORMAT => {
            return Err(SnapshotError::new(
                file,
                (0, 0),
                SnapshotErrorKind::Invalid(format!(
                    "format {n} is no snapshot format (this one reads {FORMAT})"
                )),
            ));
        }
        Some(_) => {}
    }
    let snapshot: SnapshotDe = serde_json::from_str(text).map_err(error)?;
    let mut set = ShapeSet::new();
    for codec in snapshot.codecs {
        // Where the codec is, looked up for an error only.
        let at = |name: &str| locate(text, name);
        let fingerprint = codec.fingerprint;
        let shape = CodecShape {
            name: codec.name,
            aliases: codec.aliases,
            shape: codec.shape.0,
            refs: codec.refs.into_iter().map(|(k, v)| (k, v.0)).collect(),
        };
        if let Err(what) = well_formed(&shape) {
            return Err(SnapshotError::new(
                file,
                at(&shape.name),
                SnapshotErrorKind::Malformed {
                    codec: shape.name,
                    what,
                },
            ));
        }
        let computed = shape.fingerprint();
        if fingerprints
            && (u64::from_str_radix(&fingerprint, 16).ok() != Some(computed)
                || fingerprint.len() != 16)
        {
            return Err(SnapshotError::new(
                file,
                at(&shape.name),
                SnapshotErrorKind::Fingerprint {
                    codec: shape.name,
                    written: fingerprint,
                    computed: format!("{computed:016x}"),
                },
            ));
        }
        let name = shape.name.clone();
        if set.insert(shape).is_some() {
            let at = at(&name);
            return Err(SnapshotError::new(
                file,
                at,
                SnapshotErrorKind::DuplicateCodec(name),
            ));
        }
    }
    Ok(set)
}

/// The fuzz target `snapshot` (`fuzz/`): arbitrary text read as a
/// snapshot, an error or a set that writes back to itself and is
/// compatible with itself; and two snapshots separated by a NUL, read
/// without their fingerprints (so that edits at random reach the check),
/// the second checked against the first and the report held to the model
/// of the readers (`check::verify`).
#[cfg(fuzzing)]
pub(crate) fn fuzz(data: &[u8]) {
    use super::check::{Mode, check, verify};

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match ShapeSet::from_snapshot(text, "fuzz.json") {
        Ok(set) => {
            let again = set.to_snapshot();
            match ShapeSet::from_snapshot(&again, "again.json") {
                Ok(back) => assert_eq!(back, set, "a written snapshot reads back: {again}"),
                Err(e) => panic!("a written snapshot reads back: {e}: {again}"),
            }
            let report = check(&set, &set, Mode::FullTransitive);
            assert!(
                report.is_compatible(),
                "a set is compatible with itself: {report}"
            );
        }
        Err(e) => drop(e.to_string()),
    }
    if let Some((a, b)) = text.split_once('\0')
        && let (Ok(old), Ok(new)) = (read(a, "old.json", false), read(b, "new.json", false))
    {
        let report = check(&old, &new, Mode::Full);
        if let Err(e) = verify(&report, std::slice::from_ref(&old), &new) {
            panic!("{e}\n{report}");
        }
        drop(report.to_json());
    }
}

/// A snapshot that could not be read: the file, where in it, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    file: String,
    line: usize,
    column: usize,
    kind: SnapshotErrorKind,
}

/// What is wrong with a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotErrorKind {
    /// Not JSON, or not a snapshot: what was expected (serde_json's words).
    Invalid(String),
    /// Written by a newer codecbus, in this format.
    NewerFormat(u64),
    /// A codec's fingerprint does not match its shape.
    Fingerprint {
        /// The codec.
        codec: String,
        /// The fingerprint in the file.
        written: String,
        /// The fingerprint of the shape in the file.
        computed: String,
    },
    /// Two codecs of one name.
    DuplicateCodec(String),
    /// A shape no codec has.
    Malformed {
        /// The codec.
        codec: String,
        /// What is wrong.
        what: String,
    },
}

impl SnapshotError {
    fn new(file: &str, (line, column): (usize, usize), kind: SnapshotErrorKind) -> Self {
        Self {
            file: file.to_owned(),
            line,
            column,
            kind,
        }
    }

    fn from_json(file: &str, e: &serde_json::Error) -> Self {
        let mut message = e.to_string();
        // serde_json ends its message with the position, given separately here.
        if let Some(at) = message.rfind(" at line ") {
            message.truncate(at);
        }
        Self::new(
            file,
            (e.line(), e.column()),
            SnapshotErrorKind::Invalid(message),
        )
    }

    /// The file's name, as given to [`ShapeSet::from_snapshot`].
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The line (from 1) where it went wrong; 0 when the error is about the
    /// whole file.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column (from 1) where it went wrong; 0 when unknown.
    pub fn column(&self) -> usize {
        self.column
    }

    /// What is wrong.
    pub fn kind(&self) -> &SnapshotErrorKind {
        &self.kind
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        f.write_str(": ")?;
        match &self.kind {
            SnapshotErrorKind::Invalid(message) => f.write_str(message),
            SnapshotErrorKind::NewerFormat(n) => write!(
                f,
                "written by a newer codecbus (format {n}, this one reads {FORMAT})"
            ),
            SnapshotErrorKind::Fingerprint {
                codec,
                written,
                computed,
            } => write!(
                f,
                "the fingerprint of codec `{codec}` is {written}, its shape's is {computed} \
                 (edited by hand? write the snapshot again from the code)"
            ),
            SnapshotErrorKind::DuplicateCodec(codec) => write!(f, "codec `{codec}` twice"),
            SnapshotErrorKind::Malformed { codec, what } => write!(f, "codec `{codec}`: {what}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// The line and column of the `"name"` member that names `codec`, or (0,
/// 0).
fn locate(text: &str, codec: &str) -> (usize, usize) {
    let mut quoted = String::new();
    super::json_str(&mut quoted, codec);
    let mut from = 0;
    while let Some(i) = text[from..].find("\"name\"") {
        let at = from + i;
        let rest = text[at + 6..].trim_start();
        if let Some(rest) = rest.strip_prefix(':')
            && rest.trim_start().starts_with(&quoted)
        {
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
            return (line, column);
        }
        from = at + 6;
    }
    (0, 0)
}

/// Whether every record and enum of `codec` is one a codec can have.
fn well_formed(codec: &CodecShape) -> Result<(), String> {
    well_formed_shape(&codec.shape)?;
    codec.refs.values().try_for_each(well_formed_shape)
}

fn well_formed_shape(shape: &Shape) -> Result<(), String> {
    match shape {
        Shape::Array(s) | Shape::Option(s) => well_formed_shape(s),
        Shape::Map(k, v) => {
            well_formed_shape(k)?;
            well_formed_shape(v)
        }
        Shape::Tuple(items) => items.iter().try_for_each(well_formed_shape),
        Shape::Record(r) => well_formed_record(r),
        Shape::Enum(e) => {
            let mut names = BTreeSet::new();
            for v in &e.variants {
                if !names.insert(&v.name) {
                    return Err(format!("two variants named `{}`", v.name));
                }
                if e.reserved.contains(&Reserved::Name(v.name.clone())) {
                    return Err(format!("variant `{}` has a reserved name", v.name));
                }
                well_formed_payload(&v.payload)?;
            }
            Ok(())
        }
        Shape::Union(u) => {
            let mut tags = BTreeSet::new();
            for v in &u.variants {
                if let Some(tag) = v.tag {
                    if !tags.insert(tag) {
                        return Err(format!("two variants with tag {tag}"));
                    }
                    if u.reserved.contains(&Reserved::Int(tag)) {
                        return Err(format!("variant `{}` has a reserved tag, {tag}", v.name));
                    }
                }
                well_formed_payload(&v.payload)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn well_formed_payload(payload: &Payload) -> Result<(), String> {
    match payload {
        Payload::Unit => Ok(()),
        Payload::Newtype(s) => well_formed_shape(s),
        Payload::Tuple(items) => items.iter().try_for_each(well_formed_shape),
        Payload::Record(r) => well_formed_record(r),
    }
}

fn well_formed_record(r: &Record) -> Result<(), String> {
    let mut names = BTreeSet::new();
    let mut keys = BTreeSet::new();
    for (p, f) in r.fields.iter().enumerate() {
        if !names.insert(&f.name) {
            return Err(format!("two fields named `{}`", f.name));
        }
        let taken = match r.layout {
            Layout::Map => Some(Reserved::Name(f.name.clone())),
            Layout::Array => u32::try_from(p).ok().map(Reserved::Int),
            Layout::Keyed => {
                let Some(key) = f.key else {
                    return Err(format!("field `{}` of a keyed record has no key", f.name));
                };
                if !keys.insert(key) {
                    return Err(format!("two fields with key {key}"));
                }
                Some(Reserved::Int(key))
            }
        };
        if let Some(taken) = taken
            && r.reserved.contains(&taken)
        {
            return Err(format!(
                "field `{}` takes a reserved name, position or key",
                f.name
            ));
        }
        well_formed_shape(&f.shape)?;
    }
    Ok(())
}

// ---- reading: serde's view of the canonical vocabulary ----

#[derive(Deserialize)]
#[serde(rename = "snapshot")]
struct Head {
    #[serde(default)]
    format: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename = "snapshot", deny_unknown_fields)]
struct SnapshotDe {
    #[allow(dead_code)]
    format: u64,
    codecs: Vec<CodecDe>,
}

#[derive(Deserialize)]
#[serde(rename = "codec", deny_unknown_fields)]
struct CodecDe {
    name: String,
    aliases: Vec<String>,
    fingerprint: String,
    refs: BTreeMap<String, ShapeDe>,
    shape: ShapeDe,
}

#[derive(Deserialize)]
#[serde(rename = "record", deny_unknown_fields)]
struct RecordDe {
    fields: Vec<FieldDe>,
    layout: LayoutDe,
    reserved: Vec<ReservedDe>,
}

impl From<RecordDe> for Record {
    fn from(r: RecordDe) -> Self {
        // As written: the canonical order is the file's.
        Record {
            layout: match r.layout {
                LayoutDe::Map => Layout::Map,
                LayoutDe::Array => Layout::Array,
                LayoutDe::Keyed => Layout::Keyed,
            },
            fields: r
                .fields
                .into_iter()
                .map(|f| FieldShape {
                    name: f.name,
                    key: f.key,
                    optional: f.optional,
                    shape: f.shape.0,
                })
                .collect(),
            reserved: r.reserved.into_iter().map(|r| r.0).collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename = "field", deny_unknown_fields)]
struct FieldDe {
    #[serde(default)]
    key: Option<u32>,
    name: String,
    optional: bool,
    shape: ShapeDe,
}

#[derive(Deserialize)]
#[serde(rename = "layout", rename_all = "lowercase")]
enum LayoutDe {
    Map,
    Array,
    Keyed,
}

#[derive(Deserialize)]
#[serde(rename = "enum", deny_unknown_fields)]
struct EnumDe {
    reserved: Vec<ReservedDe>,
    variants: Vec<VariantDe>,
}

#[derive(Deserialize)]
#[serde(rename = "union", deny_unknown_fields)]
struct UnionDe {
    catch_all: Option<String>,
    reserved: Vec<ReservedDe>,
    variants: Vec<VariantDe>,
}

#[derive(Deserialize)]
#[serde(rename = "variant", deny_unknown_fields)]
struct VariantDe {
    name: String,
    payload: PayloadDe,
    #[serde(default)]
    tag: Option<u32>,
}

fn variants(vs: Vec<VariantDe>) -> Vec<VariantShape> {
    vs.into_iter()
        .map(|v| VariantShape {
            name: v.name,
            tag: v.tag,
            payload: v.payload.0,
        })
        .collect()
}

fn reserved(rs: Vec<ReservedDe>) -> Vec<Reserved> {
    rs.into_iter().map(|r| r.0).collect()
}

/// A shape: a name (`"u32"`) or an object of one key (`{"option": ...}`).
struct ShapeDe(Shape);

const SHAPE_KEYS: &[&str] = &[
    "ext", "array", "tuple", "map", "option", "ref", "record", "enum", "union",
];

const SHAPE_NAMES: &str = "a shape: one of \"nil\", \"bool\", \"u8\" to \"u128\", \"i8\" to \
                           \"i128\", \"f32\", \"f64\", \"str\", \"bin\", \"json\", \"opaque\", \
                           or an object of one key (\"record\", \"option\", \"array\"...)";

fn scalar(name: &str) -> Option<Shape> {
    Some(match name {
        "nil" => Shape::Nil,
        "bool" => Shape::Bool,
        "f32" => Shape::F32,
        "f64" => Shape::F64,
        "str" => Shape::Str,
        "bin" => Shape::Bin,
        "json" => Shape::Json,
        "opaque" => Shape::Opaque,
        _ => {
            let signed = match name.as_bytes().first()? {
                b'u' => false,
                b'i' => true,
                _ => return None,
            };
            let bits = match &name[1..] {
                "8" => 8,
                "16" => 16,
                "32" => 32,
                "64" => 64,
                "128" => 128,
                _ => return None,
            };
            Shape::Int { signed, bits }
        }
    })
}

impl<'de> Deserialize<'de> for ShapeDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = ShapeDe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(SHAPE_NAMES)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<ShapeDe, E> {
        scalar(s)
            .map(ShapeDe)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Str(s), &self))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ShapeDe, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        let shape = match key.as_str() {
            "ext" => Shape::Ext(map.next_value()?),
            "array" => Shape::Array(Box::new(map.next_value::<ShapeDe>()?.0)),
            "tuple" => Shape::Tuple(
                map.next_value::<Vec<ShapeDe>>()?
                    .into_iter()
                    .map(|s| s.0)
                    .collect(),
            ),
            "map" => {
                let (k, v) = map.next_value::<(ShapeDe, ShapeDe)>()?;
                Shape::Map(Box::new(k.0), Box::new(v.0))
            }
            "option" => Shape::Option(Box::new(map.next_value::<ShapeDe>()?.0)),
            "ref" => Shape::Ref(map.next_value()?),
            "record" => Shape::Record(map.next_value::<RecordDe>()?.into()),
            "enum" => {
                let e = map.next_value::<EnumDe>()?;
                Shape::Enum(Enum {
                    variants: variants(e.variants),
                    reserved: reserved(e.reserved),
                })
            }
            "union" => {
                let u = map.next_value::<UnionDe>()?;
                Shape::Union(Union {
                    variants: variants(u.variants),
                    catch_all: u.catch_all,
                    reserved: reserved(u.reserved),
                })
            }
            other => return Err(de::Error::unknown_variant(other, SHAPE_KEYS)),
        };
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(format!(
                "a shape object has one key, `{key}` here, and no other"
            )));
        }
        Ok(ShapeDe(shape))
    }
}

/// A payload: `"unit"`, or `{"newtype": shape}`, `{"tuple": [shapes]}`,
/// `{"record": record}`.
struct PayloadDe(Payload);

impl<'de> Deserialize<'de> for PayloadDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PayloadVisitor)
    }
}

struct PayloadVisitor;

impl<'de> Visitor<'de> for PayloadVisitor {
    type Value = PayloadDe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a payload: \"unit\", or an object of one key (\"newtype\", \"tuple\" or \"record\")",
        )
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<PayloadDe, E> {
        match s {
            "unit" => Ok(PayloadDe(Payload::Unit)),
            _ => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PayloadDe, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        let payload = match key.as_str() {
            "newtype" => Payload::Newtype(map.next_value::<ShapeDe>()?.0),
            "tuple" => Payload::Tuple(
                map.next_value::<Vec<ShapeDe>>()?
                    .into_iter()
                    .map(|s| s.0)
                    .collect(),
            ),
            "record" => Payload::Record(map.next_value::<RecordDe>()?.into()),
            other => {
                return Err(de::Error::unknown_variant(
                    other,
                    &["newtype", "tuple", "record"],
                ));
            }
        };
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(format!(
                "a payload object has one key, `{key}` here, and no other"
            )));
        }
        Ok(PayloadDe(payload))
    }
}

/// A reserved key, position or tag (a number) or name (a string).
struct ReservedDe(Reserved);

impl<'de> Deserialize<'de> for ReservedDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ReservedVisitor)
    }
}

struct ReservedVisitor;

impl<'de> Visitor<'de> for ReservedVisitor {
    type Value = ReservedDe;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a reserved key, position or tag (0 to 4294967295) or name (a string)")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<ReservedDe, E> {
        u32::try_from(n)
            .map(|n| ReservedDe(Reserved::Int(n)))
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(n), &self))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<ReservedDe, E> {
        u32::try_from(n)
            .map(|n| ReservedDe(Reserved::Int(n)))
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<ReservedDe, E> {
        Ok(ReservedDe(Reserved::Name(s.to_owned())))
    }
}

// ---- writing: the canonical text, laid out ----

/// A JSON value over the canonical text: atoms (strings, numbers) kept as
/// written.
enum Json<'t> {
    Atom(Cow<'t, str>),
    Array(Vec<Json<'t>>),
    Object(Vec<(Cow<'t, str>, Json<'t>)>),
}

impl<'t> Json<'t> {
    /// Parses the canonical form (no whitespace; `None` for anything else).
    fn parse(text: &'t str) -> Option<Self> {
        let mut p = Parser { text, at: 0 };
        let v = p.value()?;
        (p.at == text.len()).then_some(v)
    }

    /// Its length written on one line.
    fn width(&self) -> usize {
        match self {
            Json::Atom(a) => a.len(),
            Json::Array(items) => {
                2 + items.iter().map(Json::width).sum::<usize>() + 2 * items.len().saturating_sub(1)
            }
            Json::Object(members) => {
                2 + members
                    .iter()
                    .map(|(k, v)| k.len() + 2 + v.width())
                    .sum::<usize>()
                    + 2 * members.len().saturating_sub(1)
            }
        }
    }

    /// Writes it at `indent`: on one line when it fits (and `open` is
    /// false), else one member or item per line.
    fn write(&self, out: &mut String, indent: usize, open: bool) {
        let line = out.len() - out.rfind('\n').map_or(0, |n| n + 1);
        if !open && line + self.width() <= WIDTH {
            self.write_flat(out);
            return;
        }
        let pad = " ".repeat(indent + 2);
        match self {
            Json::Atom(a) => out.push_str(a),
            Json::Array(items) if items.is_empty() => out.push_str("[]"),
            Json::Object(members) if members.is_empty() => out.push_str("{}"),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    out.push_str(&pad);
                    item.write(out, indent + 2, false);
                }
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    out.push_str(&pad);
                    out.push_str(k);
                    out.push_str(": ");
                    v.write(out, indent + 2, false);
                }
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                out.push('}');
            }
        }
    }

    fn write_flat(&self, out: &mut String) {
        match self {
            Json::Atom(a) => out.push_str(a),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_flat(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    v.write_flat(out);
                }
                out.push('}');
            }
        }
    }
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl<'t> Parser<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let ate = self.peek() == Some(b);
        if ate {
            self.at += 1;
        }
        ate
    }

    fn value(&mut self) -> Option<Json<'t>> {
        match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if self.eat(b'}') {
                    return Some(Json::Object(members));
                }
                loop {
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    members.push((Cow::Borrowed(key), self.value()?));
                    if self.eat(b'}') {
                        return Some(Json::Object(members));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Some(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(b']') {
                        return Some(Json::Array(items));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'"' => self.string().map(|s| Json::Atom(Cow::Borrowed(s))),
            _ => {
                let start = self.at;
                while let Some(b) = self.peek()
                    && !matches!(b, b',' | b']' | b'}' | b':')
                {
                    self.at += 1;
                }
                (self.at > start).then(|| Json::Atom(Cow::Borrowed(&self.text[start..self.at])))
            }
        }
    }

    /// A string with its quotes, escapes kept.
    fn string(&mut self) -> Option<&'t str> {
        let start = self.at;
        if !self.eat(b'"') {
            return None;
        }
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return self.text.get(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests;
