//! Arbitrary bytes decoded as the nested map-mode struct `Order` (and its
//! parts): never a panic; a success re-encodes and decodes back equal.
#![no_main]

use codecbus_fuzz::{Item, N, Order, check_decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_decode::<Order>(data);
    check_decode::<Vec<Item>>(data);
    check_decode::<N>(data);
});
