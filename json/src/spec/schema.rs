//! Export of specs as JSON Schema documents, draft 2020-12 (feature
//! `schema`).
//!
//! [`Spec::to_json_schema`] returns the schema as a [`JsObj`] when every
//! constraint of the spec has a JSON Schema counterpart, and a
//! [`SchemaExportError`] listing those that do not otherwise;
//! [`Spec::json_schema`] always returns a schema, with the list of what it
//! leaves out ([`SchemaExport`]). Print either with `to_string()` (compact)
//! or `format!("{:#}")` (indented).
//!
//! ```
//! use codecbus_json::spec::{array_of, integer, string};
//! use codecbus_json::{jsobj, jsobj_spec};
//!
//! let spec = jsobj_spec! {
//!     "sku": string().length(1..=16),
//!     "qty": integer().range(1..=100),
//!     "note"?: string().nullable(),
//! };
//! let schema = spec.to_json_schema().unwrap();
//! assert_eq!(schema, jsobj! {
//!     "$schema": "https://json-schema.org/draft/2020-12/schema",
//!     "type": "object",
//!     "properties": {
//!         "note": { "type": ["string", "null"] },
//!         "qty": { "type": "integer", "minimum": 1, "maximum": 100 },
//!         "sku": { "type": "string", "minLength": 1, "maxLength": 16 },
//!     },
//!     "required": ["qty", "sku"],
//!     "additionalProperties": false,
//! });
//!
//! // A user check has no counterpart: the strict export refuses it, the
//! // lenient one says where it left it out.
//! let even = jsobj_spec! { "n": integer().check("an even number", |v| v.as_i64().is_some_and(|i| i % 2 == 0)) };
//! let err = even.to_json_schema().unwrap_err();
//! assert_eq!(err.untranslated()[0].pointer(), "/properties/n");
//! let export = even.json_schema();
//! assert_eq!(export.untranslated()[0].what(), "user check: an even number");
//! assert!(export.schema().to_string().contains(r#""$comment""#));
//! ```
//!
//! # Mapping
//!
//! | spec | JSON Schema |
//! |---|---|
//! | [`any`](super::any), [`null`](super::null), [`boolean`](super::boolean) | `{}`, `type: "null"`, `type: "boolean"` |
//! | [`string`](super::string) | `type: "string"`, `minLength`, `maxLength` (both in characters), `pattern` |
//! | [`integer`](super::integer) | `type: "integer"`, `minimum`, `maximum` (the whole `i64` and `u64` range) |
//! | [`float`](super::float), [`number`](super::number) | `type: "number"`, `minimum` or `exclusiveMinimum`, `maximum` or `exclusiveMaximum` |
//! | [`one_of_values`](super::one_of_values) | `enum` |
//! | [`array_of`](super::array_of) | `type: "array"`, `items`, `minItems`, `maxItems`, `uniqueItems` |
//! | [`tuple`](super::tuple()) | `type: "array"`, `prefixItems`, `minItems` = `maxItems` |
//! | [`object`](super::object) | `type: "object"`, `properties`, `required`, `additionalProperties: false` when strict |
//! | [`map_of`](super::map_of) | `type: "object"`, `propertyNames`, `additionalProperties`, `minProperties`, `maxProperties` |
//! | [`one_of`](super::one_of) (at least one matches) | `anyOf` |
//! | [`nullable`](Spec::nullable) | `"null"` added to `type`, or `anyOf` with `{"type": "null"}` |
//! | [`named`](Spec::named) | an entry of `$defs` under the name, and a `$ref` to it |
//! | [`Spec::recursive`] | an entry of `$defs` (named `recursive`, or by the spec's name), and `$ref`s to it |
//! | a user [`check`](Spec::check) | nothing: reported, and a `$comment` where it was |
//!
//! A spec that accepts nothing (an empty range or set, a recursive spec that
//! no longer exists) exports as `{"not": {}}`. Names of `$defs` entries keep
//! ASCII letters, digits, `-`, `_` and `.`, replace anything else with `_`,
//! and get a `-2`, `-3` suffix when two different specs share a name.
//!
//! # Differences that remain
//!
//! * **Integers and floats.** JSON Schema's data model does not tell `1`
//!   from `1.0`: `type: "integer"` accepts the float `1.0`, which
//!   [`integer`](super::integer) rejects, and `type: "number"` accepts the
//!   integer `1`, which [`float`](super::float) rejects. A spec and its
//!   schema agree on every value once integral floats and integers of the
//!   same value are taken as one.
//! * **Patterns.** A spec's pattern is a `regex` crate expression; JSON
//!   Schema's `pattern` is ECMA-262. Both search anywhere in the string
//!   unless anchored, and the common syntax (classes, repetition,
//!   alternation, `^` and `$`) means the same; they differ in, for example,
//!   `\d`, `\w` and `\s` (Unicode in the `regex` crate, ASCII in ECMA-262),
//!   in `.` (ECMA-262 also excludes `\r`, U+2028 and U+2029), and in syntax
//!   only one of them has (`regex`'s `(?i)` inline flags and Unicode
//!   classes such as `\p{Greek}`; ECMA-262's look-around and
//!   backreferences). The pattern is exported as written.
//! * **User checks** are Rust code: reported, never exported.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use super::model::{Node, Spec, SpecKind};
use crate::number::JsInt;
use crate::tree::{JsArray, JsObj, JsValue};

/// The `$schema` of every exported document.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A constraint that JSON Schema cannot express, and where in the schema
/// it would have been.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Untranslated {
    pointer: String,
    what: String,
}

impl Untranslated {
    /// The JSON Pointer, into the exported schema, of the subschema that
    /// leaves the constraint out (`""` for the whole schema).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What was left out (`user check: an even number`).
    pub fn what(&self) -> &str {
        &self.what
    }
}

impl fmt::Display for Untranslated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.what)
    }
}

/// A spec's schema and the constraints it leaves out, from
/// [`Spec::json_schema`].
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaExport {
    schema: JsObj,
    untranslated: Vec<Untranslated>,
}

impl SchemaExport {
    /// The schema. When [`untranslated`](SchemaExport::untranslated) is not
    /// empty it accepts values that the spec rejects.
    pub fn schema(&self) -> &JsObj {
        &self.schema
    }

    /// The constraints left out, in the order met.
    pub fn untranslated(&self) -> &[Untranslated] {
        &self.untranslated
    }

    /// Whether nothing was left out.
    pub fn is_exact(&self) -> bool {
        self.untranslated.is_empty()
    }

    /// The schema, whatever was left out.
    pub fn into_schema(self) -> JsObj {
        self.schema
    }
}

/// Why [`Spec::to_json_schema`] refused: constraints that JSON Schema
/// cannot express.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} constraint{} without a JSON Schema counterpart, the first at {}", .untranslated.len(), if .untranslated.len() == 1 { "" } else { "s" }, .untranslated.first().map_or_else(String::new, ToString::to_string))]
pub struct SchemaExportError {
    untranslated: Vec<Untranslated>,
}

impl SchemaExportError {
    /// The constraints, each with its pointer into the schema.
    pub fn untranslated(&self) -> &[Untranslated] {
        &self.untranslated
    }
}

impl Spec {
    /// This spec as a JSON Schema (draft 2020-12) document; see the [module
    /// documentation](crate::spec::schema) for the mapping.
    ///
    /// # Errors
    ///
    /// A [`SchemaExportError`] listing every constraint that JSON Schema
    /// cannot express (user checks); [`json_schema`](Spec::json_schema)
    /// exports the rest.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{integer, one_of, string};
    ///
    /// let id = one_of((integer().min(1), string().length(1..))).nullable();
    /// assert_eq!(
    ///     id.to_json_schema().unwrap().to_string(),
    ///     r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","anyOf":[{"minimum":1,"type":"integer"},{"minLength":1,"type":"string"},{"type":"null"}]}"#,
    /// );
    /// ```
    pub fn to_json_schema(&self) -> Result<JsObj, SchemaExportError> {
        let export = self.json_schema();
        if export.untranslated.is_empty() {
            Ok(export.schema)
        } else {
            Err(SchemaExportError {
                untranslated: export.untranslated,
            })
        }
    }

    /// This spec as a JSON Schema (draft 2020-12) document, leaving out
    /// what JSON Schema cannot express and listing it.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::{array_of, Spec};
    /// use codecbus_json::{jsobj, jsobj_spec};
    /// use codecbus_json::spec::integer;
    ///
    /// let tree = Spec::recursive(|tree| jsobj_spec! {
    ///     "value": integer(),
    ///     "children"?: array_of(tree),
    /// });
    /// let export = tree.json_schema();
    /// assert!(export.is_exact());
    /// let schema = export.schema();
    /// assert_eq!(schema.get("$ref"), Some(&"#/$defs/recursive".into()));
    /// assert_eq!(
    ///     schema.get_in(&"/$defs/recursive/properties/children/items".parse().unwrap()),
    ///     Some(&jsobj! { "$ref": "#/$defs/recursive" }.into()),
    /// );
    /// ```
    pub fn json_schema(&self) -> SchemaExport {
        let mut ex = Exporter::default();
        ex.find_targets(self.node(), &mut HashSet::new());
        let root = ex.schema(self.node(), "", &[]);
        let mut schema = JsObj::new();
        schema.insert("$schema", DRAFT_2020_12);
        match root {
            JsValue::Object(o) => {
                for (k, v) in o.iter() {
                    schema.insert(k, v.clone());
                }
            }
            other => {
                schema.insert("allOf", JsArray::from_iter([other]));
            }
        }
        if !ex.defs.is_empty() {
            schema.insert("$defs", ex.defs);
        }
        SchemaExport {
            schema,
            untranslated: ex.untranslated,
        }
    }
}

fn addr(node: &Node) -> usize {
    std::ptr::from_ref(node) as usize
}

/// `{"not": {}}`: accepts nothing.
fn nothing() -> JsValue {
    let mut o = JsObj::new();
    o.insert("not", JsObj::new());
    o.into()
}

/// A JSON Pointer segment (RFC 6901 escapes).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A `$defs` name: ASCII letters, digits, `-`, `_`, `.`; anything else
/// becomes `_`, so the name needs no escaping in a `$ref`.
fn def_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_owned() } else { s }
}

#[derive(Default)]
struct Exporter {
    defs: JsObj,
    /// The `$defs` name of each node exported there.
    names: HashMap<usize, String>,
    /// The nodes that recursive references point to.
    targets: HashSet<usize>,
    untranslated: Vec<Untranslated>,
}

impl Exporter {
    /// Collects the targets of references, visiting each node once.
    fn find_targets(&mut self, node: &Node, seen: &mut HashSet<usize>) {
        if !seen.insert(addr(node)) {
            return;
        }
        match &node.kind {
            SpecKind::Ref(target) => {
                if let Some(def) = target.upgrade() {
                    self.targets.insert(addr(&def));
                    self.find_targets(&def, seen);
                }
            }
            kind => {
                for child in kind.children() {
                    self.find_targets(child.node(), seen);
                }
            }
        }
    }

    /// The schema of `node` at pointer `at`: a `$ref` for named specs and
    /// the targets of recursion, the node's own schema otherwise. `hops`:
    /// the references followed since the last container was entered.
    fn schema(&mut self, node: &Node, at: &str, hops: &[usize]) -> JsValue {
        if node.name.is_some() || self.targets.contains(&addr(node)) {
            let name = self.define(node, hops);
            return reference(&name);
        }
        self.body(node, at, hops)
    }

    /// The `$defs` name of `node`, exporting it there the first time.
    fn define(&mut self, node: &Node, hops: &[usize]) -> String {
        let key = addr(node);
        if let Some(name) = self.names.get(&key) {
            return name.clone();
        }
        let base = def_name(node.name.as_deref().unwrap_or("recursive"));
        let taken: HashSet<&String> = self.names.values().collect();
        let mut name = base.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        self.names.insert(key, name.clone());
        let mut inner = hops.to_vec();
        inner.push(key);
        let body = self.body(node, &format!("/$defs/{}", escape(&name)), &inner);
        self.defs.insert(name.as_str(), body);
        name
    }

    fn child(&mut self, node: &Node, at: &str, step: &str) -> JsValue {
        self.schema(node, &format!("{at}/{step}"), &[])
    }

    fn body(&mut self, node: &Node, at: &str, hops: &[usize]) -> JsValue {
        let mut s = JsObj::new();
        let mut set = |k: &str, v: JsValue| {
            s.insert(k, v);
        };
        match &node.kind {
            SpecKind::Any => {}
            SpecKind::Null => set("type", "null".into()),
            SpecKind::Bool => set("type", "boolean".into()),
            SpecKind::Str(st) => {
                set("type", "string".into());
                if st.min_len > 0 {
                    set("minLength", st.min_len.into());
                }
                if let Some(max) = st.max_len {
                    set("maxLength", max.into());
                }
                if let Some(re) = &st.pattern {
                    set("pattern", re.as_str().into());
                }
            }
            SpecKind::Int(i) => {
                set("type", "integer".into());
                let lowest = JsInt::from(i64::MIN).as_i128();
                let highest = JsInt::from(u64::MAX).as_i128();
                match i.min {
                    Some(m) if m > highest => return self.finish(node, nothing(), at),
                    Some(m) if m > lowest => set("minimum", int(m)),
                    _ => {}
                }
                match i.max {
                    Some(m) if m < lowest => return self.finish(node, nothing(), at),
                    Some(m) if m < highest => set("maximum", int(m)),
                    _ => {}
                }
            }
            SpecKind::Float(f) => {
                set("type", "number".into());
                if !bounds(f.min, f.max, &mut set) {
                    return self.finish(node, nothing(), at);
                }
            }
            SpecKind::Number(n) => {
                set("type", "number".into());
                if !bounds(n.min, n.max, &mut set) {
                    return self.finish(node, nothing(), at);
                }
            }
            SpecKind::Values(values) => {
                set("enum", values.iter().cloned().collect::<JsArray>().into());
            }
            SpecKind::Array(a) => {
                set("type", "array".into());
                if !matches!(a.items.node().kind, SpecKind::Any) || a.items.node().name.is_some() {
                    let items = self.child(a.items.node(), at, "items");
                    s.insert("items", items);
                }
                if a.min_len > 0 {
                    s.insert("minItems", a.min_len);
                }
                if let Some(max) = a.max_len {
                    s.insert("maxItems", max);
                }
                if a.unique {
                    s.insert("uniqueItems", true);
                }
            }
            SpecKind::Tuple(t) => {
                set("type", "array".into());
                let items: JsArray = t
                    .items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.child(x.node(), at, &format!("prefixItems/{i}")))
                    .collect();
                if !items.is_empty() {
                    s.insert("prefixItems", items);
                }
                s.insert("minItems", t.items.len());
                s.insert("maxItems", t.items.len());
            }
            SpecKind::Object(o) => {
                set("type", "object".into());
                let mut props = JsObj::new();
                for f in &o.fields {
                    let step = format!("properties/{}", escape(&f.key));
                    props.insert(Arc::clone(&f.key), self.child(f.spec.node(), at, &step));
                }
                if !props.is_empty() {
                    s.insert("properties", props);
                }
                let required: JsArray = o
                    .fields
                    .iter()
                    .filter(|f| f.required)
                    .map(|f| JsValue::Str(Arc::clone(&f.key)))
                    .collect();
                if !required.is_empty() {
                    s.insert("required", required);
                }
                if o.strict {
                    s.insert("additionalProperties", false);
                }
            }
            SpecKind::Map(m) => {
                set("type", "object".into());
                let keys = m.keys.node();
                let plain_string = matches!(&keys.kind, SpecKind::Str(k)
                    if k.min_len == 0 && k.max_len.is_none() && k.pattern.is_none())
                    && keys.checks.is_empty()
                    && keys.name.is_none();
                if !plain_string {
                    let names = self.child(keys, at, "propertyNames");
                    s.insert("propertyNames", names);
                }
                let values = self.child(m.values.node(), at, "additionalProperties");
                s.insert("additionalProperties", values);
                if m.min_len > 0 {
                    s.insert("minProperties", m.min_len);
                }
                if let Some(max) = m.max_len {
                    s.insert("maxProperties", max);
                }
            }
            SpecKind::OneOf(alts) => {
                if alts.is_empty() {
                    return self.finish(node, nothing(), at);
                }
                let any_of: JsArray = alts
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let at = format!("{at}/anyOf/{i}");
                        self.schema(x.node(), &at, hops)
                    })
                    .collect();
                s.insert("anyOf", any_of);
            }
            SpecKind::Ref(target) => match target.upgrade() {
                Some(def) if !hops.contains(&addr(&def)) => {
                    let name = self.define(&def, hops);
                    return self.finish(node, reference(&name), at);
                }
                // Dangling, or reached again before a container: the spec
                // accepts nothing there.
                _ => return self.finish(node, nothing(), at),
            },
        }
        self.finish(node, s.into(), at)
    }

    /// Adds the modifiers every kind has: checks (reported) and nullable.
    fn finish(&mut self, node: &Node, schema: JsValue, at: &str) -> JsValue {
        let mut schema = schema;
        if !node.checks.is_empty() {
            let mut comment = String::from("not expressed in JSON Schema:");
            for c in &node.checks {
                self.untranslated.push(Untranslated {
                    pointer: at.to_owned(),
                    what: format!("user check: {}", c.message),
                });
                comment.push_str(" user check \"");
                comment.push_str(&c.message);
                comment.push('"');
            }
            if let JsValue::Object(o) = &mut schema {
                o.insert("$comment", comment);
            }
        }
        if node.nullable {
            schema = nullable(schema);
        }
        schema
    }
}

fn reference(name: &str) -> JsValue {
    let mut o = JsObj::new();
    o.insert("$ref", format!("#/$defs/{name}"));
    o.into()
}

fn int(i: i128) -> JsValue {
    JsInt::try_from(i).map_or(JsValue::Null, JsValue::Int)
}

/// Sets the bounds of a float or number schema; `false` when they admit no
/// finite number (a NaN bound, a lower bound of +∞, an upper one of −∞).
fn bounds(min: Bound<f64>, max: Bound<f64>, set: &mut impl FnMut(&str, JsValue)) -> bool {
    match min {
        Bound::Included(x) | Bound::Excluded(x) if x.is_nan() || x == f64::INFINITY => {
            return false;
        }
        Bound::Included(x) if x.is_finite() => set("minimum", x.into()),
        Bound::Excluded(x) if x.is_finite() => set("exclusiveMinimum", x.into()),
        _ => {}
    }
    match max {
        Bound::Included(x) | Bound::Excluded(x) if x.is_nan() || x == f64::NEG_INFINITY => {
            return false;
        }
        Bound::Included(x) if x.is_finite() => set("maximum", x.into()),
        Bound::Excluded(x) if x.is_finite() => set("exclusiveMaximum", x.into()),
        _ => {}
    }
    true
}

/// `schema` that also accepts `null`: `"null"` added to a single `type`
/// when no other keyword would reject it, or an `anyOf`.
fn nullable(schema: JsValue) -> JsValue {
    let JsValue::Object(mut o) = schema else {
        return schema;
    };
    if o.is_empty() {
        return o.into();
    }
    let restricts_null = ["enum", "anyOf", "$ref", "not", "const"]
        .iter()
        .any(|k| o.contains_key(k));
    if !restricts_null && let Some(JsValue::Str(t)) = o.get("type").cloned() {
        if &*t != "null" {
            o.insert("type", JsArray::from_iter([JsValue::Str(t), "null".into()]));
        }
        return o.into();
    }
    if o.len() == 1
        && let Some(JsValue::Array(alts)) = o.get("anyOf")
    {
        let mut alts = alts.clone();
        alts.push(type_null());
        o.insert("anyOf", alts);
        return o.into();
    }
    let mut wrapped = JsObj::new();
    wrapped.insert("anyOf", JsArray::from_iter([o.into(), type_null()]));
    wrapped.into()
}

fn type_null() -> JsValue {
    let mut o = JsObj::new();
    o.insert("type", "null");
    o.into()
}
