//! Whether two builds' codecs understand each other: the compatibility
//! check of two [`ShapeSet`]s, in Schema Registry's modes.
//!
//! * **BACKWARD**: the new reader reads what the old writer wrote (a new
//!   consumer, old messages still in flight or stored).
//! * **FORWARD**: the old reader reads what the new writer writes (old
//!   nodes still running when the new build starts sending).
//! * **FULL**: both.
//! * The **transitive** forms hold the new set to every earlier snapshot
//!   of a history ([`check_history`]), not only the last.
//!
//! A codec is matched by name, or by one of the new codec's aliases (a
//! codec renamed with its old name in `aliases` is the same codec). Each
//! [`Finding`] names the codec, the place in its value, the [`Rule`] that
//! breaks, the direction it breaks in, why in plain words, the fix in the
//! derive's own words, and a [`Witness`]: the MessagePack a writer of the
//! writer's shape writes that the reader's refuses or reads wrong, as a
//! whole value of the writer's codec.
//!
//! ```
//! use codecbus_core::shape::check::{Direction, Mode, Rule, check};
//! use codecbus_core::shape::{CodecShape, FieldShape, Layout, Record, Shape, ShapeSet};
//! use std::collections::BTreeMap;
//!
//! let order = |id: Shape| {
//!     let id = FieldShape { name: "id".into(), key: None, optional: false, shape: id };
//!     ShapeSet::from_codecs([CodecShape {
//!         name: "shop.order".into(),
//!         aliases: vec![],
//!         shape: Shape::Record(Record::new(Layout::Map, vec![id], vec![])),
//!         refs: BTreeMap::new(),
//!     }])
//! };
//! // u64 narrowed to u32: the new reader refuses what the old writer wrote
//! let report = check(&order(Shape::int(false, 64)), &order(Shape::int(false, 32)), Mode::Full);
//! let finding = &report.findings[0];
//! assert_eq!(finding.rule, Rule::IntegerNarrowed);
//! assert_eq!(finding.direction, Direction::Backward);
//! assert_eq!(finding.path, "id");
//! assert_eq!(finding.witness.as_ref().unwrap().json, r#"{"id":4294967296}"#);
//!
//! // widened: compatible both ways for the values the old type has
//! let report = check(&order(Shape::int(false, 32)), &order(Shape::int(false, 64)), Mode::Backward);
//! assert!(report.is_compatible());
//! ```
//!
//! # Paths
//!
//! A finding's `path` is where in the codec's value the change is, written
//! `lines[].sku`: a field by its name on the wire (its Rust name in the
//! array layouts), a variant by its name, `[]` an element of an array,
//! `[2]` the third item of a tuple or tuple variant, `{}` the value of a
//! map and `{key}` its key; an `Option` and a reference to another codec
//! add nothing. The codec's whole value is the empty path (shown as `.`).
//!
//! # What the readers accept
//!
//! The rules follow what the derived and built-in readers do, as read in
//! their source:
//!
//! * A struct reads a map by name whatever its own layout, skipping unknown
//!   keys, filling a missing `Option` with `None` and a missing `default`
//!   field with its default, refusing any other missing field; and an
//!   array by position (by key for a keyed struct), missing trailing
//!   elements filled in the same way (codec-derive/src/decode.rs,
//!   `named_body`, `map_block`, `seq_block`). A tuple struct reads arrays
//!   only.
//! * An array-layout reader refuses an array longer than its fields (the
//!   `WrongLength` check at the head of `seq_block`); a keyed reader skips
//!   elements at keys it does not have, and takes `nil` at a `default`
//!   field as its default.
//! * A union takes a tag it does not know into its catch-all variant, or
//!   refuses it (`union_body`); a named enum refuses a variant it does not
//!   know (`enum_body`), and a bare name for a variant with data.
//! * An integer reader takes any MessagePack integer whose value fits its
//!   type (msgpack/read/values.rs, `narrow!`); `u128` reads what fits a
//!   `u64`, `i128` any integer (impls/primitive.rs).
//! * A float reader takes both float widths and integers (`read_f64_other`,
//!   `read_f32`): `f32` to `f64` is exact, `f64` to `f32` rounds, an
//!   integer beyond 2^24 (`f32`) or 2^53 (`f64`) is rounded. An integer
//!   reader refuses floats.
//! * A `bin` reader takes strings too (`read_bin`); a string reader refuses
//!   `bin` (`read_str_len`).
//! * `Option<T>` reads `nil` or a `T`; any other reader refuses `nil`
//!   (impls/wrappers.rs). A missing tuple-variant item is `None` when it is
//!   an `Option` (`Decode::value_when_missing`), else an error.
//! * Tuples and fixed-size arrays take exactly their length
//!   (impls/wrappers.rs), an extension type its own type code
//!   (ext/mod.rs `read_ext_of`), the JSON readers any value but `bin` and
//!   extensions (serde_json_value.rs).
//!
//! The shape does not say whether a map-layout writer may leave a field out
//! (`skip_if`) or always writes it (`default`): a writer is taken to write
//! every field. An [`Opaque`](Shape::Opaque) shape on either side is not
//! compared: [`Report::unchecked`] counts those places.
//!
//! # Rules
//!
//! | rule | what changed | breaks | fix |
//! |---|---|---|---|
//! | `CODEC_REMOVED` | a codec of the old set is gone, and no new codec has its name among its aliases | BACKWARD | keep it, or list its name in its successor's `#[codec(aliases("old"))]` |
//! | `CODEC_RENAMED` | a codec's name changed: without the old name as an alias new nodes do not read old messages; unless the old build had the new name among its aliases, old nodes do not read new ones | BACKWARD, FORWARD | `#[codec(aliases("old"))]` on the renamed codec; for FORWARD, first ship a build that keeps the old name with the new one in `aliases`, rename after |
//! | `LAYOUT_CHANGED` | a struct's layout changed (map, `as_array`, `key = N`) so that the reader cannot follow: a map given to a tuple struct, an array given to a map-layout reader (read by declaration order, which its shape does not record), positions that differ between a keyed and a positional array | BACKWARD, FORWARD | keep the layout |
//! | `FIELD_INSERTED` | array layout: a field inserted before others, which shifts them | BACKWARD, FORWARD | append the field instead of inserting it (see `FIELD_APPENDED`), or use `#[codec(key = N)]` |
//! | `FIELD_REORDERED` | array layout: fields moved | BACKWARD, FORWARD | restore the order: in `as_array`, a field's position is its identity |
//! | `FIELD_DELETED` | array layout: a field removed, which shifts the ones after it, or the last one removed (a newer reader refuses the longer arrays old writers write) | BACKWARD, FORWARD | keep the field at its position (an `Option` the writer leaves `None` costs one byte) |
//! | `FIELD_APPENDED` | array layout: a field appended; an older reader refuses an array longer than its fields | FORWARD | give the fields `#[codec(key = N)]` (a keyed reader skips keys it does not know), or update every reader first |
//! | `FIELD_KEY_CHANGED` | keyed layout: a field moved to another key | BACKWARD, FORWARD | keep each field's `#[codec(key = N)]`; a new field takes a new key |
//! | `FIELD_ADDED_REQUIRED` | a new field that may not be missing, which old writers do not write | BACKWARD | `#[codec(default)]` on it, or make it `Option` |
//! | `FIELD_REMOVED_REQUIRED` | a field the old reader requires is no longer written | FORWARD | keep writing it until every reader has it as `Option` or with `#[codec(default)]` |
//! | `REMOVED_NOT_RESERVED` | a field name, key, union tag or enum variant removed (or its reservation dropped) without reserving it: a later version may reuse it for something else | BACKWARD | `#[codec(reserved("name"))]`, `#[codec(reserved(N))]` |
//! | `RESERVED_REUSED` | a field or variant takes a name, key or tag the old shape reserved: data written before the removal reads as the new field | BACKWARD | pick a name, key or tag never used |
//! | `VARIANT_REMOVED` | a variant the old writer writes is gone (a union tag, an enum name) and the new reader has no catch-all | BACKWARD | keep the variant, or give the union a catch-all `#[codec(other)]` variant |
//! | `VARIANT_ADDED` | a new variant that the old reader does not know, and it has no catch-all | FORWARD | first ship readers with a catch-all `#[codec(other)]` (a union) or that know the variant |
//! | `VARIANT_RENAMED` | a named enum's variant renamed: its name is what is written | BACKWARD, FORWARD | keep the wire name with `#[codec(rename = "Old")]` |
//! | `VARIANT_TAG_CHANGED` | a union variant's tag changed | BACKWARD, FORWARD | keep `#[codec(tag = N)]`; a tag is the variant's identity |
//! | `INTEGER_NARROWED` | an integer type narrowed: the reader refuses the writer's larger values | BACKWARD, FORWARD | keep a type that holds every value the writer writes |
//! | `INTEGER_SIGN_CHANGED` | an integer's sign changed, and the ranges do not fit | BACKWARD, FORWARD | keep the sign, or a wider signed type that holds both ranges (`i64` holds `u32`) |
//! | `INTEGER_FLOAT_CHANGED` | an integer became a float or back: an integer reader refuses floats, a float reader rounds integers beyond its precision | BACKWARD, FORWARD | keep the type; add a field for the new one |
//! | `FLOAT_NARROWED` | `f64` to `f32` where the reader is `f32`: it rounds what a `f64` writer writes | BACKWARD, FORWARD | keep `f64` |
//! | `STR_BIN_CHANGED` | a string became bytes: a string reader refuses `bin` (a `bin` reader takes strings) | BACKWARD, FORWARD | keep `String` until every reader reads bytes |
//! | `NIL_REJECTED` | a field became an `Option`, or stopped being one, and the reader's type refuses the writer's `nil` | BACKWARD, FORWARD | keep `Option<T>` in the reader; readers become `Option` first, writers after |
//! | `TUPLE_LENGTH_CHANGED` | a tuple, a fixed-size array or a tuple variant changed length | BACKWARD, FORWARD | keep the length; a tuple variant may grow only by trailing `Option`s, and only for newer readers |
//! | `EXT_CODE_CHANGED` | an extension value's type code changed | BACKWARD, FORWARD | keep the type (`uuid::Uuid`, `Timestamp`, ...) |
//! | `TYPE_CHANGED` | a value changed kind (a scalar to an array or a map, a string to a number, a record to an enum...) | BACKWARD, FORWARD | keep the type; add a field with a new name for the new one |

use std::collections::{BTreeSet, HashSet};
use std::fmt;

use super::ShapeSet;
use super::sample::{
    self, Outcome, Sampler, Simulator, Step, Value, accepts_missing, enum_value, is_tuple_like,
    keyed_len, read_range, union_value, write_range,
};
use super::{
    CodecShape, Enum, FieldShape, Layout, Payload, Record, Reserved, Shape, Union, VariantShape,
};

/// Which direction a check holds the sets to: Schema Registry's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The new reader reads what the old writer wrote.
    Backward,
    /// The old reader reads what the new writer writes.
    Forward,
    /// Both.
    Full,
    /// [`Backward`](Self::Backward) against every earlier snapshot.
    BackwardTransitive,
    /// [`Forward`](Self::Forward) against every earlier snapshot.
    ForwardTransitive,
    /// [`Full`](Self::Full) against every earlier snapshot.
    FullTransitive,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 6] = [
        Mode::Backward,
        Mode::Forward,
        Mode::Full,
        Mode::BackwardTransitive,
        Mode::ForwardTransitive,
        Mode::FullTransitive,
    ];

    /// Its name, as Schema Registry spells it: `BACKWARD`, `FULL_TRANSITIVE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Backward => "BACKWARD",
            Self::Forward => "FORWARD",
            Self::Full => "FULL",
            Self::BackwardTransitive => "BACKWARD_TRANSITIVE",
            Self::ForwardTransitive => "FORWARD_TRANSITIVE",
            Self::FullTransitive => "FULL_TRANSITIVE",
        }
    }

    /// The mode named `name`, in any case, with `-` or `_`
    /// (`backward-transitive`, `FULL`).
    pub fn parse(name: &str) -> Option<Mode> {
        let name = name.to_ascii_uppercase().replace('-', "_");
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Whether it checks that new readers read old data.
    pub fn backward(self) -> bool {
        !matches!(self, Self::Forward | Self::ForwardTransitive)
    }

    /// Whether it checks that old readers read new data.
    pub fn forward(self) -> bool {
        !matches!(self, Self::Backward | Self::BackwardTransitive)
    }

    /// Whether it holds the new set to every earlier snapshot.
    pub fn transitive(self) -> bool {
        matches!(
            self,
            Self::BackwardTransitive | Self::ForwardTransitive | Self::FullTransitive
        )
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::parse(s).ok_or_else(|| {
            format!(
                "unknown mode `{s}`: one of backward, forward, full, backward-transitive, \
                 forward-transitive, full-transitive"
            )
        })
    }
}

/// The direction a finding breaks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// The new reader cannot read what the old writer wrote.
    Backward,
    /// The old reader cannot read what the new writer writes.
    Forward,
}

impl Direction {
    /// `backward` or `forward`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Backward => "backward",
            Self::Forward => "forward",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($($(#[$doc:meta])* $variant:ident = $name:literal: $description:literal,)*) => {
        /// What a finding is about: one rule of the check (the table in the
        /// [module documentation](self)).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Rule {
            $($(#[$doc])* $variant,)*
        }

        impl Rule {
            /// Every rule.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// Its stable name, `SCREAMING_SNAKE` (`FIELD_ADDED_REQUIRED`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Rule::$variant => $name,)*
                }
            }

            /// What it is about, in one line.
            pub fn description(self) -> &'static str {
                match self {
                    $(Rule::$variant => $description,)*
                }
            }
        }
    };
}

rules! {
    /// A codec of the old set is gone.
    CodecRemoved = "CODEC_REMOVED": "a codec is gone, and no new codec has its name among its aliases",
    /// A codec's name changed.
    CodecRenamed = "CODEC_RENAMED": "a codec's name changed, and the other side does not know the name",
    /// A struct's layout changed in a way the reader cannot follow.
    LayoutChanged = "LAYOUT_CHANGED": "a struct's layout (map, as_array, keyed) changed in a way the reader cannot follow",
    /// Array layout: a field inserted before others.
    FieldInserted = "FIELD_INSERTED": "array layout: a field inserted before others shifts them",
    /// Array layout: fields moved.
    FieldReordered = "FIELD_REORDERED": "array layout: fields moved to other positions",
    /// Array layout: a field removed.
    FieldDeleted = "FIELD_DELETED": "array layout: a field removed shifts the ones after it, or leaves newer readers a longer array than they take",
    /// Array layout: a field appended, which older readers refuse.
    FieldAppended = "FIELD_APPENDED": "array layout: a field appended, and older readers refuse an array longer than their fields",
    /// Keyed layout: a field moved to another key.
    FieldKeyChanged = "FIELD_KEY_CHANGED": "keyed layout: a field moved to another key",
    /// A new field that may not be missing.
    FieldAddedRequired = "FIELD_ADDED_REQUIRED": "a new field that may not be missing, which older writers do not write",
    /// A field the old reader requires is no longer written.
    FieldRemovedRequired = "FIELD_REMOVED_REQUIRED": "a field the old reader requires is no longer written",
    /// A name, key, tag or variant removed without reserving it.
    RemovedNotReserved = "REMOVED_NOT_RESERVED": "a field name, key, union tag or variant removed without reserving it",
    /// A reserved name, key or tag taken again.
    ReservedReused = "RESERVED_REUSED": "a field or variant takes a name, key or tag the old shape reserved",
    /// A variant the old writer writes is gone.
    VariantRemoved = "VARIANT_REMOVED": "a variant is gone, and the new reader has no catch-all",
    /// A variant the old reader does not know.
    VariantAdded = "VARIANT_ADDED": "a new variant the old reader does not know, and it has no catch-all",
    /// A named enum's variant renamed.
    VariantRenamed = "VARIANT_RENAMED": "a named enum's variant renamed: its name is what is written",
    /// A union variant's tag changed.
    VariantTagChanged = "VARIANT_TAG_CHANGED": "a union variant's tag changed",
    /// An integer narrowed.
    IntegerNarrowed = "INTEGER_NARROWED": "an integer narrowed: the reader refuses the writer's larger values",
    /// An integer's sign changed.
    IntegerSignChanged = "INTEGER_SIGN_CHANGED": "an integer's sign changed, and the writer's range does not fit the reader's",
    /// An integer became a float or back.
    IntegerFloatChanged = "INTEGER_FLOAT_CHANGED": "an integer became a float or back",
    /// A `f64` read as `f32`.
    FloatNarrowed = "FLOAT_NARROWED": "a f64 read as f32 is rounded",
    /// A string became bytes.
    StrBinChanged = "STR_BIN_CHANGED": "a string became bytes: a string reader refuses bin",
    /// `nil` where the reader's type has none.
    NilRejected = "NIL_REJECTED": "the writer may write nil (an Option) where the reader's type refuses it",
    /// A tuple's length changed.
    TupleLengthChanged = "TUPLE_LENGTH_CHANGED": "a tuple, fixed-size array or tuple variant changed length",
    /// An extension type code changed.
    ExtCodeChanged = "EXT_CODE_CHANGED": "an extension value's type code changed",
    /// A value changed kind.
    TypeChanged = "TYPE_CHANGED": "a value changed kind (scalar, string, array, map, record, enum)",
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value that shows a finding: what a writer of the writer's shape
/// writes, as a whole value of its codec, that the reader's refuses or
/// reads wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Witness {
    /// The MessagePack bytes.
    pub msgpack: Vec<u8>,
    /// The same value as JSON text, for people ([`Value::to_json`]).
    pub json: String,
    /// The value itself.
    pub value: Value,
}

impl Witness {
    fn of(value: Value) -> Self {
        Self {
            msgpack: crate::codec::to_vec(&value).unwrap_or_default(),
            json: value.to_json(),
            value,
        }
    }
}

/// One incompatibility.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The codec's name (the new one's, when it was renamed).
    pub codec: String,
    /// Where in the codec's value ([paths](self#paths)).
    pub path: String,
    /// The rule that breaks.
    pub rule: Rule,
    /// The direction it breaks in.
    pub direction: Direction,
    /// Why, in plain words.
    pub why: String,
    /// What to do, in the derive's words.
    pub fix: String,
    /// A value the writer writes that the reader refuses or reads wrong;
    /// `None` for the reservation rules, which break only once a later
    /// version reuses what was removed.
    pub witness: Option<Witness>,
    /// The index in the history of the snapshot it was found against (0
    /// for [`check`]).
    pub snapshot: usize,
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The mode checked.
    pub mode: Mode,
    /// The incompatibilities, by codec, direction and path.
    pub findings: Vec<Finding>,
    /// How many codecs were compared.
    pub codecs: usize,
    /// How many earlier snapshots the new set was held to.
    pub snapshots: usize,
    /// How many places were not compared, an opaque shape (or a reference
    /// without a definition) on either side.
    pub unchecked: usize,
}

impl Report {
    /// Whether nothing breaks.
    pub fn is_compatible(&self) -> bool {
        self.findings.is_empty()
    }

    /// The report as JSON, for machines: `{"mode", "compatible",
    /// "codecs", "snapshots", "unchecked", "findings": [{"codec", "path",
    /// "rule", "direction", "why", "fix", "snapshot", "witness":
    /// {"json": <the value>, "msgpack": "<hex>"} or null}]}`.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        out.push_str("{\"mode\":");
        super::json_str(&mut out, self.mode.as_str());
        out.push_str(&format!(
            ",\"compatible\":{},\"codecs\":{},\"snapshots\":{},\"unchecked\":{},\"findings\":[",
            self.is_compatible(),
            self.codecs,
            self.snapshots,
            self.unchecked
        ));
        for (i, f) in self.findings.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"codec\":");
            super::json_str(&mut out, &f.codec);
            out.push_str(",\"path\":");
            super::json_str(&mut out, &f.path);
            out.push_str(",\"rule\":");
            super::json_str(&mut out, f.rule.as_str());
            out.push_str(",\"direction\":");
            super::json_str(&mut out, f.direction.as_str());
            out.push_str(",\"why\":");
            super::json_str(&mut out, &f.why);
            out.push_str(",\"fix\":");
            super::json_str(&mut out, &f.fix);
            out.push_str(&format!(",\"snapshot\":{},\"witness\":", f.snapshot));
            match &f.witness {
                Some(w) => {
                    out.push_str("{\"json\":");
                    out.push_str(&w.json);
                    out.push_str(",\"msgpack\":\"");
                    out.push_str(&hex(&w.msgpack));
                    out.push_str("\"}");
                }
                None => out.push_str("null"),
            }
            out.push('}');
        }
        out.push_str("]}");
        out
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A table for a person: one row per finding (codec, path, rule,
/// direction), then its why, fix and witness.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        write!(
            f,
            "{}: {}, {} checked against {}",
            self.mode,
            if self.is_compatible() {
                "compatible".to_owned()
            } else {
                plural(self.findings.len(), "incompatibility", "incompatibilities")
            },
            plural(self.codecs, "codec", "codecs"),
            plural(self.snapshots, "snapshot", "snapshots"),
        )?;
        if self.unchecked > 0 {
            write!(
                f,
                "; {} not checked (opaque)",
                plural(self.unchecked, "place", "places")
            )?;
        }
        writeln!(f)?;
        if self.findings.is_empty() {
            return Ok(());
        }
        let path = |p: &str| {
            if p.is_empty() {
                ".".to_owned()
            } else {
                p.to_owned()
            }
        };
        let w_codec = self
            .findings
            .iter()
            .map(|x| x.codec.len())
            .max()
            .unwrap_or(0)
            .max(5);
        let w_path = self
            .findings
            .iter()
            .map(|x| path(&x.path).len())
            .max()
            .unwrap_or(0)
            .max(4);
        let w_rule = self
            .findings
            .iter()
            .map(|x| x.rule.as_str().len())
            .max()
            .unwrap_or(0);
        writeln!(f)?;
        writeln!(
            f,
            "{:w_codec$}  {:w_path$}  {:w_rule$}  breaks",
            "codec", "path", "rule"
        )?;
        for x in &self.findings {
            writeln!(
                f,
                "{:w_codec$}  {:w_path$}  {:w_rule$}  {}",
                x.codec,
                path(&x.path),
                x.rule.as_str(),
                x.direction
            )?;
            writeln!(f, "    why      {}", x.why)?;
            writeln!(f, "    fix      {}", x.fix)?;
            if let Some(w) = &x.witness {
                writeln!(f, "    witness  {}", w.json)?;
            }
            if self.snapshots > 1 {
                writeln!(f, "    against  snapshot {}", x.snapshot)?;
            }
        }
        Ok(())
    }
}

/// Checks `new` against the one earlier set `old` in `mode` (a transitive
/// mode is its plain form here).
pub fn check(old: &ShapeSet, new: &ShapeSet, mode: Mode) -> Report {
    check_history(std::slice::from_ref(old), new, mode)
}

/// Checks `new` against a history of earlier sets, oldest first: against
/// the last one, or every one in a transitive mode. A finding against
/// several snapshots is reported once, against the latest.
pub fn check_history(history: &[ShapeSet], new: &ShapeSet, mode: Mode) -> Report {
    let against: Vec<usize> = match history.len() {
        0 => Vec::new(),
        n if mode.transitive() => (0..n).rev().collect(),
        n => vec![n - 1],
    };
    let mut out = Out::default();
    for &i in &against {
        compare_sets(&history[i], new, mode, i, &mut out);
    }
    let mut seen = HashSet::new();
    let mut findings: Vec<Finding> = out
        .findings
        .into_iter()
        .filter(|f| seen.insert((f.codec.clone(), f.path.clone(), f.rule, f.direction)))
        .collect();
    findings.sort_by(|a, b| {
        (&a.codec, a.direction, &a.path, a.rule).cmp(&(&b.codec, b.direction, &b.path, b.rule))
    });
    Report {
        mode,
        findings,
        codecs: out.codecs.len(),
        snapshots: against.len(),
        unchecked: out.unchecked.len(),
    }
}

#[derive(Default)]
struct Out {
    findings: Vec<Finding>,
    codecs: BTreeSet<String>,
    unchecked: BTreeSet<(String, String)>,
}

/// Whether `old` and `new` are one codec by name or alias, either way.
fn corresponds(old: &CodecShape, new: &CodecShape) -> bool {
    old.name == new.name || new.aliases.contains(&old.name) || old.aliases.contains(&new.name)
}

/// The new codec that old codec `o` became, and whether it reads
/// messages sent under `o`'s name.
fn counterpart<'n>(
    o: &CodecShape,
    old: &ShapeSet,
    new: &'n ShapeSet,
) -> (Option<&'n CodecShape>, bool) {
    // The codec a message sent under the old name decodes as on a new
    // node (bus/src/engine/registry.rs: names first, then aliases).
    let reads_old_name = new.find(&o.name);
    let n = reads_old_name
        .or_else(|| new.iter().find(|n| o.aliases.contains(&n.name)))
        .or_else(|| {
            // Renamed without an alias: the same contract under a name no
            // old codec has.
            new.iter().find(|n| {
                n.shape == o.shape
                    && n.refs == o.refs
                    && !old.iter().any(|other| corresponds(other, n))
            })
        });
    (n, reads_old_name.is_some())
}

fn compare_sets(old: &ShapeSet, new: &ShapeSet, mode: Mode, snapshot: usize, out: &mut Out) {
    for o in old {
        let (n, reads_old_name) = counterpart(o, old, new);
        out.codecs.insert(n.map_or(&o.name, |n| &n.name).clone());
        let Some(n) = n else {
            if mode.backward() {
                let witness = Witness::of(sample::sample(o));
                out.findings.push(Finding {
                    codec: o.name.clone(),
                    path: String::new(),
                    rule: Rule::CodecRemoved,
                    direction: Direction::Backward,
                    why: format!(
                        "no new codec is named `{}` or has it among its aliases: a new node \
                         cannot decode a message the old build sends under it",
                        o.name
                    ),
                    fix: format!(
                        "keep the codec `{0}`, or list `{0}` in its successor's \
                         `#[codec(aliases(\"{0}\"))]`",
                        o.name
                    ),
                    witness: Some(witness),
                    snapshot,
                });
            }
            continue;
        };
        if mode.backward() && !reads_old_name {
            out.findings.push(Finding {
                codec: n.name.clone(),
                path: String::new(),
                rule: Rule::CodecRenamed,
                direction: Direction::Backward,
                why: format!(
                    "`{}` was `{}`, which it does not list among its aliases: a new node \
                     cannot decode a message the old build sends under the old name",
                    n.name, o.name
                ),
                fix: format!("add the old name: `#[codec(aliases(\"{}\"))]`", o.name),
                witness: Some(Witness::of(sample::sample(o))),
                snapshot,
            });
        }
        if mode.forward() && n.name != o.name && !o.aliases.contains(&n.name) {
            out.findings.push(Finding {
                codec: n.name.clone(),
                path: String::new(),
                rule: Rule::CodecRenamed,
                direction: Direction::Forward,
                why: format!(
                    "the new build sends `{}` under its new name, which the old build (`{}`) \
                     does not know: an old node cannot decode it (a codec is sent under its \
                     name, never an alias)",
                    n.name, o.name
                ),
                fix: format!(
                    "aliases first, rename later: ship a build that keeps the name `{}` with \
                     `#[codec(aliases(\"{}\"))]`, and rename once no older build runs",
                    o.name, n.name
                ),
                witness: Some(Witness::of(sample::sample(n))),
                snapshot,
            });
        }
        if mode.backward() {
            Pass::new(Direction::Backward, o, n, &n.name, true, snapshot, out).run();
        }
        if mode.forward() {
            Pass::new(Direction::Forward, n, o, &n.name, false, snapshot, out).run();
        }
    }
}

/// Holds a report to the model of the readers (`sample::Simulator`), for
/// the tests and the fuzz target: every finding's witness is a value its
/// writer's shape takes and its reader's refuses or reads wrong (but for
/// the rules about positions, where a value read at the wrong place may
/// look right); where no finding was made in a direction, the reader takes
/// the writer's samples.
#[cfg(any(test, fuzzing))]
pub(crate) fn verify(report: &Report, history: &[ShapeSet], new: &ShapeSet) -> Result<(), String> {
    let by_position = |rule: Rule| {
        matches!(
            rule,
            Rule::FieldReordered
                | Rule::FieldInserted
                | Rule::FieldDeleted
                | Rule::FieldKeyChanged
                | Rule::LayoutChanged
        )
    };
    // The pair of codecs a finding is about, writer first.
    let pair = |snapshot: usize, codec: &str, dir: Direction| {
        let old = history.get(snapshot)?;
        let n = new.get(codec)?;
        let o = old
            .iter()
            .find(|o| counterpart(o, old, new).0.is_some_and(|c| c.name == n.name))?;
        Some(match dir {
            Direction::Backward => (o, n),
            Direction::Forward => (n, o),
        })
    };
    // Whether the writer has a value at all (a type that requires itself
    // has none, and its samples stop with nil).
    let finite = |w: &CodecShape| {
        !Simulator::new(w)
            .read(&w.shape, &sample::sample(w))
            .is_bad()
    };
    for f in &report.findings {
        let Some(witness) = &f.witness else {
            if matches!(f.rule, Rule::RemovedNotReserved | Rule::ReservedReused) {
                continue;
            }
            return Err(format!("{} at `{}` has no witness", f.rule, f.path));
        };
        let decoded = crate::codec::from_slice::<Value>(&witness.msgpack).map_err(|e| {
            format!(
                "{} at `{}`: the witness does not decode: {e}",
                f.rule, f.path
            )
        })?;
        if decoded != witness.value || witness.json != witness.value.to_json() {
            return Err(format!(
                "{} at `{}`: the witness's forms differ",
                f.rule, f.path
            ));
        }
        if matches!(f.rule, Rule::CodecRemoved | Rule::CodecRenamed) {
            continue;
        }
        let (w, r) = pair(f.snapshot, &f.codec, f.direction)
            .ok_or_else(|| format!("{} at `{}`: no codecs {}", f.rule, f.path, f.codec))?;
        let own = Simulator::new(w).read(&w.shape, &witness.value);
        if own.is_bad() {
            if !finite(w) {
                continue;
            }
            return Err(format!(
                "{} {} at `{}`: the witness {} is not the writer's: {own:?}",
                f.rule, f.direction, f.path, witness.json
            ));
        }
        let read = Simulator::new(r).read(&r.shape, &witness.value);
        if !by_position(f.rule) && read == Outcome::Ok {
            return Err(format!(
                "{} {} at `{}`: the reader takes the witness {}",
                f.rule, f.direction, f.path, witness.json
            ));
        }
    }
    // Where nothing was found, the writer's samples read.
    let against: Vec<usize> = if report.mode.transitive() {
        (0..history.len()).collect()
    } else {
        history.len().checked_sub(1).into_iter().collect()
    };
    for i in against {
        let old = &history[i];
        for o in old {
            let Some(n) = counterpart(o, old, new).0 else {
                continue;
            };
            for (dir, w, r) in [(Direction::Backward, o, n), (Direction::Forward, n, o)] {
                let checked = match dir {
                    Direction::Backward => report.mode.backward(),
                    Direction::Forward => report.mode.forward(),
                };
                let found = report
                    .findings
                    .iter()
                    .any(|f| f.codec == n.name && f.direction == dir);
                if !checked || found || !finite(w) || unknowable(w) {
                    continue;
                }
                let mut sampler = Sampler::new(w);
                for value in [sampler.value(&w.shape), sampler.seeded(&w.shape, 1)] {
                    let read = Simulator::new(r).read(&r.shape, &value);
                    if read.is_bad() {
                        return Err(format!(
                            "{dir}: no finding for `{}`, but the reader does not take {}: {read:?}",
                            n.name,
                            value.to_json()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether a codec has a part whose values its shape does not tell (an
/// opaque shape, a reference without a definition): its samples hold
/// `nil` there.
#[cfg(any(test, fuzzing))]
fn unknowable(codec: &CodecShape) -> bool {
    fn walk<'s>(codec: &'s CodecShape, s: &'s Shape, seen: &mut HashSet<&'s str>) -> bool {
        let payload = |p: &'s Payload, seen: &mut HashSet<&'s str>| match p {
            Payload::Unit => false,
            Payload::Newtype(s) => walk(codec, s, seen),
            Payload::Tuple(items) => items.iter().any(|s| walk(codec, s, seen)),
            Payload::Record(r) => r.fields.iter().any(|f| walk(codec, &f.shape, seen)),
        };
        match s {
            Shape::Opaque => true,
            Shape::Ref(name) => match codec.resolve(name) {
                None => true,
                Some(s) => seen.insert(name) && walk(codec, s, seen),
            },
            Shape::Array(s) | Shape::Option(s) => walk(codec, s, seen),
            Shape::Map(k, v) => walk(codec, k, seen) || walk(codec, v, seen),
            Shape::Tuple(items) => items.iter().any(|s| walk(codec, s, seen)),
            Shape::Record(r) => r.fields.iter().any(|f| walk(codec, &f.shape, seen)),
            Shape::Enum(Enum { variants, .. }) | Shape::Union(Union { variants, .. }) => {
                variants.iter().any(|v| payload(&v.payload, seen))
            }
            _ => false,
        }
    }
    walk(codec, &codec.shape, &mut HashSet::new())
}

static NIL: Shape = Shape::Nil;
static JSON: Shape = Shape::Json;

/// One place in a value, for paths.
#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Name(&'a str),
    Elem,
    Key,
    Value,
    Item(usize),
}

/// One codec compared in one direction: a writer's shape against a
/// reader's.
struct Pass<'a, 'o> {
    dir: Direction,
    writer: &'a CodecShape,
    reader: &'a CodecShape,
    codec: &'a str,
    /// Whether to check reservations (once per codec: in the BACKWARD
    /// pass, where the writer is the old shape).
    policy: bool,
    snapshot: usize,
    out: &'o mut Out,
    /// Pairs of named codecs being compared (the guard against recursive
    /// types: a pair met again counts as compatible).
    visiting: HashSet<(&'a str, &'a str)>,
    /// Pairs of named codecs compared without a finding or an unchecked
    /// place: not compared again elsewhere in the value.
    clean: HashSet<(&'a str, &'a str)>,
    /// Named codecs of the writer being checked against a JSON reader.
    visiting_json: HashSet<&'a str>,
    /// Comparisons left (a snapshot made by hand can make a value of any
    /// size out of shared references): past it, places are unchecked.
    budget: u32,
    /// Calls of `unchecked`, to tell a clean comparison.
    unchecked_calls: usize,
    path: Vec<Seg<'a>>,
    steps: Vec<Step>,
}

impl<'a, 'o> Pass<'a, 'o> {
    fn new(
        dir: Direction,
        writer: &'a CodecShape,
        reader: &'a CodecShape,
        codec: &'a str,
        policy: bool,
        snapshot: usize,
        out: &'o mut Out,
    ) -> Self {
        Self {
            dir,
            writer,
            reader,
            codec,
            policy,
            snapshot,
            out,
            visiting: HashSet::new(),
            clean: HashSet::new(),
            visiting_json: HashSet::new(),
            budget: 1 << 20,
            unchecked_calls: 0,
            path: Vec::new(),
            steps: Vec::new(),
        }
    }

    fn run(mut self) {
        let (w, r) = (self.writer, self.reader);
        // A reference to the codec's own name is the codec's shape: the
        // pair is being compared from the start.
        self.visiting.insert((&w.name, &r.name));
        self.shape(&w.shape, &r.shape);
    }

    // ---- wording ----

    fn writer_side(&self) -> &'static str {
        match self.dir {
            Direction::Backward => "the old writer",
            Direction::Forward => "the new writer",
        }
    }

    fn reader_side(&self) -> &'static str {
        match self.dir {
            Direction::Backward => "the new reader",
            Direction::Forward => "the old reader",
        }
    }

    // ---- places ----

    fn path_string(&self, extra: Option<&str>) -> String {
        let mut out = String::new();
        let segs = self.path.iter().copied().chain(extra.map(Seg::Name));
        for seg in segs {
            match seg {
                Seg::Name(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Seg::Elem => out.push_str("[]"),
                Seg::Key => out.push_str("{key}"),
                Seg::Value => out.push_str("{}"),
                Seg::Item(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    fn within(&mut self, seg: Option<Seg<'a>>, step: Step, f: impl FnOnce(&mut Self)) {
        if let Some(seg) = seg {
            self.path.push(seg);
        }
        self.steps.push(step);
        f(self);
        self.steps.pop();
        if seg.is_some() {
            self.path.pop();
        }
    }

    fn unchecked(&mut self) {
        self.unchecked_calls += 1;
        let path = self.path_string(None);
        self.out.unchecked.insert((self.codec.to_owned(), path));
    }

    /// Records a finding at the current place (and `field` below it);
    /// `leaf` is the writer's value at the current place that shows it.
    fn finding(
        &mut self,
        field: Option<&str>,
        rule: Rule,
        why: String,
        fix: String,
        leaf: Option<Value>,
    ) {
        self.finding_in(field, rule, self.dir, why, fix, leaf);
    }

    fn finding_in(
        &mut self,
        field: Option<&str>,
        rule: Rule,
        direction: Direction,
        why: String,
        fix: String,
        leaf: Option<Value>,
    ) {
        let witness = leaf.map(|leaf| Witness::of(self.whole(&leaf)));
        // A writer that cannot write the witness has no value there at all
        // (an enum without variants, a type that requires itself), so
        // nothing it writes can break the reader.
        if let Some(w) = &witness
            && Simulator::new(self.writer)
                .read(&self.writer.shape, &w.value)
                .is_bad()
        {
            return;
        }
        self.out.findings.push(Finding {
            codec: self.codec.to_owned(),
            path: self.path_string(field),
            rule,
            direction,
            why,
            fix,
            witness,
            snapshot: self.snapshot,
        });
    }

    /// The writer's whole value with `leaf` at the current place.
    fn whole(&self, leaf: &Value) -> Value {
        Sampler::new(self.writer).build(&self.writer.shape, &self.steps, leaf)
    }

    fn sampler(&self) -> Sampler<'a> {
        Sampler::new(self.writer)
    }

    // ---- shapes ----

    /// `shape` with its references followed in `codec`, and the last name
    /// followed; `None` when a name has no definition.
    fn resolve(
        codec: &'a CodecShape,
        mut shape: &'a Shape,
    ) -> Option<(&'a Shape, Option<&'a str>)> {
        let mut name = None;
        for _ in 0..64 {
            match shape {
                Shape::Ref(n) => {
                    name = Some(n.as_str());
                    shape = codec.resolve(n)?;
                }
                other => return Some((other, name)),
            }
        }
        None
    }

    fn accepts_nil(&self, r: &'a Shape) -> bool {
        match Self::resolve(self.reader, r) {
            Some((r, _)) => matches!(
                r,
                Shape::Nil | Shape::Option(_) | Shape::Json | Shape::Opaque
            ),
            None => true,
        }
    }

    fn shape(&mut self, w: &'a Shape, r: &'a Shape) {
        let (Some((w, wn)), Some((r, rn))) =
            (Self::resolve(self.writer, w), Self::resolve(self.reader, r))
        else {
            self.unchecked();
            return;
        };
        if self.budget == 0 {
            self.unchecked();
            return;
        }
        self.budget -= 1;
        match (wn, rn) {
            (Some(a), Some(b)) => {
                if self.clean.contains(&(a, b)) || !self.visiting.insert((a, b)) {
                    return;
                }
                let before = (self.out.findings.len(), self.unchecked_calls);
                self.compare(w, r);
                self.visiting.remove(&(a, b));
                if before == (self.out.findings.len(), self.unchecked_calls) {
                    self.clean.insert((a, b));
                }
            }
            _ => self.compare(w, r),
        }
    }

    fn compare(&mut self, w: &'a Shape, r: &'a Shape) {
        use Shape as S;
        match (w, r) {
            (S::Opaque, _) | (_, S::Opaque) => self.unchecked(),
            (S::Json, S::Json) => {}
            // Any JSON value: the reader must take them all.
            (S::Json, _) => self.generic(w, r),
            (_, S::Json) => self.read_as_json(w),
            (S::Option(wi), S::Option(ri)) => self.within(None, Step::Some, |p| p.shape(wi, ri)),
            (S::Nil, S::Option(_)) => {}
            (_, S::Option(ri)) => self.shape(w, ri),
            (S::Option(wi), _) => {
                if !self.accepts_nil(r) {
                    self.nil_rejected(wi, r);
                }
                self.within(None, Step::Some, |p| p.shape(wi, r));
            }
            (S::Nil, S::Nil)
            | (S::Bool, S::Bool)
            | (S::Str, S::Str)
            | (S::Bin, S::Bin)
            | (S::Str, S::Bin)
            | (S::F32, S::F32)
            | (S::F64, S::F64)
            | (S::F32, S::F64) => {}
            (
                S::Int {
                    signed: ws,
                    bits: wb,
                },
                S::Int {
                    signed: rs,
                    bits: rb,
                },
            ) => {
                self.int(*ws, *wb, *rs, *rb);
            }
            (S::Int { signed, bits }, S::F32 | S::F64) => self.int_to_float(*signed, *bits, r),
            (S::F32 | S::F64, S::Int { .. }) => {
                let leaf = if *w == S::F32 {
                    Value::F32(1.5)
                } else {
                    Value::F64(1.5)
                };
                let why = format!(
                    "{} writes a float, which {}'s integer refuses",
                    self.writer_side(),
                    self.reader_side()
                );
                let fix = self.keep_fix(w, r);
                self.finding(None, Rule::IntegerFloatChanged, why, fix, Some(leaf));
            }
            (S::F64, S::F32) => {
                let why = format!(
                    "{}'s f32 rounds the f64 {} writes: 0.1 is read as \
                     0.10000000149011612",
                    self.reader_side(),
                    self.writer_side()
                );
                let fix = self.keep_fix(w, r);
                self.finding(None, Rule::FloatNarrowed, why, fix, Some(Value::F64(0.1)));
            }
            (S::Bin, S::Str) => {
                let why = format!(
                    "{} writes bin, which {}'s string refuses (a bytes \
                     reader takes strings, not the other way round)",
                    self.writer_side(),
                    self.reader_side()
                );
                let fix = match self.dir {
                    Direction::Forward => "keep `String` until every reader reads bytes \
                                           (`#[codec(bytes)]` or `bytes::Bytes` read strings too), \
                                           then change the writer"
                        .to_owned(),
                    Direction::Backward => "keep reading bytes (`#[codec(bytes)]`), which takes \
                                            both strings and bin"
                        .to_owned(),
                };
                self.finding(
                    None,
                    Rule::StrBinChanged,
                    why,
                    fix,
                    Some(Value::Bin(vec![0xff])),
                );
            }
            (S::Ext(a), S::Ext(b)) => {
                if a != b {
                    let why = format!(
                        "{} writes extension type {a}, {} reads type {b} only",
                        self.writer_side(),
                        self.reader_side()
                    );
                    let fix = self.keep_fix(w, r);
                    let leaf = self.sampler().value(w);
                    self.finding(None, Rule::ExtCodeChanged, why, fix, Some(leaf));
                }
            }
            (S::Array(we), S::Array(re)) => {
                self.within(Some(Seg::Elem), Step::Elem, |p| p.shape(we, re));
            }
            (S::Array(we), S::Tuple(rs)) => {
                let leaf = if rs.is_empty() {
                    Value::Array(vec![self.sampler().value(we)])
                } else {
                    Value::Array(Vec::new())
                };
                let why = format!(
                    "{} writes an array of any length, {} takes exactly {} items",
                    self.writer_side(),
                    self.reader_side(),
                    rs.len()
                );
                let fix = self.keep_fix(w, r);
                self.finding(None, Rule::TupleLengthChanged, why, fix, Some(leaf));
            }
            (S::Tuple(ws), S::Array(re)) => {
                for (i, wi) in ws.iter().enumerate() {
                    self.within(Some(Seg::Item(i)), Step::Item(i), |p| p.shape(wi, re));
                }
            }
            (S::Tuple(ws), S::Tuple(rs)) => {
                if ws.len() != rs.len() {
                    let why = format!(
                        "{} writes {} items, {} takes exactly {}",
                        self.writer_side(),
                        ws.len(),
                        self.reader_side(),
                        rs.len()
                    );
                    let fix = self.keep_fix(w, r);
                    let leaf = self.sampler().value(w);
                    self.finding(None, Rule::TupleLengthChanged, why, fix, Some(leaf));
                } else {
                    for (i, (wi, ri)) in ws.iter().zip(rs).enumerate() {
                        self.within(Some(Seg::Item(i)), Step::Item(i), |p| p.shape(wi, ri));
                    }
                }
            }
            (S::Map(wk, wv), S::Map(rk, rv)) => {
                self.within(Some(Seg::Key), Step::Key, |p| p.shape(wk, rk));
                self.within(Some(Seg::Value), Step::Value, |p| p.shape(wv, rv));
            }
            (S::Record(a), S::Record(b)) => self.record(a, b),
            (S::Enum(a), S::Enum(b)) => self.enumeration(a, b),
            (S::Union(a), S::Union(b)) => self.union(a, b),
            _ => self.generic(w, r),
        }
    }

    /// "keep the type" for a value whose type changed from one side to the
    /// other.
    fn keep_fix(&self, w: &Shape, r: &Shape) -> String {
        let (old, new) = match self.dir {
            Direction::Backward => (w, r),
            Direction::Forward => (r, w),
        };
        format!(
            "keep `{}` (it was changed to `{}`); to change a type, add a field with a new name \
             (or key) and stop writing the old one once no reader needs it",
            describe(old),
            describe(new)
        )
    }

    /// A change between kinds that no rule names: reported when a sample of
    /// the writer's shape is refused or misread by the reader (by the model
    /// of the readers in `sample`).
    fn generic(&mut self, w: &'a Shape, r: &'a Shape) {
        let mut sampler = self.sampler();
        let mut candidates = vec![sampler.value(w), sampler.seeded(w, 1)];
        if let Shape::Json = w {
            candidates.extend([
                Value::Bool(false),
                Value::int(0),
                Value::Str(String::new()),
                Value::Array(Vec::new()),
                Value::Map(Vec::new()),
            ]);
        }
        if let Shape::Option(inner) = w {
            candidates.push(sampler.value(inner));
        }
        let mut unknown = false;
        for leaf in candidates {
            match Simulator::new(self.reader).read(r, &leaf) {
                Outcome::Ok => {}
                Outcome::Unknown => unknown = true,
                // Right under an `Option` a nil is the `None` around it:
                // the whole value must be refused too.
                Outcome::Rejected(_) | Outcome::Misread(_)
                    if !Simulator::new(self.reader)
                        .read(&self.reader.shape, &self.whole(&leaf))
                        .is_bad() => {}
                Outcome::Rejected(reason) | Outcome::Misread(reason) => {
                    let why = format!(
                        "{} writes {}, {} reads {}: {reason}",
                        self.writer_side(),
                        describe(w),
                        self.reader_side(),
                        describe(r)
                    );
                    let fix = self.keep_fix(w, r);
                    self.finding(None, Rule::TypeChanged, why, fix, Some(leaf));
                    return;
                }
            }
        }
        if unknown {
            self.unchecked();
        }
    }

    /// A reader of any JSON value: the writer's shape may hold nothing but
    /// what JSON has (serde_json_value.rs refuses bin and extensions, and
    /// map keys other than strings and integers).
    fn read_as_json(&mut self, w: &'a Shape) {
        let Some((w, name)) = Self::resolve(self.writer, w) else {
            self.unchecked();
            return;
        };
        if let Some(name) = name
            && !self.visiting_json.insert(name)
        {
            return;
        }
        let refuse = |p: &mut Self, what: &str, leaf: Value| {
            let why = format!(
                "{} writes {what}, which {}'s JSON value refuses",
                p.writer_side(),
                p.reader_side()
            );
            let fix = p.keep_fix(w, &JSON);
            p.finding(None, Rule::TypeChanged, why, fix, Some(leaf));
        };
        match w {
            Shape::Opaque => self.unchecked(),
            Shape::Bin | Shape::Ext(_) => {
                let leaf = self.sampler().value(w);
                refuse(self, &describe(w), leaf);
            }
            Shape::Option(inner) => self.within(None, Step::Some, |p| p.read_as_json(inner)),
            Shape::Array(e) => self.within(Some(Seg::Elem), Step::Elem, |p| p.read_as_json(e)),
            Shape::Tuple(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.within(Some(Seg::Item(i)), Step::Item(i), |p| p.read_as_json(item));
                }
            }
            Shape::Map(k, v) => {
                // Keys a JSON value takes: strings and integers (a unit
                // variant's name is a string).
                let mut sampler = self.sampler();
                let bad_key = [sampler.value(k), sampler.seeded(k, 1)]
                    .into_iter()
                    .find(|key| !matches!(key, Value::Str(_) | Value::Int(_)));
                let opaque = matches!(
                    Self::resolve(self.writer, k),
                    Some((Shape::Opaque, _)) | None
                );
                if let Some(leaf) = bad_key.filter(|_| !opaque) {
                    self.within(Some(Seg::Key), Step::Key, |p| {
                        refuse(p, &format!("{} map keys", describe(k)), leaf);
                    });
                }
                self.within(Some(Seg::Value), Step::Value, |p| p.read_as_json(v));
            }
            Shape::Record(rec) => self.record_read_as_json(rec),
            Shape::Enum(Enum { variants, .. }) | Shape::Union(Union { variants, .. }) => {
                for (i, v) in variants.iter().enumerate() {
                    self.within(Some(Seg::Name(&v.name)), Step::Variant(i), |p| {
                        match &v.payload {
                            Payload::Unit => {}
                            Payload::Newtype(s) => p.read_as_json(s),
                            Payload::Tuple(items) => {
                                for (j, item) in items.iter().enumerate() {
                                    p.within(Some(Seg::Item(j)), Step::Item(j), |p| {
                                        p.read_as_json(item)
                                    });
                                }
                            }
                            Payload::Record(rec) => p.record_read_as_json(rec),
                        }
                    });
                }
            }
            _ => {}
        }
        if let Some(name) = name {
            self.visiting_json.remove(name);
        }
    }

    fn record_read_as_json(&mut self, rec: &'a Record) {
        for (i, f) in rec.fields.iter().enumerate() {
            self.within(Some(Seg::Name(&f.name)), Step::Field(i), |p| {
                p.read_as_json(&f.shape)
            });
        }
    }

    fn nil_rejected(&mut self, wi: &'a Shape, r: &'a Shape) {
        // Right under another `Option`, this nil is the outer `None`
        // (`Option<Option<T>>` writes `Some(None)` as nil).
        if self.steps.last() == Some(&Step::Some) {
            return;
        }
        let why = format!(
            "{} writes nil for `None`, which {}'s `{}` refuses (only an `Option` reads nil)",
            self.writer_side(),
            self.reader_side(),
            describe(r)
        );
        let fix = match self.dir {
            Direction::Forward => format!(
                "readers first: keep writing `{0}` until every reader has `Option<{0}>`",
                describe(wi)
            ),
            Direction::Backward => format!(
                "keep `Option<{}>` in the reader: old writers write nil",
                describe(r)
            ),
        };
        self.finding(None, Rule::NilRejected, why, fix, Some(Value::Nil));
    }

    fn int(&mut self, ws: bool, wb: u8, rs: bool, rb: u8) {
        let (wmin, wmax) = write_range(ws, wb);
        let (rmin, rmax) = read_range(rs, rb);
        let witness = if wmax > rmax {
            rmax + 1
        } else if wmin < rmin {
            rmin - 1
        } else {
            return;
        };
        let name = |s: bool, b: u8| format!("{}{b}", if s { 'i' } else { 'u' });
        let (wname, rname) = (name(ws, wb), name(rs, rb));
        let rule = if ws == rs {
            Rule::IntegerNarrowed
        } else {
            Rule::IntegerSignChanged
        };
        let why = format!(
            "{} writes any {wname}, {}'s {rname} takes {rmin} to {rmax}: it refuses \
             {witness}",
            self.writer_side(),
            self.reader_side()
        );
        let both = wider_int(wmin.min(rmin), wmax.max(rmax));
        let fix = match self.dir {
            Direction::Backward if both == wname => {
                format!("the new reader must take every {wname} old writers wrote: keep `{wname}`")
            }
            Direction::Backward => format!(
                "the new reader must take every {wname} old writers wrote: keep `{wname}`, or \
                 use `{both}`, which holds both"
            ),
            Direction::Forward => {
                format!("readers first: keep writing `{rname}` until every reader takes `{both}`")
            }
        };
        self.finding(None, rule, why, fix, Some(Value::int(witness)));
    }

    fn int_to_float(&mut self, signed: bool, bits: u8, r: &'a Shape) {
        let (wmin, wmax) = write_range(signed, bits);
        let mantissa: u32 = if *r == Shape::F32 { 24 } else { 53 };
        let exact = 1i128 << mantissa;
        let witness = if wmax > exact {
            exact + 1
        } else if wmin < -exact {
            -exact - 1
        } else {
            return;
        };
        let read_as = if mantissa == 24 {
            format!("{:?}", witness as f32)
        } else {
            format!("{:?}", witness as f64)
        };
        let why = format!(
            "{}'s {} reads integers by rounding them: {} writes \
             {witness}, read as {read_as}",
            self.reader_side(),
            describe(r),
            self.writer_side(),
        );
        let w = Shape::int(signed, bits);
        let fix = self.keep_fix(&w, r);
        self.finding(
            None,
            Rule::IntegerFloatChanged,
            why,
            fix,
            Some(Value::int(witness)),
        );
    }

    // ---- records ----

    fn record(&mut self, w: &'a Record, r: &'a Record) {
        if self.policy {
            self.reservations_record(w, r);
        }
        match (w.layout, r.layout) {
            (Layout::Map, _) if is_tuple_like(r) => {
                let why = format!(
                    "{} writes a map by field name, {} is a tuple struct, which reads arrays \
                     only",
                    self.writer_side(),
                    self.reader_side()
                );
                let leaf = self.sampler().value(&Shape::Record(w.clone()));
                self.finding(
                    None,
                    Rule::LayoutChanged,
                    why,
                    layout_fix(w, r, self.dir),
                    Some(leaf),
                );
            }
            (Layout::Map, _) => self.by_name(w, r),
            (_, Layout::Map) => {
                let why = format!(
                    "{} writes an array ({}), {} has the map layout and reads an array by \
                     its declaration order, which its shape does not record: it reads the \
                     wrong fields unless that order is the writer's",
                    self.writer_side(),
                    w.layout.as_str(),
                    self.reader_side()
                );
                let leaf = self.seeded_record(w);
                self.finding(
                    None,
                    Rule::LayoutChanged,
                    why,
                    layout_fix(w, r, self.dir),
                    Some(leaf),
                );
            }
            (_, Layout::Array) => self.positional(w, r),
            (_, Layout::Keyed) => self.keyed(w, r),
        }
    }

    /// The writer's record with distinct scalars at each position, so that
    /// a value read at the wrong position shows.
    fn seeded_record(&self, w: &Record) -> Value {
        self.seeded_record_with(w, None)
    }

    /// [`seeded_record`](Self::seeded_record), the field named `valued`
    /// (an `Option`) written with a value instead of `nil`.
    fn seeded_record_with(&self, w: &Record, valued: Option<&str>) -> Value {
        let mut s = self.sampler();
        let values = w
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let shape = match &f.shape {
                    Shape::Option(inner) if valued == Some(f.name.as_str()) => &**inner,
                    shape => shape,
                };
                Some(s.seeded(shape, i as u32 + 1))
            })
            .collect();
        s.record_of(w, values)
    }

    fn field(&mut self, i: usize, name: &'a str, f: impl FnOnce(&mut Self)) {
        self.within(Some(Seg::Name(name)), Step::Field(i), f);
    }

    /// A map read by name (decode.rs map_block): unknown keys skipped,
    /// missing ones `None`, their default, or an error.
    fn by_name(&mut self, w: &'a Record, r: &'a Record) {
        for rf in &r.fields {
            match w.fields.iter().position(|f| f.name == rf.name) {
                Some(i) => {
                    let wf = &w.fields[i];
                    self.field(i, &rf.name, |p| p.shape(&wf.shape, &rf.shape));
                }
                None if rf.optional => {}
                None => self.missing(w, r, rf),
            }
        }
    }

    /// `rf`, required by the reader, is not written by the writer.
    fn missing(&mut self, w: &'a Record, r: &'a Record, rf: &'a FieldShape) {
        let leaf = self.sampler().value(&Shape::Record(w.clone()));
        match self.dir {
            Direction::Backward => {
                let why = format!(
                    "the new reader requires `{}`, which the old writer does not write: the \
                     read fails",
                    rf.name
                );
                let mut fix = format!(
                    "give `{}` a default with `#[codec(default)]`, or make it `Option<{}>`",
                    rf.name,
                    describe(&rf.shape)
                );
                // One field gone and one come with the same shape: a rename.
                if w.layout == Layout::Map
                    && let Some(old) = w
                        .fields
                        .iter()
                        .find(|f| f.shape == rf.shape && r.field(&f.name, None).is_none())
                {
                    fix.push_str(&format!(
                        "; if it is `{0}` renamed, keep the wire name: `#[codec(rename = \"{0}\")]`",
                        old.name
                    ));
                }
                self.finding(
                    Some(&rf.name),
                    Rule::FieldAddedRequired,
                    why,
                    fix,
                    Some(leaf),
                );
            }
            Direction::Forward => {
                let why = format!(
                    "the old reader requires `{}`, which the new writer no longer writes: \
                     the read fails",
                    rf.name
                );
                let fix = format!(
                    "keep writing `{}` until every reader has it as an `Option` or with \
                     `#[codec(default)]`; then remove it and reserve it",
                    rf.name
                );
                self.finding(
                    Some(&rf.name),
                    Rule::FieldRemovedRequired,
                    why,
                    fix,
                    Some(leaf),
                );
            }
        }
    }

    /// The element at `p` of the array the writer `w` writes: `Some(field
    /// index)`, or `None` for a keyed gap (`nil`).
    fn slot(w: &Record, p: u64) -> Option<usize> {
        match w.layout {
            Layout::Keyed => w
                .fields
                .iter()
                .position(|f| f.key.map(u64::from) == Some(p)),
            _ => usize::try_from(p).ok().filter(|&p| p < w.fields.len()),
        }
    }

    /// The position or key of `name` in the array of `rec`.
    fn place(rec: &Record, name: &str) -> Option<u64> {
        let i = rec.fields.iter().position(|f| f.name == name)?;
        match rec.layout {
            Layout::Keyed => rec.fields[i].key.map(u64::from),
            _ => Some(i as u64),
        }
    }

    fn array_len(w: &Record) -> u64 {
        match w.layout {
            Layout::Keyed => keyed_len(w),
            _ => w.fields.len() as u64,
        }
    }

    /// Whether the writer's `wf` at place `p` and the reader's `rf` there
    /// are different fields that each have another place on the other
    /// side: a shift, not a rename in place.
    fn shifted(w: &Record, r: &Record, wf: &FieldShape, rf: &FieldShape, p: u64) -> bool {
        wf.name != rf.name
            && (Self::place(w, &rf.name).is_some_and(|q| q != p)
                || Self::place(r, &wf.name).is_some_and(|q| q != p))
    }

    /// An array read by position (decode.rs seq_block).
    fn positional(&mut self, w: &'a Record, r: &'a Record) {
        let len = Self::array_len(w);
        let both_array = w.layout == Layout::Array;
        let mut shifted = false;
        for (p, rf) in r.fields.iter().enumerate() {
            let p64 = p as u64;
            if p64 >= len {
                if !rf.optional && !shifted {
                    self.missing(w, r, rf);
                }
                continue;
            }
            match Self::slot(w, p64) {
                None => {
                    if !self.accepts_nil(&rf.shape) {
                        let why = format!(
                            "{} (keyed) writes nil at position {p}, where no field has that \
                             key; {}'s `{}` is at that position and refuses nil",
                            self.writer_side(),
                            self.reader_side(),
                            rf.name
                        );
                        let leaf = self.sampler().value(&Shape::Record(w.clone()));
                        let fix = layout_fix(w, r, self.dir);
                        self.finding(Some(&rf.name), Rule::LayoutChanged, why, fix, Some(leaf));
                    }
                }
                Some(i) => {
                    let wf = &w.fields[i];
                    if Self::shifted(w, r, wf, rf, p64) {
                        if !shifted {
                            shifted = true;
                            self.shift(w, r, p, wf, rf);
                        }
                    } else {
                        self.field(i, &rf.name, |s| s.shape(&wf.shape, &rf.shape));
                    }
                }
            }
        }
        if len > r.fields.len() as u64 && !shifted {
            let extra = (r.fields.len() as u64..len)
                .find_map(|p| Self::slot(w, p))
                .map_or("", |i| w.fields[i].name.as_str());
            let (rule, fix) = match (both_array, self.dir) {
                (true, Direction::Forward) => (
                    Rule::FieldAppended,
                    format!(
                        "an `as_array` struct cannot grow for older readers: give the fields \
                         `#[codec(key = N)]` (a keyed reader skips keys it does not know), or \
                         update every reader before a writer sends `{extra}`"
                    ),
                ),
                (true, Direction::Backward) => (
                    Rule::FieldDeleted,
                    format!(
                        "keep `{extra}` at its position (it may become an `Option` the writer \
                         leaves `None`)"
                    ),
                ),
                (false, _) => (Rule::LayoutChanged, layout_fix(w, r, self.dir)),
            };
            let why = format!(
                "{} writes an array of {len}, {} takes at most {} elements and refuses a \
                 longer one",
                self.writer_side(),
                self.reader_side(),
                r.fields.len()
            );
            let leaf = self.sampler().value(&Shape::Record(w.clone()));
            self.finding(Some(extra), rule, why, fix, Some(leaf));
        }
    }

    /// A field read at position `p` that the writer wrote elsewhere.
    fn shift(&mut self, w: &'a Record, r: &'a Record, p: usize, wf: &FieldShape, rf: &FieldShape) {
        let (old, new) = match self.dir {
            Direction::Backward => (w, r),
            Direction::Forward => (r, w),
        };
        let (rule, name) = if w.layout == Layout::Array {
            classify(old, new).unwrap_or((Rule::FieldReordered, &rf.name))
        } else {
            (Rule::LayoutChanged, &rf.name)
        };
        let why = format!(
            "position {p} holds `{}` in {} and `{}` in {}: the reader reads `{}`'s value as \
             `{}` (fields are read by position), or \
             refuses it where the types differ",
            wf.name,
            self.writer_side(),
            rf.name,
            self.reader_side(),
            wf.name,
            rf.name
        );
        let fix = match rule {
            Rule::FieldInserted => format!(
                "append `{name}` after the last field instead of inserting it (then old \
                 readers still refuse the longer array: see FIELD_APPENDED), or give the \
                 fields `#[codec(key = N)]`"
            ),
            Rule::FieldDeleted => format!(
                "keep `{name}` at its position (it may become an `Option` the writer leaves \
                 `None`), or give the fields `#[codec(key = N)]`"
            ),
            Rule::FieldReordered => "restore the order: in `as_array`, a field's position is \
                                     what is written"
                .to_owned(),
            _ => layout_fix(w, r, self.dir),
        };
        let leaf = self.seeded_record(w);
        self.finding(Some(name), rule, why, fix, Some(leaf));
    }

    /// An array read by key (decode.rs seq_block, keyed): element N is the
    /// field of key N, others skipped; nil at a default field is its
    /// default.
    fn keyed(&mut self, w: &'a Record, r: &'a Record) {
        let len = Self::array_len(w);
        for rf in &r.fields {
            let Some(k) = rf.key.map(u64::from) else {
                continue;
            };
            let slot = if k < len { Self::slot(w, k) } else { None };
            let Some(i) = slot else {
                // The writer has the field under another key: the reader
                // finds nothing (or nil) at its own, and loses the value.
                if w.layout == Layout::Keyed
                    && let Some(moved) = w
                        .fields
                        .iter()
                        .find(|f| f.name == rf.name && f.key != rf.key)
                {
                    let why = format!(
                        "`{}` is written under key {} by {} and read under key {} by {}: the \
                         reader finds nothing there, and loses the value",
                        rf.name,
                        moved.key.unwrap_or_default(),
                        self.writer_side(),
                        k,
                        self.reader_side()
                    );
                    // The moved field written with a value, not `nil`.
                    let leaf = self.seeded_record_with(w, Some(&rf.name));
                    self.finding(
                        Some(&rf.name),
                        Rule::FieldKeyChanged,
                        why,
                        "keep each field's `#[codec(key = N)]`; a new field takes a key never used"
                            .to_owned(),
                        Some(leaf),
                    );
                    continue;
                }
                // Past the end, or a gap (nil).
                if !rf.optional && (k >= len || !self.accepts_nil(&rf.shape)) {
                    self.missing(w, r, rf);
                }
                continue;
            };
            let wf = &w.fields[i];
            if Self::shifted(w, r, wf, rf, k) {
                let (rule, fix) = if w.layout == Layout::Keyed {
                    (
                        Rule::FieldKeyChanged,
                        "keep each field's `#[codec(key = N)]`; a new field takes a key never \
                         used"
                            .to_owned(),
                    )
                } else {
                    (Rule::LayoutChanged, layout_fix(w, r, self.dir))
                };
                let why = format!(
                    "element {k} holds `{}` in {} and `{}` in {}: the reader reads `{}`'s \
                     value as `{}`, or refuses it where the types differ",
                    wf.name,
                    self.writer_side(),
                    rf.name,
                    self.reader_side(),
                    wf.name,
                    rf.name
                );
                let leaf = self.seeded_record(w);
                self.finding(Some(&rf.name), rule, why, fix, Some(leaf));
                continue;
            }
            self.field(i, &rf.name, |s| match &wf.shape {
                // nil at a default field is its default.
                Shape::Option(inner) if rf.optional && !s.accepts_nil(&rf.shape) => {
                    s.within(None, Step::Some, |s| s.shape(inner, &rf.shape));
                }
                _ => s.shape(&wf.shape, &rf.shape),
            });
        }
    }

    /// Reservations, old (`w`, this is the BACKWARD pass) against new.
    fn reservations_record(&mut self, old: &'a Record, new: &'a Record) {
        if old.layout != new.layout {
            return;
        }
        match old.layout {
            Layout::Map => {
                let old_names = old.fields.iter().map(|f| f.name.as_str());
                let new_names: Vec<&str> = new.fields.iter().map(|f| f.name.as_str()).collect();
                self.reservations(
                    old_names.map(|n| (n.to_owned(), Reserved::Name(n.to_owned()))),
                    &new_names
                        .iter()
                        .map(|n| Reserved::Name((*n).to_owned()))
                        .collect::<Vec<_>>(),
                    &old.reserved,
                    &new.reserved,
                    "field",
                    plain,
                );
            }
            Layout::Keyed => {
                let key_name = |rec: &'a Record, k: u32| {
                    rec.fields
                        .iter()
                        .find(|f| f.key == Some(k))
                        .map_or_else(|| k.to_string(), |f| f.name.clone())
                };
                let old_keys = old
                    .fields
                    .iter()
                    .filter_map(|f| Some((f.name.clone(), Reserved::Int(f.key?))));
                let new_keys: Vec<Reserved> = new
                    .fields
                    .iter()
                    .filter_map(|f| Some(Reserved::Int(f.key?)))
                    .collect();
                self.reservations(
                    old_keys,
                    &new_keys,
                    &old.reserved,
                    &new.reserved,
                    "key",
                    |r| match r {
                        Reserved::Int(k) => key_name(new, *k),
                        Reserved::Name(n) => n.clone(),
                    },
                );
            }
            Layout::Array => {
                // A position reserved in the old shape, taken in the new.
                for (p, f) in new.fields.iter().enumerate() {
                    let Ok(p) = u32::try_from(p) else { break };
                    if old.reserved.contains(&Reserved::Int(p)) {
                        self.reused(&f.name, &format!("position {p}"), p.to_string());
                    }
                }
            }
        }
    }

    /// Reports what the old side had (`old_items`: a path name and the
    /// name, key or tag) or reserved and the new side neither has
    /// (`new_items`) nor reserves, and what the new side has that the old
    /// reserved.
    fn reservations(
        &mut self,
        old_items: impl Iterator<Item = (String, Reserved)>,
        new_items: &[Reserved],
        old_reserved: &[Reserved],
        new_reserved: &[Reserved],
        what: &str,
        new_path: impl Fn(&Reserved) -> String,
    ) {
        let mut removed: Vec<(String, Reserved, bool)> = old_items
            .filter(|(_, item)| !new_items.contains(item) && !new_reserved.contains(item))
            .map(|(path, item)| (path, item, false))
            .collect();
        removed.extend(
            old_reserved
                .iter()
                .filter(|item| !new_items.contains(item) && !new_reserved.contains(item))
                .map(|item| (plain(item), item.clone(), true)),
        );
        for (path, item, dropped) in removed {
            let text = reserved_text(&item);
            let why = if dropped {
                format!(
                    "the old shape reserved {what} {text}, the new one no longer does: a \
                     later version may reuse it, and misread data written before it was \
                     removed"
                )
            } else {
                format!(
                    "{what} {text} was removed without reserving it: a later version may \
                     reuse it for something else and misread data the old version wrote"
                )
            };
            let fix = format!("reserve it: `#[codec(reserved({}))]`", reserved_attr(&item));
            self.finding_in(
                Some(&path),
                Rule::RemovedNotReserved,
                Direction::Backward,
                why,
                fix,
                None,
            );
        }
        for item in new_items {
            if old_reserved.contains(item) {
                let path = new_path(item);
                self.reused(
                    &path,
                    &format!("{what} {}", reserved_text(item)),
                    reserved_attr(item),
                );
            }
        }
    }

    fn reused(&mut self, path: &str, what: &str, attr: String) {
        let why = format!(
            "{what} was reserved by the old shape (it belonged to something removed): data \
             written before the removal is read as the new one"
        );
        let fix = format!("pick a name, key or tag never used; keep `#[codec(reserved({attr}))]`");
        self.finding_in(
            Some(path),
            Rule::ReservedReused,
            Direction::Backward,
            why,
            fix,
            None,
        );
    }

    // ---- enums and unions ----

    fn enumeration(&mut self, w: &'a Enum, r: &'a Enum) {
        if self.policy {
            let old_items = w
                .variants
                .iter()
                .map(|v| (v.name.clone(), Reserved::Name(v.name.clone())));
            let new_items: Vec<Reserved> = r
                .variants
                .iter()
                .map(|v| Reserved::Name(v.name.clone()))
                .collect();
            self.reservations(
                old_items,
                &new_items,
                &w.reserved,
                &r.reserved,
                "variant",
                plain,
            );
        }
        for (i, wv) in w.variants.iter().enumerate() {
            if let Some(rv) = r.variants.iter().find(|v| v.name == wv.name) {
                self.within(Some(Seg::Name(&wv.name)), Step::Variant(i), |p| {
                    p.payload(wv, rv, false);
                });
                continue;
            }
            let payload = self.sampler().payload(&wv.payload);
            let leaf = enum_value(wv, payload);
            let renamed = r
                .variants
                .iter()
                .find(|v| v.payload == wv.payload && !w.variants.iter().any(|x| x.name == v.name));
            let (rule, fix) = match (renamed, self.dir) {
                (Some(other), Direction::Backward) => (
                    Rule::VariantRenamed,
                    format!(
                        "keep the wire name: `#[codec(rename = \"{}\")]` on `{}`",
                        wv.name, other.name
                    ),
                ),
                (Some(other), Direction::Forward) => (
                    Rule::VariantRenamed,
                    format!(
                        "keep the wire name: `#[codec(rename = \"{}\")]` on `{}`",
                        other.name, wv.name
                    ),
                ),
                (None, Direction::Backward) => (
                    Rule::VariantRemoved,
                    format!(
                        "keep `{}` (a named enum refuses variants it does not have); reserve \
                         it once no writer sends it",
                        wv.name
                    ),
                ),
                (None, Direction::Forward) => (
                    Rule::VariantAdded,
                    format!(
                        "readers first: ship readers that know `{}` before any writer sends \
                         it (a named enum refuses variants it does not know; a \
                         `#[codec(union)]` with a catch-all `#[codec(other)]` variant takes \
                         them)",
                        wv.name
                    ),
                ),
            };
            let why = format!(
                "{} writes the variant `{}`, which {} does not have: a named enum refuses it",
                self.writer_side(),
                wv.name,
                self.reader_side()
            );
            self.finding(Some(&wv.name), rule, why, fix, Some(leaf));
        }
    }

    fn union(&mut self, w: &'a Union, r: &'a Union) {
        if self.policy {
            let old_items = w
                .variants
                .iter()
                .filter_map(|v| Some((v.name.clone(), Reserved::Int(v.tag?))));
            let new_items: Vec<Reserved> = r
                .variants
                .iter()
                .filter_map(|v| Some(Reserved::Int(v.tag?)))
                .collect();
            self.reservations(
                old_items,
                &new_items,
                &w.reserved,
                &r.reserved,
                "tag",
                |t| match t {
                    Reserved::Int(t) => r
                        .variants
                        .iter()
                        .find(|v| v.tag == Some(*t))
                        .map_or_else(|| t.to_string(), |v| v.name.clone()),
                    Reserved::Name(n) => n.clone(),
                },
            );
        }
        for (i, wv) in w.variants.iter().enumerate() {
            let Some(tag) = wv.tag else { continue };
            if let Some(rv) = r.variants.iter().find(|v| v.tag == Some(tag)) {
                self.within(Some(Seg::Name(&wv.name)), Step::Variant(i), |p| {
                    p.payload(wv, rv, true);
                });
                continue;
            }
            if r.catch_all.is_some() {
                // Taken by the catch-all, tag and payload kept raw.
                continue;
            }
            let payload = self.sampler().payload(&wv.payload);
            let leaf = union_value(wv, payload);
            let moved = r
                .variants
                .iter()
                .find(|v| v.name == wv.name && v.tag.is_some());
            let (rule, fix) = match (moved, self.dir) {
                (Some(other), _) => {
                    let (old, new) = match self.dir {
                        Direction::Backward => (tag, other.tag.unwrap_or(0)),
                        Direction::Forward => (other.tag.unwrap_or(0), tag),
                    };
                    (
                        Rule::VariantTagChanged,
                        format!(
                            "keep `#[codec(tag = {old})]` on `{}` (it was changed to {new}); a \
                             tag is the variant's identity",
                            wv.name
                        ),
                    )
                }
                (None, Direction::Backward) => (
                    Rule::VariantRemoved,
                    format!(
                        "keep `{}`, or give the reader a catch-all `#[codec(other)]` variant \
                         that keeps unknown tags; reserve the tag: `#[codec(reserved({tag}))]`",
                        wv.name
                    ),
                ),
                (None, Direction::Forward) => (
                    Rule::VariantAdded,
                    format!(
                        "readers first: ship readers with a catch-all `#[codec(other)]` \
                         variant (or that know tag {tag}) before any writer sends `{}`",
                        wv.name
                    ),
                ),
            };
            let why = format!(
                "{} writes `{}` with tag {tag}, which {} has no variant for and no catch-all \
                 to take it",
                self.writer_side(),
                wv.name,
                self.reader_side()
            );
            self.finding(Some(&wv.name), rule, why, fix, Some(leaf));
        }
    }

    /// A variant's payload, written by `wv`'s writer and read as `rv`'s
    /// (decode.rs variant_value). In a union a unit variant is `nil`.
    fn payload(&mut self, wv: &'a VariantShape, rv: &'a VariantShape, union: bool) {
        match (&wv.payload, &rv.payload) {
            (Payload::Unit, Payload::Unit) => {}
            (Payload::Newtype(a), Payload::Newtype(b)) => self.shape(a, b),
            (Payload::Record(a), Payload::Record(b)) => self.record(a, b),
            (Payload::Tuple(a), Payload::Tuple(b)) => self.tuple_payload(wv, a, b),
            (Payload::Unit, Payload::Newtype(b)) if union => self.shape(&NIL, b),
            (Payload::Newtype(a), Payload::Unit) if union => self.shape(a, &NIL),
            (Payload::Unit, _) if !union => {
                let why = format!(
                    "{} writes the bare name `{}`, {}'s `{}` has data and refuses it",
                    self.writer_side(),
                    wv.name,
                    self.reader_side(),
                    rv.name
                );
                let fix = "keep the variant's payload; a variant with other data is a new \
                           variant with a new name"
                    .to_owned();
                self.finding(None, Rule::TypeChanged, why, fix, Some(Value::Nil));
            }
            (wp, rp) => {
                let mut sampler = self.sampler();
                let mut candidates = vec![sampler.payload(wp)];
                if let Payload::Newtype(s) = wp {
                    candidates.push(sampler.seeded(s, 1));
                    if let Shape::Option(inner) = s {
                        candidates.push(sampler.value(inner));
                    }
                }
                let reader = Shape::Union(Union::new(
                    vec![VariantShape {
                        name: rv.name.clone(),
                        tag: Some(0),
                        payload: rp.clone(),
                    }],
                    None,
                    Vec::new(),
                ));
                for leaf in candidates {
                    let value = Value::Array(vec![Value::int(0), leaf.clone()]);
                    match Simulator::new(self.reader).read(&reader, &value) {
                        Outcome::Rejected(reason) | Outcome::Misread(reason) => {
                            let why = format!(
                                "{}'s `{}` has another payload than {}'s: {reason}",
                                self.writer_side(),
                                wv.name,
                                self.reader_side()
                            );
                            let fix = "keep the variant's payload; a variant with other data \
                                       is a new variant"
                                .to_owned();
                            self.finding(None, Rule::TypeChanged, why, fix, Some(leaf));
                            return;
                        }
                        Outcome::Unknown => {
                            self.unchecked();
                            return;
                        }
                        Outcome::Ok => {}
                    }
                }
            }
        }
    }

    /// A tuple variant: an array by position, longer refused, missing
    /// trailing `Option`s `None` (decode.rs seq_block).
    fn tuple_payload(&mut self, wv: &'a VariantShape, a: &'a [Shape], b: &'a [Shape]) {
        let shorter_ok = b[a.len().min(b.len())..].iter().all(accepts_missing);
        if a.len() > b.len() || !shorter_ok {
            let why = format!(
                "{}'s `{}` writes {} items, {} reads {} (more are refused, fewer only when \
                 the missing ones are `Option`s)",
                self.writer_side(),
                wv.name,
                a.len(),
                self.reader_side(),
                b.len()
            );
            let fix = "keep the variant's items; add only trailing `Option`s, and readers first"
                .to_owned();
            let leaf = self.sampler().payload(&wv.payload);
            self.finding(None, Rule::TupleLengthChanged, why, fix, Some(leaf));
            return;
        }
        for (i, (wi, ri)) in a.iter().zip(b).enumerate() {
            self.within(Some(Seg::Item(i)), Step::Item(i), |p| p.shape(wi, ri));
        }
    }
}

/// The fix of a layout change.
fn layout_fix(w: &Record, r: &Record, dir: Direction) -> String {
    let (old, new) = match dir {
        Direction::Backward => (w.layout, r.layout),
        Direction::Forward => (r.layout, w.layout),
    };
    let how = |l: Layout| match l {
        Layout::Map => "the map layout (no `as_array`, no `key = N`)",
        Layout::Array => "`#[codec(as_array)]`",
        Layout::Keyed => "`#[codec(key = N)]` on every field, each key unchanged",
    };
    if old == new {
        format!("keep {} with every field where it was", how(old))
    } else {
        format!("keep {} (it was changed to {})", how(old), how(new))
    }
}

/// The array-layout change that moved fields, old to new: a reorder of
/// the fields both have, an insertion before a field both have, a
/// deletion before one; with the field it is about.
fn classify<'r>(old: &'r Record, new: &'r Record) -> Option<(Rule, &'r String)> {
    let has = |rec: &Record, name: &str| rec.fields.iter().any(|f| f.name == name);
    let common_old: Vec<&String> = old
        .fields
        .iter()
        .map(|f| &f.name)
        .filter(|n| has(new, n))
        .collect();
    let common_new: Vec<&String> = new
        .fields
        .iter()
        .map(|f| &f.name)
        .filter(|n| has(old, n))
        .collect();
    if let Some(i) = (0..common_new.len()).find(|&i| common_old.get(i) != common_new.get(i)) {
        return Some((Rule::FieldReordered, common_new[i]));
    }
    // A field before the last common one, on one side only.
    let before_last_common = |rec: &'r Record, other: &Record| {
        let last = rec.fields.iter().rposition(|f| has(other, &f.name))?;
        rec.fields[..last]
            .iter()
            .find(|f| !has(other, &f.name))
            .map(|f| &f.name)
    };
    if let Some(name) = before_last_common(new, old) {
        return Some((Rule::FieldInserted, name));
    }
    if let Some(name) = before_last_common(old, new) {
        return Some((Rule::FieldDeleted, name));
    }
    None
}

/// A reserved item as text: `"name"` or `3`.
fn reserved_text(r: &Reserved) -> String {
    match r {
        Reserved::Int(n) => n.to_string(),
        Reserved::Name(n) => format!("`{n}`"),
    }
}

/// A reserved item as a path segment: the name or the number.
fn plain(r: &Reserved) -> String {
    match r {
        Reserved::Int(n) => n.to_string(),
        Reserved::Name(n) => n.clone(),
    }
}

/// A reserved item as the attribute takes it: `"name"` or `3`.
fn reserved_attr(r: &Reserved) -> String {
    match r {
        Reserved::Int(n) => n.to_string(),
        Reserved::Name(n) => format!("\"{n}\""),
    }
}

/// The Rust-ish name of a shape, for messages.
fn describe(s: &Shape) -> String {
    match s {
        Shape::Nil => "()".into(),
        Shape::Bool => "bool".into(),
        Shape::Int { signed, bits } => format!("{}{bits}", if *signed { 'i' } else { 'u' }),
        Shape::F32 => "f32".into(),
        Shape::F64 => "f64".into(),
        Shape::Str => "String".into(),
        Shape::Bin => "bytes".into(),
        Shape::Ext(code) => format!("extension {code}"),
        Shape::Array(e) => format!("Vec<{}>", describe(e)),
        Shape::Tuple(items) => format!(
            "({})",
            items.iter().map(describe).collect::<Vec<_>>().join(", ")
        ),
        Shape::Map(k, v) => format!("map<{}, {}>", describe(k), describe(v)),
        Shape::Option(inner) => format!("Option<{}>", describe(inner)),
        Shape::Ref(name) => format!("codec {name}"),
        Shape::Record(r) => format!("struct ({} layout)", r.layout.as_str()),
        Shape::Enum(_) => "enum".into(),
        Shape::Union(_) => "union".into(),
        Shape::Json => "JSON value".into(),
        Shape::Opaque => "opaque".into(),
    }
}

/// The smallest integer type that holds `min..=max`.
fn wider_int(min: i128, max: i128) -> &'static str {
    const TYPES: [(&str, bool, u8); 8] = [
        ("u8", false, 8),
        ("i8", true, 8),
        ("u16", false, 16),
        ("i16", true, 16),
        ("u32", false, 32),
        ("i32", true, 32),
        ("u64", false, 64),
        ("i64", true, 64),
    ];
    TYPES
        .iter()
        .find(|(_, s, b)| {
            let (lo, hi) = read_range(*s, *b);
            lo <= min && max <= hi
        })
        .map_or("i128", |(name, _, _)| name)
}

#[cfg(test)]
mod tests;
