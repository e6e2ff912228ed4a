//! A crate that defines message types with `codecbus-core` alone: the
//! derive must find the codec crate by itself.

use codecbus_core::{DecodeErrorKind, MessageCodec, from_slice, to_vec};

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(name = "external.order.v1")]
struct Order {
    id: u64,
    lines: Vec<Line>,
    #[codec(default)]
    priority: u8,
    note: Option<String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Line {
    sku: String,
    quantity: u32,
}

#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable, rename_all = "kebab-case")]
enum Status {
    Open,
    OnHold { reason: String },
}

/// A type that only has serde's traits, as a field and as a whole message.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
struct Legacy {
    id: u64,
    tags: Vec<String>,
}

#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Wrapped {
    #[codec(serde)]
    legacy: Legacy,
    seen: bool,
}

codecbus_core::serde_codec!(Legacy, "external.legacy.v1");

#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(unregistered, bound = "T: MessageCodec + Clone")]
struct Page<T> {
    items: Vec<T>,
    next: Option<u32>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let order = Order {
        id: 7,
        lines: vec![Line {
            sku: "tea".into(),
            quantity: 2,
        }],
        priority: 0,
        note: Some("gift".into()),
    };
    let bytes = to_vec(&order)?;
    assert_eq!(from_slice::<Order>(&bytes)?, order);

    let status = Status::OnHold {
        reason: "stock".into(),
    };
    assert_eq!(from_slice::<Status>(&to_vec(&status)?)?, status);
    assert_eq!(to_vec(&Status::Open)?, b"\xa4open");

    let page = Page {
        items: vec![1u16, 2, 3],
        next: None,
    };
    assert_eq!(from_slice::<Page<u16>>(&to_vec(&page)?)?, page);

    let legacy = Legacy {
        id: 3,
        tags: vec!["a".into()],
    };
    let wrapped = Wrapped {
        legacy: legacy.clone(),
        seen: true,
    };
    assert_eq!(from_slice::<Wrapped>(&to_vec(&wrapped)?)?, wrapped);
    let whole = codecbus_core::Serde(legacy.clone());
    assert_eq!(
        from_slice::<codecbus_core::Serde<Legacy>>(&to_vec(&whole)?)?.0,
        legacy
    );

    let err = from_slice::<Order>(&bytes[..bytes.len() - 1]).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::Truncated);

    let names: Vec<_> = codecbus_core::registrations().map(|r| r.name()).collect();
    assert!(names.contains(&"external.order.v1"), "{names:?}");
    assert!(names.contains(&"external.legacy.v1"), "{names:?}");
    println!("core-only: derive, round trips and registration work with codecbus-core alone");
    Ok(())
}
