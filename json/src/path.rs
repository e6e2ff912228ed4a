//! Paths into JSON values: the typed `JsPath`, JSON Pointer (RFC 6901)
//! syntax, and `get_in` / `set_in` / `remove_in` / `update_in`.
//!
//! Contract: a segment is a key or an index, and is resolved the RFC 6901
//! way whatever it was built as: on an object every segment names a member
//! (index 3 names the member `"3"`); on an array a key selects an element
//! only when it is a canonical index (`"3"`, not `"03"`), and `"-"` names
//! the position past the last element. Updates work on a copy-on-write
//! clone of the root, so they copy only the containers along the path.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::tree::{JsArray, JsObj, JsValue};

/// One step of a [`JsPath`]: an object key or an array index.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object member name (on an array: a canonical index, or `"-"`
    /// for the position after the last element).
    Key(Arc<str>),
    /// An array position (on an object: the member named by its decimal
    /// form).
    Index(usize),
}

impl Segment {
    /// The key, if this is a key segment.
    pub fn as_key(&self) -> Option<&str> {
        match self {
            Segment::Key(k) => Some(k),
            Segment::Index(_) => None,
        }
    }

    /// The index, if this is an index segment.
    pub fn as_index(&self) -> Option<usize> {
        match self {
            Segment::Key(_) => None,
            Segment::Index(i) => Some(*i),
        }
    }

    /// The member name this segment selects in an object.
    fn object_key(&self) -> Cow<'_, str> {
        match self {
            Segment::Key(k) => Cow::Borrowed(k),
            Segment::Index(i) => Cow::Owned(i.to_string()),
        }
    }

    fn shared_key(&self) -> Arc<str> {
        match self {
            Segment::Key(k) => Arc::clone(k),
            Segment::Index(i) => Arc::from(i.to_string()),
        }
    }

    /// The position this segment selects in an array of `len` elements:
    /// `Some(len)` for `"-"`, `None` for a key that is not an index.
    fn array_index(&self, len: usize) -> Option<usize> {
        match self {
            Segment::Index(i) => Some(*i),
            Segment::Key(k) if &**k == "-" => Some(len),
            Segment::Key(k) => parse_index(k),
        }
    }

    /// The empty container this segment needs where nothing is yet.
    fn new_container(&self) -> JsValue {
        match self {
            Segment::Index(_) => JsValue::Array(JsArray::new()),
            Segment::Key(k) if &**k == "-" => JsValue::Array(JsArray::new()),
            Segment::Key(_) => JsValue::Object(JsObj::new()),
        }
    }
}

impl fmt::Debug for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(k) => fmt::Debug::fmt(&**k, f),
            Segment::Index(i) => fmt::Debug::fmt(i, f),
        }
    }
}

/// The segment as a JSON Pointer reference token (`~` and `/` escaped).
impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Index(i) => write!(f, "{i}"),
            Segment::Key(k) => codecbus_core::write_pointer_token(f, k),
        }
    }
}

impl From<&str> for Segment {
    fn from(k: &str) -> Self {
        Segment::Key(Arc::from(k))
    }
}

impl From<String> for Segment {
    fn from(k: String) -> Self {
        Segment::Key(Arc::from(k))
    }
}

impl From<Arc<str>> for Segment {
    fn from(k: Arc<str>) -> Self {
        Segment::Key(k)
    }
}

impl From<usize> for Segment {
    fn from(i: usize) -> Self {
        Segment::Index(i)
    }
}

/// A canonical array index: `0`, or digits without a leading zero, that
/// fits in `usize`.
fn parse_index(token: &str) -> Option<usize> {
    let bytes = token.as_bytes();
    let canonical = match bytes {
        [] => false,
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if canonical { token.parse().ok() } else { None }
}

/// A path to a value inside a JSON value: a sequence of keys and indices.
///
/// Build one with the typed builder ([`key`](Self::key),
/// [`index`](Self::index)) or parse JSON Pointer text (RFC 6901) with
/// [`parse`](Self::parse) or [`str::parse`]. It prints as a JSON Pointer.
///
/// # Examples
///
/// ```
/// use codecbus_json::JsPath;
///
/// let typed = JsPath::root().key("a/b").index(0).key("m~n");
/// let parsed: JsPath = "/a~1b/0/m~0n".parse().unwrap();
/// assert_eq!(typed, parsed);
/// assert_eq!(typed.to_string(), "/a~1b/0/m~0n");
/// assert!("a/b".parse::<JsPath>().is_err()); // must start with '/'
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsPath(Vec<Segment>);

impl JsPath {
    /// The empty path: the whole value.
    pub fn root() -> Self {
        JsPath(Vec::new())
    }

    /// Parses JSON Pointer text (RFC 6901): `""` is the root, every other
    /// pointer starts with `/`; `~1` stands for `/` and `~0` for `~`.
    /// Tokens that are canonical array indices (`0`, `17`, not `017`)
    /// become [`Segment::Index`], all others [`Segment::Key`].
    ///
    /// # Errors
    ///
    /// [`JsPointerError`] when the text does not start with `/` or a `~`
    /// is not followed by `0` or `1`.
    pub fn parse(pointer: &str) -> Result<Self, JsPointerError> {
        if pointer.is_empty() {
            return Ok(JsPath::root());
        }
        let Some(body) = pointer.strip_prefix('/') else {
            return Err(JsPointerError {
                kind: JsPointerErrorKind::MissingLeadingSlash,
                offset: 0,
            });
        };
        let mut segments = Vec::new();
        let mut offset = 1;
        for token in body.split('/') {
            segments.push(unescape(token, offset)?);
            offset += token.len() + 1;
        }
        Ok(JsPath(segments))
    }

    /// This path extended by the object key `key`.
    #[must_use]
    pub fn key(mut self, key: impl Into<Arc<str>>) -> Self {
        self.0.push(Segment::Key(key.into()));
        self
    }

    /// This path extended by the array index `index`.
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        self.0.push(Segment::Index(index));
        self
    }

    /// Appends a segment in place.
    pub fn push(&mut self, segment: impl Into<Segment>) {
        self.0.push(segment.into());
    }

    /// Removes and returns the last segment.
    pub fn pop(&mut self) -> Option<Segment> {
        self.0.pop()
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// The number of segments.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether this is the root path.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the path has no segments (the same as
    /// [`is_root`](Self::is_root)).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The last segment (the key or index of the value the path leads to).
    pub fn last(&self) -> Option<&Segment> {
        self.0.last()
    }

    /// The path of the enclosing container, `None` at the root.
    pub fn parent(&self) -> Option<JsPath> {
        self.0.split_last().map(|(_, p)| JsPath(p.to_vec()))
    }

    /// Whether `prefix` is this path or one of its ancestors.
    pub fn starts_with(&self, prefix: &JsPath) -> bool {
        self.0.starts_with(&prefix.0)
    }
}

fn unescape(token: &str, offset: usize) -> Result<Segment, JsPointerError> {
    if !token.contains('~') {
        return Ok(match parse_index(token) {
            Some(i) => Segment::Index(i),
            None => Segment::Key(Arc::from(token)),
        });
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, '0')) => out.push('~'),
            Some((_, '1')) => out.push('/'),
            _ => {
                return Err(JsPointerError {
                    kind: JsPointerErrorKind::InvalidEscape,
                    offset: offset + at,
                });
            }
        }
    }
    Ok(Segment::Key(Arc::from(out)))
}

impl FromStr for JsPath {
    type Err = JsPointerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JsPath::parse(s)
    }
}

/// The path as JSON Pointer text.
impl fmt::Display for JsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for seg in &self.0 {
            write!(f, "/{seg}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for JsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsPath({:?})", self.to_string())
    }
}

impl<S: Into<Segment>> FromIterator<S> for JsPath {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        JsPath(iter.into_iter().map(Into::into).collect())
    }
}

impl<'a> IntoIterator for &'a JsPath {
    type Item = &'a Segment;
    type IntoIter = std::slice::Iter<'a, Segment>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// What is wrong with a JSON Pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsPointerErrorKind {
    /// A non-empty pointer must start with `/`.
    MissingLeadingSlash,
    /// `~` must be followed by `0` (for `~`) or `1` (for `/`).
    InvalidEscape,
}

/// JSON Pointer text that does not follow RFC 6901.
///
/// # Examples
///
/// ```
/// use codecbus_json::{JsPath, JsPointerErrorKind};
///
/// let err = JsPath::parse("/a/~2").unwrap_err();
/// assert_eq!(err.kind(), JsPointerErrorKind::InvalidEscape);
/// assert_eq!(err.offset(), 3);
/// assert_eq!(err.to_string(), "invalid JSON pointer: `~` must be followed by `0` or `1` (byte 3)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON pointer: {} (byte {offset})", match kind {
    JsPointerErrorKind::MissingLeadingSlash => "it must be empty or start with `/`",
    JsPointerErrorKind::InvalidEscape => "`~` must be followed by `0` or `1`",
})]
pub struct JsPointerError {
    kind: JsPointerErrorKind,
    offset: usize,
}

impl JsPointerError {
    /// What is wrong.
    pub fn kind(&self) -> JsPointerErrorKind {
        self.kind
    }

    /// The byte offset in the pointer text where the problem is.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

// ---- operations -------------------------------------------------------------

fn step<'a>(value: &'a JsValue, seg: &Segment) -> Option<&'a JsValue> {
    match value {
        JsValue::Object(o) => o.get(&seg.object_key()),
        JsValue::Array(a) => seg.array_index(a.len()).and_then(|i| a.get(i)),
        _ => None,
    }
}

pub(crate) fn get<'a>(root: &'a JsValue, path: &[Segment]) -> Option<&'a JsValue> {
    path.iter().try_fold(root, step)
}

/// Mutable access along `path`, copying shared containers on the way.
/// Callers check with [`get`] first that the path exists, so that nothing
/// is copied for a missing path.
fn get_mut<'a>(root: &'a mut JsValue, path: &[Segment]) -> Option<&'a mut JsValue> {
    let mut cur = root;
    for seg in path {
        cur = match cur {
            JsValue::Object(o) => o.get_mut(&seg.object_key())?,
            JsValue::Array(a) => {
                let i = seg.array_index(a.len())?;
                a.get_mut(i)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// Whether `seg` can be applied to `value` without replacing it.
fn fits(value: &JsValue, seg: &Segment) -> bool {
    match value {
        JsValue::Object(_) => true,
        JsValue::Array(a) => seg.array_index(a.len()).is_some(),
        _ => false,
    }
}

fn set_mut(target: &mut JsValue, path: &[Segment], value: JsValue) {
    let Some((seg, rest)) = path.split_first() else {
        *target = value;
        return;
    };
    if !fits(target, seg) {
        *target = seg.new_container();
    }
    match target {
        JsValue::Object(o) => {
            if rest.is_empty() {
                o.insert(seg.shared_key(), value);
            } else if let Some(child) = o.get_mut(&seg.object_key()) {
                set_mut(child, rest, value);
            } else {
                let mut child = JsValue::Null;
                set_mut(&mut child, rest, value);
                o.insert(seg.shared_key(), child);
            }
        }
        JsValue::Array(a) => {
            let i = seg.array_index(a.len()).unwrap_or(a.len());
            if rest.is_empty() {
                a.replace(i, value);
            } else if let Some(child) = a.get_mut(i) {
                set_mut(child, rest, value);
            } else {
                let mut child = JsValue::Null;
                set_mut(&mut child, rest, value);
                a.replace(i, child);
            }
        }
        _ => unreachable!("`fits` made the target a container"),
    }
}

fn remove_mut(target: &mut JsValue, path: &[Segment]) -> Option<JsValue> {
    let (last, parents) = path.split_last()?;
    get(target, path)?;
    match get_mut(target, parents)? {
        JsValue::Object(o) => o.remove(&last.object_key()),
        JsValue::Array(a) => {
            let i = last.array_index(a.len())?;
            a.remove(i)
        }
        _ => None,
    }
}

impl JsValue {
    /// The value at `path`, or `None` ("nothing") when the path leads
    /// nowhere. A JSON `null` at the path is `Some(&JsValue::Null)`.
    ///
    /// ```
    /// use codecbus_json::{JsPath, JsValue};
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a": [10, null] });
    /// assert_eq!(v.get_in(&JsPath::root().key("a").index(0)), Some(&JsValue::from(10)));
    /// assert_eq!(v.get_in(&"/a/1".parse().unwrap()), Some(&JsValue::Null));
    /// assert_eq!(v.get_in(&"/a/2".parse().unwrap()), None);
    /// ```
    pub fn get_in(&self, path: &JsPath) -> Option<&JsValue> {
        get(self, &path.0)
    }

    /// The value at a JSON Pointer; `None` when the pointer is malformed or
    /// leads nowhere (parse a [`JsPath`] to tell the two apart).
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a/b": { "c": true } });
    /// assert_eq!(v.pointer("/a~1b/c"), Some(&JsValue::Bool(true)));
    /// ```
    pub fn pointer(&self, pointer: &str) -> Option<&JsValue> {
        JsPath::parse(pointer).ok().and_then(|p| self.get_in(&p))
    }

    /// A new value with `value` at `path`; `self` is unchanged.
    ///
    /// Missing containers along the path are created (an object for a key,
    /// an array for an index or `"-"`), arrays are padded with nulls up to
    /// the index, and `"-"` appends. A value on the path that cannot hold
    /// the next segment (a scalar, or an array given a non-index key) is
    /// replaced by a container that can. So afterwards
    /// `get_in(path) == Some(&value)` for every path without `"-"`.
    ///
    /// Cost: only the containers along the path are copied, each in
    /// O(log n) of its size. Padding allocates one null per missing slot,
    /// so bound the indices of paths that come from untrusted input.
    ///
    /// ```
    /// use codecbus_json::{JsPath, JsValue};
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a": 1 });
    /// let w = v.set_in(&"/b/2/c".parse().unwrap(), "x");
    /// assert_eq!(w.to_string(), r#"{"a":1,"b":[null,null,{"c":"x"}]}"#);
    /// assert_eq!(v.to_string(), r#"{"a":1}"#);
    /// ```
    #[must_use]
    pub fn set_in(&self, path: &JsPath, value: impl Into<JsValue>) -> JsValue {
        let mut new = self.clone();
        set_mut(&mut new, &path.0, value.into());
        new
    }

    /// A new value without the value at `path` (array elements after it
    /// shift down); `self` is unchanged. When the path leads nowhere, or is
    /// the root, an equal value sharing storage with `self`.
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a": [1, 2, 3] });
    /// assert_eq!(v.remove_in(&"/a/0".parse().unwrap()).to_string(), r#"{"a":[2,3]}"#);
    /// ```
    #[must_use]
    pub fn remove_in(&self, path: &JsPath) -> JsValue {
        let mut new = self.clone();
        remove_mut(&mut new, &path.0);
        new
    }

    /// A new value where the value at `path` is replaced by `f` of it;
    /// `self` is unchanged. When the path leads nowhere `f` is not called
    /// and the result is an equal value sharing storage with `self`.
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "hits": 41 });
    /// let path = "/hits".parse().unwrap();
    /// let w = v.update_in(&path, |n| JsValue::from(n.as_i64().unwrap_or(0) + 1));
    /// assert_eq!(w.get_in(&path), Some(&JsValue::from(42)));
    /// ```
    #[must_use]
    pub fn update_in(&self, path: &JsPath, f: impl FnOnce(&JsValue) -> JsValue) -> JsValue {
        let mut new = self.clone();
        if get(self, &path.0).is_some()
            && let Some(slot) = get_mut(&mut new, &path.0)
        {
            *slot = f(slot);
        }
        new
    }
}

impl JsObj {
    /// The value at `path` below this object (see [`JsValue::get_in`]);
    /// `None` for the empty path, which names the object itself.
    pub fn get_in(&self, path: &JsPath) -> Option<&JsValue> {
        let (first, rest) = path.0.split_first()?;
        get(self.get(&first.object_key())?, rest)
    }

    /// A new object with `value` at `path` (see [`JsValue::set_in`]);
    /// `self` is unchanged. The root of an object stays an object: an empty
    /// path leaves it as it is.
    #[must_use]
    pub fn set_in(&self, path: &JsPath, value: impl Into<JsValue>) -> JsObj {
        if path.is_root() {
            return self.clone();
        }
        let mut v = JsValue::Object(self.clone());
        set_mut(&mut v, &path.0, value.into());
        v.into_object().unwrap_or_else(|_| self.clone())
    }

    /// A new object without the value at `path` (see
    /// [`JsValue::remove_in`]); `self` is unchanged.
    #[must_use]
    pub fn remove_in(&self, path: &JsPath) -> JsObj {
        let mut v = JsValue::Object(self.clone());
        remove_mut(&mut v, &path.0);
        v.into_object().unwrap_or_else(|_| self.clone())
    }

    /// A new object where the value at `path` is replaced by `f` of it (see
    /// [`JsValue::update_in`]); `self` is unchanged. An empty path leaves
    /// the object as it is.
    #[must_use]
    pub fn update_in(&self, path: &JsPath, f: impl FnOnce(&JsValue) -> JsValue) -> JsObj {
        if path.is_root() {
            return self.clone();
        }
        JsValue::Object(self.clone())
            .update_in(path, f)
            .into_object()
            .unwrap_or_else(|_| self.clone())
    }
}

impl JsArray {
    /// The value at `path` below this array (see [`JsValue::get_in`]);
    /// `None` for the empty path, which names the array itself.
    pub fn get_in(&self, path: &JsPath) -> Option<&JsValue> {
        let (first, rest) = path.0.split_first()?;
        get(self.get(first.array_index(self.len())?)?, rest)
    }

    /// A new array with `value` at `path` (see [`JsValue::set_in`]);
    /// `self` is unchanged. The root of an array stays an array: an empty
    /// path, or a first segment that is a key other than an index or `"-"`,
    /// leaves it as it is.
    #[must_use]
    pub fn set_in(&self, path: &JsPath, value: impl Into<JsValue>) -> JsArray {
        match path.0.first() {
            Some(first) if first.array_index(self.len()).is_some() => {
                let mut v = JsValue::Array(self.clone());
                set_mut(&mut v, &path.0, value.into());
                v.into_array().unwrap_or_else(|_| self.clone())
            }
            _ => self.clone(),
        }
    }

    /// A new array without the value at `path` (see
    /// [`JsValue::remove_in`]); `self` is unchanged.
    #[must_use]
    pub fn remove_in(&self, path: &JsPath) -> JsArray {
        let mut v = JsValue::Array(self.clone());
        remove_mut(&mut v, &path.0);
        v.into_array().unwrap_or_else(|_| self.clone())
    }

    /// A new array where the value at `path` is replaced by `f` of it (see
    /// [`JsValue::update_in`]); `self` is unchanged. An empty path leaves
    /// the array as it is.
    #[must_use]
    pub fn update_in(&self, path: &JsPath, f: impl FnOnce(&JsValue) -> JsValue) -> JsArray {
        if path.is_root() {
            return self.clone();
        }
        JsValue::Array(self.clone())
            .update_in(path, f)
            .into_array()
            .unwrap_or_else(|_| self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_tokens() {
        assert_eq!(parse_index("0"), Some(0));
        assert_eq!(parse_index("10"), Some(10));
        assert_eq!(parse_index("01"), None);
        assert_eq!(parse_index("-"), None);
        assert_eq!(parse_index(""), None);
        assert_eq!(parse_index("+1"), None);
        assert_eq!(parse_index("99999999999999999999999"), None);
    }

    #[test]
    fn escapes_round_trip() {
        for text in ["", "/", "//", "/~0~1", "/a~1b/~01", "/0/-/x"] {
            assert_eq!(JsPath::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            JsPath::parse("/~01").unwrap().segments(),
            &[Segment::Key("~1".into())]
        );
        assert_eq!(JsPath::parse("/a~").unwrap_err().offset(), 2);
        assert_eq!(
            JsPath::parse("x").unwrap_err().kind(),
            JsPointerErrorKind::MissingLeadingSlash
        );
    }
}
