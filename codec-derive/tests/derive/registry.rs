//! Registration records and local-delivery transforms of derived types.

use std::any::TypeId;
use std::sync::Arc;

use codecbus_core::{CodecRegistration, Immutable, MessageCodec, Reader, Writer, registrations};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct DefaultName {
    n: u8,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "orders.v2")]
struct CustomName {
    n: u8,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "events.shape")]
enum Shape {
    Dot,
    Line(u32),
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Generic<T> {
    value: T,
}

mod nested {
    use codecbus_core::MessageCodec;

    #[derive(MessageCodec, Clone)]
    pub(crate) struct Inner;

    #[allow(non_camel_case_types)]
    #[derive(MessageCodec, Clone)]
    pub(crate) struct r#Raw;
}

fn find(name: &str) -> Option<&'static CodecRegistration> {
    registrations().find(|r| r.name() == name)
}

#[test]
fn default_name_is_module_path_and_type() {
    let reg = find("derive::registry::DefaultName").expect("registered under its module path");
    assert_eq!(reg.type_id(), TypeId::of::<DefaultName>());
    assert!(reg.type_name().ends_with("DefaultName"));
    assert!(find("derive::registry::nested::Inner").is_some());
    // Raw identifiers are registered without `r#`.
    assert!(find("derive::registry::nested::Raw").is_some());
}

#[test]
fn custom_names() {
    assert_eq!(
        find("orders.v2").unwrap().type_id(),
        TypeId::of::<CustomName>()
    );
    assert_eq!(
        find("events.shape").unwrap().type_id(),
        TypeId::of::<Shape>()
    );
    assert!(find("derive::registry::CustomName").is_none());
}

/// Renamed twice: first known by its default name, then as "shop.order".
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(
    name = "shop.order.v2",
    aliases("derive::registry::orders::Order", "shop.order")
)]
struct RenamedOrder {
    id: u64,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(immutable, aliases("frozen.point.v1",), name = "frozen.point.v2")]
struct RenamedPoint(i32, i32);

macro_rules! aliased {
    ($name:literal, $alias:literal) => {
        #[derive(MessageCodec, Clone)]
        #[codec(name = $name, aliases($alias))]
        struct FromMacro;
    };
}
aliased!("macro.type.v2", "macro.type.v1");

#[test]
fn a_registration_carries_its_aliases_in_order() {
    let order = find("shop.order.v2").expect("registered under its name");
    assert_eq!(order.type_id(), TypeId::of::<RenamedOrder>());
    assert_eq!(
        order.aliases(),
        ["derive::registry::orders::Order", "shop.order"]
    );
    let point = find("frozen.point.v2").unwrap();
    assert_eq!(point.aliases(), ["frozen.point.v1"]);
    assert!(point.is_immutable());
    assert_eq!(find("macro.type.v2").unwrap().aliases(), ["macro.type.v1"]);
    let debug = format!("{order:?}");
    assert!(
        debug.contains(r#"aliases: ["derive::registry::orders::Order", "shop.order"]"#),
        "{debug}"
    );
}

#[test]
fn an_alias_is_no_registration_of_its_own() {
    // The aliases are for a bus's lookup by name: the registrations
    // themselves are under the current name only.
    for old in [
        "derive::registry::orders::Order",
        "shop.order",
        "frozen.point.v1",
    ] {
        assert!(find(old).is_none(), "{old}");
    }
    let renamed = TypeId::of::<RenamedOrder>();
    assert_eq!(
        registrations().filter(|r| r.type_id() == renamed).count(),
        1
    );
}

#[test]
fn types_without_aliases_have_none() {
    assert!(find("orders.v2").unwrap().aliases().is_empty());
    assert!(
        find("derive::registry::DefaultName")
            .unwrap()
            .aliases()
            .is_empty()
    );
}

#[test]
fn hand_written_registrations_take_aliases() {
    const HAND: CodecRegistration =
        CodecRegistration::of::<Vec<u32>>("numbers.v2").with_aliases(&["numbers"]);
    assert_eq!(HAND.name(), "numbers.v2");
    assert_eq!(HAND.aliases(), ["numbers"]);
    assert!(CodecRegistration::of::<u8>("byte").aliases().is_empty());
    // The rest of the record is that of `of`.
    assert_eq!(HAND.type_id(), TypeId::of::<Vec<u32>>());
    let mut w = Writer::new();
    HAND.encode(&vec![1u32, 2], &mut w).unwrap();
    assert_eq!(w.as_slice(), b"\x92\x01\x02");
}

#[test]
fn types_inside_functions_are_registered() {
    #[derive(MessageCodec, Clone)]
    #[codec(name = "local.type")]
    struct Local {
        _x: u8,
    }
    let reg = find("local.type").expect("registered");
    assert_eq!(reg.type_id(), TypeId::of::<Local>());
}

#[test]
fn generic_types_are_not_registered() {
    let generic = TypeId::of::<Generic<u8>>();
    assert!(registrations().all(|r| r.type_id() != generic));
    assert!(registrations().all(|r| !r.type_name().contains("Generic<")));
}

/// Once per type: two types may share a name (as `shapes` does, to
/// compare a type with its moved copy), a bus would refuse to start.
#[test]
fn each_type_is_registered_once() {
    let mut names: Vec<(&str, TypeId)> = registrations()
        .map(|r| (r.name(), r.type_id()))
        .filter(|(n, _)| n.starts_with("derive::registry::") || n.contains('.'))
        .collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "{names:?}");
}

#[test]
fn registration_encodes_decodes_and_transforms_type_erased() {
    let reg = find("orders.v2").unwrap();
    let body: codecbus_core::AnyBody = Arc::new(CustomName { n: 7 });
    let mut w = Writer::new();
    reg.encode(&*body, &mut w).unwrap();
    assert_eq!(w.as_slice(), b"\x81\xa1n\x07");
    let back = reg.decode(&mut Reader::new(w.as_slice())).unwrap();
    assert_eq!(
        back.downcast_ref::<CustomName>(),
        Some(&CustomName { n: 7 })
    );
    let copy = reg.transform(&body);
    assert!(!Arc::ptr_eq(&copy, &body));
    assert!(!reg.is_immutable());
}

// ---- transform ----

#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Frozen {
    id: u64,
    names: Vec<String>,
    inner: Option<Box<FrozenLeaf>>,
    shared: Arc<str>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(immutable)]
struct FrozenLeaf(String);

#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable, name = "frozen.enum")]
enum FrozenEvent {
    Started,
    Stopped { code: i32 },
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Mutable {
    counter: u64,
    log: Vec<String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(immutable)]
struct FrozenGeneric<T> {
    value: T,
}

fn assert_immutable<T: Immutable>() {}

#[test]
fn immutable_types_share_one_allocation() {
    const { assert!(Frozen::IMMUTABLE) };
    const { assert!(FrozenEvent::IMMUTABLE) };
    const { assert!(<FrozenGeneric<u8>>::IMMUTABLE) };
    assert_immutable::<Frozen>();
    assert_immutable::<FrozenLeaf>();
    assert_immutable::<FrozenEvent>();
    assert_immutable::<FrozenGeneric<String>>();
    assert_immutable::<Vec<FrozenLeaf>>();

    let body = Arc::new(Frozen {
        id: 1,
        names: vec!["a".into(); 1000],
        inner: Some(Box::new(FrozenLeaf("x".into()))),
        shared: Arc::from("s"),
    });
    for _ in 0..3 {
        let delivered = Frozen::transform(&body);
        assert!(Arc::ptr_eq(&delivered, &body));
    }
    let event = Arc::new(FrozenEvent::Stopped { code: 3 });
    assert!(Arc::ptr_eq(&FrozenEvent::transform(&event), &event));
    assert!(find("frozen.enum").unwrap().is_immutable());
    let generic = Arc::new(FrozenGeneric { value: 5u8 });
    assert!(Arc::ptr_eq(&FrozenGeneric::transform(&generic), &generic));
}

#[test]
fn other_types_get_a_deep_copy() {
    const { assert!(!Mutable::IMMUTABLE) };
    let body = Arc::new(Mutable {
        counter: 1,
        log: vec!["a".into()],
    });
    let mut copy = Mutable::transform(&body);
    assert!(!Arc::ptr_eq(&copy, &body));
    assert_eq!(*copy, *body);
    Arc::get_mut(&mut copy).unwrap().log.push("b".into());
    assert_eq!(body.log.len(), 1);
    assert_ne!(copy.log.as_ptr(), body.log.as_ptr());
}
