//! The codec registry: collected from `inventory` at build, conflicts,
//! manual registration, listing.

use crate::common;

use std::any::TypeId;

use codecbus_bus::{BuildErrorKind, CodecRegistration, EventBus, Message, RegistryErrorKind};
use codecbus_core::{Decode, Encode, MessageCodec};
use common::{Frozen, Other};

/// Registered by the derive through `inventory`: no call in user code.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "test.Order")]
struct Order {
    id: u64,
    items: Vec<String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(immutable)]
struct Quote {
    symbol: String,
    price: i64,
}

#[test]
fn derived_types_are_registered_at_build() {
    let bus = EventBus::new();
    let order = bus
        .codec_by_name("test.Order")
        .expect("collected from inventory");
    assert_eq!(order.type_id(), TypeId::of::<Order>());
    assert!(order.type_name().ends_with("Order"));
    assert!(!order.is_immutable());

    // The default name is the module path and the type name.
    let quote = bus.codec_for::<Quote>().expect("collected from inventory");
    assert_eq!(quote.name(), concat!(module_path!(), "::Quote"));
    assert!(quote.is_immutable());
}

#[test]
fn the_registry_lists_name_type_and_mutability_sorted_by_name() {
    let bus = EventBus::new();
    let all = bus.codecs();
    assert!(all.windows(2).all(|w| w[0].name() < w[1].name()));
    let listed: Vec<_> = all
        .iter()
        .map(|c| (c.name(), c.type_name(), c.is_immutable()))
        .collect();
    assert!(listed.contains(&("string", "alloc::string::String", true)));
    assert!(listed.contains(&("u64", "u64", true)));
    assert!(
        listed
            .iter()
            .any(|(name, ty, immutable)| *name == "test.Order"
                && ty.ends_with("Order")
                && !immutable)
    );
}

#[test]
fn two_types_under_one_name_fail_the_build_naming_both() {
    let err = EventBus::builder()
        .codec(CodecRegistration::of::<Frozen>("clash"))
        .codec(CodecRegistration::of::<Other>("clash"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::CodecConflict);
    let source = err.cause().unwrap().to_string();
    assert!(source.contains("\"clash\""), "{source}");
    assert!(source.contains("common::Frozen"), "{source}");
    assert!(source.contains("common::Other"), "{source}");
    // The text tells the cause, after the bus's own words.
    assert_eq!(
        err.to_string(),
        format!("cannot build the event bus: the codec registrations conflict: {source}")
    );
}

#[test]
fn a_build_error_tells_its_cause_once() {
    for err in [
        EventBus::builder()
            .codec(CodecRegistration::of::<Frozen>("clash"))
            .codec(CodecRegistration::of::<Other>("clash"))
            .build()
            .unwrap_err(),
        EventBus::builder()
            .codec(CodecRegistration::of::<Frozen>("one"))
            .codec(CodecRegistration::of::<Frozen>("two"))
            .build()
            .unwrap_err(),
    ] {
        let texts = common::build_error_texts(&err);
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(
            texts[0],
            "cannot build the event bus: the codec registrations conflict"
        );
    }
}

#[test]
fn a_hand_registration_clashing_with_a_derived_one_fails_the_build() {
    let err = EventBus::builder()
        .codec(CodecRegistration::of::<Frozen>("test.Order"))
        .build()
        .unwrap_err();
    let text = err.cause().unwrap().to_string();
    assert!(
        text.contains("test.Order") && text.contains("Order`") && text.contains("Frozen"),
        "{text}"
    );
}

#[test]
fn the_same_registration_twice_at_build_is_harmless() {
    let bus = EventBus::builder()
        .codec(CodecRegistration::of::<Frozen>("frozen"))
        .codec(CodecRegistration::of::<Frozen>("frozen"))
        .build()
        .unwrap();
    assert_eq!(
        bus.codec_by_name("frozen").unwrap().type_id(),
        TypeId::of::<Frozen>()
    );
}

#[test]
fn one_type_under_two_names_fails_the_build() {
    let err = EventBus::builder()
        .codec(CodecRegistration::of::<Frozen>("a"))
        .codec(CodecRegistration::of::<Frozen>("b"))
        .build()
        .unwrap_err();
    let cause = err.cause().unwrap().to_string();
    assert!(cause.contains("two codec names"), "{cause}");
}

/// Renamed: registered by the derive under its new name, with its old one.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "test.Renamed.v2", aliases("test.Renamed"))]
struct Renamed {
    id: u64,
}

/// The cause of a build error, which names the parties of the conflict.
fn conflict(builder: codecbus_bus::EventBusBuilder) -> String {
    let err = builder.build().unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::CodecConflict);
    err.cause().unwrap().to_string()
}

#[test]
fn a_derived_alias_finds_its_codec_but_is_no_codec_name() {
    let bus = EventBus::new();
    let codec = bus.codec_for::<Renamed>().unwrap();
    assert_eq!(codec.name(), "test.Renamed.v2");
    assert_eq!(codec.aliases(), ["test.Renamed"]);
    // Looked up by its old name, the codec that reads such messages, under
    // its current name; the list of codecs names each once, as it is now.
    let by_alias = bus.codec_by_name("test.Renamed").unwrap();
    assert_eq!(by_alias.name(), "test.Renamed.v2");
    assert_eq!(by_alias.type_id(), TypeId::of::<Renamed>());
    assert!(bus.codecs().iter().all(|c| c.name() != "test.Renamed"));
}

#[test]
fn an_alias_that_is_another_codec_s_name_fails_the_build_naming_both() {
    // The alias first, then the name, and the other way round.
    for source in [
        conflict(
            EventBus::builder()
                .codec(CodecRegistration::of::<Other>("other.v2").with_aliases(&["frozen"]))
                .codec(CodecRegistration::of::<Frozen>("frozen")),
        ),
        conflict(
            EventBus::builder()
                .codec(CodecRegistration::of::<Frozen>("frozen"))
                .codec(CodecRegistration::of::<Other>("other.v2").with_aliases(&["frozen"])),
        ),
    ] {
        assert!(source.contains("\"frozen\""), "{source}");
        assert!(source.contains("\"other.v2\""), "{source}");
        assert!(source.contains("common::Frozen"), "{source}");
        assert!(source.contains("common::Other"), "{source}");
    }
    // A derived codec's alias, and a derived codec's name.
    let source =
        conflict(EventBus::builder().codec(CodecRegistration::of::<Frozen>("test.Renamed")));
    assert!(source.contains("\"test.Renamed\""), "{source}");
    assert!(
        source.contains("Renamed`") && source.contains("Frozen"),
        "{source}"
    );
    let source = conflict(
        EventBus::builder()
            .codec(CodecRegistration::of::<Frozen>("frozen").with_aliases(&["test.Order"])),
    );
    assert!(source.contains("\"test.Order\""), "{source}");
    assert!(
        source.contains("Order`") && source.contains("Frozen"),
        "{source}"
    );
    // A built-in name gives way to an alias, as to a name.
    let bus = EventBus::builder()
        .codec(CodecRegistration::of::<Frozen>("frozen").with_aliases(&["u8"]))
        .build()
        .unwrap();
    assert_eq!(bus.codec_by_name("u8").unwrap().name(), "frozen");
    assert!(bus.codecs().iter().all(|c| c.name() != "u8"));
}

#[test]
fn one_alias_for_two_codecs_fails_the_build_naming_both() {
    let source = conflict(
        EventBus::builder()
            .codec(CodecRegistration::of::<Frozen>("frozen.v2").with_aliases(&["old", "older"]))
            .codec(CodecRegistration::of::<Other>("other.v2").with_aliases(&["older"])),
    );
    assert!(source.contains("\"older\""), "{source}");
    assert!(
        source.contains("\"frozen.v2\"") && source.contains("\"other.v2\""),
        "{source}"
    );
    assert!(
        source.contains("common::Frozen") && source.contains("common::Other"),
        "{source}"
    );
    assert!(source.contains("two codecs"), "{source}");
}

#[test]
fn aliases_repeated_or_of_the_same_codec_are_harmless() {
    let bus = EventBus::builder()
        .codec(CodecRegistration::of::<Frozen>("frozen.v2").with_aliases(&["frozen", "frozen"]))
        .codec(CodecRegistration::of::<Frozen>("frozen.v2").with_aliases(&["frozen", "frozen.v2"]))
        .codec(CodecRegistration::of::<Frozen>("frozen.v2"))
        .build()
        .unwrap();
    assert_eq!(
        bus.codec_by_name("frozen.v2").unwrap().type_id(),
        TypeId::of::<Frozen>()
    );
}

#[test]
fn register_codec_refuses_a_taken_alias_and_unregister_frees_them() {
    let bus = EventBus::new();
    let renamed = CodecRegistration::of::<Frozen>("frozen.v2").with_aliases(&["frozen"]);
    bus.register_codec(renamed).unwrap();
    // A name that is an alias, an alias that is a name or an alias.
    for taken in [
        CodecRegistration::of::<Other>("frozen"),
        CodecRegistration::of::<Other>("other").with_aliases(&["frozen.v2"]),
        CodecRegistration::of::<Other>("other").with_aliases(&["frozen"]),
        CodecRegistration::of::<Other>("other").with_aliases(&["test.Renamed"]),
    ] {
        let err = bus.register_codec(taken).unwrap_err();
        assert_eq!(err.kind(), RegistryErrorKind::NameTaken, "{err}");
        assert!(bus.codec_by_name("other").is_none());
    }
    assert_eq!(bus.codec_by_name("frozen").unwrap().name(), "frozen.v2");
    assert_eq!(
        bus.unregister_codec("frozen.v2").unwrap().name(),
        "frozen.v2"
    );
    assert!(bus.codec_by_name("frozen").is_none());
    bus.register_codec(CodecRegistration::of::<Other>("frozen"))
        .unwrap();
}

#[test]
fn register_codec_twice_is_an_error_as_in_vertx() {
    let bus = EventBus::new();
    bus.register_codec(CodecRegistration::of::<Frozen>("frozen"))
        .unwrap();
    let err = bus
        .register_codec(CodecRegistration::of::<Frozen>("frozen"))
        .unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::NameTaken);
    assert_eq!(
        err.to_string(),
        "Already a codec registered with name frozen"
    );
    let err = bus
        .register_codec(CodecRegistration::of::<Other>("frozen"))
        .unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::NameTaken);
    let err = bus
        .register_codec(CodecRegistration::of::<Frozen>("frozen2"))
        .unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::TypeTaken);

    assert_eq!(bus.unregister_codec("frozen").unwrap().name(), "frozen");
    bus.register_codec(CodecRegistration::of::<Frozen>("frozen2"))
        .unwrap();
}

#[test]
fn registry_encode_and_decode_round_trip_by_name() {
    // What a remote transport does: encode by type, decode by name.
    let bus = EventBus::new();
    let order = Order {
        id: 7,
        items: vec!["tea".into()],
    };
    let codec = bus.codec_for::<Order>().unwrap();
    let mut w = codecbus_core::Writer::new();
    codec.encode(&order, &mut w).unwrap();
    let bytes = w.into_vec();
    let by_name = bus.codec_by_name(codec.name()).unwrap();
    let decoded = by_name
        .decode(&mut codecbus_core::Reader::new(&bytes))
        .unwrap();
    assert_eq!(decoded.downcast_ref::<Order>(), Some(&order));
}

#[tokio::test]
async fn unregistered_types_still_travel_locally() {
    #[derive(Clone, Debug)]
    struct Local(u8);
    impl Encode for Local {
        fn encode(&self, w: &mut codecbus_core::Writer) -> Result<(), codecbus_core::EncodeError> {
            w.write_u64(u64::from(self.0));
            Ok(())
        }
    }

    impl<'de> Decode<'de> for Local {
        fn decode(r: &mut codecbus_core::Reader<'de>) -> Result<Self, codecbus_core::DecodeError> {
            Ok(Self(r.read_u8()?))
        }
    }

    impl codecbus_core::MessageType for Local {}

    impl MessageCodec for Local {
        const IMMUTABLE: bool = true;
        fn transform(body: &std::sync::Arc<Self>) -> std::sync::Arc<Self> {
            std::sync::Arc::clone(body)
        }
    }
    let bus = EventBus::new();
    assert!(bus.codec_for::<Local>().is_none());
    let _c = bus.consumer("local", |m: Message<Local>| async move {
        m.reply(Local(m.body().0 + 1))
    });
    let reply: Message<Local> = bus.request("local", Local(1)).await.unwrap();
    assert_eq!(reply.body().0, 2);
}

#[tokio::test]
async fn derived_types_on_the_bus() {
    let bus = EventBus::new();
    let _orders = bus.consumer("orders", |m: Message<Order>| async move {
        m.reply(Quote {
            symbol: m.body().items.join(","),
            price: m.body().id as i64 * 100,
        })
    });
    let mut watchers: Vec<_> = (0..2)
        .map(|_| bus.consumer_stream::<Quote>("quotes"))
        .collect();
    let reply: Message<Quote> = bus
        .request(
            "orders",
            Order {
                id: 3,
                items: vec!["tea".into(), "cake".into()],
            },
        )
        .await
        .unwrap();
    assert_eq!(
        reply.body(),
        &Quote {
            symbol: "tea,cake".into(),
            price: 300
        }
    );
    bus.publish("quotes", reply.into_body()).await.unwrap();
    let a = watchers[0].recv().await.unwrap();
    let b = watchers[1].recv().await.unwrap();
    assert!(
        std::sync::Arc::ptr_eq(a.body_arc(), b.body_arc()),
        "immutable derived type is shared"
    );
}
