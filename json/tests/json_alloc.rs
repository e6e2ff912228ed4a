//! Clone and update cost does not grow with the size of the value,
//! measured by counting heap allocations (and bytes) on the current thread,
//! not by timing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use codecbus_core::MessageCodec;
use codecbus_json::jsobj;
use codecbus_json::{JsArray, JsObj, JsPath, JsValue};

struct Counting;

thread_local! {
    // Const-initialised and without a destructor: safe to touch from inside
    // the allocator.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
    static BYTES: Cell<usize> = const { Cell::new(0) };
}

fn record(size: usize) {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + size));
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and bytes allocated on this thread while running `f`.
fn measure<R>(f: impl FnOnce() -> R) -> (usize, usize, R) {
    let (a0, b0) = (ALLOCS.with(Cell::get), BYTES.with(Cell::get));
    let r = f();
    let (a1, b1) = (ALLOCS.with(Cell::get), BYTES.with(Cell::get));
    (a1 - a0, b1 - b0, r)
}

fn object_of(n: usize) -> JsObj {
    (0..n)
        .map(|i| (format!("key{i:05}"), jsobj! { "i": i, "name": "x" }))
        .collect()
}

#[test]
fn clone_allocates_nothing_at_any_size() {
    for n in [10, 10_000] {
        let o = object_of(n);
        let v = JsValue::from(o.clone());
        let a: JsArray = (0..n).collect();
        let (allocs, _, clones) = measure(|| (o.clone(), v.clone(), a.clone()));
        assert_eq!(allocs, 0, "clone of {n} members allocated");
        drop(clones);
        // Local delivery of an immutable body: the same Arc, no allocation.
        let body = Arc::new(o);
        let (allocs, _, delivered) = measure(|| JsObj::transform(&body));
        assert_eq!(allocs, 0);
        assert!(Arc::ptr_eq(&delivered, &body));
    }
}

#[test]
fn update_cost_does_not_grow_with_size() {
    let mut results = Vec::new();
    for n in [10, 10_000] {
        let o = object_of(n);
        let v = JsValue::from(o.clone());
        let key = format!("key{:05}", n / 2);
        let deep = JsPath::root().key(key.as_str()).key("name");
        let (set_allocs, set_bytes, updated) = measure(|| o.set(key.as_str(), 1));
        assert_eq!(updated.get(&key), Some(&JsValue::from(1)));
        let (new_allocs, new_bytes, _) = measure(|| o.set("zzz-new", 1));
        let (rm_allocs, rm_bytes, _) = measure(|| o.without(&key));
        let (path_allocs, path_bytes, _) = measure(|| v.set_in(&deep, "y"));
        let (upd_allocs, upd_bytes, _) = measure(|| v.update_in(&deep, |_| JsValue::Null));
        results.push((
            n,
            [set_allocs, new_allocs, rm_allocs, path_allocs, upd_allocs],
            [set_bytes, new_bytes, rm_bytes, path_bytes, upd_bytes],
        ));
        // The old value is untouched.
        assert_eq!(
            o.get(&key)
                .and_then(|m| m.get_in(&JsPath::root().key("name"))),
            Some(&JsValue::from("x"))
        );
    }
    println!("(members, allocations [set, insert, remove, set_in, update_in], bytes [...])");
    for r in &results {
        println!("{r:?}");
    }
    let (_, big_allocs, big_bytes) = results[1];
    // A copy of 10 000 members would be ~400 kB in hundreds of nodes; a
    // path copy is a handful of B-tree nodes (plus the small inner object).
    for (allocs, bytes) in big_allocs.iter().zip(big_bytes) {
        assert!(*allocs <= 12, "{big_allocs:?}");
        assert!(bytes <= 16 * 1024, "{big_bytes:?}");
    }
}

#[test]
fn array_update_cost_does_not_grow_with_size() {
    let mut costs = Vec::new();
    for n in [10, 10_000] {
        let a: JsArray = (0..n).collect();
        let (set_allocs, set_bytes, b) = measure(|| a.set(n / 2, "x"));
        assert_eq!(b.get(n / 2), Some(&JsValue::from("x")));
        let (push_allocs, push_bytes, _) = measure(|| a.appended(1));
        costs.push((n, set_allocs, set_bytes, push_allocs, push_bytes));
        assert_eq!(a.get(n / 2), Some(&JsValue::from(n / 2)));
    }
    println!("(len, set allocs, set bytes, append allocs, append bytes): {costs:?}");
    let (_, set_allocs, set_bytes, push_allocs, push_bytes) = costs[1];
    assert!(set_allocs <= 12 && push_allocs <= 12, "{costs:?}");
    assert!(
        set_bytes <= 16 * 1024 && push_bytes <= 16 * 1024,
        "{costs:?}"
    );
}

/// The objects of one body share each key: parsing (from JSON text or
/// MessagePack) `n` objects of the same three keys allocates the keys once,
/// not `3 n` times.
#[test]
fn repeated_keys_are_allocated_once_per_parse() {
    let text = |n: usize| {
        let items: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"sku":"s{i}","quantity":{i},"cents":{i}}}"#))
            .collect();
        format!("[{}]", items.join(","))
    };
    let (small, large) = (text(10), text(110));
    let parsed = |t: &str| measure(|| JsValue::parse(t).unwrap()).0;
    let bytes = |t: &str| codecbus_core::to_vec(&JsValue::parse(t).unwrap()).unwrap();
    let (small_mp, large_mp) = (bytes(&small), bytes(&large));
    let decoded = |b: &[u8]| measure(|| codecbus_core::from_slice::<JsValue>(b).unwrap()).0;
    for (how, at_10, at_110) in [
        ("text", parsed(&small), parsed(&large)),
        ("MessagePack", decoded(&small_mp), decoded(&large_mp)),
    ] {
        // Per object: its members and its `sku` string; keys are not
        // counted again.
        let per_object = (at_110 - at_10) as f64 / 100.0;
        assert!(
            per_object <= 2.2,
            "{how}: {per_object} allocations per object ({at_10} for 10, {at_110} for 110)"
        );
    }
}
