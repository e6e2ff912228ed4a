//! Local delivery (the codec's transform) and remote delivery (encode on
//! one node, decode on another) must hand a consumer the same value, so the
//! two paths can never drift apart.
#![cfg(feature = "nats")]

use crate::harness;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use codecbus_bus::{ConsumerOptions, EventBus, NatsOptions};
use codecbus_core::{AnyBody, CodecRegistration, MessageCodec, MessageType, Reader, Writer};
use codecbus_json::{JsObj, JsValue};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "prop.line")]
struct Line {
    sku: String,
    qty: u32,
    price: i64,
}

/// Deep-copied on local delivery.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "prop.basket")]
struct Basket {
    id: u64,
    owner: String,
    lines: Vec<Line>,
    note: Option<String>,
    paid: bool,
}

/// Shared on local delivery.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "prop.tag", immutable)]
struct Tag {
    name: String,
    weight: i32,
    codes: Vec<u16>,
}

fn line() -> impl Strategy<Value = Line> {
    (".{0,12}", any::<u32>(), any::<i64>()).prop_map(|(sku, qty, price)| Line { sku, qty, price })
}

fn basket() -> impl Strategy<Value = Basket> {
    (
        any::<u64>(),
        "\\PC{0,16}",
        vec(line(), 0..6),
        option::of(".{0,20}"),
        any::<bool>(),
    )
        .prop_map(|(id, owner, lines, note, paid)| Basket {
            id,
            owner,
            lines,
            note,
            paid,
        })
}

fn tag() -> impl Strategy<Value = Tag> {
    ("\\PC{0,16}", any::<i32>(), vec(any::<u16>(), 0..8)).prop_map(|(name, weight, codes)| Tag {
        name,
        weight,
        codes,
    })
}

fn jsobj() -> impl Strategy<Value = JsObj> {
    let leaf = prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::from),
        any::<i64>().prop_map(JsValue::from),
        any::<u64>().prop_map(JsValue::from),
        ".{0,10}".prop_map(JsValue::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4)
                .prop_map(|v| JsValue::from(v.into_iter().collect::<codecbus_json::JsArray>())),
            vec(("[a-z]{1,6}", inner), 0..4)
                .prop_map(|kv| JsValue::from(kv.into_iter().collect::<JsObj>())),
        ]
    });
    vec(("[a-z]{1,8}", value), 0..6).prop_map(|kv| kv.into_iter().collect())
}

/// The two paths through the registration the bus uses, without a server.
fn local_and_remote<T: MessageType + Send + Sync + 'static>(value: T) -> (Arc<T>, Arc<T>) {
    let reg = CodecRegistration::of::<T>("prop");
    let body: AnyBody = Arc::new(value);
    let local = reg.transform(&body).downcast::<T>().unwrap();
    let mut w = Writer::new();
    reg.encode(&*body, &mut w).unwrap();
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    let remote = reg.decode(&mut r).unwrap().downcast::<T>().unwrap();
    assert!(r.is_empty());
    (local, remote)
}

proptest! {
    #[test]
    fn transform_and_wire_agree_for_basket(b in basket()) {
        let (local, remote) = local_and_remote(b.clone());
        prop_assert_eq!(&*local, &b);
        prop_assert_eq!(&*remote, &b);
    }

    #[test]
    fn transform_and_wire_agree_for_tag(t in tag()) {
        let (local, remote) = local_and_remote(t.clone());
        prop_assert_eq!(&*local, &t);
        prop_assert_eq!(&*remote, &t);
    }

    #[test]
    fn transform_and_wire_agree_for_jsobj(o in jsobj()) {
        let (local, remote) = local_and_remote(o.clone());
        prop_assert_eq!(&*local, &o);
        prop_assert_eq!(&*remote, &o);
    }
}

/// Two nodes: `a` publishes; a local-only consumer on `a` gets the value
/// through the transform, an exported consumer on `b` through NATS.
struct Pair {
    rt: tokio::runtime::Runtime,
    a: EventBus,
    b: EventBus,
    _server: harness::NatsServer,
}

// Never dropped (statics are not): the harness's watchdog kills the server
// and removes its directory when the test process exits.
static PAIR: OnceLock<Pair> = OnceLock::new();
static NEXT_ADDRESS: AtomicUsize = AtomicUsize::new(0);

fn pair() -> &'static Pair {
    PAIR.get_or_init(|| {
        let server = harness::NatsServer::for_test("local_and_remote_delivery_agree_across_nats");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let url = server.url();
        let (a, b) = rt.block_on(async {
            let connect = || {
                EventBus::builder()
                    .default_timeout(Duration::from_secs(2))
                    .nats(NatsOptions::new(url.clone()))
                    .connect()
            };
            (connect().await.unwrap(), connect().await.unwrap())
        });
        Pair {
            rt,
            a,
            b,
            _server: server,
        }
    })
}

/// Publishes `value` from `a`; returns what the local-only consumer on `a`
/// and the consumer on `b` received.
fn through_both<T>(pair: &Pair, value: &T) -> (Arc<T>, Arc<T>)
where
    T: MessageType + Clone + Send + Sync + 'static,
{
    let address = format!("prop.{}", NEXT_ADDRESS.fetch_add(1, Ordering::Relaxed));
    pair.rt.block_on(async {
        let local_only = ConsumerOptions::new().local_only(true);
        let mut local = pair.a.consumer_stream_with::<T>(&address, local_only);
        let mut remote = pair.b.consumer_stream::<T>(&address);
        pair.b.flush().await.unwrap();
        pair.a.publish(&address, value.clone()).await.unwrap();
        let wait = Duration::from_secs(5);
        let l = tokio::time::timeout(wait, local.recv())
            .await
            .unwrap()
            .unwrap();
        let r = tokio::time::timeout(wait, remote.recv())
            .await
            .expect("the remote node got the publish")
            .unwrap();
        (Arc::clone(l.body_arc()), Arc::clone(r.body_arc()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn across_nats_basket(b in basket()) {
        let pair = pair();
        let (local, remote) = through_both(pair, &b);
        prop_assert_eq!(&*local, &b);
        prop_assert_eq!(&*remote, &*local);
    }

    #[test]
    fn across_nats_tag(t in tag()) {
        let pair = pair();
        let (local, remote) = through_both(pair, &t);
        prop_assert_eq!(&*local, &t);
        prop_assert_eq!(&*remote, &*local);
    }

    #[test]
    fn across_nats_jsobj(o in jsobj()) {
        let pair = pair();
        let (local, remote) = through_both(pair, &o);
        prop_assert_eq!(&*local, &o);
        prop_assert_eq!(&*remote, &*local);
    }
}
