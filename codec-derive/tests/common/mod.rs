//! What the rmp-serde comparison tests share.

use std::fmt::Debug;

use codecbus_core::{MessageCodec, from_slice, to_vec};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Bytes as space-separated hex, so a mismatch shows where it is.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The same bytes as `rmp_serde::to_vec_named`, and each side decodes the
/// other's.
#[track_caller]
pub(crate) fn agree_named<T>(value: &T)
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug,
{
    agree_with(value, &rmp_serde::to_vec_named(value).unwrap());
}

/// Our bytes for `value` are `theirs` (rmp-serde's, in the matching mode),
/// and each side decodes the other's.
#[track_caller]
pub(crate) fn agree_with<T>(value: &T, theirs: &[u8])
where
    T: MessageCodec + Serialize + DeserializeOwned + PartialEq + Debug,
{
    let ours = to_vec(value).unwrap();
    assert_eq!(hex(&ours), hex(theirs), "encoding of {value:?}");
    assert_eq!(
        &from_slice::<T>(theirs).unwrap(),
        value,
        "we decode rmp-serde"
    );
    assert_eq!(
        &rmp_serde::from_slice::<T>(&ours).unwrap(),
        value,
        "rmp-serde decodes us"
    );
}
