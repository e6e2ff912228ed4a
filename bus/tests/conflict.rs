//! Two linked types under one codec name: `EventBus::builder().build()` reports the
//! conflict (its text ends with the cause, naming both types, which
//! `BuildError::cause` hands over),
//! `EventBus::new` panics with the message and the cause. A test binary of
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
fn build_returns_the_conflict_naming_both_types() {
    let err = EventBus::builder().build().unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::CodecConflict);
    let text = err.to_string();
    let cause = err.cause().expect("the registry error").to_string();
    assert_eq!(
        text,
        format!("cannot build the event bus: the codec registrations conflict: {cause}")
    );
    assert!(cause.contains("\"conflict.same\""), "{cause}");
    assert!(cause.contains("conflict::First"), "{cause}");
    assert!(cause.contains("conflict::Second"), "{cause}");
    // The builder gives the same answer.
    let again = EventBus::builder().build().unwrap_err();
    assert_eq!(again.to_string(), text);
    assert_eq!(again.cause().map(ToString::to_string), Some(cause));
}

#[test]
#[should_panic(
    expected = "cannot build the event bus: the codec registrations conflict: codec name \"conflict.same\""
)]
fn new_panics_on_the_conflict() {
    let _bus = EventBus::new();
}
