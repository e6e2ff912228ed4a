//! Arbitrary bytes decoded as enums with every variant kind (map-mode and
//! `as_array` struct variants) and as the recursive `Tree` and `N`.
#![no_main]

use codecbus_fuzz::{N, Status, StatusArr, Tree, check_decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_decode::<Status>(data);
    check_decode::<StatusArr>(data);
    check_decode::<Tree>(data);
    check_decode::<N>(data);
});
