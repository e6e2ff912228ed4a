//! The datasets of the public Rust serialization benchmark
//! (`support/datasets/`): codecbus beside the other MessagePack crates,
//! zerompk, msgpacker and rmp-serde, and beside bitcode, the fastest
//! compact binary format there.
//!
//! For each dataset (`log`, `mesh`, `minecraft_savedata`, `mk48`) up to
//! three criterion groups, one function per implementation:
//!
//! * `<dataset>/serialize`: into a buffer kept across iterations, emptied
//!   before each: `encode_into` a cleared `Vec` for codecbus,
//!   `rmp_serde::encode::write` into a cleared `Vec`, `zerompk::to_msgpack`
//!   into a slice, msgpacker into an `EncoderSlice` it resets, bitcode
//!   into its reused `Buffer` (each crate's fastest way to reuse memory,
//!   the ones the public benchmark times);
//! * `<dataset>/deserialize`: into the owned types (`String`, `Vec`);
//! * `<dataset>/borrowed`, for the datasets with strings (`log`,
//!   `minecraft_savedata`): into views whose `&str` point into the input.
//!   Every implementation here can.
//!
//! Before timing anything, each implementation's bytes decode back to the
//! dataset (and, borrowed, to its view, whose encoding is the same bytes);
//! where codecbus writes rmp-serde's layout its bytes are rmp-serde's, and
//! rmp-serde decodes them; where it writes zerompk's they are zerompk's.
//! The encoded sizes are printed once per dataset.
//!
//! Times are the benchmark thread's CPU time (`support/cpu_time.rs`), 20
//! samples over 2 s after 1 s of warm-up, so the four datasets take a few
//! minutes. `DATASETS=mesh,mk48` runs those only (and builds no other);
//! criterion's filter (`-- mesh/deserialize`) narrows further.
//! `cargo bench -p codecbus-benches --bench datasets`;
//! `cargo test -p codecbus-benches --bench datasets` runs the checks and
//! each function once.

#[path = "support/cpu_time.rs"]
mod cpu_time;
#[path = "support/datasets/mod.rs"]
mod datasets;

use std::hint::black_box;
use std::time::Duration;

use codecbus::MessageCodec;
use cpu_time::CpuTime;
use criterion::{Criterion, criterion_group, criterion_main};
use datasets::Borrowable;
use datasets::generate::{Rng, SEED};
use msgpacker::{Packable, Unpackable, UnpackableBorrowed};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Everything a dataset's owned type implements.
trait Codecs:
    MessageCodec
    + Serialize
    + DeserializeOwned
    + zerompk::ToMessagePack
    + zerompk::FromMessagePackOwned
    + Packable
    + Unpackable<Error = msgpacker::Error>
    + bitcode::Encode
    + bitcode::DecodeOwned
    + PartialEq
{
}

impl<T> Codecs for T where
    T: MessageCodec
        + Serialize
        + DeserializeOwned
        + zerompk::ToMessagePack
        + zerompk::FromMessagePackOwned
        + Packable
        + Unpackable<Error = msgpacker::Error>
        + bitcode::Encode
        + bitcode::DecodeOwned
        + PartialEq
{
}

/// Everything a dataset's view implements, for the input it borrows.
trait Views<'a>:
    codecbus::Encode
    + codecbus::Decode<'a>
    + Serialize
    + Deserialize<'a>
    + zerompk::ToMessagePack
    + zerompk::FromMessagePack<'a>
    + Packable
    + UnpackableBorrowed<'a, Error = msgpacker::Error>
    + bitcode::Encode
    + bitcode::Decode<'a>
    + PartialEq
{
}

impl<'a, T> Views<'a> for T where
    T: codecbus::Encode
        + codecbus::Decode<'a>
        + Serialize
        + Deserialize<'a>
        + zerompk::ToMessagePack
        + zerompk::FromMessagePack<'a>
        + Packable
        + UnpackableBorrowed<'a, Error = msgpacker::Error>
        + bitcode::Encode
        + bitcode::Decode<'a>
        + PartialEq
{
}

/// How codecbus's bytes for a dataset stand to another crate's.
#[derive(Clone, Copy)]
enum Kin {
    /// The same bytes.
    Same,
    /// The same layout but for the integers' forms: codecbus reads the
    /// other's bytes.
    Readable,
    /// Another layout.
    Other,
}

/// How codecbus's bytes for a dataset stand to the other MessagePack
/// crates' that share its layout, at least in part.
#[derive(Clone, Copy)]
struct Kinship {
    rmp_serde: Kin,
    zerompk: Kin,
}

/// A dataset encoded by every implementation.
struct Encoded {
    codecbus: Vec<u8>,
    zerompk: Vec<u8>,
    msgpacker: Vec<u8>,
    rmp_serde: Vec<u8>,
    bitcode: Vec<u8>,
}

impl Encoded {
    fn sizes(&self) -> [(&'static str, usize); 5] {
        [
            ("codecbus", self.codecbus.len()),
            ("zerompk", self.zerompk.len()),
            ("msgpacker", self.msgpacker.len()),
            ("rmp_serde", self.rmp_serde.len()),
            ("bitcode", self.bitcode.len()),
        ]
    }
}

/// Encodes `data` with every implementation and checks that each reads
/// it back, and how codecbus's bytes stand to rmp-serde's and zerompk's.
fn encode_and_check<T: Codecs>(name: &str, data: &T, kin: Kinship) -> Encoded {
    let enc = Encoded {
        codecbus: codecbus::to_vec(data).unwrap(),
        zerompk: zerompk::to_msgpack_vec(data).unwrap(),
        msgpacker: data.pack_to_vec(),
        rmp_serde: rmp_serde::to_vec(data).unwrap(),
        bitcode: bitcode::encode(data),
    };
    // `assert!`, not `assert_eq!`: a failure would print the dataset.
    let reads = |ok: bool, crate_name: &str| assert!(ok, "{crate_name} does not read back {name}");
    reads(
        codecbus::from_slice::<T>(&enc.codecbus).unwrap() == *data,
        "codecbus",
    );
    reads(
        zerompk::from_msgpack::<T>(&enc.zerompk).unwrap() == *data,
        "zerompk",
    );
    reads(T::unpack(&enc.msgpacker).unwrap() == *data, "msgpacker");
    reads(
        rmp_serde::from_slice::<T>(&enc.rmp_serde).unwrap() == *data,
        "rmp_serde",
    );
    reads(
        bitcode::decode::<T>(&enc.bitcode).unwrap() == *data,
        "bitcode",
    );

    match kin.rmp_serde {
        Kin::Same => {
            assert!(
                enc.codecbus == enc.rmp_serde,
                "{name}: codecbus writes other bytes than rmp_serde::to_vec"
            );
            assert!(
                rmp_serde::from_slice::<T>(&enc.codecbus).unwrap() == *data,
                "{name}: rmp-serde does not read codecbus's bytes"
            );
        }
        Kin::Readable => assert!(
            codecbus::from_slice::<T>(&enc.rmp_serde).unwrap() == *data,
            "{name}: codecbus does not read rmp-serde's bytes"
        ),
        Kin::Other => {}
    }
    match kin.zerompk {
        Kin::Same => assert!(
            enc.codecbus == enc.zerompk,
            "{name}: codecbus writes other bytes than zerompk"
        ),
        Kin::Readable => assert!(
            codecbus::from_slice::<T>(&enc.zerompk).unwrap() == *data,
            "{name}: codecbus does not read zerompk's bytes"
        ),
        Kin::Other => {}
    }
    enc
}

/// Checks that every implementation decodes its bytes into the view of
/// `data`, and writes the same bytes from the view as from `data`.
fn check_views<T>(name: &str, data: &T, enc: &Encoded)
where
    T: Borrowable + 'static,
    for<'a> T::View<'a>: Views<'a>,
{
    let view = data.view();
    let reads =
        |ok: bool, crate_name: &str| assert!(ok, "{crate_name} reads another view of {name}");
    reads(
        codecbus::from_slice::<T::View<'_>>(&enc.codecbus).unwrap() == view,
        "codecbus",
    );
    reads(
        zerompk::from_msgpack::<T::View<'_>>(&enc.zerompk).unwrap() == view,
        "zerompk",
    );
    reads(
        T::View::unpack(&enc.msgpacker).unwrap() == view,
        "msgpacker",
    );
    reads(
        rmp_serde::from_slice::<T::View<'_>>(&enc.rmp_serde).unwrap() == view,
        "rmp_serde",
    );
    reads(
        bitcode::decode::<T::View<'_>>(&enc.bitcode).unwrap() == view,
        "bitcode",
    );

    let writes = |ok: bool, crate_name: &str| {
        assert!(ok, "{crate_name} writes the view of {name} differently")
    };
    writes(codecbus::to_vec(&view).unwrap() == enc.codecbus, "codecbus");
    writes(
        zerompk::to_msgpack_vec(&view).unwrap() == enc.zerompk,
        "zerompk",
    );
    writes(view.pack_to_vec() == enc.msgpacker, "msgpacker");
    writes(
        rmp_serde::to_vec(&view).unwrap() == enc.rmp_serde,
        "rmp_serde",
    );
    writes(bitcode::encode(&view) == enc.bitcode, "bitcode");
}

fn serialize<T: Codecs>(c: &mut Criterion<CpuTime>, name: &str, data: &T, enc: &Encoded) {
    let mut g = c.benchmark_group(format!("{name}/serialize"));
    // Each way of writing runs once before it is timed, its bytes checked
    // (a criterion filter may leave the timed runs out).
    let same = |ok: bool, crate_name: &str| {
        assert!(
            ok,
            "{crate_name} writes {name} otherwise into a reused buffer"
        );
    };

    let mut buf = Vec::with_capacity(enc.codecbus.len());
    let codecbus_write = |buf: &mut Vec<u8>| {
        buf.clear();
        codecbus::encode_into(black_box(data), buf).unwrap();
    };
    codecbus_write(&mut buf);
    same(buf == enc.codecbus, "codecbus");
    g.bench_function("codecbus", |b| b.iter(|| codecbus_write(&mut buf)));

    let mut slice = vec![0; enc.zerompk.len()];
    let len = zerompk::to_msgpack(data, &mut slice).unwrap();
    same(slice[..len] == enc.zerompk, "zerompk");
    g.bench_function("zerompk", |b| {
        b.iter(|| zerompk::to_msgpack(black_box(data), &mut slice).unwrap())
    });

    let mut slice = vec![0; enc.msgpacker.len()];
    let mut encoder = msgpacker::EncoderSlice::new(&mut slice);
    data.pack(&mut encoder);
    same(encoder.written() == enc.msgpacker, "msgpacker");
    g.bench_function("msgpacker", |b| {
        b.iter(|| {
            encoder.reset();
            black_box(data).pack(&mut encoder)
        })
    });

    let mut buf = Vec::with_capacity(enc.rmp_serde.len());
    let rmp_serde_write = |buf: &mut Vec<u8>| {
        buf.clear();
        rmp_serde::encode::write(buf, black_box(data)).unwrap();
    };
    rmp_serde_write(&mut buf);
    same(buf == enc.rmp_serde, "rmp_serde");
    g.bench_function("rmp_serde", |b| b.iter(|| rmp_serde_write(&mut buf)));

    let mut buffer = bitcode::Buffer::new();
    same(buffer.encode(data) == enc.bitcode, "bitcode");
    g.bench_function("bitcode", |b| {
        b.iter(|| buffer.encode(black_box(data)).len())
    });
    g.finish();
}

fn deserialize<T: Codecs>(c: &mut Criterion<CpuTime>, name: &str, enc: &Encoded) {
    let mut g = c.benchmark_group(format!("{name}/deserialize"));
    g.bench_function("codecbus", |b| {
        b.iter(|| codecbus::from_slice::<T>(black_box(&enc.codecbus)).unwrap())
    });
    g.bench_function("zerompk", |b| {
        b.iter(|| zerompk::from_msgpack::<T>(black_box(&enc.zerompk)).unwrap())
    });
    g.bench_function("msgpacker", |b| {
        b.iter(|| T::unpack(black_box(&enc.msgpacker)).unwrap())
    });
    g.bench_function("rmp_serde", |b| {
        b.iter(|| rmp_serde::from_slice::<T>(black_box(&enc.rmp_serde)).unwrap())
    });
    let mut buffer = bitcode::Buffer::new();
    g.bench_function("bitcode", |b| {
        b.iter(|| buffer.decode::<T>(black_box(&enc.bitcode)).unwrap())
    });
    g.finish();
}

fn borrowed<T>(c: &mut Criterion<CpuTime>, name: &str, enc: &Encoded)
where
    T: Borrowable + 'static,
    for<'a> T::View<'a>: Views<'a>,
{
    let mut g = c.benchmark_group(format!("{name}/borrowed"));
    g.bench_function("codecbus", |b| {
        b.iter(|| codecbus::from_slice::<T::View<'_>>(black_box(&enc.codecbus)).unwrap())
    });
    g.bench_function("zerompk", |b| {
        b.iter(|| zerompk::from_msgpack::<T::View<'_>>(black_box(&enc.zerompk)).unwrap())
    });
    g.bench_function("msgpacker", |b| {
        b.iter(|| T::View::unpack(black_box(&enc.msgpacker)).unwrap())
    });
    g.bench_function("rmp_serde", |b| {
        b.iter(|| rmp_serde::from_slice::<T::View<'_>>(black_box(&enc.rmp_serde)).unwrap())
    });
    let mut buffer = bitcode::Buffer::new();
    g.bench_function("bitcode", |b| {
        b.iter(|| {
            buffer
                .decode::<T::View<'_>>(black_box(&enc.bitcode))
                .unwrap()
        })
    });
    g.finish();
}

fn print_sizes(name: &str, enc: &Encoded) {
    let sizes = enc
        .sizes()
        .map(|(crate_name, len)| format!("{crate_name} {len}"))
        .join(", ");
    println!("{name}: encoded sizes (bytes): {sizes}");
}

/// The serialize and deserialize groups of one dataset, after its checks.
fn owned<T: Codecs>(c: &mut Criterion<CpuTime>, name: &str, data: &T, kin: Kinship) {
    let enc = encode_and_check(name, data, kin);
    print_sizes(name, &enc);
    serialize(c, name, data, &enc);
    deserialize::<T>(c, name, &enc);
}

/// The same, and the borrowed group.
fn with_views<T>(c: &mut Criterion<CpuTime>, name: &str, data: &T, kin: Kinship)
where
    T: Codecs + Borrowable + 'static,
    for<'a> T::View<'a>: Views<'a>,
{
    let enc = encode_and_check(name, data, kin);
    check_views(name, data, &enc);
    print_sizes(name, &enc);
    serialize(c, name, data, &enc);
    deserialize::<T>(c, name, &enc);
    borrowed::<T>(c, name, &enc);
}

/// The datasets named in `DATASETS` (commas between), or all.
fn selected() -> Vec<String> {
    match std::env::var("DATASETS") {
        Ok(list) if !list.trim().is_empty() => {
            let names: Vec<String> = list.split(',').map(|s| s.trim().to_owned()).collect();
            for name in &names {
                assert!(
                    datasets::NAMES.contains(&name.as_str()),
                    "DATASETS: no dataset `{name}` (there are {:?})",
                    datasets::NAMES
                );
            }
            names
        }
        _ => datasets::NAMES.map(str::to_owned).to_vec(),
    }
}

fn benches(c: &mut Criterion<CpuTime>) {
    cpu_time::check();
    for name in selected() {
        // Each dataset from the same seed, whichever run before it.
        let rng = &mut Rng::new(SEED);
        match name.as_str() {
            "log" => {
                let kin = Kinship {
                    rmp_serde: Kin::Same,
                    zerompk: Kin::Same,
                };
                with_views(c, "log", &datasets::log::generate(rng), kin);
            }
            "mesh" => {
                let kin = Kinship {
                    rmp_serde: Kin::Same,
                    zerompk: Kin::Same,
                };
                owned(c, "mesh", &datasets::mesh::generate(rng), kin);
            }
            "minecraft_savedata" => {
                // zerompk writes the game modes as numbers.
                let kin = Kinship {
                    rmp_serde: Kin::Same,
                    zerompk: Kin::Other,
                };
                let data = datasets::minecraft_savedata::generate(rng);
                with_views(c, "minecraft_savedata", &data, kin);
            }
            "mk48" => {
                // rmp-serde writes the terrain bytes as an array of
                // integers. zerompk writes a non-negative `i16` as `int 16`
                // (`0xd1`) where rmp and codecbus write `uint 16` (`0xcd`),
                // and reads a signed field in the signed forms only, so it
                // does not read codecbus's bytes.
                let kin = Kinship {
                    rmp_serde: Kin::Other,
                    zerompk: Kin::Readable,
                };
                owned(c, "mk48", &datasets::mk48::generate(rng), kin);
            }
            _ => unreachable!("checked by `selected`"),
        }
    }
}

criterion_group! {
    name = datasets_bench;
    config = Criterion::default()
        .with_measurement(CpuTime)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = benches
}
criterion_main!(datasets_bench);
