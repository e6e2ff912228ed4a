//! Two linked types under one codec name: `EventBus::try_new` reports the
//! conflict, `EventBus::new` panics with the same text. A test binary of
//! its own, since every bus built in it meets the conflict.

use codecbus_bus::{BuildErrorKind, EventBus};
use codecbus_core::MessageCodec;

#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "conflict.same")]
struct First {
    a: u8,
}

#[derive(MessageCodec, Clone, Debug)]
#[codec(name = "conflict.same")]
struct Second {
    b: String,
}

#[test]
fn try_new_returns_the_conflict_naming_both_types() {
    let err = EventBus::try_new().unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::CodecConflict);
    let text = err.to_string();
    assert!(text.contains("\"conflict.same\""), "{text}");
    assert!(text.contains("conflict::First"), "{text}");
    assert!(text.contains("conflict::Second"), "{text}");
    // The builder gives the same answer.
    assert_eq!(EventBus::builder().build().unwrap_err().to_string(), text);
}

#[test]
#[should_panic(expected = "cannot build the event bus")]
fn new_panics_on_the_conflict() {
    let _bus = EventBus::new();
}
