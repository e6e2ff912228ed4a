//! Hostile input for the JSON value beyond the table in codecbus-core's
//! `tests/hostile.rs` (which decodes its rows as `JsValue` too): every
//! prefix of a corpus document's MessagePack is an error.

use codecbus_core::{DecodeErrorKind as K, from_slice, to_vec};
use codecbus_json::JsValue;

/// Every prefix of a corpus document's MessagePack fails cleanly. Decoding
/// each of the ~400 000 prefixes would be quadratic, so the test takes the
/// first 2 KiB and the last 32 bytes byte by byte, and 24 evenly spread cuts
/// in between. (The fuzz targets cover truncation exhaustively.)
#[test]
fn corpus_prefixes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/json");
    let mut checked = 0;
    for name in ["twitter", "citm_catalog", "canada"] {
        let path = dir.join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let value = JsValue::parse(&text).unwrap();
        let bytes = to_vec(&value).unwrap();
        let n = bytes.len();
        let middle = (2048..n.saturating_sub(32)).step_by((n / 24).max(1));
        let cuts = (0..n.min(2048))
            .chain(middle)
            .chain(n.saturating_sub(32)..n);
        for cut in cuts {
            let err = from_slice::<JsValue>(&bytes[..cut]).unwrap_err();
            assert!(
                matches!(err.kind(), K::Truncated | K::LengthOverflow),
                "{name} cut at {cut}: {err}"
            );
            checked += 1;
        }
        assert_eq!(from_slice::<JsValue>(&bytes).unwrap(), value);
    }
    println!("{checked} corpus prefixes checked");
}
