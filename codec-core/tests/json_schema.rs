//! The JSON Schema of a codec's shape (`shape::json_schema`) held to an
//! independent validator (`jsonschema`): the JSON form of values the codec
//! writes is valid, a form its reader refuses is not, for every layout.
#![cfg(feature = "schema")]

use codecbus_core::ext::RawValue;
use codecbus_core::shape::CodecShape;
use codecbus_core::shape::json_schema::json_schema;
use codecbus_core::{MessageCodec, to_vec};
use serde_json::{Value, json};

#[derive(MessageCodec, Clone)]
#[codec(name = "schema.line")]
struct Line {
    sku: String,
    quantity: u16,
    note: Option<String>,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "schema.point", as_array)]
struct Point {
    x: i8,
    y: f64,
    label: Option<String>,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "schema.keyed", reserved(1))]
struct Keyed {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 2)]
    lines: Vec<Line>,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "schema.event", union)]
enum Event {
    #[codec(tag = 1)]
    Moved(Point),
    #[codec(tag = 2)]
    Closed,
    #[codec(other)]
    Other(u32, RawValue),
}

#[derive(MessageCodec, Clone)]
#[codec(name = "schema.state")]
enum State {
    Idle,
    Busy { job: u32 },
}

/// A value's JSON form: its MessagePack read as JSON, value for value.
fn json_of<T: MessageCodec>(value: &T) -> Value {
    rmp_serde::from_slice(&to_vec(value).unwrap()).unwrap()
}

fn validator<T: MessageCodec>(name: &str) -> jsonschema::Validator {
    let schema = json_schema(&CodecShape::of::<T>(name));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{schema:#}: {e}"))
}

#[test]
fn map_layout_records() {
    let v = validator::<Line>("schema.line");
    let line = Line {
        sku: "tea".into(),
        quantity: 2,
        note: None,
    };
    assert!(v.is_valid(&json_of(&line)), "{}", json_of(&line));
    assert!(v.is_valid(&json!({"sku": "tea", "quantity": 2})));
    assert!(
        !v.is_valid(&json!({"sku": "tea"})),
        "a required field missing"
    );
    assert!(
        !v.is_valid(&json!({"sku": "tea", "quantity": 70000})),
        "out of u16"
    );
    assert!(!v.is_valid(&json!({"sku": 1, "quantity": 2})));
}

#[test]
fn positional_and_keyed_records() {
    let v = validator::<Point>("schema.point");
    let point = Point {
        x: -3,
        y: 0.5,
        label: Some("a".into()),
    };
    assert!(v.is_valid(&json_of(&point)), "{}", json_of(&point));
    assert!(
        v.is_valid(&json!([1, 2.0])),
        "the optional last field left out"
    );
    assert!(!v.is_valid(&json!([1])));
    assert!(
        !v.is_valid(&json!([1, 2.0, "a", 4])),
        "longer than the fields"
    );
    assert!(!v.is_valid(&json!([200, 2.0])), "out of i8");

    let v = validator::<Keyed>("schema.keyed");
    let keyed = Keyed {
        id: 9,
        lines: vec![Line {
            sku: "tea".into(),
            quantity: 1,
            note: Some("n".into()),
        }],
    };
    assert!(v.is_valid(&json_of(&keyed)), "{}", json_of(&keyed));
    assert!(
        !v.is_valid(&json!([9, 5, []])),
        "the reserved key holds nil"
    );
    assert!(
        !v.is_valid(&json!([9, null, [{"sku": "tea"}]])),
        "a nested required field"
    );
}

#[test]
fn unions_and_enums() {
    let v = validator::<Event>("schema.event");
    for event in [
        Event::Moved(Point {
            x: 1,
            y: 1.0,
            label: None,
        }),
        Event::Closed,
        Event::Other(7, RawValue::new(to_vec(&"x").unwrap()).unwrap()),
    ] {
        assert!(v.is_valid(&json_of(&event)), "{}", json_of(&event));
    }
    assert!(!v.is_valid(&json!([1, "not a point"])));
    assert!(!v.is_valid(&json!([1])));

    let v = validator::<State>("schema.state");
    assert!(v.is_valid(&json_of(&State::Idle)));
    assert!(
        v.is_valid(&json_of(&State::Busy { job: 3 })),
        "{}",
        json_of(&State::Busy { job: 3 })
    );
    assert!(!v.is_valid(&json!("Sleeping")));
    assert!(!v.is_valid(&json!({"Busy": {}})));
}
