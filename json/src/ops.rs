//! Whole-value operations: recursive map and filter that see each value's
//! path, and union / intersection of objects.
//!
//! Contract: every traversal keeps one `JsPath` and pushes / pops a segment
//! per member or element, so a callback sees the path of the value in the
//! *input* (before any renaming or filtering). Containers are rebuilt in a
//! single pass; objects whose keys did not change skip re-sorting.

use std::sync::Arc;

use crate::path::JsPath;
use crate::tree::{JsArray, JsObj, JsValue};

type MapFn<'a> = dyn FnMut(&JsPath, &JsValue) -> JsValue + 'a;
type PredFn<'a> = dyn FnMut(&JsPath, &JsValue) -> bool + 'a;
type KeyFn<'a> = dyn FnMut(&JsPath, &str) -> Arc<str> + 'a;
type KeyPredFn<'a> = dyn FnMut(&JsPath, &str) -> bool + 'a;

fn map_values_value(v: &JsValue, path: &mut JsPath, f: &mut MapFn<'_>) -> JsValue {
    match v {
        JsValue::Object(o) => JsValue::Object(map_values_obj(o, path, f)),
        JsValue::Array(a) => JsValue::Array(map_values_arr(a, path, f)),
        scalar => f(path, scalar),
    }
}

fn map_values_obj(o: &JsObj, path: &mut JsPath, f: &mut MapFn<'_>) -> JsObj {
    let members: Vec<_> = o
        .iter_shared()
        .map(|(k, v)| {
            path.push(Arc::clone(k));
            let v = map_values_value(v, path, f);
            path.pop();
            (Arc::clone(k), v)
        })
        .collect();
    JsObj::from_sorted_unique(members.into_iter())
}

fn map_values_arr(a: &JsArray, path: &mut JsPath, f: &mut MapFn<'_>) -> JsArray {
    let elems: Vec<_> = a
        .iter()
        .enumerate()
        .map(|(i, v)| {
            path.push(i);
            let v = map_values_value(v, path, f);
            path.pop();
            v
        })
        .collect();
    JsArray::from_exact(elems.into_iter())
}

fn map_keys_value(v: &JsValue, path: &mut JsPath, f: &mut KeyFn<'_>) -> JsValue {
    match v {
        JsValue::Object(o) => JsValue::Object(map_keys_obj(o, path, f)),
        JsValue::Array(a) => JsValue::Array(map_keys_arr(a, path, f)),
        scalar => scalar.clone(),
    }
}

fn map_keys_obj(o: &JsObj, path: &mut JsPath, f: &mut KeyFn<'_>) -> JsObj {
    let mut members: Vec<_> = o
        .iter_shared()
        .map(|(k, v)| {
            path.push(Arc::clone(k));
            let key = f(path, k);
            let v = map_keys_value(v, path, f);
            path.pop();
            (key, v)
        })
        .collect();
    JsObj::from_members(&mut members, 0)
}

fn map_keys_arr(a: &JsArray, path: &mut JsPath, f: &mut KeyFn<'_>) -> JsArray {
    let elems: Vec<_> = a
        .iter()
        .enumerate()
        .map(|(i, v)| {
            path.push(i);
            let v = map_keys_value(v, path, f);
            path.pop();
            v
        })
        .collect();
    JsArray::from_exact(elems.into_iter())
}

/// What a filter asks of one member or element.
#[derive(Clone, Copy)]
enum Filter {
    /// Only scalars are tested; containers are kept and entered.
    Values,
    /// Every member or element is tested, containers before their content.
    All,
}

fn filter_value(v: &JsValue, path: &mut JsPath, mode: Filter, p: &mut PredFn<'_>) -> JsValue {
    match v {
        JsValue::Object(o) => JsValue::Object(filter_obj(o, path, mode, p)),
        JsValue::Array(a) => JsValue::Array(filter_arr(a, path, mode, p)),
        scalar => scalar.clone(),
    }
}

fn keep(v: &JsValue, path: &JsPath, mode: Filter, p: &mut PredFn<'_>) -> bool {
    match mode {
        Filter::Values if v.is_container() => true,
        _ => p(path, v),
    }
}

fn filter_obj(o: &JsObj, path: &mut JsPath, mode: Filter, p: &mut PredFn<'_>) -> JsObj {
    let mut members = Vec::with_capacity(o.len());
    for (k, v) in o.iter_shared() {
        path.push(Arc::clone(k));
        if keep(v, path, mode, p) {
            members.push((Arc::clone(k), filter_value(v, path, mode, p)));
        }
        path.pop();
    }
    JsObj::from_sorted_unique(members.into_iter())
}

fn filter_arr(a: &JsArray, path: &mut JsPath, mode: Filter, p: &mut PredFn<'_>) -> JsArray {
    let mut elems = Vec::with_capacity(a.len());
    for (i, v) in a.iter().enumerate() {
        path.push(i);
        if keep(v, path, mode, p) {
            elems.push(filter_value(v, path, mode, p));
        }
        path.pop();
    }
    JsArray::from_exact(elems.into_iter())
}

fn filter_keys_value(v: &JsValue, path: &mut JsPath, p: &mut KeyPredFn<'_>) -> JsValue {
    match v {
        JsValue::Object(o) => JsValue::Object(filter_keys_obj(o, path, p)),
        JsValue::Array(a) => JsValue::Array(filter_keys_arr(a, path, p)),
        scalar => scalar.clone(),
    }
}

fn filter_keys_obj(o: &JsObj, path: &mut JsPath, p: &mut KeyPredFn<'_>) -> JsObj {
    let mut members = Vec::with_capacity(o.len());
    for (k, v) in o.iter_shared() {
        path.push(Arc::clone(k));
        if p(path, k) {
            members.push((Arc::clone(k), filter_keys_value(v, path, p)));
        }
        path.pop();
    }
    JsObj::from_sorted_unique(members.into_iter())
}

fn filter_keys_arr(a: &JsArray, path: &mut JsPath, p: &mut KeyPredFn<'_>) -> JsArray {
    let elems: Vec<_> = a
        .iter()
        .enumerate()
        .map(|(i, v)| {
            path.push(i);
            let v = filter_keys_value(v, path, p);
            path.pop();
            v
        })
        .collect();
    JsArray::from_exact(elems.into_iter())
}

impl JsValue {
    /// A new value where every scalar (everything but arrays and objects),
    /// at any depth, is replaced by `f(path, value)`; the structure is kept.
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a": 1, "b": { "c": [2, "x"] } });
    /// let doubled = v.map_values(|_path, v| match v.as_i64() {
    ///     Some(n) => JsValue::from(n * 2),
    ///     None => v.clone(),
    /// });
    /// assert_eq!(doubled.to_string(), r#"{"a":2,"b":{"c":[4,"x"]}}"#);
    /// ```
    #[must_use]
    pub fn map_values<F>(&self, mut f: F) -> JsValue
    where
        F: FnMut(&JsPath, &JsValue) -> JsValue,
    {
        map_values_value(self, &mut JsPath::root(), &mut f)
    }

    /// A new value where every object key, at any depth, is replaced by
    /// `f(path, key)` (`path` ends with the old key). When two keys of one
    /// object map to the same name, the member whose old key sorts last
    /// wins.
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a": { "b": 1 } });
    /// let upper = v.map_keys(|_path, k| k.to_uppercase());
    /// assert_eq!(upper.to_string(), r#"{"A":{"B":1}}"#);
    /// ```
    #[must_use]
    pub fn map_keys<F, K>(&self, mut f: F) -> JsValue
    where
        F: FnMut(&JsPath, &str) -> K,
        K: Into<Arc<str>>,
    {
        map_keys_value(self, &mut JsPath::root(), &mut |p, k| f(p, k).into())
    }

    /// A new value keeping only the scalar members and elements, at any
    /// depth, for which `p(path, value)` holds; arrays and objects are kept
    /// and filtered inside. Array elements after a removed one shift down
    /// (the paths `p` sees are those of the input).
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "a": null, "b": [1, null, 2] });
    /// let no_nulls = v.filter_values(|_path, v| !v.is_null());
    /// assert_eq!(no_nulls.to_string(), r#"{"b":[1,2]}"#);
    /// ```
    #[must_use]
    pub fn filter_values<F>(&self, mut p: F) -> JsValue
    where
        F: FnMut(&JsPath, &JsValue) -> bool,
    {
        filter_value(self, &mut JsPath::root(), Filter::Values, &mut p)
    }

    /// A new value keeping only the object members, at any depth, for which
    /// `p(path, key)` holds (a removed member takes its whole value along).
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "id": 1, "_rev": 2, "x": { "_tmp": 3, "y": 4 } });
    /// let public = v.filter_keys(|_path, k| !k.starts_with('_'));
    /// assert_eq!(public.to_string(), r#"{"id":1,"x":{"y":4}}"#);
    /// ```
    #[must_use]
    pub fn filter_keys<F>(&self, mut p: F) -> JsValue
    where
        F: FnMut(&JsPath, &str) -> bool,
    {
        filter_keys_value(self, &mut JsPath::root(), &mut p)
    }

    /// A new value keeping only the members and elements, at any depth and
    /// of any type, for which `p(path, value)` holds. A container is tested
    /// before its content; when it is removed its content is not visited.
    ///
    /// ```
    /// use codecbus_json::JsValue;
    /// use codecbus_json::jsobj;
    ///
    /// let v = JsValue::from(jsobj! { "keep": { "n": 1 }, "drop": { "n": 2 } });
    /// let small = v.filter(|path, _| path.len() != 1 || path.last().and_then(|s| s.as_key()) == Some("keep"));
    /// assert_eq!(small.to_string(), r#"{"keep":{"n":1}}"#);
    /// ```
    #[must_use]
    pub fn filter<F>(&self, mut p: F) -> JsValue
    where
        F: FnMut(&JsPath, &JsValue) -> bool,
    {
        filter_value(self, &mut JsPath::root(), Filter::All, &mut p)
    }
}

macro_rules! forward_whole_value_ops {
    ($ty:ident, $map_values:ident, $map_keys:ident, $filter:ident, $filter_keys:ident) => {
        impl $ty {
            /// As [`JsValue::map_values`], for this container.
            #[must_use]
            pub fn map_values<F>(&self, mut f: F) -> $ty
            where
                F: FnMut(&JsPath, &JsValue) -> JsValue,
            {
                $map_values(self, &mut JsPath::root(), &mut f)
            }

            /// As [`JsValue::map_keys`], for this container.
            #[must_use]
            pub fn map_keys<F, K>(&self, mut f: F) -> $ty
            where
                F: FnMut(&JsPath, &str) -> K,
                K: Into<Arc<str>>,
            {
                $map_keys(self, &mut JsPath::root(), &mut |p, k| f(p, k).into())
            }

            /// As [`JsValue::filter_values`], for this container.
            #[must_use]
            pub fn filter_values<F>(&self, mut p: F) -> $ty
            where
                F: FnMut(&JsPath, &JsValue) -> bool,
            {
                $filter(self, &mut JsPath::root(), Filter::Values, &mut p)
            }

            /// As [`JsValue::filter_keys`], for this container.
            #[must_use]
            pub fn filter_keys<F>(&self, mut p: F) -> $ty
            where
                F: FnMut(&JsPath, &str) -> bool,
            {
                $filter_keys(self, &mut JsPath::root(), &mut p)
            }

            /// As [`JsValue::filter`], for this container.
            #[must_use]
            pub fn filter<F>(&self, mut p: F) -> $ty
            where
                F: FnMut(&JsPath, &JsValue) -> bool,
            {
                $filter(self, &mut JsPath::root(), Filter::All, &mut p)
            }
        }
    };
}

forward_whole_value_ops!(
    JsObj,
    map_values_obj,
    map_keys_obj,
    filter_obj,
    filter_keys_obj
);
forward_whole_value_ops!(
    JsArray,
    map_values_arr,
    map_keys_arr,
    filter_arr,
    filter_keys_arr
);

impl JsObj {
    /// The members of both objects; where both have a key, `self`'s value
    /// wins. Cost: O(m log n), m being the smaller object.
    ///
    /// ```
    /// use codecbus_json::jsobj;
    ///
    /// let a = jsobj! { "x": 1, "y": 1 };
    /// let b = jsobj! { "y": 2, "z": 2 };
    /// assert_eq!(a.union(&b), jsobj! { "x": 1, "y": 1, "z": 2 });
    /// ```
    #[must_use]
    pub fn union(&self, other: &JsObj) -> JsObj {
        self.union_with(other, &mut |mine, _| mine.clone())
    }

    /// As [`union`](Self::union), but where both objects hold an object
    /// under the same key, those are united recursively.
    ///
    /// ```
    /// use codecbus_json::jsobj;
    ///
    /// let defaults = jsobj! { "db": { "host": "localhost", "port": 5432 } };
    /// let config = jsobj! { "db": { "host": "db1" } };
    /// assert_eq!(
    ///     config.union_deep(&defaults),
    ///     jsobj! { "db": { "host": "db1", "port": 5432 } },
    /// );
    /// ```
    #[must_use]
    pub fn union_deep(&self, other: &JsObj) -> JsObj {
        self.union_with(other, &mut |mine, theirs| match (mine, theirs) {
            (JsValue::Object(a), JsValue::Object(b)) => JsValue::Object(a.union_deep(b)),
            _ => mine.clone(),
        })
    }

    fn union_with(
        &self,
        other: &JsObj,
        both: &mut dyn FnMut(&JsValue, &JsValue) -> JsValue,
    ) -> JsObj {
        if self.len() >= other.len() {
            let mut out = self.clone();
            for (k, theirs) in other.iter_shared() {
                match self.get(k) {
                    None => {
                        out.insert(Arc::clone(k), theirs.clone());
                    }
                    Some(mine) => {
                        let v = both(mine, theirs);
                        if !v.ptr_eq(mine) {
                            out.insert(Arc::clone(k), v);
                        }
                    }
                }
            }
            out
        } else {
            let mut out = other.clone();
            for (k, mine) in self.iter_shared() {
                let v = match other.get(k) {
                    None => mine.clone(),
                    Some(theirs) => both(mine, theirs),
                };
                out.insert(Arc::clone(k), v);
            }
            out
        }
    }

    /// The members present in both objects with equal values.
    ///
    /// ```
    /// use codecbus_json::jsobj;
    ///
    /// let a = jsobj! { "x": 1, "y": 1, "z": { "p": 1 } };
    /// let b = jsobj! { "x": 1.0, "y": 2, "z": { "p": 1, "q": 2 } };
    /// assert_eq!(a.intersection(&b), jsobj! { "x": 1 });
    /// ```
    #[must_use]
    pub fn intersection(&self, other: &JsObj) -> JsObj {
        self.intersection_with(other, &mut |mine, theirs| {
            (mine == theirs).then(|| mine.clone())
        })
    }

    /// As [`intersection`](Self::intersection), but where both objects
    /// hold an object under the same key, those are intersected recursively
    /// (an empty result is kept as `{}`).
    ///
    /// ```
    /// use codecbus_json::jsobj;
    ///
    /// let a = jsobj! { "x": 1, "z": { "p": 1, "r": 0 } };
    /// let b = jsobj! { "x": 2, "z": { "p": 1, "q": 2 } };
    /// assert_eq!(a.intersection_deep(&b), jsobj! { "z": { "p": 1 } });
    /// ```
    #[must_use]
    pub fn intersection_deep(&self, other: &JsObj) -> JsObj {
        self.intersection_with(other, &mut |mine, theirs| match (mine, theirs) {
            (JsValue::Object(a), JsValue::Object(b)) => {
                Some(JsValue::Object(a.intersection_deep(b)))
            }
            _ => (mine == theirs).then(|| mine.clone()),
        })
    }

    fn intersection_with(
        &self,
        other: &JsObj,
        both: &mut dyn FnMut(&JsValue, &JsValue) -> Option<JsValue>,
    ) -> JsObj {
        let mut members = Vec::new();
        if self.len() <= other.len() {
            for (k, mine) in self.iter_shared() {
                if let Some(v) = other.get(k).and_then(|theirs| both(mine, theirs)) {
                    members.push((Arc::clone(k), v));
                }
            }
        } else {
            for (k, theirs) in other.iter_shared() {
                if let Some(v) = self.get(k).and_then(|mine| both(mine, theirs)) {
                    members.push((Arc::clone(k), v));
                }
            }
        }
        JsObj::from_sorted_unique(members.into_iter())
    }
}
