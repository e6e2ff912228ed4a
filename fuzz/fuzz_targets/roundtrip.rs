//! Arbitrary values (built with `arbitrary`) encode, decode back equal
//! (floats compared bitwise, so NaN equals NaN) and re-encode to the same
//! bytes.
#![no_main]

use codecbus_fuzz::{AnyValue, check_roundtrip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|value: AnyValue| {
    match &value {
        AnyValue::Order(v) => check_roundtrip(v),
        AnyValue::OrderArr(v) => check_roundtrip(v),
        AnyValue::Status(v) => check_roundtrip(v),
        AnyValue::StatusArr(v) => check_roundtrip(v),
        AnyValue::Tree(v) => check_roundtrip(v),
        AnyValue::N(v) => check_roundtrip(v),
        AnyValue::Ext(v) => check_roundtrip(v),
        AnyValue::Json(v) => check_roundtrip(v),
        AnyValue::Tuple(v) => check_roundtrip(v),
        AnyValue::Unit(v) => check_roundtrip(v),
        AnyValue::Empty(v) => check_roundtrip(v),
        AnyValue::Keyed(v) => check_roundtrip(v),
        AnyValue::Scalars(v) => check_roundtrip(v),
        AnyValue::Flats(v) => check_roundtrip(v),
        AnyValue::FlatsNamed(v) => check_roundtrip(v),
    }
});
