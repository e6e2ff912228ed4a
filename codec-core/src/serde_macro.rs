//! [`serde_codec!`](crate::serde_codec): naming a serde type's codec.
//!
//! An exported macro expands in its user's crate, so its paths go through
//! this crate's public API (`$crate::Serde`, `$crate::CodecRegistration`);
//! it sits above every module it names.

/// Registers [`Serde<T>`](crate::Serde) under a codec name, so that a bus
/// can carry a serde type between processes: the receiving node finds the
/// decoder by that name.
///
/// Write it once per type, at module level (it expands to an item); the
/// name is what travels, so give it a version (`"legacy.order.v1"`).
/// `T` must be `Serialize + DeserializeOwned + Clone + Send + Sync +
/// 'static`.
///
/// # Examples
///
/// ```
/// use codecbus_core::{Serde, serde_codec};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
/// struct LegacyOrder {
///     id: u64,
/// }
///
/// serde_codec!(LegacyOrder, "legacy.order.v1");
///
/// let reg = codecbus_core::registrations()
///     .find(|r| r.name() == "legacy.order.v1")
///     .unwrap();
/// assert_eq!(reg.type_id(), std::any::TypeId::of::<Serde<LegacyOrder>>());
///
/// // What another node does with the bytes: decode by name.
/// let bytes = codecbus_core::to_vec(&Serde(LegacyOrder { id: 7 }))?;
/// let body = reg.decode(&mut codecbus_core::Reader::new(&bytes))?;
/// assert_eq!(body.downcast_ref::<Serde<LegacyOrder>>().unwrap().id, 7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// After a rename, list the names the type had before, as the derive's
/// `#[codec(aliases("..."))]`: a node still sending an old name is
/// understood, and every node sends the new one.
///
/// ```
/// use codecbus_core::serde_codec;
/// # #[derive(serde::Serialize, serde::Deserialize, Clone)]
/// # struct Customer { id: u64 }
///
/// serde_codec!(Customer, "crm.customer.v2", aliases("crm.customer.v1"));
///
/// let reg = codecbus_core::registrations()
///     .find(|r| r.name() == "crm.customer.v2")
///     .unwrap();
/// assert_eq!(reg.aliases(), ["crm.customer.v1"]);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
#[macro_export]
macro_rules! serde_codec {
    ($ty:ty, $name:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::CodecRegistration::of::<$crate::Serde<$ty>>($name)
        }
    };
    ($ty:ty, $name:expr, aliases($($alias:expr),+ $(,)?) $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::CodecRegistration::of::<$crate::Serde<$ty>>($name)
                .with_aliases(&[$($alias),+])
        }
    };
}
