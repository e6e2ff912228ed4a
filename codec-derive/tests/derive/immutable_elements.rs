//! An immutable type that is not `Clone` works as the element of a `Vec`,
//! `Option`, map, tuple, `Box` or array field: containers copy through
//! `MessageCodec::deep_copy` instead of requiring `Clone`, and containers
//! of immutable elements are shared anyway.

use std::collections::BTreeMap;
use std::sync::Arc;

use codecbus_core::{MessageCodec, from_slice, to_vec};

/// Not `Clone`.
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Price {
    sku: String,
    cents: i64,
}

/// Not `Clone` either, and an enum.
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
enum Rule {
    Free,
    Discount(u8),
    Bundle { of: Vec<Price>, at: Option<Price> },
}

#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Catalog {
    prices: Vec<Price>,
    best: Option<Price>,
    by_sku: BTreeMap<String, Price>,
    pair: (Price, u8),
    boxed: Box<Price>,
    fixed: [Price; 2],
    rules: Vec<Rule>,
}

/// Generic: `T` needs no `Clone` now that `Vec<T>` does not.
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Shelf<T> {
    items: Vec<T>,
}

/// Immutable, but with a field the derive cannot copy (`skip`).
#[derive(MessageCodec, Debug, PartialEq)]
#[codec(immutable)]
struct Stamped {
    value: u32,
    #[codec(skip)]
    local: u64,
}

/// A deep-copied type: `deep_copy` is its `Clone`.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Basket {
    items: Vec<String>,
}

fn price(sku: &str, cents: i64) -> Price {
    Price {
        sku: sku.into(),
        cents,
    }
}

fn catalog() -> Catalog {
    Catalog {
        prices: vec![price("tea", 3), price("cake", 5)],
        best: Some(price("tea", 3)),
        by_sku: BTreeMap::from([("jam".to_owned(), price("jam", 4))]),
        pair: (price("a", 1), 9),
        boxed: Box::new(price("b", 2)),
        fixed: [price("c", 3), price("d", 4)],
        rules: vec![
            Rule::Free,
            Rule::Discount(10),
            Rule::Bundle {
                of: vec![price("e", 5)],
                at: None,
            },
        ],
    }
}

#[test]
fn containers_of_non_clone_immutables_encode_decode_and_share() {
    let value = catalog();
    let bytes = to_vec(&value).unwrap();
    assert_eq!(from_slice::<Catalog>(&bytes).unwrap(), value);

    let body = Arc::new(value);
    assert!(Arc::ptr_eq(&Catalog::transform(&body), &body));
    // A container of them as the body itself is shared too.
    const { assert!(<Vec<Price> as MessageCodec>::IMMUTABLE) };
    let list = Arc::new(vec![price("x", 1)]);
    assert!(Arc::ptr_eq(&<Vec<Price>>::transform(&list), &list));
    let shelf = Arc::new(Shelf {
        items: vec![price("y", 2)],
    });
    assert!(Arc::ptr_eq(&Shelf::transform(&shelf), &shelf));
    assert_eq!(
        from_slice::<Shelf<Price>>(&to_vec(&*shelf).unwrap()).unwrap(),
        *shelf
    );
}

#[test]
fn immutable_types_copy_field_by_field() {
    let value = catalog();
    let copy = Catalog::deep_copy(&value).expect("every field copies");
    assert_eq!(copy, value);
    assert!(!std::ptr::eq(copy.prices.as_ptr(), value.prices.as_ptr()));
    assert_eq!(Rule::deep_copy(&Rule::Discount(3)), Some(Rule::Discount(3)));
    // A skipped field has no codec to copy it with.
    assert_eq!(Stamped::deep_copy(&Stamped { value: 1, local: 2 }), None);
}

#[test]
fn a_mixed_container_is_copied_through_its_elements() {
    // (immutable, copied): the tuple is copied, each element its own way.
    type Mixed = (Price, Basket);
    const { assert!(!<Mixed as MessageCodec>::IMMUTABLE) };
    let body: Arc<Mixed> = Arc::new((
        price("tea", 3),
        Basket {
            items: vec!["x".into()],
        },
    ));
    let copy = <Mixed>::transform(&body);
    assert!(!Arc::ptr_eq(&copy, &body));
    assert_eq!(copy, body);
    assert!(!std::ptr::eq(copy.1.items.as_ptr(), body.1.items.as_ptr()));

    // An element that cannot copy itself: the container is shared rather
    // than copied (read-only for every consumer).
    type Stuck = (Stamped, Basket);
    let body: Arc<Stuck> = Arc::new((Stamped { value: 1, local: 2 }, Basket { items: vec![] }));
    assert!(Arc::ptr_eq(&<Stuck>::transform(&body), &body));
}

#[test]
fn copied_types_copy_by_clone() {
    let basket = Basket {
        items: vec!["a".into()],
    };
    assert_eq!(Basket::deep_copy(&basket), Some(basket.clone()));
    let list = Arc::new(vec![basket.clone(), basket]);
    let copy = <Vec<Basket>>::transform(&list);
    assert!(!Arc::ptr_eq(&copy, &list));
    assert_eq!(copy, list);
}
