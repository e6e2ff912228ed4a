//! A set of codecs' shapes, by codec name: what one build writes and reads.

use std::collections::BTreeMap;
use std::collections::btree_map;

use super::CodecShape;

/// The shapes of a build's codecs, by codec name: what
/// [`check`](super::check::check) compares and a snapshot file holds.
///
/// # Examples
///
/// ```
/// use codecbus_core::shape::{CodecShape, Shape, ShapeSet};
/// use std::collections::BTreeMap;
///
/// let codec = |name: &str, aliases: &[&str]| CodecShape {
///     name: name.into(),
///     aliases: aliases.iter().map(|a| a.to_string()).collect(),
///     shape: Shape::Str,
///     refs: BTreeMap::new(),
/// };
/// let set = ShapeSet::from_codecs([codec("shop.order.v2", &["shop.order"]), codec("note", &[])]);
/// assert_eq!(set.len(), 2);
/// assert_eq!(set.get("note").unwrap().name, "note");
/// // a codec is found under one of its aliases too
/// assert_eq!(set.find("shop.order").unwrap().name, "shop.order.v2");
/// assert_eq!(set.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["note", "shop.order.v2"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShapeSet {
    codecs: BTreeMap<String, CodecShape>,
}

impl ShapeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The set of these codecs; of two with one name, the later is kept.
    pub fn from_codecs(codecs: impl IntoIterator<Item = CodecShape>) -> Self {
        let mut set = Self::new();
        for codec in codecs {
            set.insert(codec);
        }
        set
    }

    /// Adds `codec`, and gives back the codec of that name it replaces.
    pub fn insert(&mut self, codec: CodecShape) -> Option<CodecShape> {
        self.codecs.insert(codec.name.clone(), codec)
    }

    /// The codec named `name`.
    pub fn get(&self, name: &str) -> Option<&CodecShape> {
        self.codecs.get(name)
    }

    /// The codec named `name`, or else the first (by name) that has
    /// `name` among its aliases: the codec a message sent under `name`
    /// decodes as.
    pub fn find(&self, name: &str) -> Option<&CodecShape> {
        self.get(name)
            .or_else(|| self.iter().find(|c| c.aliases.iter().any(|a| a == name)))
    }

    /// The codecs, by name.
    pub fn iter(&self) -> btree_map::Values<'_, String, CodecShape> {
        self.codecs.values()
    }

    /// The codec names, sorted.
    pub fn names(&self) -> btree_map::Keys<'_, String, CodecShape> {
        self.codecs.keys()
    }

    /// How many codecs.
    pub fn len(&self) -> usize {
        self.codecs.len()
    }

    /// Whether there is no codec.
    pub fn is_empty(&self) -> bool {
        self.codecs.is_empty()
    }
}

impl<'a> IntoIterator for &'a ShapeSet {
    type Item = &'a CodecShape;
    type IntoIter = btree_map::Values<'a, String, CodecShape>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for ShapeSet {
    type Item = CodecShape;
    type IntoIter = btree_map::IntoValues<String, CodecShape>;

    fn into_iter(self) -> Self::IntoIter {
        self.codecs.into_values()
    }
}

impl FromIterator<CodecShape> for ShapeSet {
    fn from_iter<I: IntoIterator<Item = CodecShape>>(iter: I) -> Self {
        Self::from_codecs(iter)
    }
}

impl Extend<CodecShape> for ShapeSet {
    fn extend<I: IntoIterator<Item = CodecShape>>(&mut self, iter: I) {
        for codec in iter {
            self.insert(codec);
        }
    }
}
