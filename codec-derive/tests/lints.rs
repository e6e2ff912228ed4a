//! Generated code is clean under strict lint settings: forbidden and denied
//! rustc lints here, clippy's pedantic group under `cargo clippy`.

#![forbid(
    unsafe_code,
    unused_qualifications,
    deprecated,
    missing_docs,
    unreachable_pub,
    non_local_definitions
)]
#![deny(
    warnings,
    rust_2018_idioms,
    unused,
    unused_results,
    trivial_casts,
    trivial_numeric_casts,
    single_use_lifetimes,
    unused_lifetimes,
    variant_size_differences,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
#![allow(clippy::missing_docs_in_private_items)]

use codecbus_core::MessageCodec;

/// A public message.
#[derive(MessageCodec, Clone, Debug, PartialEq, Eq)]
pub struct Public {
    /// Identifier.
    pub id: u64,
    /// Optional text.
    #[codec(skip_if = "Option::is_none")]
    pub text: Option<String>,
    /// Raw bytes.
    #[codec(bytes, default)]
    pub blob: Vec<u8>,
}

/// A public event.
#[derive(MessageCodec, Clone, Debug, PartialEq, Eq)]
#[codec(as_array, rename_all = "snake_case")]
pub enum Event {
    /// Nothing.
    Idle,
    /// One value.
    Value(i32),
    /// Two values.
    Pair(u8, u8),
    /// Named values.
    Moved {
        /// From.
        from: u32,
        /// To.
        to: u32,
    },
}

/// An immutable, generic wrapper.
#[derive(MessageCodec, Debug, PartialEq, Eq)]
#[codec(immutable)]
pub struct Frozen<T>(pub T);

/// A message with deprecated parts.
#[derive(MessageCodec, Clone, Debug, PartialEq, Eq)]
pub struct WithDeprecated {
    /// Old.
    #[deprecated = "use `new`"]
    pub old: u8,
    /// New.
    pub new: u8,
}

/// An enum with a deprecated variant.
#[derive(MessageCodec, Clone, Debug, PartialEq, Eq)]
pub enum Versions {
    /// Old.
    #[deprecated = "use `V2`"]
    V1,
    /// New.
    V2(u8),
}

/// Not instantiable.
#[derive(MessageCodec, Clone, Debug)]
pub enum Never {}

/// Unit.
#[derive(MessageCodec, Clone, Debug, PartialEq, Eq)]
pub struct Tick;

#[test]
fn lints_are_clean() {
    let v = Public {
        id: 1,
        text: None,
        blob: vec![],
    };
    let bytes = codecbus_core::to_vec(&v).unwrap();
    assert_eq!(codecbus_core::from_slice::<Public>(&bytes).unwrap(), v);
    let e = Event::Moved { from: 1, to: 2 };
    let bytes = codecbus_core::to_vec(&e).unwrap();
    assert_eq!(codecbus_core::from_slice::<Event>(&bytes).unwrap(), e);
    let f = Frozen(1u8);
    assert_eq!(codecbus_core::to_vec(&f).unwrap(), [1]);
    let w = WithDeprecated {
        new: 2,
        ..codecbus_core::from_slice(b"\x82\xa3old\x01\xa3new\x02").unwrap()
    };
    assert_eq!(w.new, 2);
    assert!(codecbus_core::from_slice::<Never>(b"\xa1x").is_err());
    assert_eq!(codecbus_core::to_vec(&Tick).unwrap(), [0x90]);
    assert_eq!(
        codecbus_core::to_vec(&Versions::V2(1)).unwrap(),
        b"\x81\xa2V2\x01"
    );
}
