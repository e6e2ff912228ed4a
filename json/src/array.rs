//! `JsArray`: a persistent vector of JSON values.
//!
//! Contract: two representations behind one type. Arrays of up to
//! [`SMALL_MAX`] elements live in one exactly-sized `Arc<[JsValue]>` (one
//! allocation, no spare capacity); an update copies at most `SMALL_MAX`
//! handles, a bounded cost. Longer arrays live in an `imbl::Vector` (an RRB
//! tree) behind an `Arc`, where updates copy only the path to the changed
//! chunk. Why: `imbl::Vector` allocates a 64-slot chunk for any non-empty
//! array, which for the many two- and three-element arrays of real JSON
//! costs far more than the values themselves and made parsing slower than
//! `serde_json::Value`. Nothing outside this file sees the difference.

use std::sync::Arc;

use imbl::Vector;

use crate::tree::{ArrayRepr as Repr, JsArray, JsValue};

/// Arrays up to this length use the flat representation.
pub(crate) const SMALL_MAX: usize = 32;

impl JsArray {
    /// An empty array.
    pub fn new() -> Self {
        JsArray(Repr::Small(Arc::new([])))
    }

    /// Builds an array from an exact-size iterator, choosing the
    /// representation from its length.
    pub(crate) fn from_exact<I>(iter: I) -> Self
    where
        I: ExactSizeIterator<Item = JsValue>,
    {
        if iter.len() <= SMALL_MAX {
            JsArray(Repr::Small(iter.collect()))
        } else {
            JsArray(Repr::Large(Arc::new(iter.collect())))
        }
    }

    /// Builds a short array (`N <= SMALL_MAX`) in one allocation, moving
    /// the elements once.
    pub(crate) fn from_array<const N: usize>(elems: [JsValue; N]) -> Self {
        debug_assert!(N <= SMALL_MAX);
        JsArray(Repr::Small(Arc::new(elems)))
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(s) => s.len(),
            Repr::Large(v) => v.len(),
        }
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element at `index`, or `None` past the end.
    pub fn get(&self, index: usize) -> Option<&JsValue> {
        match &self.0 {
            Repr::Small(s) => s.get(index),
            Repr::Large(v) => v.get(index),
        }
    }

    /// The first element.
    pub fn first(&self) -> Option<&JsValue> {
        self.get(0)
    }

    /// The last element.
    pub fn last(&self) -> Option<&JsValue> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The elements in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.0 {
            Repr::Small(s) => IterRepr::Small(s.iter()),
            Repr::Large(v) => IterRepr::Large(v.iter()),
        })
    }

    /// Whether both handles share the same storage (then they are equal
    /// without comparing elements).
    pub fn ptr_eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Small(a), Repr::Small(b)) => Arc::ptr_eq(a, b),
            (Repr::Large(a), Repr::Large(b)) => Arc::ptr_eq(a, b) || a.ptr_eq(b),
            _ => false,
        }
    }

    /// Appends `value` to this handle.
    pub fn push(&mut self, value: impl Into<JsValue>) {
        let len = self.len();
        self.insert(len, value);
    }

    /// Removes and returns the last element of this handle.
    pub fn pop(&mut self) -> Option<JsValue> {
        let len = self.len();
        len.checked_sub(1).and_then(|i| self.remove(i))
    }

    /// Inserts `value` at `index` in this handle, shifting later elements.
    ///
    /// # Panics
    ///
    /// When `index > len()` (use [`set`](Self::set) to pad with nulls).
    pub fn insert(&mut self, index: usize, value: impl Into<JsValue>) {
        let len = self.len();
        assert!(
            index <= len,
            "insertion index {index} is past the end ({len})"
        );
        let value = value.into();
        match &mut self.0 {
            Repr::Small(s) if len < SMALL_MAX => {
                let new: Arc<[JsValue]> = s[..index]
                    .iter()
                    .cloned()
                    .chain(std::iter::once(value))
                    .chain(s[index..].iter().cloned())
                    .collect();
                *s = new;
            }
            Repr::Small(s) => {
                let mut v: Vector<JsValue> = s.iter().cloned().collect();
                v.insert(index, value);
                self.0 = Repr::Large(Arc::new(v));
            }
            Repr::Large(v) => Arc::make_mut(v).insert(index, value),
        }
    }

    /// Removes and returns the element at `index` from this handle,
    /// shifting later elements; `None` past the end.
    pub fn remove(&mut self, index: usize) -> Option<JsValue> {
        if index >= self.len() {
            return None;
        }
        match &mut self.0 {
            Repr::Small(s) => {
                let old = s[index].clone();
                let new: Arc<[JsValue]> =
                    s[..index].iter().chain(&s[index + 1..]).cloned().collect();
                *s = new;
                Some(old)
            }
            Repr::Large(v) => Some(Arc::make_mut(v).remove(index)),
        }
    }

    /// Replaces the element at `index` in this handle, padding with nulls
    /// when `index` is past the end; returns the old element.
    pub fn replace(&mut self, index: usize, value: impl Into<JsValue>) -> Option<JsValue> {
        let value = value.into();
        let len = self.len();
        if index >= len {
            self.pad_to(index);
            self.push(value);
            return None;
        }
        match &mut self.0 {
            Repr::Small(s) => {
                if let Some(slot) = Arc::get_mut(s) {
                    return Some(std::mem::replace(&mut slot[index], value));
                }
                let old = s[index].clone();
                let mut value = Some(value);
                let new: Arc<[JsValue]> = s
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if i == index {
                            value.take().unwrap_or_default()
                        } else {
                            v.clone()
                        }
                    })
                    .collect();
                *s = new;
                Some(old)
            }
            Repr::Large(v) => Some(Arc::make_mut(v).set(index, value)),
        }
    }

    /// Gives mutable access to the element at `index` of this handle
    /// (copying shared storage first).
    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut JsValue> {
        if index >= self.len() {
            return None;
        }
        match &mut self.0 {
            Repr::Small(s) => {
                if Arc::get_mut(s).is_none() {
                    *s = s.iter().cloned().collect();
                }
                Arc::get_mut(s).map(|s| &mut s[index])
            }
            Repr::Large(v) => Arc::make_mut(v).get_mut(index),
        }
    }

    /// Appends nulls until the array has `len` elements.
    fn pad_to(&mut self, len: usize) {
        let missing = len.saturating_sub(self.len());
        if missing == 0 {
            return;
        }
        match &mut self.0 {
            Repr::Small(s) if len <= SMALL_MAX => {
                let new: Arc<[JsValue]> = s
                    .iter()
                    .cloned()
                    .chain(std::iter::repeat_n(JsValue::Null, missing))
                    .collect();
                *s = new;
            }
            Repr::Small(s) => {
                let v: Vector<JsValue> = s
                    .iter()
                    .cloned()
                    .chain(std::iter::repeat_n(JsValue::Null, missing))
                    .collect();
                self.0 = Repr::Large(Arc::new(v));
            }
            Repr::Large(v) => {
                let v = Arc::make_mut(v);
                for _ in 0..missing {
                    v.push_back(JsValue::Null);
                }
            }
        }
    }

    /// A new array with `value` at `index`: the element is replaced, or the
    /// array is padded with nulls up to `index` and `value` appended.
    /// `self` is unchanged.
    ///
    /// ```
    /// use codecbus_json::jsarr;
    ///
    /// let a = jsarr![1, 2];
    /// assert_eq!(a.set(0, "x"), jsarr!["x", 2]);
    /// assert_eq!(a.set(3, "x"), jsarr![1, 2, null, "x"]);
    /// ```
    #[must_use]
    pub fn set(&self, index: usize, value: impl Into<JsValue>) -> Self {
        let mut new = self.clone();
        new.replace(index, value);
        new
    }

    /// A new array with `value` appended; `self` is unchanged.
    #[must_use]
    pub fn appended(&self, value: impl Into<JsValue>) -> Self {
        let mut new = self.clone();
        new.push(value);
        new
    }

    /// A new array without the element at `index` (later elements shift
    /// down); `self` is unchanged. Past the end, an equal array.
    #[must_use]
    pub fn without(&self, index: usize) -> Self {
        let mut new = self.clone();
        new.remove(index);
        new
    }
}

impl Default for JsArray {
    fn default() -> Self {
        Self::new()
    }
}

/// An iterator over the elements of a [`JsArray`].
#[derive(Clone)]
pub struct Iter<'a>(IterRepr<'a>);

#[derive(Clone)]
enum IterRepr<'a> {
    Small(std::slice::Iter<'a, JsValue>),
    Large(imbl::vector::Iter<'a, JsValue, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a JsValue;

    #[inline]
    fn next(&mut self) -> Option<&'a JsValue> {
        match &mut self.0 {
            IterRepr::Small(i) => i.next(),
            IterRepr::Large(i) => i.next(),
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
            IterRepr::Small(i) => i.next_back(),
            IterRepr::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl std::iter::FusedIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a JsArray {
    type Item = &'a JsValue;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<V: Into<JsValue>> FromIterator<V> for JsArray {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        let v: Vec<JsValue> = iter.into_iter().map(Into::into).collect();
        JsArray::from_exact(v.into_iter())
    }
}

impl<V: Into<JsValue>> Extend<V> for JsArray {
    fn extend<I: IntoIterator<Item = V>>(&mut self, iter: I) {
        for v in iter {
            self.push(v);
        }
    }
}

impl<V: Into<JsValue>> From<Vec<V>> for JsArray {
    fn from(v: Vec<V>) -> Self {
        v.into_iter().collect()
    }
}

impl<V: Into<JsValue> + Clone> From<&[V]> for JsArray {
    fn from(v: &[V]) -> Self {
        v.iter().cloned().collect()
    }
}

impl<V: Into<JsValue>, const N: usize> From<[V; N]> for JsArray {
    fn from(v: [V; N]) -> Self {
        v.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representation_switches_at_small_max() {
        let mut a = JsArray::new();
        for i in 0..SMALL_MAX + 5 {
            a.push(i);
            assert_eq!(a.len(), i + 1);
            assert_eq!(
                matches!(a.0, Repr::Small(_)),
                i < SMALL_MAX,
                "length {}",
                i + 1
            );
        }
        for (i, v) in a.iter().enumerate() {
            assert_eq!(v, &JsValue::from(i));
        }
        let b = a.set(SMALL_MAX + 10, "end");
        assert_eq!(b.len(), SMALL_MAX + 11);
        assert_eq!(b.get(SMALL_MAX + 7), Some(&JsValue::Null));
        assert_eq!(a.len(), SMALL_MAX + 5);
        let c = JsArray::new().set(SMALL_MAX * 2, 1);
        assert_eq!(c.len(), SMALL_MAX * 2 + 1);
        assert!(matches!(c.0, Repr::Large(_)));
    }

    #[test]
    fn remove_and_insert_in_both_representations() {
        for n in [3, SMALL_MAX + 3] {
            let a: JsArray = (0..n).collect();
            let mut b = a.clone();
            assert_eq!(b.remove(1), Some(JsValue::from(1)));
            assert_eq!(b.len(), n - 1);
            assert_eq!(b.get(1), Some(&JsValue::from(2)));
            b.insert(0, "x");
            assert_eq!(b.first(), Some(&JsValue::from("x")));
            assert_eq!(b.pop(), Some(JsValue::from(n - 1)));
            assert_eq!(a.len(), n);
            assert_eq!(a.get(1), Some(&JsValue::from(1)));
        }
    }
}
