//! Arbitrary bytes decoded as `JsValue` (and `JsObj` / `JsArray`).
#![no_main]

use codecbus_fuzz::check_decode;
use codecbus_json::{JsArray, JsObj, JsValue};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(v) = check_decode::<JsValue>(data) {
        // JSON text of a decoded value parses back (NaN and infinities
        // print as null, so only finite values are compared). The text
        // parser stops at serde_json's recursion limit, below the
        // MessagePack depth limit: a deeper value is refused, never wrong.
        let text = v.to_string();
        match JsValue::parse(&text) {
            Ok(parsed) => {
                if !has_non_finite(&v) {
                    assert_eq!(parsed, v, "JSON text round trip: {text}");
                }
            }
            Err(e) => assert!(
                e.to_string().contains("recursion limit"),
                "printed JSON must parse: {e}: {text}"
            ),
        }
    }
    check_decode::<JsObj>(data);
    check_decode::<JsArray>(data);
});

fn has_non_finite(v: &JsValue) -> bool {
    match v {
        JsValue::Float(f) => !f.is_finite(),
        JsValue::Array(a) => a.iter().any(has_non_finite),
        JsValue::Object(o) => o.iter().any(|(_, v)| has_non_finite(v)),
        _ => false,
    }
}
