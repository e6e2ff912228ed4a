//! Arbitrary bytes decoded as the keyed struct `Keyed` (gaps, `Option`
//! and `default` fields, nested keyed structs): never a panic; a success
//! re-encodes and decodes back equal, and an older version knowing fewer
//! keys reads the same bytes with the same values at its keys.
#![no_main]

use codecbus_fuzz::{Keyed, KeyedItem, KeyedOld, check_decode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(new) = check_decode::<Keyed>(data) {
        let old = codecbus_core::from_slice::<KeyedOld>(data)
            .unwrap_or_else(|e| panic!("the older version refuses what Keyed reads: {e}"));
        assert_eq!(
            old,
            KeyedOld {
                id: new.id,
                email: new.email,
                name: new.name,
                items: new.items,
            },
            "the older version reads other values"
        );
    }
    check_decode::<KeyedOld>(data);
    check_decode::<Vec<KeyedItem>>(data);
});
