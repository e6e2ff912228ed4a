//! Benchmarks of the immutable JSON value (`JsObj` / `JsValue`) next to
//! `serde_json::Value`.
//!
//! Groups, one function per implementation so the report lines them up:
//!
//! * `json::clone/10`, `json::clone/10000`: clone (and drop) a constant
//!   object of 10 or 10 000 members — O(1) for `JsObj`, a deep copy for
//!   `serde_json::Value` (what the bus does on every local delivery of it);
//! * `json::set/10`, `json::set/10000`: set a value two levels down by path.
//!   `jsobj` returns a new object and keeps the old one; `serde_json_value`
//!   mutates in place with `pointer_mut` (the old value is lost), and
//!   `serde_json_value_clone` clones first so that the old value survives,
//!   which is what `JsObj` gives;
//! * `json::parse/{twitter,citm_catalog,canada}`: JSON text into `JsValue`
//!   and into `serde_json::Value` (MB/s of text);
//! * `json::msgpack_encode/...`, `json::msgpack_decode/...`: MessagePack
//!   through the codecbus codecs of `JsValue` and `serde_json::Value`, and
//!   `serde_json::Value` through `rmp-serde` (MB/s of MessagePack);
//! * `json::spec_parse/...`, `json::spec_decode/...`: the plain parse
//!   (decode) into `JsValue` next to the validating one against the
//!   document's spec (`data/json/specs.rs`), and `json::spec_check/...`:
//!   `is_valid` and `validate` on the parsed value.
//!
//! The documents come from `data/json/` in the repository; a missing one is
//! an error.
//! `cargo bench -p codecbus-benches --bench json`;
//! `cargo test -p codecbus-benches --bench json` runs each once.

#[path = "support/documents.rs"]
mod corpus;
#[path = "../data/json/specs.rs"]
mod specs;

use std::hint::black_box;

use codecbus::jsobj;
use codecbus::json;
use codecbus::json::{JsObj, JsPath, JsValue};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

// ---------------------------------------------------------------- workloads

/// An object of `n` members `"k00000"`, `"k00001"`, ..., each a small
/// object, as the same value in both representations.
fn objects(n: usize) -> (JsObj, serde_json::Value) {
    let obj: JsObj = (0..n)
        .map(|i| {
            let member = jsobj! {
                "id": i,
                "name": (format!("item number {i}")),
                "active": (i % 2 == 0),
                "score": (i as f64 * 0.5),
            };
            (format!("k{i:05}"), member)
        })
        .collect();
    assert_eq!(obj.len(), n);
    let sj = serde_json::Value::from(&obj);
    assert_eq!(JsValue::from(&sj), obj);
    (obj, sj)
}

// ---------------------------------------------------------- clone and set

fn clone_and_set(c: &mut Criterion) {
    for n in [10usize, 10_000] {
        let (obj, sj) = objects(n);

        let mut g = c.benchmark_group(format!("json::clone/{n}"));
        g.bench_function(BenchmarkId::from_parameter("jsobj"), |b| {
            b.iter(|| black_box(black_box(&obj).clone()))
        });
        g.bench_function(BenchmarkId::from_parameter("serde_json_value"), |b| {
            b.iter(|| black_box(black_box(&sj).clone()))
        });
        g.finish();

        // A key in the middle, one level below it.
        let pointer = format!("/k{:05}/score", n / 2);
        let path: JsPath = pointer.parse().unwrap();
        let updated = obj.set_in(&path, 1.25);
        assert_eq!(updated.get_in(&path), Some(&JsValue::from(1.25)));
        assert_ne!(obj.get_in(&path), Some(&JsValue::from(1.25)));
        let mut in_place = sj.clone();
        *in_place.pointer_mut(&pointer).unwrap() = 1.25.into();
        assert_eq!(JsValue::from(&in_place), updated);

        let mut g = c.benchmark_group(format!("json::set/{n}"));
        g.bench_function(BenchmarkId::from_parameter("jsobj"), |b| {
            let mut x = 0.0;
            b.iter(|| {
                x += 1.0;
                black_box(black_box(&obj).set_in(&path, x))
            })
        });
        g.bench_function(BenchmarkId::from_parameter("serde_json_value"), |b| {
            let mut x = 0.0;
            b.iter(|| {
                x += 1.0;
                *black_box(&mut in_place).pointer_mut(&pointer).unwrap() = x.into();
            })
        });
        g.bench_function(BenchmarkId::from_parameter("serde_json_value_clone"), |b| {
            let mut x = 0.0;
            b.iter(|| {
                x += 1.0;
                let mut new = black_box(&sj).clone();
                *new.pointer_mut(&pointer).unwrap() = x.into();
                black_box(new)
            })
        });
        g.finish();
    }
}

// ------------------------------------------------------ parse and msgpack

fn documents(c: &mut Criterion) {
    let mut sizes = Vec::new();
    for (name, text) in corpus::all() {
        let value = JsValue::parse(&text).unwrap();
        let sj: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value, sj, "{name}: JsValue and serde_json::Value differ");

        let mut g = c.benchmark_group(format!("json::parse/{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("jsvalue"), |b| {
            b.iter(|| black_box(JsValue::parse(black_box(&text)).unwrap()))
        });
        g.bench_function(BenchmarkId::from_parameter("serde_json_value"), |b| {
            b.iter(|| {
                black_box(serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
            })
        });
        g.finish();

        // Printing: `to_json_vec` writes the text straight; through
        // serde_json's serializer (the same bytes) beside it.
        assert_eq!(value.to_json_vec(), serde_json::to_vec(&value).unwrap());
        let mut g = c.benchmark_group(format!("json::print/{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("jsvalue"), |b| {
            b.iter(|| black_box(black_box(&value).to_json_vec()))
        });
        g.bench_function(BenchmarkId::from_parameter("jsvalue_serializer"), |b| {
            b.iter(|| black_box(serde_json::to_vec(black_box(&value)).unwrap()))
        });
        g.bench_function(BenchmarkId::from_parameter("serde_json_value"), |b| {
            b.iter(|| black_box(serde_json::to_vec(black_box(&sj)).unwrap()))
        });
        g.finish();

        let js_bytes = codecbus::to_vec(&value).unwrap();
        let sj_bytes = codecbus::to_vec(&sj).unwrap();
        let rmp_bytes = rmp_serde::to_vec_named(&sj).unwrap();
        assert_eq!(codecbus::from_slice::<JsValue>(&js_bytes).unwrap(), value);
        assert_eq!(
            codecbus::from_slice::<serde_json::Value>(&sj_bytes).unwrap(),
            sj
        );
        assert_eq!(
            rmp_serde::from_slice::<serde_json::Value>(&rmp_bytes).unwrap(),
            sj
        );
        sizes.push((
            name,
            text.len(),
            js_bytes.len(),
            sj_bytes.len(),
            rmp_bytes.len(),
        ));

        let mut g = c.benchmark_group(format!("json::msgpack_encode/{name}"));
        g.throughput(Throughput::Bytes(js_bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("jsvalue"), |b| {
            b.iter(|| black_box(codecbus::to_vec(black_box(&value)).unwrap()))
        });
        g.throughput(Throughput::Bytes(sj_bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("serde_json_value"), |b| {
            b.iter(|| black_box(codecbus::to_vec(black_box(&sj)).unwrap()))
        });
        g.throughput(Throughput::Bytes(rmp_bytes.len() as u64));
        g.bench_function(
            BenchmarkId::from_parameter("serde_json_value_rmp_serde"),
            |b| b.iter(|| black_box(rmp_serde::to_vec_named(black_box(&sj)).unwrap())),
        );
        g.finish();

        let mut g = c.benchmark_group(format!("json::msgpack_decode/{name}"));
        g.throughput(Throughput::Bytes(js_bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("jsvalue"), |b| {
            b.iter(|| black_box(codecbus::from_slice::<JsValue>(black_box(&js_bytes)).unwrap()))
        });
        g.throughput(Throughput::Bytes(sj_bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("serde_json_value"), |b| {
            b.iter(|| {
                black_box(codecbus::from_slice::<serde_json::Value>(black_box(&sj_bytes)).unwrap())
            })
        });
        g.throughput(Throughput::Bytes(rmp_bytes.len() as u64));
        g.bench_function(
            BenchmarkId::from_parameter("serde_json_value_rmp_serde"),
            |b| {
                b.iter(|| {
                    black_box(
                        rmp_serde::from_slice::<serde_json::Value>(black_box(&rmp_bytes)).unwrap(),
                    )
                })
            },
        );
        g.finish();
    }

    println!("\ndocument sizes (bytes)");
    println!(
        "{:<14} {:>10} {:>16} {:>25} {:>10}",
        "document", "json text", "jsvalue msgpack", "serde_json_value msgpack", "rmp_serde"
    );
    for (name, text, js, sj, rmp) in &sizes {
        println!("{name:<14} {text:>10} {js:>16} {sj:>25} {rmp:>10}");
    }
}

// ------------------------------------------------------------------ specs

fn spec_checks(c: &mut Criterion) {
    for (name, text) in corpus::all() {
        let spec = specs::by_name(name).unwrap();
        let value = JsValue::parse(&text).unwrap();
        let bytes = codecbus::to_vec(&value).unwrap();
        assert_eq!(spec.parse(&text).unwrap(), value, "{name}");
        assert_eq!(spec.decode(&bytes).unwrap(), value, "{name}");
        assert!(spec.validate(&value).is_empty(), "{name}");

        let mut g = c.benchmark_group(format!("json::spec_parse/{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("plain"), |b| {
            b.iter(|| black_box(JsValue::parse(black_box(&text)).unwrap()))
        });
        g.bench_function(BenchmarkId::from_parameter("spec"), |b| {
            b.iter(|| black_box(spec.parse(black_box(&text)).unwrap()))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("json::spec_decode/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("plain"), |b| {
            b.iter(|| black_box(codecbus::from_slice::<JsValue>(black_box(&bytes)).unwrap()))
        });
        g.bench_function(BenchmarkId::from_parameter("spec"), |b| {
            b.iter(|| black_box(spec.decode(black_box(&bytes)).unwrap()))
        });
        g.finish();

        let mut g = c.benchmark_group(format!("json::spec_check/{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(BenchmarkId::from_parameter("is_valid"), |b| {
            b.iter(|| black_box(spec.is_valid(black_box(&value))))
        });
        g.bench_function(BenchmarkId::from_parameter("validate"), |b| {
            b.iter(|| black_box(spec.validate(black_box(&value))))
        });
        g.finish();
    }
}

criterion_group!(json, clone_and_set, documents, spec_checks);
criterion_main!(json);
