//! Arbitrary bytes decoded as a borrowed view (`&str`, `&[u8]`, `Cow`,
//! `Vec<&str>`, a map of borrowed keys, a nested view) and as its owned
//! twin: never a panic; both accept exactly the same inputs and read the
//! same value; a view's strings point into the input; what it writes is
//! what the owned twin writes.
#![no_main]

use std::borrow::Cow;

use codecbus_core::{from_slice, to_vec};
use codecbus_fuzz::{Owned, View};
use libfuzzer_sys::fuzz_target;

fn inside(data: &[u8], part: &[u8]) -> bool {
    part.is_empty() || data.as_ptr_range().contains(&part.as_ptr())
}

fuzz_target!(|data: &[u8]| {
    let view = from_slice::<View<'_>>(data);
    let owned = from_slice::<Owned>(data);
    match (view, owned) {
        (Ok(view), Ok(owned)) => {
            assert_eq!(view.name, owned.name);
            assert_eq!(view.raw, &owned.raw[..]);
            assert_eq!(view.note.as_deref(), owned.note.as_deref());
            assert_eq!(view.tags, owned.tags);
            assert!(inside(data, view.name.as_bytes()) && inside(data, view.raw));
            for tag in &view.tags {
                assert!(inside(data, tag.as_bytes()));
            }
            for (v, o) in view.inner.iter().zip(&owned.inner) {
                assert!(matches!(v.sku, Cow::Borrowed(_)) && matches!(v.blob, Cow::Borrowed(_)));
                assert_eq!((&*v.sku, &*v.blob), (o.sku.as_str(), &o.blob[..]));
            }
            let written = to_vec(&view).expect("a decoded view encodes");
            assert_eq!(written, to_vec(&owned).expect("a decoded value encodes"));
            assert_eq!(from_slice::<View<'_>>(&written).expect("reads back"), view);
        }
        (Err(_), Err(_)) => {}
        (view, owned) => panic!("the view and its owned twin disagree: {view:?} against {owned:?}"),
    }
});
