//! Sequences, sets and maps: `std` and `imbl`.
//!
//! Sequences and sets encode as arrays, maps as maps, as `rmp-serde` does
//! (their shapes: [`Shape::Array`] and [`Shape::Map`]).
//! Declared lengths are checked against the input by the reader before any
//! capacity is reserved, and reservations are charged to the allocation
//! budget. Map rule for duplicate keys: the last value wins (as in
//! `serde_json` and `rmp-serde`). A decode error in a value is located
//! under its key (`/7` for the integer key 7); one in a key is located at
//! the map, as a key has no JSON Pointer of its own.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};

use super::container_transform;
use crate::codec::{Decode, Encode, Immutable, MessageCodec, MessageType};

use crate::error::{DecodeError, EncodeError};
use crate::msgpack::flat::{self, Plan, Planned};
use crate::msgpack::read::Reader;
use crate::msgpack::write::{Run, Writer, bounded};
use crate::shape::{Definitions, Shape};

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
fn decode_entry<'de, K: Decode<'de>, V: Decode<'de>>(
    r: &mut Reader<'de>,
) -> Result<(K, V), DecodeError> {
    let key_at = r.position();
    // A key has no JSON Pointer of its own: an error in it keeps the
    // map's, which the enclosing decoders add.
    let k = K::decode(r)?;
    let v = V::decode(r).map_err(|e| r.key_path(e, key_at))?;
    Ok((k, v))
}

/// The plan of a sequence of `T`s whose form is flat (`Encode::FLAT`).
struct PlanOf<T>(std::marker::PhantomData<T>);

impl<T: Encode> Planned for PlanOf<T> {
    type Item = T;
    const PLAN: Option<Plan> = Plan::new(T::FLAT, std::mem::size_of::<T>());
}

/// A sequence whose elements may lie side by side in memory, where a
/// flat element type (`Encode::FLAT`) is written by shuffles.
pub(crate) trait Elements<T> {
    /// The elements as one slice, when they are.
    fn contiguous(&self) -> Option<&[T]> {
        None
    }
}

impl<T> Elements<T> for Vec<T> {
    fn contiguous(&self) -> Option<&[T]> {
        Some(self)
    }
}

impl<T> Elements<T> for VecDeque<T> {
    fn contiguous(&self) -> Option<&[T]> {
        match self.as_slices() {
            (front, []) => Some(front),
            _ => None,
        }
    }
}

impl<T, S> Elements<T> for HashSet<T, S> {}
impl<T> Elements<T> for BTreeSet<T> {}
impl<T: Clone> Elements<T> for imbl::Vector<T> {}
impl<T> Elements<T> for imbl::HashSet<T> {}
impl<T> Elements<T> for imbl::OrdSet<T> {}

/// Writes a sequence's elements: with byte shuffles when their type is
/// flat (`Encode::FLAT`) and they lie in one slice (`contiguous`); a run
/// at a time when it has a bound (`Encode::MAX_LEN`, a `Vec<u32>`, a
/// `Vec` of structs of scalars), straight into the writer's buffer with
/// one capacity check per run instead of one per value; one by one
/// otherwise.
#[inline]
pub(crate) fn encode_elements<'a, T: Encode + 'a>(
    items: impl Iterator<Item = &'a T>,
    len: usize,
    contiguous: Option<&[T]>,
    w: &mut Writer,
) -> Result<(), EncodeError> {
    const RUN: usize = 4096;
    if let Some(all) = contiguous
        && flat::write::<PlanOf<T>>(all, w)
    {
        return Ok(());
    }
    match T::MAX_LEN {
        // A sequence that fits in one run (most): one reservation, a loop.
        Some(max_len) if len <= RUN / max_len.max(1) => {
            w.write_bounded_run(len * max_len, |out| {
                for item in items {
                    out.value_of(max_len, item);
                }
            })?;
        }
        Some(max_len) if max_len <= RUN / 8 => {
            let mut items = items.peekable();
            let mut left = len;
            while items.peek().is_some() {
                // No more than the elements left can take.
                let run = RUN.min(left.saturating_mul(max_len)).max(max_len);
                left = left.saturating_sub(run / max_len);
                w.write_bounded_run(run, |out| {
                    while out.room() >= max_len {
                        let Some(item) = items.next() else { break };
                        out.value_of(max_len, item);
                    }
                })?;
            }
        }
        _ => {
            for item in items {
                item.encode(w)?;
            }
        }
    }
    Ok(())
}

/// The bound of a sequence of `len` elements of `T` (`Encode::bound`):
/// its header and `len` times the elements' `MAX_LEN`, when they have one.
#[inline(always)]
pub(crate) fn seq_bound<T: Encode>(len: usize) -> Option<usize> {
    bounded::len_bound(len, T::MAX_LEN?)
}

/// A sequence of `len` elements written into a run (`Encode::encode_bounded`),
/// the room for each checked once.
#[inline(always)]
pub(crate) fn put_seq<'a, T: Encode + 'a>(
    items: impl Iterator<Item = &'a T>,
    len: usize,
    out: &mut Run<'_>,
) {
    bounded::put_array_len(out, len);
    match T::MAX_LEN {
        Some(max_len) => {
            for item in items {
                out.value_of(max_len, item);
            }
        }
        None => {
            for item in items {
                item.encode_bounded(out);
            }
        }
    }
}

/// How a sequence's builder takes one decoded element (`Vec`'s, straight
/// into its spare capacity, is in `place.rs`).
pub(crate) trait Take<T> {
    /// Decodes one element from `r` and adds it.
    fn take<'de>(&mut self, r: &mut Reader<'de>) -> Result<(), DecodeError>
    where
        T: Decode<'de>;

    /// Adds an element already decoded.
    fn add(&mut self, value: T);
}

/// The first elements of a sequence of `len`, when they have one length
/// (`Decode::FIXED_LEN`: floats, booleans, small structs of them), read
/// from their forms with one bounds check for all, until one is not in
/// its form; returns how many. The rest are read one by one.
///
/// Only elements of up to 16 bytes, which come back in registers: a
/// larger one is returned through memory and copied into place, slower
/// than decoded into its place one by one (`Decode::decode_to`).
#[inline(always)]
fn take_fixed<'de, T: Decode<'de>, B: Take<T>>(
    r: &mut Reader<'de>,
    out: &mut B,
    len: usize,
) -> usize {
    let (Some(each), Some(levels)) = (T::FIXED_LEN, T::NESTING) else {
        return 0;
    };
    if size_of::<T>() > 16 {
        return 0;
    }
    if each == 0 || r.fits(levels).is_err() {
        return 0;
    }
    let rest = r.rest();
    let mut taken = 0;
    for form in rest.chunks_exact(each).take(len) {
        let Some(value) = T::decode_fixed(form) else {
            break;
        };
        out.add(value);
        taken += 1;
    }
    r.set_rest(&rest[taken * each..]);
    taken
}

// `take_by!(Builder<T>, [bounds], [other generics], add)`: a builder that
// takes its elements by a method, each decoded into a slot first.
macro_rules! take_by {
    ($ty:ty, [$($bound:tt)*], [$($gen:tt)*], $add:ident) => {
        impl<T $($bound)*, $($gen)*> Take<T> for $ty {
            #[inline(always)]
            fn take<'de>(&mut self, r: &mut Reader<'de>) -> Result<(), DecodeError>
            where
                T: Decode<'de>,
            {
                let mut slot = None;
                T::decode_in_place(r, &mut slot)?;
                match slot {
                    Some(v) => {
                        self.$add(v);
                        Ok(())
                    }
                    None => Err(r.no_value()),
                }
            }

            #[inline(always)]
            fn add(&mut self, value: T) {
                self.$add(value);
            }
        }
    };
}

take_by!(VecDeque<T>, [], [], push_back);
take_by!(HashSet<T, S>, [: Eq + Hash], [S: BuildHasher], insert);
take_by!(imbl::Vector<T>, [: Clone], [], push_back);
take_by!(imbl::HashSet<T>, [: Clone + Eq + Hash], [], insert);
take_by!(imbl::OrdSet<T>, [: Clone + Ord], [], insert);

// `seq!(Type, Elem: [+ element bounds], [other generics], new)`: the
// three impls of a sequence or set, built by `new(len)` and filled through
// its `Take`; the element bounds are added to `Encode`, `Decode<'de>` and
// `MessageCodec` alike.
macro_rules! seq {
    // The ordered collections collect their elements into a `Vec` first
    // and are built from it (`sorted`): one sort and a bulk build of the
    // tree instead of a search from the root per element.
    (@impl { $($copy:tt)* } $ty:ty, $elem:ident: [$($bound:tt)*], [$($gen:tt)*], $new:expr) => {
        seq!(@impl { $($copy)* } $ty, $elem: [$($bound)*], [$($gen)*], $new; sorted ::core::convert::identity);
    };
    (@impl { $($copy:tt)* } $ty:ty, $elem:ident: [$($bound:tt)*], [$($gen:tt)*], $new:expr; sorted $build:expr) => {
        impl<$elem: Encode $($bound)*, $($gen)*> Encode for $ty {
            #[inline(always)]
            fn bound(&self) -> Option<usize> {
                seq_bound::<$elem>(self.len())
            }

            #[inline(always)]
            fn encode_bounded(&self, out: &mut Run<'_>) {
                put_seq(self.iter(), self.len(), out);
            }

            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_array_len(self.len())?;
                encode_elements(self.iter(), self.len(), Elements::contiguous(self), w)
            }
        }
        impl<'de, $elem: Decode<'de> $($bound)*, $($gen)*> Decode<'de> for $ty {
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let len = seq_header::<$elem>(r)?;
                #[allow(clippy::redundant_closure_call)]
                let mut out = ($new)(len);
                let fixed = take_fixed::<$elem, _>(r, &mut out, len);
                for i in fixed..len {
                    Take::<$elem>::take(&mut out, r).map_err(|e| e.in_index(i))?;
                }
                r.leave();
                Ok(($build)(out))
            }
        }
        impl<$elem: MessageCodec $($bound)*, $($gen)*> MessageType for $ty {}
        impl<$elem: MessageCodec $($bound)*, $($gen)*> MessageCodec for $ty {
            container_transform!($elem::IMMUTABLE);
            $($copy)*
            fn shape(defs: &mut Definitions) -> Shape {
                Shape::Array(Box::new($elem::shape(defs)))
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

// `map!(Type, K: [+ key bounds], V: [+ value bounds], [other generics], new)`.
macro_rules! map {
    (@impl { $($copy:tt)* } $ty:ty, K: [$($kb:tt)*], V: [$($vb:tt)*], [$($gen:tt)*], $new:expr) => {
        map!(@impl { $($copy)* } $ty, K: [$($kb)*], V: [$($vb)*], [$($gen)*], $new; insert);
    };
    // `sorted`: the pairs are collected into a `Vec` and the map built from
    // it, which keeps the last of equal keys, as inserting one by one does.
    (@impl { $($copy:tt)* } $ty:ty, K: [$($kb:tt)*], V: [$($vb:tt)*], [$($gen:tt)*], $new:expr; sorted $build:expr) => {
        map!(@impl { $($copy)* } $ty, K: [$($kb)*], V: [$($vb)*], [$($gen)*], $new; push; $build);
    };
    (@impl { $($copy:tt)* } $ty:ty, K: [$($kb:tt)*], V: [$($vb:tt)*], [$($gen:tt)*], $new:expr; insert) => {
        map!(@impl { $($copy)* } $ty, K: [$($kb)*], V: [$($vb)*], [$($gen)*], $new; insert; ::core::convert::identity);
    };
    (@impl { $($copy:tt)* } $ty:ty, K: [$($kb:tt)*], V: [$($vb:tt)*], [$($gen:tt)*], $new:expr; $add:ident; $build:expr) => {
        impl<K: Encode $($kb)*, V: Encode $($vb)*, $($gen)*> Encode for $ty {
            fn encode(&self, w: &mut Writer) -> Result<(), EncodeError> {
                w.write_map_len(self.len())?;
                for (k, v) in self.iter() {
                    k.encode(w)?;
                    v.encode(w)?;
                }
                Ok(())
            }
        }
        impl<'de, K: Decode<'de> $($kb)*, V: Decode<'de> $($vb)*, $($gen)*> Decode<'de> for $ty {
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                let len = map_header::<K, V>(r)?;
                #[allow(clippy::redundant_closure_call)]
                let mut out = ($new)(len);
                for _ in 0..len {
                    let entry = decode_entry::<K, V>(r)?;
                    map!(@add out, $add, entry);
                }
                r.leave();
                Ok(($build)(out))
            }
        }
        impl<K: MessageCodec $($kb)*, V: MessageCodec $($vb)*, $($gen)*> MessageType for $ty {}
        impl<K: MessageCodec $($kb)*, V: MessageCodec $($vb)*, $($gen)*> MessageCodec for $ty {
            container_transform!(K::IMMUTABLE && V::IMMUTABLE);
            $($copy)*
            fn shape(defs: &mut Definitions) -> Shape {
                Shape::Map(Box::new(K::shape(defs)), Box::new(V::shape(defs)))
            }
        }
    };
    (@add $out:ident, insert, $entry:ident) => {
        $out.insert($entry.0, $entry.1)
    };
    (@add $out:ident, push, $entry:ident) => {
        $out.push($entry)
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
seq!(Vec<T>, T: [], [], Vec::with_capacity);
seq!(VecDeque<T>, T: [], [], VecDeque::with_capacity);
seq!(HashSet<T, S>, T: [+ Eq + Hash], [S: BuildHasher + Default],
    |n| HashSet::with_capacity_and_hasher(n, S::default()));
seq!(BTreeSet<T>, T: [+ Ord], [], Vec::with_capacity; sorted BTreeSet::from_iter);
map!(HashMap<K, V, S>, K: [+ Eq + Hash], V: [], [S: BuildHasher + Default],
    |n| HashMap::with_capacity_and_hasher(n, S::default()));
map!(BTreeMap<K, V>, K: [+ Ord], V: [], [], Vec::with_capacity; sorted BTreeMap::from_iter);

// imbl: the persistent collections the project's own types use. Their
// clones are O(1), but they are only `Immutable` when their contents are.
impl<T: Immutable + Clone + Send> Immutable for imbl::Vector<T> {}
impl<T: Immutable + Send> Immutable for imbl::HashSet<T> {}
impl<T: Immutable + Send> Immutable for imbl::OrdSet<T> {}
impl<K: Immutable + Send, V: Immutable + Send> Immutable for imbl::HashMap<K, V> {}
impl<K: Immutable + Send, V: Immutable + Send> Immutable for imbl::OrdMap<K, V> {}

seq!(clone imbl::Vector<T>, T: [+ Clone], [], |_| imbl::Vector::new());
seq!(clone imbl::HashSet<T>, T: [+ Clone + Eq + Hash], [], |_| imbl::HashSet::new());
seq!(clone imbl::OrdSet<T>, T: [+ Clone + Ord], [], |_| imbl::OrdSet::new());
map!(clone imbl::HashMap<K, V>, K: [+ Clone + Eq + Hash], V: [+ Clone], [], |_| imbl::HashMap::new());
map!(clone imbl::OrdMap<K, V>, K: [+ Clone + Ord], V: [+ Clone], [], |_| imbl::OrdMap::new());

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use crate::codec::{from_slice, to_vec};

    #[test]
    fn ordered_collections_sort_and_keep_the_last_of_equal_keys() {
        // {"b": 1, "a": 2, "b": 3}
        let bytes = b"\x83\xa1b\x01\xa1a\x02\xa1b\x03";
        let map: BTreeMap<String, u8> = from_slice(bytes).unwrap();
        assert_eq!(
            map.into_iter().collect::<Vec<_>>(),
            [("a".to_string(), 2), ("b".to_string(), 3)]
        );
        let set: BTreeSet<u8> = from_slice(b"\x94\x03\x01\x03\x02").unwrap();
        assert_eq!(set.into_iter().collect::<Vec<_>>(), [1, 2, 3]);
        let map: BTreeMap<u16, Vec<u8>> = (0..100).map(|i| (99 - i, vec![i as u8])).collect();
        assert_eq!(
            from_slice::<BTreeMap<u16, Vec<u8>>>(&to_vec(&map).unwrap()).unwrap(),
            map
        );
    }
}
