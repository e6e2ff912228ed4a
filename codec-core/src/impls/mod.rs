//! `MessageCodec` for standard and `imbl` types.

mod collections;
mod place;
mod primitive;
mod time;
mod wrappers;

/// Implements `transform` for a container: shared when the contents are
/// immutable, deep-copied (through each element's `deep_copy`) otherwise.
/// The container implements `deep_copy` itself.
macro_rules! container_transform {
    ($immutable:expr) => {
        const IMMUTABLE: bool = $immutable;
        #[inline]
        fn transform(body: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
            if Self::IMMUTABLE {
                return ::std::sync::Arc::clone(body);
            }
            match <Self as $crate::codec::MessageCodec>::deep_copy(&**body) {
                Some(copy) => ::std::sync::Arc::new(copy),
                // An element that cannot copy itself: shared, read-only.
                None => ::std::sync::Arc::clone(body),
            }
        }
    };
}
pub(crate) use container_transform;

/// `deep_copy` as `Clone`, for leaf types.
macro_rules! copy_by_clone {
    () => {
        #[inline]
        fn deep_copy(value: &Self) -> ::core::option::Option<Self> {
            ::core::option::Option::Some(::core::clone::Clone::clone(value))
        }
    };
}
pub(crate) use copy_by_clone;

/// `MessageCodec`'s items for a type that cannot change: the body behind
/// the `Arc` is shared, and a copy is a clone.
macro_rules! share {
    () => {
        const IMMUTABLE: bool = true;
        $crate::impls::copy_by_clone!();
        #[inline]
        fn transform(body: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
            ::std::sync::Arc::clone(body)
        }
    };
}
pub(crate) use share;

/// `MessageCodec::shape` for a type whose shape is a constant: `$shape`,
/// an expression of type `Shape` with `Shape` in scope.
macro_rules! describe {
    ($shape:expr) => {
        fn shape(_: &mut $crate::shape::Definitions) -> $crate::shape::Shape {
            $shape
        }
    };
}
pub(crate) use describe;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use crate::codec::MessageCodec;
    use crate::ext::{Bytes, Ext, RawValue, SharedStr, Timestamp};
    use crate::shape::{Definitions, Shape};

    fn json<T: MessageCodec>() -> String {
        let mut defs = Definitions::new();
        let shape = T::shape(&mut defs);
        assert!(defs.into_map().is_empty(), "no named codec in a std type");
        shape.canonical_json()
    }

    /// Each codec's shape is what its `encode` writes.
    #[test]
    fn every_codec_describes_itself() {
        let table: &[(&str, String, &str)] = &[
            ("bool", json::<bool>(), r#""bool""#),
            ("u8", json::<u8>(), r#""u8""#),
            ("u16", json::<u16>(), r#""u16""#),
            ("u32", json::<u32>(), r#""u32""#),
            ("u64", json::<u64>(), r#""u64""#),
            ("usize", json::<usize>(), r#""u64""#),
            ("u128", json::<u128>(), r#""u128""#),
            ("i8", json::<i8>(), r#""i8""#),
            ("i16", json::<i16>(), r#""i16""#),
            ("i32", json::<i32>(), r#""i32""#),
            ("i64", json::<i64>(), r#""i64""#),
            ("isize", json::<isize>(), r#""i64""#),
            ("i128", json::<i128>(), r#""i128""#),
            ("f32", json::<f32>(), r#""f32""#),
            ("f64", json::<f64>(), r#""f64""#),
            ("char", json::<char>(), r#""str""#),
            ("()", json::<()>(), r#""nil""#),
            ("String", json::<String>(), r#""str""#),
            ("Box<str>", json::<Box<str>>(), r#""str""#),
            ("Arc<str>", json::<Arc<str>>(), r#""str""#),
            ("Vec<u8>", json::<Vec<u8>>(), r#"{"array":"u8"}"#),
            (
                "VecDeque<i16>",
                json::<VecDeque<i16>>(),
                r#"{"array":"i16"}"#,
            ),
            (
                "HashSet<String>",
                json::<HashSet<String>>(),
                r#"{"array":"str"}"#,
            ),
            (
                "BTreeSet<u32>",
                json::<BTreeSet<u32>>(),
                r#"{"array":"u32"}"#,
            ),
            (
                "[u8; 3]",
                json::<[u8; 3]>(),
                r#"{"tuple":["u8","u8","u8"]}"#,
            ),
            ("[String; 0]", json::<[String; 0]>(), r#"{"tuple":[]}"#),
            ("(u8,)", json::<(u8,)>(), r#"{"tuple":["u8"]}"#),
            (
                "(bool, String, f64)",
                json::<(bool, String, f64)>(),
                r#"{"tuple":["bool","str","f64"]}"#,
            ),
            ("Option<u16>", json::<Option<u16>>(), r#"{"option":"u16"}"#),
            (
                "Option<Option<u8>>",
                json::<Option<Option<u8>>>(),
                r#"{"option":{"option":"u8"}}"#,
            ),
            ("Box<u64>", json::<Box<u64>>(), r#""u64""#),
            (
                "Arc<Vec<bool>>",
                json::<Arc<Vec<bool>>>(),
                r#"{"array":"bool"}"#,
            ),
            (
                "HashMap<String, u32>",
                json::<HashMap<String, u32>>(),
                r#"{"map":["str","u32"]}"#,
            ),
            (
                "BTreeMap<i64, Vec<String>>",
                json::<BTreeMap<i64, Vec<String>>>(),
                r#"{"map":["i64",{"array":"str"}]}"#,
            ),
            (
                "imbl::Vector<u8>",
                json::<imbl::Vector<u8>>(),
                r#"{"array":"u8"}"#,
            ),
            (
                "imbl::HashSet<u8>",
                json::<imbl::HashSet<u8>>(),
                r#"{"array":"u8"}"#,
            ),
            (
                "imbl::OrdSet<u8>",
                json::<imbl::OrdSet<u8>>(),
                r#"{"array":"u8"}"#,
            ),
            (
                "imbl::HashMap<String, bool>",
                json::<imbl::HashMap<String, bool>>(),
                r#"{"map":["str","bool"]}"#,
            ),
            (
                "imbl::OrdMap<u8, f32>",
                json::<imbl::OrdMap<u8, f32>>(),
                r#"{"map":["u8","f32"]}"#,
            ),
            ("Duration", json::<Duration>(), r#"{"tuple":["u64","u32"]}"#),
            ("SystemTime", json::<SystemTime>(), r#"{"ext":-1}"#),
            ("Timestamp", json::<Timestamp>(), r#"{"ext":-1}"#),
            ("ext::Bytes", json::<Bytes>(), r#""bin""#),
            ("bytes::Bytes", json::<bytes::Bytes>(), r#""bin""#),
            ("SharedStr", json::<SharedStr>(), r#""str""#),
            ("RawValue", json::<RawValue>(), r#""opaque""#),
            ("Ext", json::<Ext>(), r#""opaque""#),
            #[cfg(feature = "uuid")]
            ("uuid::Uuid", json::<uuid::Uuid>(), r#"{"ext":3}"#),
            #[cfg(feature = "decimal")]
            ("Decimal", json::<rust_decimal::Decimal>(), r#"{"ext":2}"#),
            #[cfg(feature = "time")]
            ("time::Date", json::<time::Date>(), r#"{"ext":4}"#),
            #[cfg(feature = "time")]
            ("time::Time", json::<time::Time>(), r#"{"ext":5}"#),
            #[cfg(feature = "time")]
            (
                "time::PrimitiveDateTime",
                json::<time::PrimitiveDateTime>(),
                r#"{"ext":6}"#,
            ),
            #[cfg(feature = "time")]
            (
                "time::OffsetDateTime",
                json::<time::OffsetDateTime>(),
                r#"{"ext":-1}"#,
            ),
            #[cfg(feature = "chrono")]
            (
                "chrono::NaiveDate",
                json::<chrono::NaiveDate>(),
                r#"{"ext":4}"#,
            ),
            #[cfg(feature = "chrono")]
            (
                "chrono::NaiveTime",
                json::<chrono::NaiveTime>(),
                r#"{"ext":5}"#,
            ),
            #[cfg(feature = "chrono")]
            (
                "chrono::NaiveDateTime",
                json::<chrono::NaiveDateTime>(),
                r#"{"ext":6}"#,
            ),
            #[cfg(feature = "chrono")]
            (
                "chrono::DateTime<Utc>",
                json::<chrono::DateTime<chrono::Utc>>(),
                r#"{"ext":-1}"#,
            ),
            #[cfg(feature = "serde-json")]
            (
                "serde_json::Value",
                json::<serde_json::Value>(),
                r#""json""#,
            ),
        ];
        let wrong: Vec<String> = table
            .iter()
            .filter(|(_, found, expected)| found != expected)
            .map(|(ty, found, expected)| format!("{ty}: {found}, expected {expected}"))
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// The shapes say what the bytes are: each extension type's code is
    /// the one it writes.
    #[test]
    fn ext_codes_are_those_written() {
        fn written<T: MessageCodec>(value: &T) {
            let bytes = crate::codec::to_vec(value).unwrap();
            let (code, _) = crate::msgpack::read::Reader::new(&bytes)
                .read_ext()
                .unwrap();
            assert_eq!(
                T::shape(&mut Definitions::new()),
                Shape::Ext(code),
                "{}",
                std::any::type_name::<T>()
            );
        }
        written(&Timestamp::new(1, 0).unwrap());
        written(&SystemTime::UNIX_EPOCH);
        #[cfg(feature = "uuid")]
        written(&uuid::Uuid::nil());
        #[cfg(feature = "decimal")]
        written(&rust_decimal::Decimal::new(15, 1));
        #[cfg(feature = "time")]
        {
            let at = time::OffsetDateTime::UNIX_EPOCH;
            written(&at.date());
            written(&at.time());
            written(&time::PrimitiveDateTime::new(at.date(), at.time()));
            written(&at);
        }
        #[cfg(feature = "chrono")]
        {
            let at = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
            written(&at.date_naive());
            written(&at.time());
            written(&at.naive_utc());
            written(&at);
        }
    }
}
