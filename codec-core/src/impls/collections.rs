//! Sequences, sets and maps: `std`, `imbl`, and `im` behind its feature.
//!
//! Sequences and sets encode as arrays, maps as maps, as `rmp-serde` does.
//! Declared lengths are checked against the input by the reader before any
//! capacity is reserved, and reservations are charged to the allocation
//! budget. Map rule for duplicate keys: the last value wins (as in
//! `serde_json` and `rmp-serde`).
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};

use super::container_transform;
use crate::{DecodeError, EncodeError, Immutable, MessageCodec, Reader, Writer};

/// Reads an array header and reserves for `T` elements, charging the budget.
#[inline]
fn seq_header<T>(r: &mut Reader<'_>) -> Result<usize, DecodeError> {
    let len = r.read_array_len()?;
    r.charge_alloc(len.saturating_mul(std::mem::size_of::<T>()))?;
    r.enter()?;
    Ok(len)
}

#[inline]
fn map_header<K, V>(r: &mut Reader<'_>) -> Result<usize, DecodeError> {
    let len = r.read_map_len()?;
    r.charge_alloc(len.saturating_mul(std::mem::size_of::<(K, V)>()))?;
    r.enter()?;
    Ok(len)
}

#[inline]
fn decode_entry<K: MessageCodec, V: MessageCodec>(
    r: &mut Reader<'_>,
    i: usize,
) -> Result<(K, V), DecodeError> {
    let key_at = r.position();
    let k = K::decode(r).map_err(|e| e.in_index(i))?;
    let v = V::decode(r).map_err(|e| r.key_path(e, key_at, i))?;
    Ok((k, v))
}

macro_rules! seq {
    (@impl { $($copy:tt)* } $(#[$meta:meta])* [$($gen:tt)*] $ty:ty, $elem:ident, $new:expr, $push:ident) => {
        $(#[$meta])*
        impl<$($gen)*> MessageCodec for $ty {
            container_transform!($elem::IMMUTABLE);
            $($copy)*
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_array_len(self.len())?;
                for v in self.iter() {
                    v.encode(w)?;
                }
                Ok(())
            }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let len = seq_header::<$elem>(r)?;
                #[allow(clippy::redundant_closure_call)]
                let mut out: Self = ($new)(len);
                for i in 0..len {
                    out.$push($elem::decode(r).map_err(|e| e.in_index(i))?);
                }
                r.leave();
                Ok(out)
            }
        }
    };
    // The persistent collections copy by `Clone`: O(1), and writes copy
    // only the nodes they touch, so the copy is as independent as a deep one.
    (clone $($rest:tt)*) => {
        seq!(@impl { crate::impls::copy_by_clone!(); } $($rest)*);
    };
    ($($rest:tt)*) => {
        seq!(@impl {
            fn deep_copy(value: &Self) -> Option<Self> {
                value.iter().map(<_ as MessageCodec>::deep_copy).collect()
            }
        } $($rest)*);
    };
}

macro_rules! map {
    (@impl { $($copy:tt)* } $(#[$meta:meta])* [$($gen:tt)*] $ty:ty, $new:expr) => {
        $(#[$meta])*
        impl<$($gen)*> MessageCodec for $ty {
            container_transform!(K::IMMUTABLE && V::IMMUTABLE);
            $($copy)*
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_map_len(self.len())?;
                for (k, v) in self.iter() {
                    k.encode(w)?;
                    v.encode(w)?;
                }
                Ok(())
            }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let len = map_header::<K, V>(r)?;
                #[allow(clippy::redundant_closure_call)]
                let mut out: Self = ($new)(len);
                for i in 0..len {
                    let (k, v) = decode_entry::<K, V>(r, i)?;
                    out.insert(k, v);
                }
                r.leave();
                Ok(out)
            }
        }
    };
    (clone $($rest:tt)*) => {
        map!(@impl { crate::impls::copy_by_clone!(); } $($rest)*);
    };
    ($($rest:tt)*) => {
        map!(@impl {
            fn deep_copy(value: &Self) -> Option<Self> {
                value
                    .iter()
                    .map(|(k, v)| Some((K::deep_copy(k)?, V::deep_copy(v)?)))
                    .collect()
            }
        } $($rest)*);
    };
}

impl<T: Immutable> Immutable for Vec<T> {}
impl<T: Immutable> Immutable for VecDeque<T> {}
impl<T: Immutable, S: Sync> Immutable for HashSet<T, S> {}
impl<T: Immutable> Immutable for BTreeSet<T> {}
impl<K: Immutable, V: Immutable, S: Sync> Immutable for HashMap<K, V, S> {}
impl<K: Immutable, V: Immutable> Immutable for BTreeMap<K, V> {}

// No `Clone` bounds on the elements: copies go through `deep_copy`, so an
// immutable type that is not `Clone` can be an element.
seq!([T: MessageCodec] Vec<T>, T, Vec::with_capacity, push);
seq!([T: MessageCodec] VecDeque<T>, T, VecDeque::with_capacity, push_back);
seq!([T: MessageCodec + Eq + Hash, S: BuildHasher + Default] HashSet<T, S>, T,
    |n| HashSet::with_capacity_and_hasher(n, S::default()), insert);
seq!([T: MessageCodec + Ord] BTreeSet<T>, T, |_| BTreeSet::new(), insert);
map!([K: MessageCodec + Eq + Hash, V: MessageCodec, S: BuildHasher + Default]
    HashMap<K, V, S>, |n| HashMap::with_capacity_and_hasher(n, S::default()));
map!([K: MessageCodec + Ord, V: MessageCodec] BTreeMap<K, V>, |_| BTreeMap::new());

// imbl: the persistent collections the project's own types use. Their
// clones are O(1), but they are only `Immutable` when their contents are.
impl<T: Immutable + Clone + Send> Immutable for imbl::Vector<T> {}
impl<T: Immutable + Send> Immutable for imbl::HashSet<T> {}
impl<T: Immutable + Send> Immutable for imbl::OrdSet<T> {}
impl<K: Immutable + Send, V: Immutable + Send> Immutable for imbl::HashMap<K, V> {}
impl<K: Immutable + Send, V: Immutable + Send> Immutable for imbl::OrdMap<K, V> {}

seq!(clone [T: MessageCodec + Clone] imbl::Vector<T>, T, |_| imbl::Vector::new(), push_back);
seq!(clone [T: MessageCodec + Clone + Eq + Hash] imbl::HashSet<T>, T, |_| imbl::HashSet::new(), insert);
seq!(clone [T: MessageCodec + Clone + Ord] imbl::OrdSet<T>, T, |_| imbl::OrdSet::new(), insert);
map!(clone [K: MessageCodec + Clone + Eq + Hash, V: MessageCodec + Clone] imbl::HashMap<K, V>, |_| imbl::HashMap::new());
map!(clone [K: MessageCodec + Clone + Ord, V: MessageCodec + Clone] imbl::OrdMap<K, V>, |_| imbl::OrdMap::new());

#[cfg(feature = "im")]
mod im_support {
    use std::hash::{BuildHasher, Hash};

    use super::{decode_entry, map_header, seq_header};
    use crate::impls::container_transform;
    use crate::{DecodeError, EncodeError, Immutable, MessageCodec, Reader, Writer};

    impl<T: Immutable + Clone + Send> Immutable for im::Vector<T> {}
    impl<T: Immutable + Send, S: Sync + Send> Immutable for im::HashSet<T, S> {}
    impl<T: Immutable + Send> Immutable for im::OrdSet<T> {}
    impl<K: Immutable + Send, V: Immutable + Send, S: Sync + Send> Immutable for im::HashMap<K, V, S> {}
    impl<K: Immutable + Send, V: Immutable + Send> Immutable for im::OrdMap<K, V> {}

    seq!(clone [T: MessageCodec + Clone] im::Vector<T>, T, |_| im::Vector::new(), push_back);
    seq!(clone [T: MessageCodec + Clone + Eq + Hash, S: BuildHasher + Default + Clone] im::HashSet<T, S>, T,
        |_| im::HashSet::with_hasher(S::default()), insert);
    seq!(clone [T: MessageCodec + Clone + Ord] im::OrdSet<T>, T, |_| im::OrdSet::new(), insert);
    map!(clone [K: MessageCodec + Clone + Eq + Hash, V: MessageCodec + Clone, S: BuildHasher + Default + Clone]
        im::HashMap<K, V, S>, |_| im::HashMap::with_hasher(S::default()));
    map!(clone [K: MessageCodec + Clone + Ord, V: MessageCodec + Clone] im::OrdMap<K, V>, |_| im::OrdMap::new());
}
