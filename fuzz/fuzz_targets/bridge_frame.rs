//! Arbitrary bytes as a bridge client's frame (its members read, its body
//! transcoded from JSON text to MessagePack and back, compared) and as
//! MessagePack written as JSON text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    codecbus_bus::__fuzz::bridge_frame(data);
});
