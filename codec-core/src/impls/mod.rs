//! `MessageCodec` for standard and `imbl` types.

mod collections;
mod primitive;
mod time;
mod wrappers;

/// Implements `transform` for a container: shared when the contents are
/// immutable, deep-copied (`Clone`) otherwise.
macro_rules! container_transform {
    ($immutable:expr) => {
        const IMMUTABLE: bool = $immutable;
        #[inline]
        fn transform(body: &::std::sync::Arc<Self>) -> ::std::sync::Arc<Self> {
            if Self::IMMUTABLE {
                ::std::sync::Arc::clone(body)
            } else {
                ::std::sync::Arc::new(::core::clone::Clone::clone(&**body))
            }
        }
    };
}
pub(crate) use container_transform;
