//! Shapes of derived types (`MessageCodec::shape`): the canonical JSON of
//! each layout pinned, named codecs referred to by name, and a codec's
//! form independent of where its Rust type lives.

// Most types here are described, never built: their fields go unread.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::marker::PhantomData;

use codecbus_core::ext::RawValue;
use codecbus_core::shape::{CodecShape, Definitions, Shape};
use codecbus_core::{MessageCodec, registrations};
use serde::{Deserialize, Serialize};

/// The canonical JSON of `T` registered as `name`.
fn canonical<T: MessageCodec>(name: &str) -> String {
    CodecShape::of::<T>(name).canonical_json()
}

/// The canonical JSON of a shape alone.
fn shape_json<T: MessageCodec>() -> String {
    T::shape(&mut Definitions::new()).canonical_json()
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.order")]
struct Order {
    id: u64,
    note: Option<String>,
    lines: Vec<Line>,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.line", as_array)]
struct Line {
    sku: String,
    quantity: u32,
    discount: Option<f32>,
}

#[test]
fn a_map_layout_sorts_its_fields_by_name() {
    assert_eq!(
        canonical::<Order>("shapes.order"),
        concat!(
            r#"{"aliases":[],"name":"shapes.order","refs":{"shapes.line":"#,
            r#"{"record":{"fields":["#,
            r#"{"key":0,"name":"sku","optional":false,"shape":"str"},"#,
            r#"{"key":1,"name":"quantity","optional":false,"shape":"u32"},"#,
            r#"{"key":2,"name":"discount","optional":true,"shape":{"option":"f32"}}],"#,
            r#""layout":"array","reserved":[]}}},"#,
            r#""shape":{"record":{"fields":["#,
            r#"{"name":"id","optional":false,"shape":"u64"},"#,
            r#"{"name":"lines","optional":false,"shape":{"array":{"ref":"shapes.line"}}},"#,
            r#"{"name":"note","optional":true,"shape":{"option":"str"}}],"#,
            r#""layout":"map","reserved":[]}}}"#,
        )
    );
    // Itself, seen from outside: a reference.
    assert_eq!(shape_json::<Order>(), r#"{"ref":"shapes.order"}"#);
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.keyed")]
struct Keyed {
    #[codec(key = 3)]
    email: Option<String>,
    #[codec(key = 0)]
    id: u8,
    #[codec(skip)]
    cache: u32,
    #[codec(key = 1, rename = "display")]
    name: String,
}

#[test]
fn a_keyed_layout_lists_its_fields_by_key() {
    assert_eq!(
        canonical::<Keyed>("shapes.keyed"),
        concat!(
            r#"{"aliases":[],"name":"shapes.keyed","refs":{},"shape":{"record":{"fields":["#,
            r#"{"key":0,"name":"id","optional":false,"shape":"u8"},"#,
            r#"{"key":1,"name":"display","optional":false,"shape":"str"},"#,
            r#"{"key":3,"name":"email","optional":true,"shape":{"option":"str"}}],"#,
            r#""layout":"keyed","reserved":[]}}}"#,
        )
    );
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.pair")]
struct Pair(u8, #[codec(skip)] u16, Option<String>);

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.meters")]
struct Meters(f64);

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.unit")]
struct Unit;

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.empty")]
struct Empty {}

#[test]
fn tuple_structs_are_arrays_and_a_newtype_is_its_field() {
    assert_eq!(
        canonical::<Pair>("shapes.pair"),
        concat!(
            r#"{"aliases":[],"name":"shapes.pair","refs":{},"shape":{"record":{"fields":["#,
            r#"{"key":0,"name":"0","optional":false,"shape":"u8"},"#,
            r#"{"key":1,"name":"2","optional":true,"shape":{"option":"str"}}],"#,
            r#""layout":"array","reserved":[]}}}"#,
        )
    );
    // Written as its field: no definition of its own.
    assert_eq!(shape_json::<Meters>(), r#""f64""#);
    assert_eq!(
        canonical::<Meters>("shapes.meters"),
        r#"{"aliases":[],"name":"shapes.meters","refs":{},"shape":"f64"}"#
    );
    // `[]` and `{}`.
    assert_eq!(
        canonical::<Unit>("shapes.unit"),
        r#"{"aliases":[],"name":"shapes.unit","refs":{},"shape":{"record":{"fields":[],"layout":"array","reserved":[]}}}"#
    );
    assert_eq!(
        canonical::<Empty>("shapes.empty"),
        r#"{"aliases":[],"name":"shapes.empty","refs":{},"shape":{"record":{"fields":[],"layout":"map","reserved":[]}}}"#
    );
}

/// A newtype of a named codec is a reference to it.
#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.wrapped")]
struct Wrapped(Order);

#[test]
fn a_newtype_of_a_named_codec_refers_to_it() {
    let shape = CodecShape::of::<Wrapped>("shapes.wrapped");
    assert_eq!(shape.shape, Shape::Ref("shapes.order".into()));
    assert_eq!(
        shape.refs.keys().collect::<Vec<_>>(),
        ["shapes.line", "shapes.order"]
    );
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.event", rename_all = "snake_case", as_array)]
enum Event {
    Started,
    #[codec(rename = "stop")]
    Stopped(u32),
    Moved(i32, i32),
    Renamed {
        from: String,
        to: Option<String>,
    },
}

#[test]
fn an_enum_lists_its_variants_by_name_with_their_payloads() {
    assert_eq!(
        canonical::<Event>("shapes.event"),
        concat!(
            r#"{"aliases":[],"name":"shapes.event","refs":{},"shape":{"enum":{"reserved":[],"variants":["#,
            r#"{"name":"moved","payload":{"tuple":["i32","i32"]}},"#,
            r#"{"name":"renamed","payload":{"record":{"fields":["#,
            r#"{"key":0,"name":"from","optional":false,"shape":"str"},"#,
            r#"{"key":1,"name":"to","optional":true,"shape":{"option":"str"}}],"#,
            r#""layout":"array","reserved":[]}}},"#,
            r#"{"name":"started","payload":"unit"},"#,
            r#"{"name":"stop","payload":{"newtype":"u32"}}]}}}"#,
        )
    );
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.command", union, reserved(2, 5))]
enum Command {
    #[codec(tag = 1)]
    Stop,
    #[codec(tag = 0)]
    Start { at: u64 },
    #[codec(tag = 300)]
    Scale(u8),
    #[codec(other)]
    Unknown(u32, RawValue),
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.strict", union)]
enum Strict {
    #[codec(tag = 0)]
    Only,
}

#[test]
fn a_union_lists_its_variants_by_tag_and_names_its_catch_all() {
    assert_eq!(
        canonical::<Command>("shapes.command"),
        concat!(
            r#"{"aliases":[],"name":"shapes.command","refs":{},"shape":{"union":{"catch_all":"Unknown","reserved":[2,5],"variants":["#,
            r#"{"name":"Start","payload":{"record":{"fields":["#,
            r#"{"name":"at","optional":false,"shape":"u64"}],"layout":"map","reserved":[]}},"tag":0},"#,
            r#"{"name":"Stop","payload":"unit","tag":1},"#,
            r#"{"name":"Scale","payload":{"newtype":"u8"},"tag":300}]}}}"#,
        )
    );
    assert_eq!(
        canonical::<Strict>("shapes.strict"),
        r#"{"aliases":[],"name":"shapes.strict","refs":{},"shape":{"union":{"catch_all":null,"reserved":[],"variants":[{"name":"Only","payload":"unit","tag":0}]}}}"#
    );
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.profile", reserved("nickname", "age"))]
struct Profile {
    name: String,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.account", reserved(1, 4))]
struct Account {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 2)]
    plan: String,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.point", as_array, reserved(1))]
struct Point {
    x: i32,
    #[codec(skip)]
    cached: u8,
    y: i32,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.status", reserved("Paused"))]
enum Status {
    Running,
}

#[test]
fn reserved_keys_positions_tags_and_names_are_listed() {
    assert_eq!(
        canonical::<Profile>("shapes.profile"),
        r#"{"aliases":[],"name":"shapes.profile","refs":{},"shape":{"record":{"fields":[{"name":"name","optional":false,"shape":"str"}],"layout":"map","reserved":["age","nickname"]}}}"#
    );
    assert_eq!(
        canonical::<Account>("shapes.account"),
        concat!(
            r#"{"aliases":[],"name":"shapes.account","refs":{},"shape":{"record":{"fields":["#,
            r#"{"key":0,"name":"id","optional":false,"shape":"u64"},"#,
            r#"{"key":2,"name":"plan","optional":false,"shape":"str"}],"#,
            r#""layout":"keyed","reserved":[1,4]}}}"#,
        )
    );
    // `y` steps over the reserved position 1.
    assert_eq!(
        canonical::<Point>("shapes.point"),
        concat!(
            r#"{"aliases":[],"name":"shapes.point","refs":{},"shape":{"record":{"fields":["#,
            r#"{"key":0,"name":"x","optional":false,"shape":"i32"},"#,
            r#"{"key":2,"name":"y","optional":false,"shape":"i32"}],"#,
            r#""layout":"array","reserved":[1]}}}"#,
        )
    );
    assert_eq!(
        canonical::<Status>("shapes.status"),
        r#"{"aliases":[],"name":"shapes.status","refs":{},"shape":{"enum":{"reserved":["Paused"],"variants":[{"name":"Running","payload":"unit"}]}}}"#
    );
}

/// A tree: refers to itself by name.
#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.node")]
struct Node {
    label: String,
    children: Vec<Node>,
    parent: Option<Box<Node>>,
}

/// A newtype that contains itself: named, as a struct is.
#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.chain")]
struct Chain(Option<Box<Chain>>);

/// Two types that refer to each other.
#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.ping")]
struct Ping {
    pong: Option<Box<Pong>>,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.pong")]
struct Pong {
    ping: Option<Box<Ping>>,
}

#[test]
fn a_recursive_type_refers_to_itself_by_name() {
    assert_eq!(
        canonical::<Node>("shapes.node"),
        concat!(
            r#"{"aliases":[],"name":"shapes.node","refs":{},"shape":{"record":{"fields":["#,
            r#"{"name":"children","optional":false,"shape":{"array":{"ref":"shapes.node"}}},"#,
            r#"{"name":"label","optional":false,"shape":"str"},"#,
            r#"{"name":"parent","optional":true,"shape":{"option":{"ref":"shapes.node"}}}],"#,
            r#""layout":"map","reserved":[]}}}"#,
        )
    );
    assert_eq!(shape_json::<Chain>(), r#"{"ref":"shapes.chain"}"#);
    assert_eq!(
        canonical::<Chain>("shapes.chain"),
        r#"{"aliases":[],"name":"shapes.chain","refs":{},"shape":{"option":{"ref":"shapes.chain"}}}"#
    );
    assert_eq!(
        canonical::<Ping>("shapes.ping"),
        concat!(
            r#"{"aliases":[],"name":"shapes.ping","refs":{"shapes.pong":{"record":{"fields":["#,
            r#"{"name":"ping","optional":true,"shape":{"option":{"ref":"shapes.ping"}}}],"#,
            r#""layout":"map","reserved":[]}}},"shape":{"record":{"fields":["#,
            r#"{"name":"pong","optional":true,"shape":{"option":{"ref":"shapes.pong"}}}],"#,
            r#""layout":"map","reserved":[]}}}"#,
        )
    );
}

/// Generic: each instantiation is a codec of its own, named after the
/// default name and its arguments.
#[derive(MessageCodec, Clone)]
struct Page<T> {
    items: Vec<T>,
    next: Option<u32>,
}

#[derive(MessageCodec, Clone)]
struct Tagged<T, const N: usize> {
    values: [T; N],
}

/// A parameter only in `PhantomData`: named by its Rust type.
#[derive(MessageCodec, Clone)]
struct Marked<M> {
    n: u8,
    #[codec(skip)]
    marker: PhantomData<M>,
}

#[derive(Clone)]
struct Kilometers;

#[test]
fn a_generic_type_is_named_after_its_arguments() {
    let page = |item: &str| {
        concat!(
            r#"{"record":{"fields":["#,
            r#"{"name":"items","optional":false,"shape":{"array":ITEM}},"#,
            r#"{"name":"next","optional":true,"shape":{"option":"u32"}}],"#,
            r#""layout":"map","reserved":[]}}"#,
        )
        .replace("ITEM", item)
    };
    assert_eq!(
        shape_json::<Page<u8>>(),
        r#"{"ref":"derive::shapes::Page<u8>"}"#
    );
    assert_eq!(
        shape_json::<Page<Vec<String>>>(),
        r#"{"ref":"derive::shapes::Page<{\"array\":\"str\"}>"}"#
    );
    // A named argument by its codec name; nested instantiations.
    assert_eq!(
        shape_json::<Page<Page<Order>>>(),
        r#"{"ref":"derive::shapes::Page<derive::shapes::Page<shapes.order>>"}"#
    );
    let shape = CodecShape::of::<Page<Page<Order>>>("pages");
    assert_eq!(
        shape.shape,
        Shape::Ref("derive::shapes::Page<derive::shapes::Page<shapes.order>>".into())
    );
    assert_eq!(
        shape.refs.keys().collect::<Vec<_>>(),
        [
            "derive::shapes::Page<derive::shapes::Page<shapes.order>>",
            "derive::shapes::Page<shapes.order>",
            "shapes.line",
            "shapes.order",
        ]
    );
    // Registered under the name the derive gives it, its definition is
    // the codec's shape.
    let own = CodecShape::of::<Page<u8>>("derive::shapes::Page<u8>");
    assert_eq!(own.shape.canonical_json(), page(r#""u8""#));
    assert!(own.refs.is_empty());

    assert_eq!(
        shape_json::<Tagged<bool, 2>>(),
        r#"{"ref":"derive::shapes::Tagged<bool,2>"}"#
    );
    assert_eq!(
        shape_json::<Marked<Kilometers>>(),
        r#"{"ref":"derive::shapes::Marked<derive::shapes::Kilometers>"}"#
    );
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

fn default_port() -> u16 {
    8080
}

mod as_text {
    use codecbus_core::{DecodeError, EncodeError, Reader, Writer};

    pub(crate) fn encode(v: &u128, w: &mut Writer) -> Result<(), EncodeError> {
        w.write_str(&v.to_string())
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<u128, DecodeError> {
        let at = r.position();
        r.read_str()?
            .parse()
            .map_err(|e| DecodeError::custom(e, at))
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Legacy {
    street: String,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.config", rename_all = "camelCase")]
struct Config {
    host_name: String,
    #[codec(rename = "PORT", default = "default_port")]
    port: u16,
    #[codec(default)]
    retries: u8,
    #[codec(skip_if = "is_blank", default)]
    comment: String,
    /// Left out when blank, yet asked for by a reader: not optional.
    #[codec(skip_if = "is_blank")]
    motto: String,
    #[codec(skip)]
    resolved: Option<u32>,
    #[codec(with = "as_text")]
    balance: u128,
    #[codec(serde)]
    address: Legacy,
    #[codec(serde)]
    billing: Option<Legacy>,
    #[codec(bytes)]
    key: Vec<u8>,
    #[codec(bytes)]
    signature: Option<Vec<u8>>,
    /// Transparent: optional as the `Option` it holds.
    maybe: Maybe,
}

#[derive(MessageCodec, Clone)]
struct Maybe(Option<u8>);

#[test]
fn field_attributes_decide_the_field_shapes() {
    assert_eq!(
        canonical::<Config>("shapes.config"),
        concat!(
            r#"{"aliases":[],"name":"shapes.config","refs":{},"shape":{"record":{"fields":["#,
            r#"{"name":"PORT","optional":true,"shape":"u16"},"#,
            r#"{"name":"address","optional":false,"shape":"opaque"},"#,
            r#"{"name":"balance","optional":false,"shape":"opaque"},"#,
            r#"{"name":"billing","optional":true,"shape":"opaque"},"#,
            r#"{"name":"comment","optional":true,"shape":"str"},"#,
            r#"{"name":"hostName","optional":false,"shape":"str"},"#,
            r#"{"name":"key","optional":false,"shape":"bin"},"#,
            r#"{"name":"maybe","optional":true,"shape":{"option":"u8"}},"#,
            r#"{"name":"motto","optional":false,"shape":"str"},"#,
            r#"{"name":"retries","optional":true,"shape":"u8"},"#,
            r#"{"name":"signature","optional":true,"shape":{"option":"bin"}}],"#,
            r#""layout":"map","reserved":[]}}}"#,
        )
    );
}

/// The same codec, as it was: `shapes.moved.v1` under another Rust name,
/// in another module, its fields declared in another order.
mod before {
    use codecbus_core::MessageCodec;

    #[derive(MessageCodec, Clone)]
    #[codec(name = "shapes.moved.v1")]
    pub(crate) struct Shipment {
        pub(crate) to: super::before_parts::Address,
        pub(crate) weight: u32,
    }
}

mod before_parts {
    use codecbus_core::MessageCodec;

    #[derive(MessageCodec, Clone)]
    #[codec(name = "shapes.address.v1")]
    pub(crate) struct Address {
        pub(crate) city: String,
    }
}

mod after {
    pub(crate) mod deeper {
        use codecbus_core::MessageCodec;

        #[derive(MessageCodec, Clone)]
        #[codec(name = "shapes.moved.v1")]
        pub(crate) struct Consignment {
            pub(crate) weight: u32,
            pub(crate) to: Destination,
        }

        #[derive(MessageCodec, Clone)]
        #[codec(name = "shapes.address.v1")]
        pub(crate) struct Destination {
            pub(crate) city: String,
        }
    }
}

#[test]
fn renaming_or_moving_a_type_with_a_codec_name_changes_nothing() {
    let before = CodecShape::of::<before::Shipment>("shapes.moved.v1");
    let after = CodecShape::of::<after::deeper::Consignment>("shapes.moved.v1");
    assert_eq!(before, after);
    assert_eq!(before.canonical_json(), after.canonical_json());
    assert_eq!(before.fingerprint(), after.fingerprint());
    assert_eq!(
        before.canonical_json(),
        concat!(
            r#"{"aliases":[],"name":"shapes.moved.v1","refs":{"shapes.address.v1":"#,
            r#"{"record":{"fields":[{"name":"city","optional":false,"shape":"str"}],"layout":"map","reserved":[]}}},"#,
            r#""shape":{"record":{"fields":["#,
            r#"{"name":"to","optional":false,"shape":{"ref":"shapes.address.v1"}},"#,
            r#"{"name":"weight","optional":false,"shape":"u32"}],"#,
            r#""layout":"map","reserved":[]}}}"#,
        )
    );
    // A change of the wire does change it.
    let other = CodecShape::of::<Order>("shapes.moved.v1");
    assert_ne!(before.fingerprint(), other.fingerprint());
}

#[derive(MessageCodec, Clone)]
#[codec(name = "shapes.registered.v2", aliases("shapes.registered.v1"))]
struct Registered {
    at: std::time::SystemTime,
    tags: BTreeMap<String, Vec<u8>>,
}

#[test]
fn a_registration_carries_the_shape() {
    let reg = registrations()
        .find(|r| r.name() == "shapes.registered.v2")
        .unwrap();
    let shape = reg.shape();
    assert_eq!(shape, {
        let mut expected = CodecShape::of::<Registered>("shapes.registered.v2");
        expected.aliases = vec!["shapes.registered.v1".into()];
        expected
    });
    assert_eq!(
        shape.canonical_json(),
        concat!(
            r#"{"aliases":["shapes.registered.v1"],"name":"shapes.registered.v2","refs":{},"#,
            r#""shape":{"record":{"fields":["#,
            r#"{"name":"at","optional":false,"shape":{"ext":-1}},"#,
            r#"{"name":"tags","optional":false,"shape":{"map":["str",{"array":"u8"}]}}],"#,
            r#""layout":"map","reserved":[]}}}"#,
        )
    );
    // Every registration of the program describes itself.
    for reg in registrations() {
        let shape = reg.shape();
        assert_eq!(shape.name, reg.name());
        let _ = shape.fingerprint();
    }
}
