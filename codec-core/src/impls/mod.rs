//! `MessageCodec` for standard and `imbl` types.

mod collections;
mod primitive;
mod time;
mod wrappers;

/// Implements `transform` for a container: shared when the contents are
/// immutable, deep-copied (through each element's `deep_copy`) otherwise.
/// The container implements `deep_copy` itself.
macro_rules! container_transform {
    ($immutable:expr) => {
        const IMMUTABLE: bool = $immutable;
        #[inline]
        fn transform(body: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
            if Self::IMMUTABLE {
                return ::std::sync::Arc::clone(body);
            }
            match <Self as $crate::codec::MessageCodec>::deep_copy(&**body) {
                Some(copy) => ::std::sync::Arc::new(copy),
                // An element that cannot copy itself: shared, read-only.
                None => ::std::sync::Arc::clone(body),
            }
        }
    };
}
pub(crate) use container_transform;

/// `deep_copy` as `Clone`, for leaf types.
macro_rules! copy_by_clone {
    () => {
        #[inline]
        fn deep_copy(value: &Self) -> ::core::option::Option<Self> {
            ::core::option::Option::Some(::core::clone::Clone::clone(value))
        }
    };
}
pub(crate) use copy_by_clone;

/// `MessageCodec`'s items for a type that cannot change: the body behind
/// the `Arc` is shared, and a copy is a clone.
macro_rules! share {
    () => {
        const IMMUTABLE: bool = true;
        $crate::impls::copy_by_clone!();
        #[inline]
        fn transform(body: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
            ::std::sync::Arc::clone(body)
        }
    };
}
pub(crate) use share;
