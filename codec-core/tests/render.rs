//! MessagePack shown as JSON with the names of its codec's shape
//! (`shape::render`, what `codecbus tap` prints), for every layout.
#![cfg(feature = "schema")]

use codecbus_core::ext::{RawValue, Timestamp};
use codecbus_core::shape::CodecShape;
use codecbus_core::shape::render::to_json;
use codecbus_core::{MessageCodec, to_vec};
use serde_json::json;

#[derive(MessageCodec, Clone)]
#[codec(name = "render.point", as_array)]
struct Point {
    x: i32,
    y: Option<f64>,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "render.account")]
struct Account {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 3)]
    owner: String,
    #[codec(key = 4)]
    at: Timestamp,
}

#[derive(MessageCodec, Clone)]
#[codec(name = "render.event", union)]
enum Event {
    #[codec(tag = 1)]
    Moved(Point),
    #[codec(tag = 2)]
    Renamed { from: String, to: String },
    #[codec(tag = 7)]
    Closed,
    #[codec(other)]
    Other(u32, RawValue),
}

#[derive(MessageCodec, Clone)]
#[codec(name = "render.state")]
enum State {
    Idle,
    Busy { job: u32, points: Vec<Point> },
}

#[derive(MessageCodec, Clone)]
#[codec(name = "render.report")]
struct Report {
    events: Vec<Event>,
    state: State,
    account: Option<Account>,
    #[codec(bytes)]
    raw: Vec<u8>,
}

fn shown<T: MessageCodec>(value: &T, name: &str) -> serde_json::Value {
    let bytes = to_vec(value).unwrap();
    to_json(&bytes, Some(&CodecShape::of::<T>(name))).unwrap()
}

#[test]
fn array_layout_fields_are_named_by_position() {
    let point = Point { x: -3, y: None };
    assert_eq!(shown(&point, "render.point"), json!({"x": -3, "y": null}));
    // Without the shape: the array as it is.
    let bytes = to_vec(&point).unwrap();
    assert_eq!(to_json(&bytes, None).unwrap(), json!([-3, null]));
}

#[test]
fn keyed_fields_are_named_by_key_and_gaps_left_out() {
    let account = Account {
        id: 9,
        owner: "ada".into(),
        at: Timestamp::new(1_709_210_096, 0).unwrap(),
    };
    assert_eq!(
        shown(&account, "render.account"),
        json!({"id": 9, "owner": "ada", "at": "2024-02-29T12:34:56Z"})
    );
}

#[test]
fn unions_enums_and_nested_records_by_name() {
    let report = Report {
        events: vec![
            Event::Moved(Point { x: 1, y: Some(0.5) }),
            Event::Renamed {
                from: "a".into(),
                to: "b".into(),
            },
            Event::Closed,
        ],
        state: State::Busy {
            job: 4,
            points: vec![Point { x: 2, y: None }],
        },
        account: None,
        raw: vec![1, 2, 3],
    };
    assert_eq!(
        shown(&report, "render.report"),
        json!({
            "events": [
                {"Moved": {"x": 1, "y": 0.5}},
                {"Renamed": {"from": "a", "to": "b"}},
                {"Closed": null},
            ],
            "state": {"Busy": {"job": 4, "points": [{"x": 2, "y": null}]}},
            "account": null,
            "raw": "AQID",
        })
    );
    assert_eq!(shown(&State::Idle, "render.state"), json!("Idle"));
}

#[test]
fn what_the_shape_does_not_name_is_shown_as_it_is() {
    // A tag this reader's union does not have, from a newer writer.
    let newer = Event::Other(9, RawValue::new(to_vec(&"x").unwrap()).unwrap());
    assert_eq!(shown(&newer, "render.event"), json!({"#9": "x"}));
    // A longer array than the shape's, and bytes of another form.
    let shape = CodecShape::of::<Point>("render.point");
    let longer = to_vec(&(1i32, 2.5f64, "extra")).unwrap();
    assert_eq!(
        to_json(&longer, Some(&shape)).unwrap(),
        json!({"x": 1, "y": 2.5, "#2": "extra"})
    );
    let other = to_vec(&"not a point").unwrap();
    assert_eq!(to_json(&other, Some(&shape)).unwrap(), json!("not a point"));
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let shape = CodecShape::of::<Report>("render.report");
    let bytes = to_vec(&Report {
        events: vec![Event::Closed],
        state: State::Idle,
        account: None,
        raw: vec![],
    })
    .unwrap();
    for cut in 0..bytes.len() {
        assert!(
            to_json(&bytes[..cut], Some(&shape)).is_err(),
            "cut at {cut}"
        );
    }
    let mut trailing = bytes.clone();
    trailing.push(0);
    assert!(to_json(&trailing, Some(&shape)).is_err());
}
