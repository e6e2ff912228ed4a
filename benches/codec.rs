//! MessagePack codec benchmarks on the Apache Ignite 3 workloads.
//!
//! Each workload is one criterion group with one function per
//! implementation, so the report lines them up:
//!
//! * `codecbus`: the derived (or built-in) codec;
//! * `rmp_handwritten`: straight `rmp` calls into a reused buffer;
//! * `rmp_serde`: serde through `rmp-serde` (`to_vec_named` for maps);
//! * `msgpacker`: where it can express the layout (no maps);
//! * `serde_json`: text, for scale.
//!
//! The `layouts` workload compares derived layouts instead: one record by
//! field name (`named`), by position (`as_array`) and by stable key
//! (`keyed`, `#[codec(key = N)]`), each a type of its own.
//!
//! Times are the benchmark thread's CPU time (`support/cpu_time.rs`), so
//! other work on the machine does not count. The encoded size of every
//! implementation is printed once, as a table.
//! `cargo bench -p codecbus-benches --bench codec`;
//! `cargo test -p codecbus-benches --bench codec` runs each once.

#[path = "support/documents.rs"]
mod corpus;
#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::collections::BTreeMap;
use std::hint::black_box;

use codecbus::json::JsValue;
use codecbus::{Decode, Encode, MessageCodec, Reader, Writer};
use cpu_time::CpuTime;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use msgpacker::{MsgPacker, Packable, Unpackable};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------- workloads

const NAME20: &str = "abcdefghijklmnopqrst";
const QUERY: &str = "select * from cars where year > ? and seats = ?";

/// The eight-field object, encoded with field names.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Pojo {
    id: i64,
    count: i32,
    small: i16,
    name: String,
    active: bool,
    score: f64,
    parent: Option<i64>,
    tags: Vec<i32>,
}

/// The same object, positionally.
#[derive(MessageCodec, Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct PojoArray {
    id: i64,
    count: i32,
    small: i16,
    name: String,
    active: bool,
    score: f64,
    parent: Option<i64>,
    tags: Vec<i32>,
}

/// The SQL request: the query and its arguments.
#[derive(MessageCodec, Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Sql {
    query: String,
    args: Vec<i64>,
}

fn pojo() -> Pojo {
    Pojo {
        id: 1_234_567_890_123,
        count: 70_000,
        small: -300,
        name: NAME20.to_string(),
        active: true,
        score: 98.625,
        parent: Some(42),
        tags: vec![1, 200, -3, 40_000],
    }
}

fn pojo_array() -> PojoArray {
    let p = pojo();
    PojoArray {
        id: p.id,
        count: p.count,
        small: p.small,
        name: p.name,
        active: p.active,
        score: p.score,
        parent: p.parent,
        tags: p.tags,
    }
}

fn sql() -> Sql {
    Sql {
        query: QUERY.to_string(),
        args: vec![2005, 2],
    }
}

/// The primitives, one after another: bool, i8, i16, i32, i32, i64, f32,
/// f64 and "hello".
#[derive(Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
struct Prims {
    b: bool,
    i8: i8,
    i16: i16,
    i32: i32,
    i32b: i32,
    i64: i64,
    f32: f32,
    f64: f64,
    s: String,
}

fn prims() -> Prims {
    Prims {
        b: true,
        i8: 1,
        i16: -100,
        i32: 30_000,
        i32b: 2_000_000_000,
        i64: 9_000_000_000,
        f32: 1.5,
        f64: 2.25,
        s: "hello".to_string(),
    }
}

// ------------------------------------------------------- nested workloads

/// One line of an order: a string, two numbers and an optional string.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Line {
    sku: String,
    qty: u32,
    price: f64,
    note: Option<String>,
}

/// An order: a vector of small structs, a map and an option, by name.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Order {
    id: u64,
    customer: String,
    lines: Vec<Line>,
    totals: BTreeMap<String, i64>,
    shipped: Option<u64>,
}

/// [`Line`], positionally.
#[derive(MessageCodec, Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct LineArray {
    sku: String,
    qty: u32,
    price: f64,
    note: Option<String>,
}

/// [`Order`], positionally.
#[derive(MessageCodec, Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct OrderArray {
    id: u64,
    customer: String,
    lines: Vec<LineArray>,
    totals: BTreeMap<String, i64>,
    shipped: Option<u64>,
}

/// What happened in a session: every variant kind once.
#[derive(MessageCodec, Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Event {
    Ping,
    Joined(u64),
    Moved(i32, i32),
    Said { user: u64, text: String },
}

/// One reading of a large batch.
#[derive(MessageCodec, Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Sample {
    ts: u64,
    value: f64,
    quality: u8,
}

/// A large message: thousands of small positional structs.
#[derive(MessageCodec, Serialize, Deserialize, MsgPacker, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct Batch {
    source: String,
    samples: Vec<Sample>,
}

const SKUS: [&str; 5] = ["A-100", "B-2040", "C-7", "D-31337", "E-55"];

fn lines() -> impl Iterator<Item = (String, u32, f64, Option<String>)> {
    SKUS.iter().enumerate().map(|(i, sku)| {
        let i = i as u32;
        (
            (*sku).to_string(),
            1 + i * 70,
            9.5 + f64::from(i) * 12.25,
            i.is_multiple_of(2).then(|| format!("gift {i}")),
        )
    })
}

fn totals() -> BTreeMap<String, i64> {
    [("net", 12_990), ("tax", 2_468), ("shipping", 500)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

fn order() -> Order {
    Order {
        id: 7_000_000_001,
        customer: "Ada Lovelace".to_string(),
        lines: lines()
            .map(|(sku, qty, price, note)| Line {
                sku,
                qty,
                price,
                note,
            })
            .collect(),
        totals: totals(),
        shipped: Some(1_700_000_000),
    }
}

fn order_array() -> OrderArray {
    let o = order();
    OrderArray {
        id: o.id,
        customer: o.customer,
        lines: o
            .lines
            .into_iter()
            .map(|l| LineArray {
                sku: l.sku,
                qty: l.qty,
                price: l.price,
                note: l.note,
            })
            .collect(),
        totals: o.totals,
        shipped: o.shipped,
    }
}

fn events() -> Vec<Event> {
    (0..64u64)
        .map(|i| match i % 4 {
            0 => Event::Ping,
            1 => Event::Joined(i * 1_000),
            2 => Event::Moved(i as i32 - 40, -(i as i32) * 300),
            _ => Event::Said {
                user: i,
                text: format!("message {i}"),
            },
        })
        .collect()
}

fn batch() -> Batch {
    Batch {
        source: "sensor-17".to_string(),
        samples: (0..4_096u64)
            .map(|i| Sample {
                ts: 1_700_000_000_000 + i * 250,
                value: (i as f64) * 0.125 - 100.0,
                quality: (i % 200) as u8,
            })
            .collect(),
    }
}

/// A thousand short strings, 2 to 11 bytes.
fn words() -> Vec<String> {
    (0..1_000u32)
        .map(|i| {
            let w = ["id", "name", "city", "country", "postcode"][i as usize % 5];
            format!("{w}{}", i % 997)
        })
        .collect()
}

// -------------------------------------------------------- struct layouts

/// Where an account lives: a small nested struct, by name.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Address {
    city: String,
    zip: u32,
}

/// An account record of eight fields (integers, a string, an option, a
/// nested struct and a vector), encoded by field name (the default).
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct Account {
    id: u64,
    revision: u32,
    balance: i64,
    owner: String,
    email: Option<String>,
    active: bool,
    home: Address,
    roles: Vec<u16>,
}

/// [`Address`], positionally.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct AddressArray {
    city: String,
    zip: u32,
}

/// [`Account`], positionally.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
#[codec(as_array)]
struct AccountArray {
    id: u64,
    revision: u32,
    balance: i64,
    owner: String,
    email: Option<String>,
    active: bool,
    home: AddressArray,
    roles: Vec<u16>,
}

/// [`Address`] with stable keys.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct AddressKeyed {
    #[codec(key = 0)]
    city: String,
    #[codec(key = 1)]
    zip: u32,
}

/// [`Account`] with stable keys 0 to 7, no gaps: the same bytes as
/// [`AccountArray`], read through the keyed decoder.
#[derive(MessageCodec, Clone, Debug, PartialEq)]
struct AccountKeyed {
    #[codec(key = 0)]
    id: u64,
    #[codec(key = 1)]
    revision: u32,
    #[codec(key = 2)]
    balance: i64,
    #[codec(key = 3)]
    owner: String,
    #[codec(key = 4)]
    email: Option<String>,
    #[codec(key = 5)]
    active: bool,
    #[codec(key = 6)]
    home: AddressKeyed,
    #[codec(key = 7)]
    roles: Vec<u16>,
}

fn account() -> Account {
    Account {
        id: 4_000_000_123,
        revision: 17,
        balance: -250_075,
        owner: "Grace Hopper".to_string(),
        email: Some("grace@example.org".to_string()),
        active: true,
        home: Address {
            city: "Arlington".to_string(),
            zip: 22_201,
        },
        roles: vec![1, 7, 300],
    }
}

fn account_array() -> AccountArray {
    let a = account();
    AccountArray {
        id: a.id,
        revision: a.revision,
        balance: a.balance,
        owner: a.owner,
        email: a.email,
        active: a.active,
        home: AddressArray {
            city: a.home.city,
            zip: a.home.zip,
        },
        roles: a.roles,
    }
}

fn account_keyed() -> AccountKeyed {
    let a = account();
    AccountKeyed {
        id: a.id,
        revision: a.revision,
        balance: a.balance,
        owner: a.owner,
        email: a.email,
        active: a.active,
        home: AddressKeyed {
            city: a.home.city,
            zip: a.home.zip,
        },
        roles: a.roles,
    }
}

// ------------------------------------------------- codecbus, value by value

fn prims_write_codecbus(p: &Prims, w: &mut Writer) {
    p.b.encode(w).unwrap();
    p.i8.encode(w).unwrap();
    p.i16.encode(w).unwrap();
    p.i32.encode(w).unwrap();
    p.i32b.encode(w).unwrap();
    p.i64.encode(w).unwrap();
    p.f32.encode(w).unwrap();
    p.f64.encode(w).unwrap();
    p.s.encode(w).unwrap();
}

fn prims_read_codecbus(bytes: &[u8]) -> Prims {
    let mut r = Reader::new(bytes);
    Prims {
        b: bool::decode(&mut r).unwrap(),
        i8: i8::decode(&mut r).unwrap(),
        i16: i16::decode(&mut r).unwrap(),
        i32: i32::decode(&mut r).unwrap(),
        i32b: i32::decode(&mut r).unwrap(),
        i64: i64::decode(&mut r).unwrap(),
        f32: f32::decode(&mut r).unwrap(),
        f64: f64::decode(&mut r).unwrap(),
        s: String::decode(&mut r).unwrap(),
    }
}

// ------------------------------------------------ hand-written rmp (floor)

mod hand {
    use std::collections::BTreeMap;

    use rmp::decode::{
        read_array_len, read_bool, read_f32, read_f64, read_int, read_map_len, read_str_from_slice,
    };
    use rmp::encode::{
        write_array_len, write_bool, write_f32, write_f64, write_map_len, write_nil, write_sint,
        write_str, write_uint,
    };

    use super::{
        Batch, Event, Line, LineArray, Order, OrderArray, Pojo, PojoArray, Prims, Sample, Sql,
    };

    pub(crate) fn prims_write(p: &Prims, buf: &mut Vec<u8>) {
        write_bool(buf, p.b).unwrap();
        write_sint(buf, p.i8.into()).unwrap();
        write_sint(buf, p.i16.into()).unwrap();
        write_sint(buf, p.i32.into()).unwrap();
        write_sint(buf, p.i32b.into()).unwrap();
        write_sint(buf, p.i64).unwrap();
        write_f32(buf, p.f32).unwrap();
        write_f64(buf, p.f64).unwrap();
        write_str(buf, &p.s).unwrap();
    }

    fn str<'a>(cur: &mut &'a [u8]) -> &'a str {
        let (s, rest) = read_str_from_slice(*cur).unwrap();
        *cur = rest;
        s
    }

    pub(crate) fn prims_read(mut cur: &[u8]) -> Prims {
        Prims {
            b: read_bool(&mut cur).unwrap(),
            i8: read_int(&mut cur).unwrap(),
            i16: read_int(&mut cur).unwrap(),
            i32: read_int(&mut cur).unwrap(),
            i32b: read_int(&mut cur).unwrap(),
            i64: read_int(&mut cur).unwrap(),
            f32: read_f32(&mut cur).unwrap(),
            f64: read_f64(&mut cur).unwrap(),
            s: str(&mut cur).to_string(),
        }
    }

    fn fields(
        buf: &mut Vec<u8>,
        names: bool,
        p: (
            &i64,
            &i32,
            &i16,
            &String,
            &bool,
            &f64,
            &Option<i64>,
            &Vec<i32>,
        ),
    ) {
        let key = |buf: &mut Vec<u8>, k: &str| {
            if names {
                write_str(buf, k).unwrap();
            }
        };
        key(buf, "id");
        write_sint(buf, *p.0).unwrap();
        key(buf, "count");
        write_sint(buf, (*p.1).into()).unwrap();
        key(buf, "small");
        write_sint(buf, (*p.2).into()).unwrap();
        key(buf, "name");
        write_str(buf, p.3).unwrap();
        key(buf, "active");
        write_bool(buf, *p.4).unwrap();
        key(buf, "score");
        write_f64(buf, *p.5).unwrap();
        key(buf, "parent");
        match p.6 {
            Some(v) => {
                write_sint(buf, *v).unwrap();
            }
            None => write_nil(buf).unwrap(),
        }
        key(buf, "tags");
        write_array_len(buf, p.7.len() as u32).unwrap();
        for t in p.7 {
            write_sint(buf, (*t).into()).unwrap();
        }
    }

    pub(crate) fn pojo_write(p: &Pojo, buf: &mut Vec<u8>) {
        write_map_len(buf, 8).unwrap();
        fields(
            buf,
            true,
            (
                &p.id, &p.count, &p.small, &p.name, &p.active, &p.score, &p.parent, &p.tags,
            ),
        );
    }

    pub(crate) fn pojo_array_write(p: &PojoArray, buf: &mut Vec<u8>) {
        write_array_len(buf, 8).unwrap();
        fields(
            buf,
            false,
            (
                &p.id, &p.count, &p.small, &p.name, &p.active, &p.score, &p.parent, &p.tags,
            ),
        );
    }

    fn opt(cur: &mut &[u8]) -> Option<i64> {
        if cur.first() == Some(&0xc0) {
            *cur = &cur[1..];
            None
        } else {
            Some(read_int(cur).unwrap())
        }
    }

    fn tags(cur: &mut &[u8]) -> Vec<i32> {
        let n = rmp::decode::read_array_len(cur).unwrap();
        (0..n).map(|_| read_int(cur).unwrap()).collect()
    }

    pub(crate) fn pojo_read(mut cur: &[u8]) -> Pojo {
        let n = read_map_len(&mut cur).unwrap();
        let mut p = Pojo {
            id: 0,
            count: 0,
            small: 0,
            name: String::new(),
            active: false,
            score: 0.0,
            parent: None,
            tags: Vec::new(),
        };
        for _ in 0..n {
            match str(&mut cur) {
                "id" => p.id = read_int(&mut cur).unwrap(),
                "count" => p.count = read_int(&mut cur).unwrap(),
                "small" => p.small = read_int(&mut cur).unwrap(),
                "name" => p.name = str(&mut cur).to_string(),
                "active" => p.active = read_bool(&mut cur).unwrap(),
                "score" => p.score = read_f64(&mut cur).unwrap(),
                "parent" => p.parent = opt(&mut cur),
                "tags" => p.tags = tags(&mut cur),
                other => panic!("unexpected key {other}"),
            }
        }
        p
    }

    pub(crate) fn pojo_array_read(mut cur: &[u8]) -> PojoArray {
        let n = rmp::decode::read_array_len(&mut cur).unwrap();
        assert_eq!(n, 8);
        PojoArray {
            id: read_int(&mut cur).unwrap(),
            count: read_int(&mut cur).unwrap(),
            small: read_int(&mut cur).unwrap(),
            name: str(&mut cur).to_string(),
            active: read_bool(&mut cur).unwrap(),
            score: read_f64(&mut cur).unwrap(),
            parent: opt(&mut cur),
            tags: tags(&mut cur),
        }
    }

    /// The Ignite layout: the query, then the argument array (54 bytes).
    pub(crate) fn sql_write(s: &Sql, buf: &mut Vec<u8>) {
        write_str(buf, &s.query).unwrap();
        write_array_len(buf, s.args.len() as u32).unwrap();
        for a in &s.args {
            write_sint(buf, *a).unwrap();
        }
    }

    pub(crate) fn sql_read(mut cur: &[u8]) -> Sql {
        let query = str(&mut cur).to_string();
        let n = rmp::decode::read_array_len(&mut cur).unwrap();
        let args = (0..n).map(|_| read_int(&mut cur).unwrap()).collect();
        Sql { query, args }
    }
    // ---------------------------------------------------- nested shapes

    fn opt_str_write(buf: &mut Vec<u8>, v: &Option<String>) {
        match v {
            Some(s) => write_str(buf, s).unwrap(),
            None => write_nil(buf).unwrap(),
        }
    }

    fn opt_uint_write(buf: &mut Vec<u8>, v: Option<u64>) {
        match v {
            Some(v) => {
                write_uint(buf, v).unwrap();
            }
            None => write_nil(buf).unwrap(),
        }
    }

    fn totals_write(buf: &mut Vec<u8>, totals: &BTreeMap<String, i64>) {
        write_map_len(buf, totals.len() as u32).unwrap();
        for (k, v) in totals {
            write_str(buf, k).unwrap();
            write_sint(buf, *v).unwrap();
        }
    }

    fn nil(cur: &mut &[u8]) -> bool {
        if cur.first() == Some(&0xc0) {
            *cur = &cur[1..];
            true
        } else {
            false
        }
    }

    fn opt_string(cur: &mut &[u8]) -> Option<String> {
        (!nil(cur)).then(|| str(cur).to_string())
    }

    fn opt_uint(cur: &mut &[u8]) -> Option<u64> {
        (!nil(cur)).then(|| read_int(cur).unwrap())
    }

    fn totals_read(cur: &mut &[u8]) -> BTreeMap<String, i64> {
        let n = read_map_len(cur).unwrap();
        (0..n)
            .map(|_| (str(cur).to_string(), read_int(cur).unwrap()))
            .collect()
    }

    fn line_write(buf: &mut Vec<u8>, l: &Line) {
        write_map_len(buf, 4).unwrap();
        write_str(buf, "sku").unwrap();
        write_str(buf, &l.sku).unwrap();
        write_str(buf, "qty").unwrap();
        write_uint(buf, l.qty.into()).unwrap();
        write_str(buf, "price").unwrap();
        write_f64(buf, l.price).unwrap();
        write_str(buf, "note").unwrap();
        opt_str_write(buf, &l.note);
    }

    pub(crate) fn order_write(o: &Order, buf: &mut Vec<u8>) {
        write_map_len(buf, 5).unwrap();
        write_str(buf, "id").unwrap();
        write_uint(buf, o.id).unwrap();
        write_str(buf, "customer").unwrap();
        write_str(buf, &o.customer).unwrap();
        write_str(buf, "lines").unwrap();
        write_array_len(buf, o.lines.len() as u32).unwrap();
        for l in &o.lines {
            line_write(buf, l);
        }
        write_str(buf, "totals").unwrap();
        totals_write(buf, &o.totals);
        write_str(buf, "shipped").unwrap();
        opt_uint_write(buf, o.shipped);
    }

    fn line_read(cur: &mut &[u8]) -> Line {
        let n = read_map_len(cur).unwrap();
        let mut l = Line {
            sku: String::new(),
            qty: 0,
            price: 0.0,
            note: None,
        };
        for _ in 0..n {
            match str(cur) {
                "sku" => l.sku = str(cur).to_string(),
                "qty" => l.qty = read_int(cur).unwrap(),
                "price" => l.price = read_f64(cur).unwrap(),
                "note" => l.note = opt_string(cur),
                other => panic!("unexpected key {other}"),
            }
        }
        l
    }

    pub(crate) fn order_read(mut cur: &[u8]) -> Order {
        let cur = &mut cur;
        let n = read_map_len(cur).unwrap();
        let mut o = Order {
            id: 0,
            customer: String::new(),
            lines: Vec::new(),
            totals: BTreeMap::new(),
            shipped: None,
        };
        for _ in 0..n {
            match str(cur) {
                "id" => o.id = read_int(cur).unwrap(),
                "customer" => o.customer = str(cur).to_string(),
                "lines" => {
                    let n = read_array_len(cur).unwrap();
                    o.lines = (0..n).map(|_| line_read(cur)).collect();
                }
                "totals" => o.totals = totals_read(cur),
                "shipped" => o.shipped = opt_uint(cur),
                other => panic!("unexpected key {other}"),
            }
        }
        o
    }

    pub(crate) fn order_array_write(o: &OrderArray, buf: &mut Vec<u8>) {
        write_array_len(buf, 5).unwrap();
        write_uint(buf, o.id).unwrap();
        write_str(buf, &o.customer).unwrap();
        write_array_len(buf, o.lines.len() as u32).unwrap();
        for l in &o.lines {
            write_array_len(buf, 4).unwrap();
            write_str(buf, &l.sku).unwrap();
            write_uint(buf, l.qty.into()).unwrap();
            write_f64(buf, l.price).unwrap();
            opt_str_write(buf, &l.note);
        }
        totals_write(buf, &o.totals);
        opt_uint_write(buf, o.shipped);
    }

    pub(crate) fn order_array_read(mut cur: &[u8]) -> OrderArray {
        let cur = &mut cur;
        assert_eq!(read_array_len(cur).unwrap(), 5);
        let id = read_int(cur).unwrap();
        let customer = str(cur).to_string();
        let n = read_array_len(cur).unwrap();
        let lines = (0..n)
            .map(|_| {
                assert_eq!(read_array_len(cur).unwrap(), 4);
                LineArray {
                    sku: str(cur).to_string(),
                    qty: read_int(cur).unwrap(),
                    price: read_f64(cur).unwrap(),
                    note: opt_string(cur),
                }
            })
            .collect();
        OrderArray {
            id,
            customer,
            lines,
            totals: totals_read(cur),
            shipped: opt_uint(cur),
        }
    }

    /// Externally tagged, as serde names it: a unit variant is its name,
    /// any other a one-entry map from the name to the payload.
    pub(crate) fn events_write(events: &Vec<Event>, buf: &mut Vec<u8>) {
        write_array_len(buf, events.len() as u32).unwrap();
        for e in events {
            match e {
                Event::Ping => write_str(buf, "Ping").unwrap(),
                Event::Joined(id) => {
                    write_map_len(buf, 1).unwrap();
                    write_str(buf, "Joined").unwrap();
                    write_uint(buf, *id).unwrap();
                }
                Event::Moved(x, y) => {
                    write_map_len(buf, 1).unwrap();
                    write_str(buf, "Moved").unwrap();
                    write_array_len(buf, 2).unwrap();
                    write_sint(buf, (*x).into()).unwrap();
                    write_sint(buf, (*y).into()).unwrap();
                }
                Event::Said { user, text } => {
                    write_map_len(buf, 1).unwrap();
                    write_str(buf, "Said").unwrap();
                    write_map_len(buf, 2).unwrap();
                    write_str(buf, "user").unwrap();
                    write_uint(buf, *user).unwrap();
                    write_str(buf, "text").unwrap();
                    write_str(buf, text).unwrap();
                }
            }
        }
    }

    fn event_read(cur: &mut &[u8]) -> Event {
        if cur.first().is_some_and(|m| (0xa0..=0xbf).contains(m)) {
            return match str(cur) {
                "Ping" => Event::Ping,
                other => panic!("unexpected variant {other}"),
            };
        }
        assert_eq!(read_map_len(cur).unwrap(), 1);
        match str(cur) {
            "Joined" => Event::Joined(read_int(cur).unwrap()),
            "Moved" => {
                assert_eq!(read_array_len(cur).unwrap(), 2);
                Event::Moved(read_int(cur).unwrap(), read_int(cur).unwrap())
            }
            "Said" => {
                let n = read_map_len(cur).unwrap();
                let (mut user, mut text) = (0, String::new());
                for _ in 0..n {
                    match str(cur) {
                        "user" => user = read_int(cur).unwrap(),
                        "text" => text = str(cur).to_string(),
                        other => panic!("unexpected key {other}"),
                    }
                }
                Event::Said { user, text }
            }
            other => panic!("unexpected variant {other}"),
        }
    }

    pub(crate) fn events_read(mut cur: &[u8]) -> Vec<Event> {
        let cur = &mut cur;
        let n = read_array_len(cur).unwrap();
        (0..n).map(|_| event_read(cur)).collect()
    }

    pub(crate) fn batch_write(b: &Batch, buf: &mut Vec<u8>) {
        write_array_len(buf, 2).unwrap();
        write_str(buf, &b.source).unwrap();
        write_array_len(buf, b.samples.len() as u32).unwrap();
        for s in &b.samples {
            write_array_len(buf, 3).unwrap();
            write_uint(buf, s.ts).unwrap();
            write_f64(buf, s.value).unwrap();
            write_uint(buf, s.quality.into()).unwrap();
        }
    }

    pub(crate) fn batch_read(mut cur: &[u8]) -> Batch {
        let cur = &mut cur;
        assert_eq!(read_array_len(cur).unwrap(), 2);
        let source = str(cur).to_string();
        let n = read_array_len(cur).unwrap();
        let samples = (0..n)
            .map(|_| {
                assert_eq!(read_array_len(cur).unwrap(), 3);
                Sample {
                    ts: read_int(cur).unwrap(),
                    value: read_f64(cur).unwrap(),
                    quality: read_int(cur).unwrap(),
                }
            })
            .collect();
        Batch { source, samples }
    }

    pub(crate) fn words_write(words: &Vec<String>, buf: &mut Vec<u8>) {
        write_array_len(buf, words.len() as u32).unwrap();
        for w in words {
            write_str(buf, w).unwrap();
        }
    }

    pub(crate) fn words_read(mut cur: &[u8]) -> Vec<String> {
        let cur = &mut cur;
        let n = read_array_len(cur).unwrap();
        (0..n).map(|_| str(cur).to_string()).collect()
    }
}

// ------------------------------------------------------------------ harness

/// Runs one `write` group and one `read` group for a workload.
///
/// `writers` produce bytes into a reused buffer; `readers` decode the bytes
/// their writer produced.
struct Impl<'a, T> {
    name: &'static str,
    write: WriteFn<'a, T>,
    read: ReadFn<'a, T>,
}

/// Writes a value into a reused buffer.
type WriteFn<'a, T> = Box<dyn Fn(&T, &mut Vec<u8>) + 'a>;
/// Reads a value back.
type ReadFn<'a, T> = Box<dyn Fn(&[u8]) -> T + 'a>;

/// Runs a workload's groups after checking every implementation: each reads
/// back the value its writer wrote, and those named in `same_bytes` write
/// exactly the bytes of the first implementation.
fn workload<T: PartialEq + std::fmt::Debug>(
    c: &mut Criterion<CpuTime>,
    sizes: &mut Vec<(String, &'static str, usize)>,
    group: &str,
    value: &T,
    same_bytes: &[&str],
    impls: Vec<Impl<'_, T>>,
) {
    let encoded: Vec<Vec<u8>> = impls
        .iter()
        .map(|i| {
            let mut buf = Vec::new();
            (i.write)(value, &mut buf);
            assert_eq!(
                &(i.read)(&buf),
                value,
                "{group}/{} does not round-trip",
                i.name
            );
            sizes.push((group.to_string(), i.name, buf.len()));
            buf
        })
        .collect();
    for name in same_bytes {
        let i = impls
            .iter()
            .position(|i| i.name == *name)
            .unwrap_or_else(|| panic!("{group}: no implementation {name}"));
        assert_eq!(
            encoded[i], encoded[0],
            "{group}/{name} writes other bytes than {}",
            impls[0].name
        );
    }

    let mut g = c.benchmark_group(format!("{group}/write"));
    for (i, bytes) in impls.iter().zip(&encoded) {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        let mut buf = Vec::with_capacity(bytes.len() * 2);
        g.bench_function(BenchmarkId::from_parameter(i.name), |b| {
            b.iter(|| {
                buf.clear();
                (i.write)(black_box(value), &mut buf);
                black_box(buf.len())
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group(format!("{group}/read"));
    for (i, bytes) in impls.iter().zip(&encoded) {
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(BenchmarkId::from_parameter(i.name), |b| {
            b.iter(|| black_box((i.read)(black_box(bytes))))
        });
    }
    g.finish();
}

fn codecbus_impl<T: MessageCodec>() -> Impl<'static, T> {
    Impl {
        name: "codecbus",
        write: Box::new(|v: &T, buf: &mut Vec<u8>| codecbus::encode_into(v, buf).unwrap()),
        read: Box::new(|b: &[u8]| codecbus::from_slice(b).unwrap()),
    }
}

/// The derived codec under the name of its layout, for the `layouts`
/// workload, where each layout is a type of its own.
fn codecbus_layout<T: MessageCodec>(name: &'static str) -> Impl<'static, T> {
    Impl {
        name,
        ..codecbus_impl()
    }
}

fn rmp_serde_named<T: Serialize + for<'de> Deserialize<'de>>() -> Impl<'static, T> {
    Impl {
        name: "rmp_serde",
        write: Box::new(|v: &T, buf: &mut Vec<u8>| rmp_serde::encode::write_named(buf, v).unwrap()),
        read: Box::new(|b: &[u8]| rmp_serde::from_slice(b).unwrap()),
    }
}

fn rmp_serde_array<T: Serialize + for<'de> Deserialize<'de>>() -> Impl<'static, T> {
    Impl {
        name: "rmp_serde",
        write: Box::new(|v: &T, buf: &mut Vec<u8>| rmp_serde::encode::write(buf, v).unwrap()),
        read: Box::new(|b: &[u8]| rmp_serde::from_slice(b).unwrap()),
    }
}

fn msgpacker_impl<T: Packable + Unpackable>() -> Impl<'static, T>
where
    T::Error: std::fmt::Debug,
{
    Impl {
        name: "msgpacker",
        write: Box::new(|v: &T, buf: &mut Vec<u8>| {
            v.pack(buf);
        }),
        read: Box::new(|b: &[u8]| T::unpack(b).unwrap()),
    }
}

fn serde_json_impl<T: Serialize + for<'de> Deserialize<'de>>() -> Impl<'static, T> {
    Impl {
        name: "serde_json",
        write: Box::new(|v: &T, buf: &mut Vec<u8>| serde_json::to_writer(buf, v).unwrap()),
        read: Box::new(|b: &[u8]| serde_json::from_slice(b).unwrap()),
    }
}

fn benches(c: &mut Criterion<CpuTime>) {
    cpu_time::check();
    let mut sizes = Vec::new();

    workload(
        c,
        &mut sizes,
        "primitives",
        &prims(),
        &["rmp_handwritten"],
        vec![
            Impl {
                name: "codecbus",
                write: Box::new(|p: &Prims, buf: &mut Vec<u8>| {
                    let mut w = Writer::from_vec(std::mem::take(buf));
                    prims_write_codecbus(p, &mut w);
                    *buf = w.into_vec();
                }),
                read: Box::new(prims_read_codecbus),
            },
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::prims_write),
                read: Box::new(hand::prims_read),
            },
            msgpacker_impl(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "pojo_named",
        &pojo(),
        &["rmp_handwritten", "rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::pojo_write),
                read: Box::new(hand::pojo_read),
            },
            rmp_serde_named(),
            serde_json_impl(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "pojo_array",
        &pojo_array(),
        &["rmp_handwritten", "rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::pojo_array_write),
                read: Box::new(hand::pojo_array_read),
            },
            rmp_serde_array(),
            // msgpacker writes the fields one after another with no header
            msgpacker_impl(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "sql",
        &sql(),
        &["rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::sql_write),
                read: Box::new(hand::sql_read),
            },
            rmp_serde_array(),
            msgpacker_impl(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "nested_named",
        &order(),
        &["rmp_handwritten", "rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::order_write),
                read: Box::new(hand::order_read),
            },
            rmp_serde_named(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "nested_array",
        &order_array(),
        &["rmp_handwritten", "rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::order_array_write),
                read: Box::new(hand::order_array_read),
            },
            rmp_serde_array(),
            // no header for a struct, so one array header less per line
            msgpacker_impl(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "enums",
        &events(),
        &["rmp_handwritten", "rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::events_write),
                read: Box::new(hand::events_read),
            },
            rmp_serde_named(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "large",
        &batch(),
        &["rmp_handwritten", "rmp_serde"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::batch_write),
                read: Box::new(hand::batch_read),
            },
            rmp_serde_array(),
            msgpacker_impl(),
        ],
    );

    workload(
        c,
        &mut sizes,
        "short_strings",
        &words(),
        &["rmp_handwritten", "rmp_serde", "msgpacker"],
        vec![
            codecbus_impl(),
            Impl {
                name: "rmp_handwritten",
                write: Box::new(hand::words_write),
                read: Box::new(hand::words_read),
            },
            rmp_serde_array(),
            msgpacker_impl(),
        ],
    );

    // One record in the three layouts of a derived struct: by name, by
    // position, by stable key. Keys 0 to 7 without gaps write the bytes of
    // `as_array`; only the decoder differs.
    let (named, array, keyed) = (account(), account_array(), account_keyed());
    let named_bytes = codecbus::to_vec(&named).unwrap();
    let array_bytes = codecbus::to_vec(&array).unwrap();
    let keyed_bytes = codecbus::to_vec(&keyed).unwrap();
    assert_eq!(
        keyed_bytes, array_bytes,
        "keys 0..8 write the as_array bytes"
    );
    assert_eq!(
        &keyed_bytes[..2],
        b"\x98\xce",
        "an array of eight, id first"
    );
    assert!(named_bytes.len() > array_bytes.len() + 40);
    println!(
        "layouts: named {} B, as_array {} B, keyed {} B",
        named_bytes.len(),
        array_bytes.len(),
        keyed_bytes.len()
    );
    workload(
        c,
        &mut sizes,
        "layouts",
        &named,
        &[],
        vec![codecbus_layout("named")],
    );
    workload(
        c,
        &mut sizes,
        "layouts",
        &array,
        &[],
        vec![codecbus_layout("as_array")],
    );
    workload(
        c,
        &mut sizes,
        "layouts",
        &keyed,
        &[],
        vec![codecbus_layout("keyed")],
    );

    for (name, text) in corpus::all() {
        let value: JsValue = serde_json::from_str(&text).unwrap();
        let sj: serde_json::Value = serde_json::from_str(&text).unwrap();
        workload(
            c,
            &mut sizes,
            &format!("json_{name}"),
            &value,
            &[],
            vec![codecbus_impl()],
        );
        workload(
            c,
            &mut sizes,
            &format!("json_{name}"),
            &sj,
            &[],
            vec![
                Impl {
                    name: "serde_json_value_rmp_serde",
                    write: Box::new(|v: &serde_json::Value, buf: &mut Vec<u8>| {
                        rmp_serde::encode::write_named(buf, v).unwrap()
                    }),
                    read: Box::new(|b: &[u8]| rmp_serde::from_slice(b).unwrap()),
                },
                serde_json_impl(),
            ],
        );
    }

    println!("\nencoded sizes (bytes)");
    println!("{:<24} {:<28} {:>8}", "workload", "implementation", "bytes");
    for (group, name, len) in &sizes {
        println!("{group:<24} {name:<28} {len:>8}");
    }
}

criterion_group! {
    name = codec;
    config = Criterion::default().with_measurement(CpuTime);
    targets = benches
}
criterion_main!(codec);
