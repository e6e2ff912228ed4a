//! `#[codec(bound = "...")]`: the where-clause predicates replace the ones
//! the derive infers, for generic types whose needs it cannot see.

use std::sync::Arc;

use codecbus_core::{MessageCodec, from_slice, to_vec};

/// A codec that is not `Clone`.
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Resource {
    name: String,
}

/// `Arc<T>` is cloned by reference count, so `T` needs no `Clone`; the
/// inferred `T: Clone` would refuse `Handle<Resource>`.
#[derive(MessageCodec, Debug)]
#[codec(bound = "T: MessageCodec + Send + Sync")]
struct Handle<T> {
    inner: Arc<T>,
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        Handle {
            inner: Arc::clone(&self.inner),
        }
    }
}

trait Keyed {
    type Id;
}

/// Not `Clone`: only its id type travels.
#[derive(Debug)]
struct User;

impl Keyed for User {
    type Id = u64;
}

/// The inferred bounds would ask `K: Clone`; the field only needs its id.
#[derive(MessageCodec, Debug)]
#[codec(bound = "K: Keyed, K::Id: MessageCodec + Clone")]
struct Ref<K: Keyed> {
    id: K::Id,
}

impl<K: Keyed> Clone for Ref<K>
where
    K::Id: Clone,
{
    fn clone(&self) -> Self {
        Ref {
            id: self.id.clone(),
        }
    }
}

/// An empty bound: no predicates at all (the type's own where clause stays).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(bound = "")]
struct Fixed<T>
where
    T: Clone,
{
    n: u32,
    #[codec(skip)]
    marker: std::marker::PhantomData<T>,
}

/// Immutable with a bound: the `Immutable` impl uses it too.
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable, bound = "T: MessageCodec + codecbus_core::Immutable")]
struct Frozen<T> {
    items: Vec<T>,
}

#[test]
fn bounds_replace_the_inferred_ones() {
    let handle = Handle {
        inner: Arc::new(Resource { name: "db".into() }),
    };
    let bytes = to_vec(&handle).unwrap();
    assert_eq!(bytes, b"\x81\xa5inner\x81\xa4name\xa2db");
    let back: Handle<Resource> = from_slice(&bytes).unwrap();
    assert_eq!(back.inner, handle.inner);
    // Deep copy of the handle: a new handle on the same resource.
    let body = Arc::new(handle);
    let copy = Handle::transform(&body);
    assert!(!Arc::ptr_eq(&copy, &body));
    assert!(Arc::ptr_eq(&copy.inner, &body.inner));

    let r: Ref<User> = Ref { id: 7 };
    assert_eq!(from_slice::<Ref<User>>(&to_vec(&r).unwrap()).unwrap().id, 7);

    let f: Fixed<String> = Fixed {
        n: 3,
        marker: std::marker::PhantomData,
    };
    assert_eq!(
        from_slice::<Fixed<String>>(&to_vec(&f).unwrap()).unwrap(),
        f
    );

    fn assert_immutable<T: codecbus_core::Immutable>() {}
    assert_immutable::<Frozen<u8>>();
    let frozen = Arc::new(Frozen { items: vec![1u8] });
    assert!(Arc::ptr_eq(&Frozen::transform(&frozen), &frozen));
}
