//! Arbitrary bytes decoded as every extension type: `Timestamp`, `Ext`,
//! `Bytes`, `uuid::Uuid`, `rust_decimal::Decimal`, the `time` and `chrono`
//! dates, times and date-times, `SystemTime` and `Duration`, one at a time
//! and together in one struct.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    codecbus_fuzz::check_all_ext(data);
});
