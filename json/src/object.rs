//! `JsObj`: a persistent map from string keys to JSON values, iterated in
//! key order.
//!
//! Contract: two representations behind one type, both sorted by key
//! (byte-wise, `str`'s `Ord`) with unique keys. Objects of up to
//! [`SMALL_MAX`] members live in one exactly-sized `Arc<[(key, value)]>`
//! searched by bisection; an update copies at most `SMALL_MAX` handles.
//! Larger objects live in an `imbl::OrdMap` (a B+tree) behind an `Arc`,
//! where an update copies only the path to the changed leaf. Why: most
//! JSON objects are small, and one flat allocation builds and reads faster
//! than a tree node sized for 16 entries; the bounded copy keeps updates
//! O(log n) overall. Iteration order, equality, hashing and encoding are
//! the same whichever representation holds the members.

use std::sync::Arc;

use imbl::OrdMap;

use crate::tree::{JsObj, JsValue, Member, ObjRepr as Repr};

/// Objects up to this many members use the flat representation.
pub(crate) const SMALL_MAX: usize = 32;

impl JsObj {
    /// An empty object.
    pub fn new() -> Self {
        JsObj(Repr::Small(Arc::new([])))
    }

    /// Builds an object from members sorted by key with no duplicates.
    pub(crate) fn from_sorted_unique<I>(iter: I) -> Self
    where
        I: ExactSizeIterator<Item = Member>,
    {
        if iter.len() <= SMALL_MAX {
            JsObj(Repr::Small(iter.collect()))
        } else {
            JsObj(Repr::Large(Arc::new(iter.collect())))
        }
    }

    /// Builds an object from members in any order; for equal keys the last
    /// one wins. Sorts `members` in place and drains it.
    pub(crate) fn from_members(members: &mut Vec<Member>, start: usize) -> Self {
        let slice = &mut members[start..];
        if !slice.is_sorted_by(|a, b| a.0 < b.0) {
            slice.sort_by(|a, b| a.0.cmp(&b.0));
            if slice.windows(2).any(|w| w[0].0 == w[1].0) {
                let mut tail = members.split_off(start);
                // `dedup_by` keeps the first of a run; move the later value in.
                tail.dedup_by(|later, kept| {
                    if later.0 == kept.0 {
                        std::mem::swap(&mut later.1, &mut kept.1);
                        true
                    } else {
                        false
                    }
                });
                return Self::from_sorted_unique(tail.into_iter());
            }
        }
        Self::from_sorted_unique(members.drain(start..))
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(s) => s.len(),
            Repr::Large(m) => m.len(),
        }
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value under `key`, or `None` when the object has no such member.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        match &self.0 {
            Repr::Small(s) => s
                .binary_search_by(|(k, _)| (**k).cmp(key))
                .ok()
                .map(|i| &s[i].1),
            Repr::Large(m) => m.get(key),
        }
    }

    /// Whether the object has a member `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The members in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.0 {
            Repr::Small(s) => IterRepr::Small(s.iter()),
            Repr::Large(m) => IterRepr::Large(m.iter()),
        })
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &str> + ExactSizeIterator {
        self.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &JsValue> + ExactSizeIterator {
        self.iter().map(|(_, v)| v)
    }

    /// The members in key order, with the keys as shared strings.
    pub(crate) fn iter_shared(&self) -> impl Iterator<Item = (&Arc<str>, &JsValue)> {
        self.iter_shared_inner()
    }

    fn iter_shared_inner(&self) -> SharedIter<'_> {
        match &self.0 {
            Repr::Small(s) => SharedIter::Small(s.iter()),
            Repr::Large(m) => SharedIter::Large(m.iter()),
        }
    }

    /// Whether both handles share the same storage (then they are equal
    /// without comparing members).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Small(a), Repr::Small(b)) => Arc::ptr_eq(a, b),
            (Repr::Large(a), Repr::Large(b)) => Arc::ptr_eq(a, b) || a.ptr_eq(b),
            _ => false,
        }
    }

    /// Sets `key` to `value` in this handle and returns the old value.
    pub fn insert(
        &mut self,
        key: impl Into<Arc<str>>,
        value: impl Into<JsValue>,
    ) -> Option<JsValue> {
        let key = key.into();
        let value = value.into();
        match &mut self.0 {
            Repr::Small(s) => match s.binary_search_by(|(k, _)| k.cmp(&key)) {
                Ok(i) => {
                    if let Some(members) = Arc::get_mut(s) {
                        return Some(std::mem::replace(&mut members[i].1, value));
                    }
                    let old = s[i].1.clone();
                    let mut value = Some(value);
                    let new: Arc<[Member]> = s
                        .iter()
                        .enumerate()
                        .map(|(j, m)| match value.take_if(|_| i == j) {
                            Some(v) => (m.0.clone(), v),
                            None => m.clone(),
                        })
                        .collect();
                    *s = new;
                    Some(old)
                }
                Err(i) if s.len() < SMALL_MAX => {
                    let new: Arc<[Member]> = s[..i]
                        .iter()
                        .cloned()
                        .chain(std::iter::once((key, value)))
                        .chain(s[i..].iter().cloned())
                        .collect();
                    *s = new;
                    None
                }
                Err(_) => {
                    let mut m: OrdMap<Arc<str>, JsValue> = s.iter().cloned().collect();
                    m.insert(key, value);
                    self.0 = Repr::Large(Arc::new(m));
                    None
                }
            },
            Repr::Large(m) => Arc::make_mut(m).insert(key, value),
        }
    }

    /// Removes `key` from this handle and returns its value.
    pub fn remove(&mut self, key: &str) -> Option<JsValue> {
        match &mut self.0 {
            Repr::Small(s) => {
                let i = s.binary_search_by(|(k, _)| (**k).cmp(key)).ok()?;
                let old = s[i].1.clone();
                let new: Arc<[Member]> = s[..i].iter().chain(&s[i + 1..]).cloned().collect();
                *s = new;
                Some(old)
            }
            Repr::Large(m) => {
                if !m.contains_key(key) {
                    return None;
                }
                Arc::make_mut(m).remove(key)
            }
        }
    }

    /// Gives mutable access to the value under `key` in this handle
    /// (copying shared storage first).
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut JsValue> {
        match &mut self.0 {
            Repr::Small(s) => {
                let i = s.binary_search_by(|(k, _)| (**k).cmp(key)).ok()?;
                if Arc::get_mut(s).is_none() {
                    *s = s.iter().cloned().collect();
                }
                Arc::get_mut(s).map(|s| &mut s[i].1)
            }
            Repr::Large(m) => {
                if !m.contains_key(key) {
                    return None;
                }
                Arc::make_mut(m).get_mut(key)
            }
        }
    }

    /// A new object with `key` set to `value`; `self` is unchanged.
    ///
    /// ```
    /// use codecbus_json::jsobj;
    ///
    /// let a = jsobj! { "x": 1 };
    /// let b = a.set("x", 2).set("y", 3);
    /// assert_eq!(a, jsobj! { "x": 1 });
    /// assert_eq!(b, jsobj! { "x": 2, "y": 3 });
    /// ```
    #[must_use]
    pub fn set(&self, key: impl Into<Arc<str>>, value: impl Into<JsValue>) -> Self {
        let mut new = self.clone();
        new.insert(key, value);
        new
    }

    /// A new object without `key`; `self` is unchanged. Without such a
    /// member, an equal object (sharing storage with `self`).
    #[must_use]
    pub fn without(&self, key: &str) -> Self {
        let mut new = self.clone();
        new.remove(key);
        new
    }
}

impl Default for JsObj {
    fn default() -> Self {
        Self::new()
    }
}

/// An iterator over the members of a [`JsObj`] in key order.
#[derive(Clone)]
pub struct Iter<'a>(IterRepr<'a>);

#[derive(Clone)]
enum IterRepr<'a> {
    Small(std::slice::Iter<'a, Member>),
    Large(imbl::ordmap::Iter<'a, Arc<str>, JsValue, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a JsValue);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Small(i) => i.next().map(|(k, v)| (&**k, v)),
            IterRepr::Large(i) => i.next().map(|(k, v)| (&**k, v)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            IterRepr::Small(i) => i.size_hint(),
            IterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Small(i) => i.next_back().map(|(k, v)| (&**k, v)),
            IterRepr::Large(i) => i.next_back().map(|(k, v)| (&**k, v)),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl std::iter::FusedIterator for Iter<'_> {}

enum SharedIter<'a> {
    Small(std::slice::Iter<'a, Member>),
    Large(imbl::ordmap::Iter<'a, Arc<str>, JsValue, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for SharedIter<'a> {
    type Item = (&'a Arc<str>, &'a JsValue);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            SharedIter::Small(i) => i.next().map(|(k, v)| (k, v)),
            SharedIter::Large(i) => i.next(),
        }
    }
}

impl<'a> IntoIterator for &'a JsObj {
    type Item = (&'a str, &'a JsValue);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Collects members; for equal keys the last one wins.
impl<K: Into<Arc<str>>, V: Into<JsValue>> FromIterator<(K, V)> for JsObj {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut members: Vec<Member> = iter
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        JsObj::from_members(&mut members, 0)
    }
}

impl<K: Into<Arc<str>>, V: Into<JsValue>> Extend<(K, V)> for JsObj {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representation_switches_at_small_max() {
        let mut o = JsObj::new();
        for i in 0..SMALL_MAX + 5 {
            o.insert(format!("k{i:03}"), i);
            assert_eq!(matches!(o.0, Repr::Small(_)), i < SMALL_MAX);
        }
        let keys: Vec<&str> = o.keys().collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        for i in 0..SMALL_MAX + 5 {
            assert_eq!(o.get(&format!("k{i:03}")), Some(&JsValue::from(i)));
        }
    }

    #[test]
    fn duplicates_keep_the_last() {
        for n in [3usize, SMALL_MAX + 3] {
            let o: JsObj = (0..n)
                .map(|i| (format!("k{}", i % 3), i))
                .chain([("k0".to_string(), 999)])
                .collect();
            assert_eq!(o.len(), 3);
            assert_eq!(o.get("k0"), Some(&JsValue::from(999)));
            let last_k1 = (0..n).rev().find(|i| i % 3 == 1).unwrap();
            assert_eq!(o.get("k1"), Some(&JsValue::from(last_k1)));
        }
    }

    #[test]
    fn remove_in_both_representations() {
        for n in [3usize, SMALL_MAX + 3] {
            let o: JsObj = (0..n).map(|i| (format!("k{i:03}"), i)).collect();
            let p = o.without("k001");
            assert_eq!(p.len(), n - 1);
            assert!(!p.contains_key("k001"));
            assert!(o.contains_key("k001"));
            let q = o.without("missing");
            assert!(q.ptr_eq(&o));
        }
    }
}
