//! Arbitrary bytes decoded as unions (`[tag, payload]`): one without a
//! catch-all, one whose catch-all keeps unknown tags and raw payloads.
#![no_main]

use codecbus_fuzz::{Event, Shape, check_decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_decode::<Shape>(data);
    check_decode::<Event>(data);
});
