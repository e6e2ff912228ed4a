//! The JSON value's API: construction, reading, paths (RFC 6901),
//! persistent updates, whole-value operations, equality and hashing.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use codecbus_json::{JsArray, JsInt, JsObj, JsPath, JsPointerErrorKind, JsValue, Segment};
use codecbus_json::{jsarr, jsobj};
use proptest::prelude::*;

fn hash_of<T: Hash>(v: &T) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

fn path(p: &str) -> JsPath {
    p.parse().unwrap()
}

// ---- construction -------------------------------------------------------------

#[test]
fn macros_build_nested_values() {
    let k = "dyn";
    let o = jsobj! {
        "n": -1,
        "f": 2.5,
        "s": "x",
        "t": true,
        "z": null,
        "a": [1, [2, []], {}],
        "o": { "inner": { "deep": null } },
        (k): 1 + 2,
        "opt": Some(3),
        "none": None::<i32>,
    };
    assert_eq!(
        o.to_string(),
        r#"{"a":[1,[2,[]],{}],"dyn":3,"f":2.5,"n":-1,"none":null,"o":{"inner":{"deep":null}},"opt":3,"s":"x","t":true,"z":null}"#
    );
    assert_eq!(jsobj! {}, JsObj::new());
    assert_eq!(jsarr![], JsArray::new());
    assert_eq!(jsarr![null], JsArray::from(vec![JsValue::Null]));
    assert_eq!(jsarr![-1, -2,], jsarr![(-1), (-2)]);
    assert_eq!(jsobj! { "a": 1, "a": 2 }, jsobj! { "a": 2 });
}

#[test]
fn macro_with_many_entries_does_not_hit_the_recursion_limit() {
    let o = jsobj! {
        "k00": 0, "k01": 1, "k02": 2, "k03": 3, "k04": 4, "k05": 5, "k06": 6, "k07": 7,
        "k08": 8, "k09": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15,
        "k16": 16, "k17": 17, "k18": 18, "k19": 19, "k20": 20, "k21": 21, "k22": 22, "k23": 23,
        "k24": 24, "k25": 25, "k26": 26, "k27": 27, "k28": 28, "k29": 29, "k30": 30, "k31": 31,
        "k32": 32, "k33": 33, "k34": 34, "k35": 35, "k36": 36, "k37": 37, "k38": 38, "k39": 39,
    };
    assert_eq!(o.len(), 40);
    assert_eq!(o.get("k39"), Some(&JsValue::from(39)));
}

#[test]
fn from_impls_and_collect() {
    assert_eq!(JsValue::from(u64::MAX).as_u64(), Some(u64::MAX));
    assert_eq!(JsValue::from(i64::MIN).as_i64(), Some(i64::MIN));
    assert_eq!(JsValue::from(7u8), JsValue::Int(JsInt::from(7)));
    assert_eq!(JsValue::from(1.5f32), JsValue::Float(1.5));
    assert_eq!(JsValue::from('é').as_str(), Some("é"));
    assert_eq!(JsValue::from(String::from("s")), "s");
    assert_eq!(JsValue::from(Arc::<str>::from("s")), "s");
    assert_eq!(JsValue::from(()), JsValue::Null);
    assert_eq!(JsValue::from(vec![1, 2]), JsValue::from(jsarr![1, 2]));
    assert_eq!(
        JsValue::from([true, false]),
        JsValue::from(jsarr![true, false])
    );
    assert_eq!(JsValue::try_from(1i128 << 64).ok(), None);
    assert_eq!(JsValue::try_from(-1i128).unwrap(), JsValue::from(-1));
    let v: JsValue = (0..3).collect();
    assert_eq!(v, JsValue::from(jsarr![0, 1, 2]));
    let o: JsObj = vec![("b", 1), ("a", 2)].into_iter().collect();
    assert_eq!(o.keys().collect::<Vec<_>>(), ["a", "b"]);
    let mut o2 = o.clone();
    o2.extend([("c", 3)]);
    assert_eq!(o2.len(), 3);
    assert_eq!(o.len(), 2);
}

#[test]
fn accessors() {
    let v = JsValue::from(jsobj! { "a": [1, 2.0, 2.5, "s", true, null] });
    let a = v.pointer("/a").and_then(JsValue::as_array).unwrap();
    assert_eq!(a.get(0).and_then(JsValue::as_i64), Some(1));
    assert_eq!(a.get(1).and_then(JsValue::as_i64), Some(2));
    assert_eq!(a.get(2).and_then(JsValue::as_i64), None);
    assert_eq!(a.get(2).and_then(JsValue::as_f64), Some(2.5));
    assert_eq!(a.get(3).and_then(JsValue::as_str), Some("s"));
    assert_eq!(a.get(4).and_then(JsValue::as_bool), Some(true));
    assert!(a.get(5).unwrap().is_null());
    assert_eq!(a.get(6), None);
    assert_eq!(a.last(), Some(&JsValue::Null));
    assert_eq!(v.type_name(), "object");
    assert!(v.as_object().is_some() && v.as_array().is_none());
    assert_eq!(JsValue::from(-1).as_u64(), None);
}

// ---- RFC 6901 -------------------------------------------------------------------

fn rfc_document() -> JsValue {
    JsValue::parse(
        r#"{
            "foo": ["bar", "baz"],
            "": 0,
            "a/b": 1,
            "c%d": 2,
            "e^f": 3,
            "g|h": 4,
            "i\\j": 5,
            "k\"l": 6,
            " ": 7,
            "m~n": 8
        }"#,
    )
    .unwrap()
}

#[test]
fn rfc6901_section5_examples() {
    let doc = rfc_document();
    let cases: &[(&str, JsValue)] = &[
        ("", doc.clone()),
        ("/foo", jsarr!["bar", "baz"].into()),
        ("/foo/0", "bar".into()),
        ("/", 0.into()),
        ("/a~1b", 1.into()),
        ("/c%d", 2.into()),
        ("/e^f", 3.into()),
        ("/g|h", 4.into()),
        ("/i\\j", 5.into()),
        ("/k\"l", 6.into()),
        ("/ ", 7.into()),
        ("/m~0n", 8.into()),
    ];
    for (pointer, expected) in cases {
        assert_eq!(doc.pointer(pointer), Some(expected), "pointer {pointer:?}");
        // The typed form prints back to the same pointer.
        assert_eq!(path(pointer).to_string(), *pointer);
    }
}

#[test]
fn rfc6901_uri_fragment_examples_after_percent_decoding() {
    // Section 6 lists the same pointers as URI fragments; once
    // percent-decoded they are the strings above.
    let doc = rfc_document();
    for (fragment, expected) in [("/c%25d", "/c%d"), ("/e%5Ef", "/e^f"), ("/%20", "/ ")] {
        let decoded = fragment
            .replace("%25", "%")
            .replace("%5E", "^")
            .replace("%20", " ");
        assert_eq!(decoded, expected);
        assert!(doc.pointer(&decoded).is_some());
    }
}

#[test]
fn pointer_edge_cases() {
    let doc = JsValue::from(
        jsobj! { "0": "key zero", "list": [10, 20], "01": "leading zero", "-": "dash" },
    );
    // A numeric token on an object names a member.
    assert_eq!(doc.pointer("/0"), Some(&JsValue::from("key zero")));
    assert_eq!(doc.pointer("/01"), Some(&JsValue::from("leading zero")));
    assert_eq!(doc.pointer("/-"), Some(&JsValue::from("dash")));
    // On an array only canonical indices select.
    assert_eq!(doc.pointer("/list/1"), Some(&JsValue::from(20)));
    assert_eq!(doc.pointer("/list/01"), None);
    assert_eq!(doc.pointer("/list/-"), None);
    assert_eq!(doc.pointer("/list/2"), None);
    assert_eq!(doc.pointer("/list/x"), None);
    assert_eq!(doc.pointer("/list/0/deeper"), None);
    // `~01` is `~1` (decode `~1` after `~0`, not before).
    let tricky = JsValue::from(jsobj! { "~1": "tilde-one", "/": "slash" });
    assert_eq!(tricky.pointer("/~01"), Some(&JsValue::from("tilde-one")));
    assert_eq!(tricky.pointer("/~1"), Some(&JsValue::from("slash")));
    // Malformed pointers.
    assert_eq!(
        JsPath::parse("foo").unwrap_err().kind(),
        JsPointerErrorKind::MissingLeadingSlash
    );
    assert_eq!(
        JsPath::parse("/~").unwrap_err().kind(),
        JsPointerErrorKind::InvalidEscape
    );
    assert_eq!(JsPath::parse("/a~2b").unwrap_err().offset(), 2);
    assert_eq!(JsPath::parse("/ok/~x").unwrap_err().offset(), 4);
    assert_eq!(doc.pointer("no-slash"), None);
    // Index segments from the parser, keys otherwise.
    assert_eq!(
        path("/a/0/01/-").segments(),
        &[
            Segment::from("a"),
            Segment::Index(0),
            Segment::from("01"),
            Segment::from("-"),
        ]
    );
}

#[test]
fn typed_paths() {
    let p = JsPath::root().key("a").index(3).key("b/c");
    assert_eq!(p.to_string(), "/a/3/b~1c");
    assert_eq!(p.len(), 3);
    assert_eq!(p.parent(), Some(JsPath::root().key("a").index(3)));
    assert!(p.starts_with(&JsPath::root().key("a")));
    assert_eq!(JsPath::root().parent(), None);
    let mut q = JsPath::root();
    q.push("x");
    q.push(2usize);
    assert_eq!(q, path("/x/2"));
    assert_eq!(q.pop(), Some(Segment::Index(2)));
    let collected: JsPath = ["a", "b"].into_iter().collect();
    assert_eq!(collected, path("/a/b"));
}

// ---- get / set / remove / update ----------------------------------------------------

#[test]
fn get_distinguishes_nothing_from_null() {
    let v = JsValue::from(jsobj! { "n": null, "a": [null] });
    assert_eq!(v.get_in(&path("/n")), Some(&JsValue::Null));
    assert_eq!(v.get_in(&path("/a/0")), Some(&JsValue::Null));
    assert_eq!(v.get_in(&path("/missing")), None);
    assert_eq!(v.get_in(&path("/a/1")), None);
    assert_eq!(v.get_in(&path("/n/x")), None);
    let o = v.as_object().unwrap();
    assert_eq!(o.get_in(&path("/n")), Some(&JsValue::Null));
    assert_eq!(o.get_in(&JsPath::root()), None);
}

#[test]
fn set_creates_containers_and_pads_arrays() {
    let v = JsValue::Null;
    assert_eq!(v.set_in(&path("/a/b"), 1).to_string(), r#"{"a":{"b":1}}"#);
    assert_eq!(v.set_in(&path("/2"), 1).to_string(), "[null,null,1]");
    assert_eq!(v.set_in(&path("/a/-"), 1).to_string(), r#"{"a":[1]}"#);
    assert_eq!(v.set_in(&JsPath::root(), 5), JsValue::from(5));

    let w = JsValue::from(jsobj! { "a": [1, 2], "s": "scalar" });
    assert_eq!(
        w.set_in(&path("/a/-"), 3).to_string(),
        r#"{"a":[1,2,3],"s":"scalar"}"#
    );
    assert_eq!(
        w.set_in(&path("/a/4"), 3).to_string(),
        r#"{"a":[1,2,null,null,3],"s":"scalar"}"#
    );
    assert_eq!(
        w.set_in(&path("/a/0"), 9).to_string(),
        r#"{"a":[9,2],"s":"scalar"}"#
    );
    // A scalar on the way is replaced by the container the path needs.
    assert_eq!(
        w.set_in(&path("/s/x"), 1).to_string(),
        r#"{"a":[1,2],"s":{"x":1}}"#
    );
    // So is an array given a key that is not an index.
    assert_eq!(
        w.set_in(&path("/a/x"), 1).to_string(),
        r#"{"a":{"x":1},"s":"scalar"}"#
    );
    // An index segment on an object names a member.
    assert_eq!(
        JsValue::from(jsobj! {})
            .set_in(&JsPath::root().index(0), 1)
            .to_string(),
        r#"{"0":1}"#
    );
}

#[test]
fn container_level_set_keeps_the_root_type() {
    let o = jsobj! { "a": 1 };
    assert_eq!(o.set_in(&JsPath::root(), 5), o);
    assert_eq!(
        o.set_in(&path("/b/0"), true),
        jsobj! { "a": 1, "b": [true] }
    );
    let a = jsarr![1];
    assert_eq!(a.set_in(&path("/x"), 5), a);
    assert_eq!(a.set_in(&path("/-"), 5), jsarr![1, 5]);
    assert_eq!(a.set_in(&path("/0/k"), 5), jsarr![{ "k": 5 }]);
    assert_eq!(a.get_in(&path("/0")), Some(&JsValue::from(1)));
    assert_eq!(a.remove_in(&path("/0")), jsarr![]);
    assert_eq!(
        a.update_in(&path("/0"), |v| JsValue::from(v.as_i64().unwrap() * 10)),
        jsarr![10]
    );
    assert_eq!(
        o.update_in(&path("/a"), |_| JsValue::Null),
        jsobj! { "a": null }
    );
    assert_eq!(o.remove_in(&path("/a")), jsobj! {});
}

#[test]
fn remove_and_update() {
    let v = JsValue::from(jsobj! { "a": { "b": [1, 2, 3] }, "c": 1 });
    assert_eq!(
        v.remove_in(&path("/a/b/1")).to_string(),
        r#"{"a":{"b":[1,3]},"c":1}"#
    );
    assert_eq!(
        v.remove_in(&path("/c")).to_string(),
        r#"{"a":{"b":[1,2,3]}}"#
    );
    // Nothing there: an equal value, sharing storage.
    for missing in ["/x", "/a/x", "/a/b/3", "/c/d", ""] {
        assert!(v.remove_in(&path(missing)).ptr_eq(&v), "{missing}");
    }
    let mut called = false;
    let same = v.update_in(&path("/nope"), |x| {
        called = true;
        x.clone()
    });
    assert!(!called);
    assert!(same.ptr_eq(&v));
    let w = v.update_in(&path("/a/b"), |b| {
        JsValue::from(b.as_array().unwrap().appended(4))
    });
    assert_eq!(w.pointer("/a/b/3"), Some(&JsValue::from(4)));
    assert_eq!(
        v.update_in(&JsPath::root(), |_| JsValue::Null),
        JsValue::Null
    );
}

#[test]
fn every_update_kind_leaves_the_old_value_intact() {
    let big: JsObj = (0..100)
        .map(|i| (format!("k{i}"), jsobj! { "i": i, "l": [i] }))
        .collect();
    let original = jsobj! {
        "small": { "x": 1, "list": [1, 2, 3] },
        "big": big,
        "long": (0..50).collect::<JsArray>(),
    };
    let snapshot = original.to_string();
    let value = JsValue::from(original.clone());

    let mut results: Vec<JsValue> = vec![
        original.set("new", 1).into(),
        original.set("small", 0).into(),
        original.without("small").into(),
        original.set_in(&path("/small/x"), 2).into(),
        original.set_in(&path("/big/k5/i"), -1).into(),
        original.set_in(&path("/long/70"), 1).into(),
        original.set_in(&path("/small/list/-"), 4).into(),
        original.remove_in(&path("/big/k7")).into(),
        original.remove_in(&path("/long/0")).into(),
        original
            .update_in(&path("/small/x"), |_| JsValue::from("u"))
            .into(),
        value.set_in(&path("/big/k1/l/0"), 0),
        value.remove_in(&path("/small/list/1")),
        value.update_in(&path("/long/49"), |_| JsValue::Null),
        value.map_values(|_, _| JsValue::Null),
        value.map_keys(|_, k| format!("_{k}")),
        value.filter_values(|_, _| false),
        value.filter_keys(|_, _| false),
        value.filter(|p, _| p.len() < 2),
        original.union(&jsobj! { "z": 1 }).into(),
        original.union_deep(&jsobj! { "small": { "y": 1 } }).into(),
        original.intersection(&jsobj! { "small": 1 }).into(),
        original
            .intersection_deep(&jsobj! { "small": { "x": 1 } })
            .into(),
    ];
    // In-place methods on clones.
    let mut a = original.clone();
    a.insert("small", 5);
    a.remove("big");
    results.push(a.into());
    let long = original
        .get("long")
        .and_then(JsValue::as_array)
        .unwrap()
        .clone();
    let mut l = long.clone();
    l.push(1);
    l.insert(0, "first");
    l.remove(10);
    l.replace(3, "r");
    l.pop();
    results.push(l.into());
    results.push(long.set(0, "s").into());
    results.push(long.appended("s").into());
    results.push(long.without(0).into());

    for r in &results {
        assert_ne!(r.to_string(), snapshot);
    }
    assert_eq!(original.to_string(), snapshot);
    assert_eq!(value.to_string(), snapshot);
    assert_eq!(long, (0..50).collect::<JsArray>());
}

// ---- whole-value operations ------------------------------------------------------

#[test]
fn map_and_filter_see_paths() {
    let v = JsValue::from(jsobj! { "a": [1, { "b": 2 }], "c": 3 });
    let mut seen = Vec::new();
    let _ = v.map_values(|p, x| {
        seen.push((p.to_string(), x.clone()));
        x.clone()
    });
    assert_eq!(
        seen,
        vec![
            ("/a/0".to_string(), JsValue::from(1)),
            ("/a/1/b".to_string(), JsValue::from(2)),
            ("/c".to_string(), JsValue::from(3)),
        ]
    );
    let mut keys = Vec::new();
    let renamed = v.map_keys(|p, k| {
        keys.push(p.to_string());
        k.to_uppercase()
    });
    assert_eq!(keys, ["/a", "/a/1/b", "/c"]);
    assert_eq!(renamed.to_string(), r#"{"A":[1,{"B":2}],"C":3}"#);

    let odd = v.filter_values(|_, x| x.as_i64().is_some_and(|n| n % 2 == 1));
    assert_eq!(odd.to_string(), r#"{"a":[1,{}],"c":3}"#);
    let mut visited = Vec::new();
    let shallow = v.filter(|p, _| {
        visited.push(p.to_string());
        p.to_string() != "/a"
    });
    assert_eq!(shallow.to_string(), r#"{"c":3}"#);
    assert_eq!(visited, ["/a", "/c"]); // "/a"'s content was not visited
    let no_b = v.filter_keys(|_, k| k != "b");
    assert_eq!(no_b.to_string(), r#"{"a":[1,{}],"c":3}"#);
    // Renaming onto an existing key: the old key sorting last wins.
    let clash = JsValue::from(jsobj! { "a": 1, "b": 2 }).map_keys(|_, _| "k");
    assert_eq!(clash.to_string(), r#"{"k":2}"#);
    // Container forms.
    let arr = jsarr![1, null, 2];
    assert_eq!(arr.filter_values(|_, x| !x.is_null()), jsarr![1, 2]);
    assert_eq!(
        arr.map_values(|p, _| JsValue::from(p.to_string())),
        jsarr!["/0", "/1", "/2"]
    );
}

#[test]
fn union_and_intersection() {
    let a = jsobj! { "x": 1, "o": { "p": 1, "q": 1 }, "l": [1] };
    let b = jsobj! { "y": 2, "o": { "q": 2, "r": 2 }, "l": [1] };
    assert_eq!(
        a.union(&b),
        jsobj! { "x": 1, "y": 2, "o": { "p": 1, "q": 1 }, "l": [1] }
    );
    assert_eq!(
        b.union(&a),
        jsobj! { "x": 1, "y": 2, "o": { "q": 2, "r": 2 }, "l": [1] }
    );
    assert_eq!(
        a.union_deep(&b),
        jsobj! { "x": 1, "y": 2, "o": { "p": 1, "q": 1, "r": 2 }, "l": [1] }
    );
    assert_eq!(a.intersection(&b), jsobj! { "l": [1] });
    assert_eq!(a.intersection_deep(&b), jsobj! { "o": {}, "l": [1] });
    // Large objects on either side.
    let big: JsObj = (0..1000).map(|i| (format!("k{i:04}"), i)).collect();
    let small = jsobj! { "k0001": "mine", "extra": true };
    let u = small.union(&big);
    assert_eq!(u.len(), 1001);
    assert_eq!(u.get("k0001"), Some(&JsValue::from("mine")));
    assert_eq!(big.union(&small).get("k0001"), Some(&JsValue::from(1)));
    assert_eq!(
        big.intersection(&jsobj! { "k0002": 2, "k0003": 0 }),
        jsobj! { "k0002": 2 }
    );
}

// ---- equality and hashing ------------------------------------------------------

#[test]
fn numbers_compare_by_value_exactly() {
    let cases: &[(JsValue, JsValue, bool)] = &[
        (1.into(), 1.0.into(), true),
        (0.into(), (-0.0).into(), true),
        (0.0.into(), (-0.0).into(), true),
        ((-3).into(), (-3.0).into(), true),
        (1.into(), 1.5.into(), false),
        (
            ((1u64 << 53) + 1).into(),
            (((1u64 << 53) + 1) as f64).into(),
            false,
        ),
        ((1u64 << 53).into(), ((1u64 << 53) as f64).into(), true),
        (u64::MAX.into(), (u64::MAX as f64).into(), false),
        (i64::MIN.into(), (i64::MIN as f64).into(), true),
        (f64::NAN.into(), f64::NAN.into(), true),
        (1.into(), "1".into(), false),
        (JsValue::Null, false.into(), false),
    ];
    for (a, b, equal) in cases {
        assert_eq!(a == b, *equal, "{a:?} vs {b:?}");
        assert_eq!(b == a, *equal, "{b:?} vs {a:?}");
        if *equal {
            assert_eq!(hash_of(a), hash_of(b), "{a:?} vs {b:?}");
        }
    }
    assert_eq!(JsValue::from(3), 3i64);
    assert_eq!(JsValue::from(3.0), 3u64);
    assert_eq!(JsValue::from(3), 3.0);
    assert_eq!(JsValue::from("s"), "s");
    assert_eq!(JsValue::from(true), true);
}

#[test]
fn member_order_never_matters() {
    let a: JsObj = (0..50).map(|i| (format!("k{i}"), i)).collect();
    let b: JsObj = (0..50).rev().map(|i| (format!("k{i}"), i as f64)).collect();
    let mut c = JsObj::new();
    for i in (0..50)
        .filter(|i| i % 2 == 0)
        .chain((0..50).filter(|i| i % 2 == 1))
    {
        c.insert(format!("k{i}"), i);
    }
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(hash_of(&a), hash_of(&b));
    assert_eq!(hash_of(&a), hash_of(&c));
    assert_eq!(a.to_string(), c.to_string());
    assert_eq!(
        codecbus_core::to_vec(&a).unwrap(),
        codecbus_core::to_vec(&c).unwrap()
    );
    // Shrinking a large object back under the threshold still compares
    // and hashes like a fresh one.
    let mut shrunk = a.clone();
    for i in 5..50 {
        shrunk.remove(&format!("k{i}"));
    }
    let fresh: JsObj = (0..5).map(|i| (format!("k{i}"), i)).collect();
    assert_eq!(shrunk, fresh);
    assert_eq!(hash_of(&shrunk), hash_of(&fresh));
}

fn arb_value() -> impl Strategy<Value = JsValue> {
    let leaf = prop_oneof![
        Just(JsValue::Null),
        any::<bool>().prop_map(JsValue::from),
        (-5i64..5).prop_map(JsValue::from),
        (-5i64..5).prop_map(|i| JsValue::from(i as f64)),
        prop_oneof![Just(0.5), Just(-0.0), Just(1e300)].prop_map(JsValue::from),
        "[ab]{0,2}".prop_map(JsValue::from),
    ];
    leaf.prop_recursive(3, 40, 36, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..36).prop_map(JsValue::from),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..36)
                .prop_map(|m| JsValue::Object(m.into_iter().collect())),
        ]
    })
}

/// Swaps every integral float for the equal integer and vice versa.
fn swap_number_kinds(v: &JsValue) -> JsValue {
    v.map_values(|_, x| match x {
        JsValue::Int(i) => JsValue::from(i.as_f64()),
        JsValue::Float(f) => x.as_int().map_or_else(|| JsValue::from(*f), JsValue::from),
        other => other.clone(),
    })
}

proptest! {
    #[test]
    fn eq_and_hash_agree(a in arb_value(), b in arb_value()) {
        if a == b {
            prop_assert_eq!(hash_of(&a), hash_of(&b));
        }
        let a2 = swap_number_kinds(&a);
        prop_assert_eq!(&a, &a2);
        prop_assert_eq!(hash_of(&a), hash_of(&a2));
    }

    #[test]
    fn set_then_get_and_old_value_unchanged(v in arb_value(), raw in prop::collection::vec(prop_oneof![
        "[a-c]".prop_map(Segment::from),
        (0usize..40).prop_map(Segment::Index),
    ], 0..4), x in arb_value()) {
        let p: JsPath = raw.into_iter().collect();
        let before = v.to_string();
        let w = v.set_in(&p, x.clone());
        prop_assert_eq!(w.get_in(&p), Some(&x));
        prop_assert_eq!(v.to_string(), before.clone());
        let r = w.remove_in(&p);
        if !p.is_root() {
            prop_assert_eq!(r.get_in(&p).is_none() || p.last().and_then(Segment::as_index).is_some(), true);
        }
        let u = w.update_in(&p, |_| JsValue::from("u"));
        prop_assert_eq!(u.get_in(&p), Some(&JsValue::from("u")));
        prop_assert_eq!(v.to_string(), before);
    }
}
