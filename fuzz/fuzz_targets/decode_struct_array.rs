//! Arbitrary bytes decoded as the nested `as_array` struct `OrderArr` (and
//! its parts): never a panic; a success re-encodes and decodes back equal.
#![no_main]

use codecbus_fuzz::{EmptyS, N, OrderArr, Point, Scalars, TupleS, UnitS, check_decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_decode::<OrderArr>(data);
    check_decode::<Vec<Point>>(data);
    check_decode::<Vec<Scalars>>(data);
    check_decode::<(TupleS, UnitS, EmptyS)>(data);
    check_decode::<N>(data);
});
