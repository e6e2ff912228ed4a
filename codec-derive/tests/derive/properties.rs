//! Property tests over nested derived types in both modes: round trips,
//! byte agreement with rmp-serde on random values, and decoding of
//! arbitrary or corrupted bytes never panicking.

use std::collections::BTreeMap;

use codecbus_core::{MessageCodec, from_slice, to_vec};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

mod bin {
    use serde::Serializer;
    use serde::de::{Deserializer, Error, Visitor};

    pub(crate) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_byte_buf(V)
    }
}

/// Compares floats by bits, so NaN equals the same NaN: a round trip must
/// preserve every bit.
macro_rules! leaf {
    ($name:ident $(, $attr:meta)?) => {
        #[derive(MessageCodec, Serialize, Deserialize, Clone, Debug)]
        $(#[$attr])?
        struct $name {
            a: i64,
            b: Option<String>,
            c: Vec<u8>,
            d: f64,
            e: bool,
            f: f32,
        }

        impl PartialEq for $name {
            fn eq(&self, o: &Self) -> bool {
                self.a == o.a
                    && self.b == o.b
                    && self.c == o.c
                    && self.d.to_bits() == o.d.to_bits()
                    && self.e == o.e
                    && self.f.to_bits() == o.f.to_bits()
            }
        }
    };
}

leaf!(Leaf);
leaf!(LeafA, codec(as_array));

macro_rules! node {
    ($name:ident, $leaf:ident $(, $attr:meta)?) => {
        #[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
        $(#[$attr])?
        enum $name {
            Empty,
            Value($leaf),
            Pair(i32, String),
            Branch {
                left: Box<$name>,
                right: Option<Box<$name>>,
                tags: BTreeMap<String, u16>,
            },
        }
    };
}

node!(Node, Leaf);
node!(NodeA, LeafA, codec(as_array));

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Doc {
    id: u64,
    root: Node,
    list: Vec<Node>,
    #[codec(skip_if = "Option::is_none")]
    #[serde(skip_serializing_if = "Option::is_none", default)]
    extra: Option<Leaf>,
    #[codec(bytes)]
    #[serde(with = "bin")]
    blob: Vec<u8>,
    #[codec(default)]
    #[serde(default)]
    n: u16,
    id_wrapper: Id,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct DocA {
    id: u64,
    root: NodeA,
    list: Vec<NodeA>,
    extra: Option<LeafA>,
    #[codec(bytes)]
    #[serde(with = "bin")]
    blob: Vec<u8>,
    pair: Pair,
}

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Id(u64);

#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Pair(i8, Option<Id>);

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(f64::INFINITY),
        Just(-0.0),
    ]
}

fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![any::<f32>(), Just(f32::NAN), Just(f32::NEG_INFINITY)]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,8}", ".{30,40}"]
}

macro_rules! strategies {
    ($leaf_fn:ident, $leaf:ident, $node_fn:ident, $node:ident) => {
        fn $leaf_fn() -> impl Strategy<Value = $leaf> {
            (
                any::<i64>(),
                proptest::option::of(text()),
                proptest::collection::vec(any::<u8>(), 0..20),
                any_f64(),
                any::<bool>(),
                any_f32(),
            )
                .prop_map(|(a, b, c, d, e, f)| $leaf { a, b, c, d, e, f })
        }

        fn $node_fn() -> impl Strategy<Value = $node> {
            let leaf = prop_oneof![
                Just($node::Empty),
                $leaf_fn().prop_map($node::Value),
                (any::<i32>(), text()).prop_map(|(a, b)| $node::Pair(a, b)),
            ];
            leaf.prop_recursive(4, 32, 3, |inner| {
                (
                    inner.clone(),
                    proptest::option::of(inner),
                    proptest::collection::btree_map(text(), any::<u16>(), 0..4),
                )
                    .prop_map(|(l, r, tags)| $node::Branch {
                        left: Box::new(l),
                        right: r.map(Box::new),
                        tags,
                    })
            })
        }
    };
}

strategies!(leaf, Leaf, node, Node);
strategies!(leaf_a, LeafA, node_a, NodeA);

fn doc() -> impl Strategy<Value = Doc> {
    (
        any::<u64>(),
        node(),
        proptest::collection::vec(node(), 0..4),
        proptest::option::of(leaf()),
        proptest::collection::vec(any::<u8>(), 0..300),
        any::<u16>(),
        any::<u64>(),
    )
        .prop_map(|(id, root, list, extra, blob, n, w)| Doc {
            id,
            root,
            list,
            extra,
            blob,
            n,
            id_wrapper: Id(w),
        })
}

fn doc_a() -> impl Strategy<Value = DocA> {
    (
        any::<u64>(),
        node_a(),
        proptest::collection::vec(node_a(), 0..4),
        proptest::option::of(leaf_a()),
        proptest::collection::vec(any::<u8>(), 0..300),
        any::<i8>(),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(id, root, list, extra, blob, p, q)| DocA {
            id,
            root,
            list,
            extra,
            blob,
            pair: Pair(p, q.map(Id)),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn map_mode_round_trips_and_matches_rmp_serde(v in doc()) {
        let bytes = to_vec(&v).unwrap();
        prop_assert_eq!(&from_slice::<Doc>(&bytes).unwrap(), &v);
        prop_assert_eq!(&bytes, &rmp_serde::to_vec_named(&v).unwrap());
        prop_assert_eq!(&rmp_serde::from_slice::<Doc>(&bytes).unwrap(), &v);
    }

    #[test]
    fn array_mode_round_trips_and_matches_rmp_serde(v in doc_a()) {
        let bytes = to_vec(&v).unwrap();
        prop_assert_eq!(&from_slice::<DocA>(&bytes).unwrap(), &v);
        prop_assert_eq!(&bytes, &rmp_serde::to_vec(&v).unwrap());
        prop_assert_eq!(&rmp_serde::from_slice::<DocA>(&bytes).unwrap(), &v);
    }

    #[test]
    fn each_mode_reads_the_other(v in node(), w in node_a()) {
        // Map-mode types read rmp-serde's positional form and the other way.
        let positional = rmp_serde::to_vec(&v).unwrap();
        prop_assert_eq!(&from_slice::<Node>(&positional).unwrap(), &v);
        let named = rmp_serde::to_vec_named(&w).unwrap();
        prop_assert_eq!(&from_slice::<NodeA>(&named).unwrap(), &w);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = from_slice::<Doc>(&bytes);
        let _ = from_slice::<DocA>(&bytes);
        let _ = from_slice::<Node>(&bytes);
        let _ = from_slice::<NodeA>(&bytes);
        let _ = from_slice::<Leaf>(&bytes);
        let _ = from_slice::<Pair>(&bytes);
        let _ = codecbus_core::decode_prefix::<Id>(&bytes);
    }

    #[test]
    fn corrupted_encodings_never_panic(
        v in doc(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = to_vec(&v).unwrap();
        for (at, byte) in edits {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        let _ = from_slice::<Doc>(&bytes);
        let _ = from_slice::<DocA>(&bytes);
        let end = cut.index(bytes.len() + 1);
        prop_assert!(from_slice::<Doc>(&bytes[..end]).is_err() || end == bytes.len());
    }
}
