//! `Spec::validate` next to the `jsonschema` crate validating the spec's
//! exported JSON Schema, on the corpus documents.
//!
//! Group `json_schema::validate/{twitter,citm_catalog,canada}`, one
//! function per validator, each given the same document already built
//! (`JsValue` for the spec, `serde_json::Value` for `jsonschema`) and the
//! validator built once, outside the measured loop:
//!
//! * `spec_validate`: [`Spec::validate`](codecbus::json::spec::Spec::validate),
//!   every violation (none: the documents conform);
//! * `spec_is_valid`: `Spec::is_valid`, stopping at the first;
//! * `jsonschema_iter_errors`: `Validator::iter_errors`, every error;
//! * `jsonschema_is_valid`: `Validator::is_valid`.
//!
//! The specs are those of `data/json/specs.rs`; each exports exactly (no
//! user checks), and every document passes both validators before it is
//! measured. `cargo bench -p codecbus-benches --bench json_schema`;
//! `cargo test -p codecbus-benches --bench json_schema` runs each once.

#[path = "support/documents.rs"]
mod corpus;

#[path = "../data/json/specs.rs"]
mod specs;

use std::hint::black_box;

// `data/json/specs.rs` reaches the JSON crate as `super::json`.
use codecbus::json;
use codecbus::json::JsValue;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn validate(c: &mut Criterion) {
    let mut group = c.benchmark_group("json_schema::validate");
    for (name, text) in corpus::all() {
        let spec = specs::by_name(name).expect("every document has a spec");
        let schema: serde_json::Value = spec
            .to_json_schema()
            .expect("the corpus specs export exactly")
            .into();
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let value = JsValue::parse(&text).expect("the documents are JSON");
        let sj: serde_json::Value = serde_json::from_str(&text).expect("the documents are JSON");
        assert!(spec.validate(&value).is_empty(), "{name} breaks its spec");
        assert!(validator.is_valid(&sj), "{name} breaks its schema");

        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(BenchmarkId::new("spec_validate", name), |b| {
            b.iter(|| black_box(spec.validate(black_box(&value))))
        });
        group.bench_function(BenchmarkId::new("spec_is_valid", name), |b| {
            b.iter(|| black_box(spec.is_valid(black_box(&value))))
        });
        group.bench_function(BenchmarkId::new("jsonschema_iter_errors", name), |b| {
            b.iter(|| black_box(validator.iter_errors(black_box(&sj)).count()))
        });
        group.bench_function(BenchmarkId::new("jsonschema_is_valid", name), |b| {
            b.iter(|| black_box(validator.is_valid(black_box(&sj))))
        });
    }
    group.finish();
}

criterion_group!(json_schema, validate);
criterion_main!(json_schema);
