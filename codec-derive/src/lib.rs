//! `#[derive(MessageCodec)]`: MessagePack encode and decode, the local
//! delivery `transform` and the bus registration for a struct or enum.
//!
//! Use the derive through `codecbus_core` (or the `codecbus` facade), which
//! re-exports it next to the trait of the same name:
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct Order {
//!     id: u64,
//!     customer: String,
//!     lines: Vec<Line>,
//!     note: Option<String>,
//! }
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! #[codec(as_array)]
//! struct Line {
//!     sku: String,
//!     quantity: u32,
//! }
//!
//! let order = Order {
//!     id: 7,
//!     customer: "ada".into(),
//!     lines: vec![Line { sku: "tea".into(), quantity: 2 }],
//!     note: None,
//! };
//! let bytes = to_vec(&order)?;
//! assert_eq!(from_slice::<Order>(&bytes)?, order);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is generated
//!
//! Three impls: `Encode` (writing), `Decode<'de>` (reading) and
//! `MessageCodec` (how a message is handed to local consumers, and what
//! its bytes look like).
//!
//! * `encode`: straight writes into the buffer. Everything known at compile
//!   time (map and array headers, every key with its string header, the
//!   `{variant:` prefix of enum payloads) is precomputed and written as raw
//!   bytes, consecutive constants merged into one write.
//! * `decode`: keys are matched as bytes, without UTF-8 checks or
//!   allocation; unknown keys are skipped without recursion; every struct,
//!   newtype and enum payload counts one level of nesting against the
//!   reader's depth limit.
//! * `transform`: the same `Arc` for `#[codec(immutable)]` types, a deep copy
//!   (`Clone`) otherwise.
//! * `shape`: what the type writes, as data (`codecbus_core::shape`), for
//!   the checks of a codec's evolution: its layout (a map by name, an
//!   array by position or by key), each field's name, position or key,
//!   whether a reader takes the value without it (an `Option`, a
//!   `default`), its reserved keys and names, and each field's own shape;
//!   an enum's variants by name, a `union`'s by tag. A struct or enum is a
//!   named codec, defined once under its codec name and referred to by
//!   it, so a recursive type refers to itself; a newtype is its field's
//!   shape. A generic type's instantiations are codecs of their own, named
//!   after the default name and the arguments: `shop::Page<u32>`,
//!   `shop::Page<shop.order>` (a named argument by its codec name, a
//!   container by its shape's canonical JSON, a const parameter by its
//!   value, a parameter that is not known to be a codec, one only in
//!   `PhantomData` or `skip`ped fields, by its Rust type name). A field
//!   with `with` or `serde` is `Opaque` (nothing says what it writes), one
//!   with `bytes` is `bin`. A function of its own: encoding and decoding
//!   do not run it.
//! * `impl Immutable` for `#[codec(immutable)]` types, after checking every
//!   field at compile time.
//! * A registration record (`CodecRegistration`) submitted through
//!   `inventory`, so a bus built anywhere in the program finds the codec by
//!   name. Types with generic parameters are not registered (a registration
//!   names one concrete type); neither are types the program never links.
//!
//! Everything is emitted inside `const _: () = { ... };` with absolute paths
//! (`::core::...`, `::codecbus_core::...`), so the derive adds no names to your
//! module, works on types inside functions and on types made by
//! `macro_rules!`, and does not care what `Result`, `Option` or `Some` mean
//! where it is used. The generated code needs no lint `allow`s, so it
//! compiles under `#![forbid(...)]` of any lint.
//!
//! # Wire format
//!
//! The bytes are the same as `rmp-serde` 1.3 writes for the same type with
//! serde's derive: `rmp_serde::to_vec_named` for the default map mode,
//! `rmp_serde::to_vec` for `as_array` (the tests compare both byte for byte,
//! and decode each side's output with the other).
//!
//! | Rust | MessagePack |
//! |---|---|
//! | `struct S { a, b }` | map `{"a": .., "b": ..}`; with `as_array` an array `[a, b]`; with `key = N` on the fields an array indexed by key |
//! | `struct S(T)` (newtype) | the inner value itself |
//! | `struct S(A, B)` | array `[a, b]` |
//! | `struct S;` / `struct S()` / `struct S {}` | `[]` / `[]` / `{}` |
//! | `E::Unit` | the variant name as a string |
//! | `E::Newtype(T)` | `{"Newtype": value}` |
//! | `E::Tuple(A, B)` | `{"Tuple": [a, b]}` |
//! | `E::Struct { a }` | `{"Struct": {"a": ..}}`; with `as_array` on the enum `{"Struct": [a]}` |
//!
//! An enum with [`#[codec(union)]`](#codecunion) is written as `[tag,
//! payload]` instead, the tag an integer from the variant's `tag = N` (in
//! MessagePack's smallest form), the payload the variant's body as above,
//! without its name. Tags, not names, identify the variants; this layout
//! is not rmp-serde's.
//!
//! | Rust, in a `union` | MessagePack |
//! |---|---|
//! | `#[codec(tag = 0)] E::Unit` | `[0, nil]` |
//! | `#[codec(tag = 1)] E::Newtype(T)` | `[1, value]` |
//! | `#[codec(tag = 2)] E::Tuple(A, B)` | `[2, [a, b]]` |
//! | `#[codec(tag = 300)] E::Struct { a }` | `[300, {"a": ..}]`; with `as_array` on the enum `[300, [a]]` |
//! | `#[codec(other)] E::Unknown(u32, RawValue)` (the catch-all) | `[tag, payload]`: the tag and the payload it was read with, byte for byte |
//!
//! ```
//! use codecbus_core::{MessageCodec, to_vec};
//!
//! #[derive(MessageCodec, Clone)]
//! enum Shape {
//!     Empty,
//!     Circle(f32),
//!     Rect(u8, u8),
//!     Label { text: String },
//! }
//!
//! assert_eq!(to_vec(&Shape::Empty)?, b"\xa5Empty");
//! assert_eq!(to_vec(&Shape::Rect(3, 4))?, b"\x81\xa4Rect\x92\x03\x04");
//! assert_eq!(
//!     to_vec(&Shape::Label { text: "hi".into() })?,
//!     b"\x81\xa5Label\x81\xa4text\xa2hi"
//! );
//! # Ok::<(), codecbus_core::EncodeError>(())
//! ```
//!
//! # Borrowed decoding
//!
//! A type whose fields borrow (`&'a str`, `&'a [u8]`, `Cow<'a, str>`,
//! `Vec<&'a str>`, another borrowed derived type) is `Decode<'de>` for every
//! input `'de` that outlives its lifetimes, and decodes pointing into that
//! input: no allocation for its strings and bytes. It is not a
//! `MessageCodec` (a message owns its data), and `#[codec(immutable)]` on it
//! is a compile error. A lifetime named only by skipped fields or inside
//! `PhantomData` borrows nothing: such a type stays a `MessageCodec`.
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//!
//! #[derive(MessageCodec, Debug)]
//! struct Row<'a> {
//!     key: &'a str,
//!     columns: Vec<&'a str>,
//!     blob: &'a [u8],
//! }
//!
//! let bytes = to_vec(&Row { key: "k1", columns: vec!["a", "b"], blob: b"\x00" })?;
//! let row: Row<'_> = from_slice(&bytes)?;
//! assert!(bytes.as_ptr_range().contains(&row.columns[1].as_ptr()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Decoding rules
//!
//! A struct with named fields reads both layouts whatever its own mode: a map
//! by field name, or an array by position (what `rmp_serde::to_vec` writes).
//!
//! * Map keys may come in any order. Unknown keys are skipped, whatever
//!   their value, so a newer writer can add fields.
//! * A missing `Option` field is `None`, a missing `#[codec(default)]` field
//!   takes its default; any other missing field is
//!   `DecodeErrorKind::MissingField`. A key given twice is
//!   `DecodeErrorKind::DuplicateField`.
//! * An array may stop early if the fields it leaves out could be missing
//!   from a map (`Option` or `default`), so an `as_array` type can grow at
//!   the end. A longer array, or a shorter one that leaves out a required
//!   field, is `DecodeErrorKind::WrongLength`.
//! * An enum reads a variant name for a unit variant (`{"Name": nil}` is
//!   accepted too) and a one-entry map for any variant. An unknown name is
//!   `DecodeErrorKind::UnknownVariant`, with the name as detail.
//! * A `union` reads an array of exactly two elements, `[tag, payload]`
//!   (any other length is `DecodeErrorKind::WrongLength`; the externally
//!   tagged form is not read), the tag an unsigned integer up to
//!   `u32::MAX`. A tag no variant has goes to the catch-all (`other`) when
//!   there is one, else it is `DecodeErrorKind::UnknownVariant` with the
//!   detail `tag 7`, at the tag's offset.
//! * A unit struct reads `[]` or `nil`.
//! * Errors carry the JSON Pointer (RFC 6901) of the failing value, built
//!   from field names, array positions and variant names:
//!   `/order/items/3/price`, and `/Shipped/at` for the field `at` of the
//!   variant `Shipped`, where it sits in `{"Shipped": {"at": ..}}`. `~` and
//!   `/` in a name are escaped as `~0` and `~1`.
//!
//! ```
//! use codecbus_core::{DecodeErrorKind, MessageCodec, from_slice};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct Item {
//!     name: String,
//!     price: u32,
//!     note: Option<String>,
//! }
//!
//! // {"price": 3, "extra": true, "name": "tea"}: unknown key skipped,
//! // missing `note` is None.
//! let bytes = b"\x83\xa5price\x03\xa5extra\xc3\xa4name\xa3tea";
//! let item: Item = from_slice(bytes)?;
//! assert_eq!(item, Item { name: "tea".into(), price: 3, note: None });
//!
//! // The same, positionally: ["tea", 3]
//! assert_eq!(from_slice::<Item>(b"\x92\xa3tea\x03")?, item);
//!
//! // {"name": "tea"}
//! let err = from_slice::<Item>(b"\x81\xa4name\xa3tea").unwrap_err();
//! assert_eq!(err.kind(), DecodeErrorKind::MissingField("price"));
//!
//! // [{"name": "tea", "price": "3"}]
//! let err = from_slice::<Vec<Item>>(b"\x91\x82\xa4name\xa3tea\xa5price\xa13").unwrap_err();
//! assert_eq!(err.pointer(), "/0/price");
//! assert_eq!(err.to_string(), "expected integer, found string at `/0/price` (byte 17)");
//! # Ok::<(), codecbus_core::DecodeError>(())
//! ```
//!
//! # Codec names and rolling deploys
//!
//! **Give every type that crosses processes an explicit
//! `#[codec(name = "...")]`.** The default codec name is the module path
//! plus the type name (`shop::orders::Order`), and it is what travels on
//! the wire: moving the type to another module, or renaming the crate,
//! changes it. During a rolling deploy the nodes still on the old build
//! send the old name, which the new nodes do not know (and the other way
//! round): their messages fail to decode, a request with a `Codec` error.
//! A name of your own (`"shop.order.v1"`) stays put whatever the code
//! does.
//!
//! To rename a type that already travels, list its old names with
//! [`aliases`](#codecaliases-): the new build reads messages sent under
//! them, and sends under the new name only, which the old build does not
//! know. So change names in two deploys: first ship the new name as an
//! alias of the old one (`name = "shop.order"` with `aliases("shop.order.v2")`
//! reads both and still sends the old name), and once no node runs the
//! build before it, make it the name (`name = "shop.order.v2"` with
//! `aliases("shop.order")`). The same holds for the type of a reply: a node
//! that replies under a name its requester does not know makes the request
//! fail there with a `Codec` error. A bus logs the first message of each
//! alias at warn level and counts it (`Metrics::old_codec_names`), which
//! tells when older peers are still about.
//!
//! # Container attributes
//!
//! ## `#[codec(immutable)]`
//!
//! Local delivery hands every consumer the same allocation instead of a
//! copy. Every field's type must implement `Immutable` and the type must be
//! `Sync`; a field of a type with interior mutability (`Cell`, `RefCell`,
//! `Mutex`, atomics) is a compile error pointing at that field. The type
//! need not implement `Clone`.
//!
//! ```
//! use std::sync::Arc;
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec)]
//! #[codec(immutable)]
//! struct PriceList {
//!     prices: Vec<(String, u64)>,
//! }
//!
//! let body = Arc::new(PriceList { prices: vec![("tea".into(), 3)] });
//! assert!(Arc::ptr_eq(&PriceList::transform(&body), &body));
//! ```
//!
//! Without it, the type must implement `Clone` and each consumer gets its
//! own copy.
//!
//! ## `#[codec(name = "...")]`
//!
//! The codec name the type is registered under, which travels with each
//! message between nodes: the receiving node decodes by it. The default is
//! the module path and the type name (`my_crate::orders::Order`), which
//! changes when the type moves, so **every type that crosses processes
//! should carry an explicit name** (see [Codec names and rolling
//! deploys](#codec-names-and-rolling-deploys)). Not allowed on generic
//! types, which are not registered.
//!
//! ```
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(name = "orders.v1")]
//! struct Order {
//!     id: u64,
//! }
//!
//! let reg = codecbus_core::registrations().find(|r| r.name() == "orders.v1").unwrap();
//! assert_eq!(reg.type_id(), std::any::TypeId::of::<Order>());
//! ```
//!
//! ## `#[codec(aliases("...", ...))]`
//!
//! The codec names the type had before a rename, next to the `name` it has
//! now: a bus decodes a message that arrives under an alias (from a node
//! still running the older build) as this type, and sends it under `name`
//! only. The registration carries them
//! (`CodecRegistration::aliases`). One string literal or more, each
//! non-empty, none twice, none equal to `name`; `aliases` needs an
//! explicit `name` and a registered type (not generic, not
//! `unregistered`). An alias that is another codec's name or alias fails
//! the bus's build like two types under one name.
//!
//! ```
//! use codecbus_core::MessageCodec;
//!
//! // Was `shop::orders::Order` (the default name), then "shop.order".
//! #[derive(MessageCodec, Clone)]
//! #[codec(name = "shop.order.v2", aliases("shop::orders::Order", "shop.order"))]
//! struct Order {
//!     id: u64,
//! }
//!
//! let reg = codecbus_core::registrations().find(|r| r.name() == "shop.order.v2").unwrap();
//! assert_eq!(reg.aliases(), ["shop::orders::Order", "shop.order"]);
//! ```
//!
//! ## `#[codec(as_array)]`
//!
//! Named fields are written positionally, as an array: smaller and faster,
//! at the price of field order becoming part of the format (append new
//! fields at the end, as `Option` or `default`, to stay compatible). On an
//! enum it applies to the fields of struct variants. Tuple structs and
//! tuple variants are arrays anyway.
//!
//! ```
//! use codecbus_core::{MessageCodec, to_vec};
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(as_array)]
//! struct Point {
//!     x: i32,
//!     y: i32,
//! }
//!
//! assert_eq!(to_vec(&Point { x: 1, y: -1 })?, b"\x92\x01\xff");
//! # Ok::<(), codecbus_core::EncodeError>(())
//! ```
//!
//! ## `#[codec(key = N)]`
//!
//! On every encoded field of a struct with named fields: the struct is
//! written as an array indexed by key, element `N` holding the field with
//! key `N`, a key no field has (a removed field) written as `nil`, the
//! array one longer than the largest key. Unlike `as_array` the bytes do
//! not depend on the order or the names of the fields in the source, so
//! fields can be reordered and renamed freely. Decoding skips elements at
//! indexes no field has (gaps, fields of a newer version); a field past
//! the end of a shorter array is `None` for an `Option`, its default with
//! `default` (also for a `nil` in its place), else
//! `DecodeErrorKind::MissingField`. A map by field name is read too. Keys
//! are integer literals up to `u32::MAX - 1`, each used once; a skipped
//! field has no key. Not allowed with `as_array`, on tuple structs or on
//! the fields of enum variants.
//!
//! So versions read each other's bytes when every key one of them lacks
//! holds an `Option` or a `default` field in the other: a version that
//! adds such keys reads the older bytes (the new fields are missing), and
//! the older one skips the new elements. Retiring a key is safe on the
//! same terms only: a version that still has a *required* field at a key
//! another version retired cannot read that version's bytes. The retired
//! key, written as `nil` when later keys follow, is a type error at the
//! field (`expected string, found nil at `/email` (byte 2)`); a retired
//! last key leaves the array shorter, a missing field (`missing field
//! `plan` (byte 8)`). Make a field `Option` or give it a `default` in
//! every version that is still running before a later version retires
//! its key.
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct User {
//!     #[codec(key = 0)]
//!     id: u8,
//!     // key 1 was a field since removed
//!     #[codec(key = 2)]
//!     name: String,
//! }
//!
//! let bytes = to_vec(&User { id: 7, name: "ada".into() })?;
//! assert_eq!(bytes, b"\x93\x07\xc0\xa3ada");
//! assert_eq!(from_slice::<User>(&bytes)?.id, 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## `#[codec(union)]`
//!
//! On an enum: every value is written as `[tag, payload]` (see the
//! [wire format](#wire-format)), each variant known by the integer tag
//! of its [`#[codec(tag = N)]`](#codectag--n), never by its name, so
//! variants can be renamed and reordered freely and the bytes stay
//! small. One variant may instead be the catch-all,
//! [`#[codec(other)]`](#codecother), which keeps the tag and the payload
//! of a variant this version does not know and writes them back
//! unchanged, so an older node passes a newer node's values on. Without
//! a catch-all, an unknown tag is an error. (MessagePack-CSharp's
//! `[Union(0, typeof(...))]` writes the same layout.) On a struct it is a
//! compile error.
//!
//! ```
//! use codecbus_core::ext::RawValue;
//! use codecbus_core::{DecodeErrorKind, MessageCodec, from_slice, to_vec};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! #[codec(union)]
//! enum EventV1 {
//!     #[codec(tag = 0)]
//!     Created { id: u64 },
//!     #[codec(tag = 1)]
//!     Deleted(u64),
//!     #[codec(other)]
//!     Unknown(u32, RawValue),
//! }
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! #[codec(union)]
//! enum EventV2 {
//!     #[codec(tag = 1)]
//!     Removed(u64), // renamed and moved: the tag is what counts
//!     #[codec(tag = 0)]
//!     Created { id: u64 },
//!     #[codec(tag = 2)]
//!     Archived,
//! }
//!
//! // [1, 7]
//! assert_eq!(to_vec(&EventV1::Deleted(7))?, b"\x92\x01\x07");
//! assert_eq!(from_slice::<EventV2>(b"\x92\x01\x07")?, EventV2::Removed(7));
//!
//! // [2, nil]: a variant version 1 does not know, kept whole.
//! let newer = to_vec(&EventV2::Archived)?;
//! assert_eq!(newer, b"\x92\x02\xc0");
//! let older: EventV1 = from_slice(&newer)?;
//! assert!(matches!(&older, EventV1::Unknown(2, raw) if raw.as_bytes() == b"\xc0"));
//! assert_eq!(to_vec(&older)?, newer);
//!
//! // Without a catch-all, an unknown tag is an error naming it.
//! let err = from_slice::<EventV2>(b"\x92\x09\xc0").unwrap_err();
//! assert_eq!(err.kind(), DecodeErrorKind::UnknownVariant);
//! assert!(err.to_string().contains("tag 9"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## `#[codec(reserved(...))]`
//!
//! The keys, positions, tags or names that fields or variants since
//! removed held, never to be given again: a peer still running the old
//! build reads them as the old field or variant. Integers reserve keys
//! (a struct with `key = N` fields), positions (an `as_array` struct) or
//! tags (a `union`); strings reserve field names (a struct written as a
//! map) or variant names (an enum). A field or variant that takes one (a
//! `key = 3`, a `tag = 7`, a field or variant named, renamed or
//! `rename_all`ed to `"old_name"`) is a compile error at its key, tag or
//! name. The reserved items are part of the type's shape.
//!
//! A reserved position stays on the wire: an `as_array` struct writes
//! `nil` there and skips what it finds there when reading, and the
//! positions of its fields step over it (field `i` takes the `i`-th
//! position that is not reserved). Such a struct reads as a keyed one
//! does: an array longer than its last field is read too (a reserved last
//! position is not written, and an older writer's value there skipped),
//! and a `nil` at a `default` field is its default.
//!
//! An item of the kind the layout does not know (a string on a keyed
//! struct, an integer on a map), an item given twice, and `reserved` on a
//! tuple, newtype or unit struct are compile errors.
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//!
//! // Version 1 was `{x, label, y}` by position; `label` went away.
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! #[codec(as_array, reserved(1))]
//! struct Point {
//!     x: i8,
//!     y: i8,
//! }
//!
//! // `[1, nil, -1]`
//! assert_eq!(to_vec(&Point { x: 1, y: -1 })?, b"\x93\x01\xc0\xff");
//! // Version 1's `[1, "a", -1]`
//! assert_eq!(from_slice::<Point>(b"\x93\x01\xa1a\xff")?, Point { x: 1, y: -1 });
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(reserved("nickname"))]
//! struct User {
//!     name: String,
//! }
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(union, reserved(2))]
//! enum Event {
//!     #[codec(tag = 0)]
//!     Created,
//!     #[codec(tag = 1)]
//!     Deleted,
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ```compile_fail
//! use codecbus_core::MessageCodec;
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(reserved(1))]
//! struct User {
//!     #[codec(key = 0)]
//!     id: u64,
//!     #[codec(key = 1)] // error: key 1 is reserved
//!     phone: String,
//! }
//! ```
//!
//! ## `#[codec(rename_all = "...")]`
//!
//! Renames every field of a struct, or every variant of an enum, with one of
//! serde's rules: `"lowercase"`, `"UPPERCASE"`, `"PascalCase"`,
//! `"camelCase"`, `"snake_case"`, `"SCREAMING_SNAKE_CASE"`, `"kebab-case"`,
//! `"SCREAMING-KEBAB-CASE"`. A field or variant `rename` wins over it.
//!
//! ```
//! use codecbus_core::{MessageCodec, to_vec};
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(rename_all = "camelCase")]
//! struct User {
//!     user_id: u32,
//! }
//!
//! #[derive(MessageCodec, Clone)]
//! #[codec(rename_all = "snake_case")]
//! enum Status {
//!     NotStarted,
//! }
//!
//! assert_eq!(to_vec(&User { user_id: 1 })?, b"\x81\xa6userId\x01");
//! assert_eq!(to_vec(&Status::NotStarted)?, b"\xabnot_started");
//! # Ok::<(), codecbus_core::EncodeError>(())
//! ```
//!
//! ## `#[codec(crate = "...")]`
//!
//! The path of `codecbus_core` in generated code, for crates that reach it
//! through a re-export (such as the `codecbus` facade) instead of depending
//! on it directly.
//!
//! ```
//! mod reexport {
//!     pub use codecbus_core as codec;
//! }
//!
//! #[derive(codecbus_core::MessageCodec, Clone)]
//! #[codec(crate = "reexport::codec")]
//! struct Ping;
//! ```
//!
//! ## `#[codec(unregistered)]`
//!
//! No registration is submitted, so no bus can decode the type by name.
//! Registration needs a `Send + Sync + 'static` type; this flag lets a type
//! that is not (one holding an `Rc`, a `Cell`, a borrowed field) derive
//! the codec all the same, for plain `to_vec` / `from_slice` use.
//!
//! ```
//! use std::marker::PhantomData;
//! use codecbus_core::{from_slice, to_vec, MessageCodec};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! #[codec(unregistered)]
//! struct PerThread {
//!     count: u64,
//!     #[codec(skip)]
//!     _not_send: PhantomData<*const ()>, // neither Send nor Sync
//! }
//!
//! let value = PerThread { count: 3, _not_send: PhantomData };
//! assert_eq!(from_slice::<PerThread>(&to_vec(&value)?).unwrap(), value);
//! # Ok::<(), codecbus_core::EncodeError>(())
//! ```
//!
//! ## `#[codec(bound = "...")]`
//!
//! Where-clause predicates that replace the bounds the derive infers (see
//! [Generic types](#generic-types)), as serde's `bound`: for a generic type
//! whose needs the derive cannot see from its fields. The type's own
//! `where` clause is kept; `bound = ""` adds nothing. The predicates must
//! make each field type that is written through its own codec a
//! `MessageCodec` (its shape is part of the type's).
//!
//! ```
//! use std::sync::Arc;
//! use codecbus_core::MessageCodec;
//!
//! // `Arc<T>` is copied by reference count, so `T` need not be `Clone`
//! // (the inferred bounds would ask for it).
//! #[derive(MessageCodec, Debug)]
//! #[codec(bound = "T: MessageCodec + Send + Sync")]
//! struct Handle<T> {
//!     inner: Arc<T>,
//! }
//!
//! impl<T> Clone for Handle<T> {
//!     fn clone(&self) -> Self {
//!         Handle { inner: Arc::clone(&self.inner) }
//!     }
//! }
//!
//! #[derive(MessageCodec, Debug)]
//! #[codec(immutable)]
//! struct Connection {
//!     url: String,
//! }
//!
//! let handle = Handle { inner: Arc::new(Connection { url: "db".into() }) };
//! let bytes = codecbus_core::to_vec(&handle)?;
//! assert_eq!(codecbus_core::from_slice::<Handle<Connection>>(&bytes)?.inner.url, "db");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Field attributes
//!
//! ## `#[codec(rename = "...")]`
//!
//! The key of this field on the wire. Raw identifiers need no rename: the
//! key of `r#type` is `"type"`.
//!
//! ## `#[codec(skip)]`
//!
//! Never written, never read: decoding fills it with `Default::default()`
//! (or with `default = "path"`). In `as_array` mode it takes no position.
//!
//! ## `#[codec(default)]`, `#[codec(default = "path")]`
//!
//! When the key is missing (or a short array leaves the field out), use
//! `Default::default()`, or call `path()`.
//!
//! ## `#[codec(skip_if = "path")]`
//!
//! Leaves the key out when `path(&field)` returns `true`; the map header is
//! then counted at run time. Pair it with `default` (or use it on an
//! `Option`) so the value comes back when the key is missing. Only in map
//! mode: on an `as_array` type, or on a tuple field, it is a compile error,
//! because every later position would shift.
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//!
//! fn default_port() -> u16 {
//!     8080
//! }
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct Config {
//!     #[codec(rename = "host-name")]
//!     host: String,
//!     #[codec(default = "default_port")]
//!     port: u16,
//!     #[codec(skip_if = "Vec::is_empty", default)]
//!     tags: Vec<String>,
//!     #[codec(skip)]
//!     resolved: Option<std::net::IpAddr>,
//! }
//!
//! let config = Config { host: "h".into(), port: 1, tags: vec![], resolved: None };
//! let bytes = to_vec(&config)?;
//! assert_eq!(bytes, b"\x82\xa9host-name\xa1h\xa4port\x01");
//! assert_eq!(from_slice::<Config>(&bytes)?, config);
//! // {"host-name": "h"}
//! let config: Config = from_slice(b"\x81\xa9host-name\xa1h")?;
//! assert_eq!(config.port, 8080);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## `#[codec(bytes)]`
//!
//! Writes the field as MessagePack `bin` instead of an array of integers;
//! for `Vec<u8>` or any type that is `AsRef<[u8]>` and `From<Vec<u8>>`.
//! Reads `bin` or `str`. On an `Option` of such a type (spelled `Option<..>`),
//! `None` is `nil` and an absent field is `None`, as for any `Option` field.
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct Frame {
//!     #[codec(bytes)]
//!     payload: Vec<u8>,
//!     #[codec(bytes)]
//!     signature: Option<Vec<u8>>,
//! }
//!
//! let frame = Frame { payload: vec![1, 2], signature: None };
//! let bytes = to_vec(&frame)?;
//! assert_eq!(bytes, b"\x82\xa7payload\xc4\x02\x01\x02\xa9signature\xc0");
//! assert_eq!(from_slice::<Frame>(&bytes)?, frame);
//! // A sender that does not know the field yet.
//! let old: Frame = from_slice(b"\x81\xa7payload\xc4\x00")?;
//! assert_eq!(old.signature, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## `#[codec(with = "module")]`
//!
//! Encodes and decodes the field with two functions of your own:
//! `module::encode(&T, &mut Writer) -> Result<(), EncodeError>` and
//! `module::decode(&mut Reader<'_>) -> Result<T, DecodeError>`. The field
//! type then needs no `MessageCodec` impl.
//!
//! ```
//! use codecbus_core::{MessageCodec, to_vec};
//!
//! mod as_text {
//!     use codecbus_core::{DecodeError, EncodeError, Reader, Writer};
//!
//!     pub fn encode(v: &u128, w: &mut Writer) -> Result<(), EncodeError> {
//!         w.write_str(&v.to_string())
//!     }
//!
//!     pub fn decode(r: &mut Reader<'_>) -> Result<u128, DecodeError> {
//!         let at = r.position();
//!         r.read_str()?.parse().map_err(|e| DecodeError::custom(e, at))
//!     }
//! }
//!
//! #[derive(MessageCodec, Clone)]
//! struct Account {
//!     #[codec(with = "as_text")]
//!     balance: u128,
//!     #[codec(bytes)]
//!     key: Vec<u8>,
//! }
//!
//! let account = Account { balance: u128::MAX, key: vec![1, 2] };
//! let bytes = to_vec(&account)?;
//! assert!(bytes.ends_with(b"\xa3key\xc4\x02\x01\x02"));
//! # Ok::<(), codecbus_core::EncodeError>(())
//! ```
//!
//! ## `#[codec(serde)]`
//!
//! Encodes the field through serde, with `rmp-serde`'s named (map) mode:
//! the bytes are those of `rmp_serde::to_vec_named(&field)`, so a type that
//! only implements `Serialize` and `Deserialize` (one from another crate, a
//! legacy message) can be a field. Decoding uses `rmp-serde` from the
//! reader's position, after checking the value against the reader's limits
//! (depth, collection lengths, lengths against the input, the allocation
//! budget); errors carry the field's path like any other. On a type spelled
//! `Option<..>`, an absent field is `None`. Needs the `serde` feature of
//! `codecbus-core` (on by default). Type parameters used in such fields get
//! `Serialize + DeserializeOwned` bounds instead of `MessageCodec`.
//!
//! ```
//! use codecbus_core::{MessageCodec, from_slice, to_vec};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
//! struct LegacyAddress {
//!     street: String,
//!     zip: Option<String>,
//! }
//!
//! #[derive(MessageCodec, Clone, Debug, PartialEq)]
//! struct Customer {
//!     id: u64,
//!     #[codec(serde)]
//!     address: LegacyAddress,
//!     #[codec(serde)]
//!     billing: Option<LegacyAddress>,
//! }
//!
//! let address = LegacyAddress { street: "Main".into(), zip: None };
//! let customer = Customer { id: 1, address: address.clone(), billing: None };
//! let bytes = to_vec(&customer)?;
//! // {"id": 1, "address": <rmp-serde's bytes>, "billing": nil}
//! let mut expected = b"\x83\xa2id\x01\xa7address".to_vec();
//! expected.extend(rmp_serde::to_vec_named(&address)?);
//! expected.extend(b"\xa7billing\xc0");
//! assert_eq!(bytes, expected);
//! assert_eq!(from_slice::<Customer>(&bytes)?, customer);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! For a whole message of a serde type, use `codecbus_core::Serde<T>` and
//! `serde_codec!` instead.
//!
//! # Variant attributes
//!
//! ## `#[codec(rename = "...")]`
//!
//! The name of this variant on the wire. In a `union`, where variants
//! have no name on the wire, it is a compile error.
//!
//! ## `#[codec(tag = N)]`
//!
//! The variant's tag in a [`union`](#codecunion): an integer literal from
//! 0 to `u32::MAX` (4 294 967 295), each used once in the enum. Every
//! variant of a `union` has one, but its catch-all. Changing a tag
//! changes the format; renaming or moving the variant does not. Outside a
//! `union` it is a compile error.
//!
//! ## `#[codec(other)]`
//!
//! The catch-all of a [`union`](#codecunion), at most one per enum, with
//! no `tag`: a tuple variant of two fields, the tag (`u32`) and the
//! payload, usually `codecbus_core::ext::RawValue` (`Unknown(u32,
//! RawValue)`). A value whose tag no variant has decodes into it, the
//! payload read as that field's type: a `RawValue` keeps its bytes
//! without interpreting them, any other type decodes them as that type.
//! Encoding writes `[tag, payload]` from the two fields, so a `RawValue`
//! goes back out byte for byte. Fields marked `skip` take their default
//! and do not count. Outside a `union`, with a `tag`, or on a variant of
//! another shape it is a compile error; a tag field of another type than
//! `u32` is a type error at that field.
//!
//! # Generic types
//!
//! Each type parameter used by a field gets a `T: MessageCodec` bound
//! (parameters only used in `skip`ped, `with` or `bytes` fields, or inside
//! `PhantomData`, do not; those used in `serde` fields get `Serialize +
//! DeserializeOwned`), and associated types used by fields (`T::Item`) are
//! bounded directly. Every type parameter also gets `T: Clone` (the deep
//! copy clones the value) or, for an immutable type, `T: Immutable`. When a
//! field needs more, write the bound on the type; when the inferred bounds
//! are wrong, replace them with `#[codec(bound = "...")]`. Lifetime and
//! const parameters are carried over as they are.
//!
//! The containers of `codecbus_core` (`Vec`, `Option`, maps, tuples ...) do
//! not need `Clone` elements: an immutable type that is not `Clone` can be
//! an element, and a container that is copied copies each element through
//! `MessageCodec::deep_copy`.
//!
//! # Errors at compile time
//!
//! Every mistake in `#[codec(...)]` attributes is reported, several per
//! derive, each at the key or value to fix: unknown keys (with a suggestion
//! for near misses and serde spellings), duplicates, keys in the wrong place
//! (a field attribute on a variant), values of the wrong form, unknown
//! `rename_all` rules, two fields or variants with one wire name, and
//! combinations that cannot work (`skip_if` with `as_array`, `skip` with
//! `rename`, `bytes` with `with` or `serde`), `key` on some fields but not
//! all, twice the same key, or `key` with `as_array`, `skip` or `skip_if`,
//! and a `bound` that does not parse as where-clause predicates. For
//! unions: `union` on a struct, `tag` or `other` on a variant of an enum
//! without `union`, a variant of a `union` with neither `tag` nor `other`,
//! a tag used twice or over `u32::MAX`, `tag` and `other` on one variant,
//! two catch-alls, a catch-all that is not a tuple variant of two fields,
//! and `rename` on a variant of a `union`. For `aliases`: a value that is
//! not a list, an empty list, an item that is not a string literal, an
//! empty alias, one given twice or equal to `name`, and `aliases` without
//! `name`, on a generic type or on an `unregistered` one. For
//! `reserved`: a value that is not a list, an empty list, an item that is
//! neither an integer up to `u32::MAX` nor a non-empty string, an item
//! given twice, an item of the kind the layout does not know, `reserved`
//! on a tuple, newtype or unit struct, and a key, tag, field name or
//! variant name that is reserved. After such an error the type
//! still gets a placeholder `MessageCodec` impl, so its uses elsewhere do
//! not add errors of their own. Type errors point at the field: a field
//! type without `MessageCodec`, a skipped field without `Default`, a
//! mutable field in an immutable type, a `with` module or `default`
//! function of the wrong signature, a catch-all's tag field that is not a
//! `u32`; a missing `Clone` points at the type name.
//!
//! # Where next
//!
//! * [`codecbus-core`](https://docs.rs/codecbus-core): the `MessageCodec`
//!   trait the derive implements, the reader, the writer and the limits;
//!   [`codecbus`](https://docs.rs/codecbus), the facade most programs
//!   depend on.
//! * The guide, in the repository's `book/` folder: its chapter "Codecs and
//!   attributes" (`book/src/codecs.md`) shows the attributes at work in
//!   complete programs, and "Performance" what the generated code costs
//!   against rmp-serde.

mod ast;
mod attr;
mod case;
mod codegen;
mod ctxt;
mod decode;
mod encode;
mod expand;
mod fallback;
mod register;
mod shape;
mod symbol;
mod transform;
mod valid;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `codecbus_core::MessageCodec` (and, for `#[codec(immutable)]`,
/// `codecbus_core::Immutable`), and registers non-generic types with the bus.
///
/// **Types that cross processes should carry an explicit
/// `#[codec(name = "...")]`**: the default codec name is the module path
/// plus the type name, so moving the type to another module changes its
/// name on the wire and breaks a cluster during a rolling deploy. Rename
/// with `#[codec(name = "new", aliases("old"))]` (see [Codec names and
/// rolling deploys](crate#codec-names-and-rolling-deploys)).
///
/// See the [crate documentation](crate) for the wire format, the decoding
/// rules and the `#[codec(...)]` attributes.
#[proc_macro_derive(MessageCodec, attributes(codec))]
pub fn derive_message_codec(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
