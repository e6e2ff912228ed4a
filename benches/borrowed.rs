//! Borrowed decoding against owned decoders, on a string-heavy message.
//!
//! The message: an id and 200 short strings (3 to 11 bytes), the shape
//! where every owned decoder spends its time allocating. One criterion
//! group, `borrowed/read`, one function per decoder of the same bytes:
//!
//! * `codecbus_owned`: the derived codec into `Vec<String>`;
//! * `codecbus_borrowed`: the derived codec of a view, `Vec<&str>` into
//!   the input;
//! * `codecbus_shared`: `Vec<SharedStr>` from a `bytes::Bytes` buffer
//!   (`from_bytes`, as the bus decodes what arrives over NATS): slices of
//!   the buffer, a reference count each;
//! * `rmp_handwritten`: straight `rmp` calls into `Vec<String>`;
//! * `rmp_serde_owned` and `rmp_serde_borrowed`: serde through `rmp-serde`
//!   into `Vec<String>` and into `Vec<&str>` (`#[serde(borrow)]`);
//! * `msgpacker`: into `Vec<String>`.
//!
//! Times are the benchmark thread's CPU time. `cargo bench -p
//! codecbus-benches --bench borrowed`; `cargo test -p codecbus-benches
//! --bench borrowed` checks once that every decoder reads the same strings.

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use codecbus::bytes::Bytes;
use codecbus::ext::SharedStr;
use codecbus::{MessageCodec, from_bytes, from_slice, to_vec};
use cpu_time::CpuTime;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use msgpacker::MsgPacker;
use serde::{Deserialize, Serialize};

/// The owned message, as every owned decoder reads it.
#[derive(MessageCodec, MsgPacker, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Tags {
    id: u64,
    names: Vec<String>,
}

/// The same message as a view of its bytes.
#[derive(MessageCodec, Serialize, Deserialize, Debug, PartialEq)]
#[codec(as_array)]
struct TagsView<'a> {
    id: u64,
    #[serde(borrow)]
    names: Vec<&'a str>,
}

/// The same message with strings sharing a `Bytes` buffer.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct TagsShared {
    id: u64,
    names: Vec<SharedStr>,
}

fn tags() -> Tags {
    let names = (0..200)
        .map(|i: usize| {
            let len = 3 + i % 9;
            (0..len)
                .map(|j| char::from(b'a' + ((i * 7 + j) % 26) as u8))
                .collect()
        })
        .collect();
    Tags { id: 42, names }
}

fn hand_read(bytes: &[u8]) -> Tags {
    let mut rd = bytes;
    assert_eq!(rmp::decode::read_array_len(&mut rd).unwrap(), 2);
    let id = rmp::decode::read_int(&mut rd).unwrap();
    let n = rmp::decode::read_array_len(&mut rd).unwrap() as usize;
    let mut names = Vec::with_capacity(n);
    for _ in 0..n {
        let len = rmp::decode::read_str_len(&mut rd).unwrap() as usize;
        let (s, rest) = rd.split_at(len);
        names.push(std::str::from_utf8(s).unwrap().to_owned());
        rd = rest;
    }
    Tags { id, names }
}

type Read = Box<dyn Fn(&Bytes) -> usize>;

/// Each decoder, returning what it read folded into one number (the
/// strings' total length), so that nothing is optimised away and every
/// decoder can be checked against the others.
fn decoders() -> Vec<(&'static str, Read)> {
    let total = |names: &mut dyn Iterator<Item = usize>| names.sum::<usize>();
    vec![
        (
            "codecbus_owned",
            Box::new(move |b: &Bytes| {
                let v: Tags = from_slice(b).unwrap();
                total(&mut v.names.iter().map(String::len))
            }),
        ),
        (
            "codecbus_borrowed",
            Box::new(move |b: &Bytes| {
                let v: TagsView<'_> = from_slice(b).unwrap();
                total(&mut v.names.iter().map(|s| s.len()))
            }),
        ),
        (
            "codecbus_shared",
            Box::new(move |b: &Bytes| {
                let v: TagsShared = from_bytes(b).unwrap();
                total(&mut v.names.iter().map(|s| s.len()))
            }),
        ),
        (
            "rmp_handwritten",
            Box::new(move |b: &Bytes| {
                let v = hand_read(b);
                total(&mut v.names.iter().map(String::len))
            }),
        ),
        (
            "rmp_serde_owned",
            Box::new(move |b: &Bytes| {
                let v: Tags = rmp_serde::from_slice(b).unwrap();
                total(&mut v.names.iter().map(String::len))
            }),
        ),
        (
            "rmp_serde_borrowed",
            Box::new(move |b: &Bytes| {
                let v: TagsView<'_> = rmp_serde::from_slice(b).unwrap();
                total(&mut v.names.iter().map(|s| s.len()))
            }),
        ),
        (
            "msgpacker",
            Box::new(move |b: &Bytes| {
                let v = <Tags as msgpacker::Unpackable>::unpack(b).unwrap();
                total(&mut v.names.iter().map(String::len))
            }),
        ),
    ]
}

fn benches(c: &mut Criterion<CpuTime>) {
    cpu_time::check();
    let value = tags();
    let bytes = Bytes::from(to_vec(&value).unwrap());
    // Every implementation writes these bytes, and every decoder reads
    // the same strings from them.
    assert_eq!(rmp_serde::to_vec(&value).unwrap(), bytes);
    let mut packed = Vec::new();
    msgpacker::Packable::pack(&value, &mut packed);
    let expected: usize = value.names.iter().map(String::len).sum();
    let view: TagsView<'_> = from_slice(&bytes).unwrap();
    assert_eq!(view.names, value.names);
    assert_eq!(to_vec(&view).unwrap(), bytes);

    let mut g = c.benchmark_group("borrowed/read");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    for (name, read) in decoders() {
        // msgpacker writes a struct without its array header.
        let input = if name == "msgpacker" {
            Bytes::from(packed.clone())
        } else {
            bytes.clone()
        };
        assert_eq!(read(&input), expected, "{name} reads other strings");
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| black_box(read(black_box(&input))))
        });
    }
    g.finish();
    println!(
        "borrowed: {} strings, {} bytes of MessagePack ({} bytes msgpacker)",
        value.names.len(),
        bytes.len(),
        packed.len()
    );
}

criterion_group! {
    name = borrowed;
    config = Criterion::default().with_measurement(CpuTime);
    targets = benches
}
criterion_main!(borrowed);
