//! `log`: 10 000 lines of a web server's access log.
//!
//! Each line: the client's IPv4 address as four bytes, the identity
//! (always `-`), the user (`-` or one of eight names), the date as text
//! (`day/Mon/year:h:m:s zone`, day 1 to 28, year 1970 to 2021, one of the
//! 25 whole-hour zones from -1200 to +1200, no zero padding), the request
//! line (`METHOD /route HTTP/x`, five methods, seven routes, four
//! protocols), the status (one of the 63 registered HTTP codes) and the
//! response size (below 100 000 000). Strings are most of it, all short;
//! the view borrows all four.

use codecbus::MessageCodec;

use super::Borrowable;
use super::generate::Rng;

/// The number of lines.
pub(crate) const LOGS: usize = 10_000;

/// An IPv4 address.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    msgpacker::MsgUnpackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Copy,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Address {
    pub(crate) x0: u8,
    pub(crate) x1: u8,
    pub(crate) x2: u8,
    pub(crate) x3: u8,
}

/// One line of the log.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Log {
    pub(crate) address: Address,
    pub(crate) identity: String,
    pub(crate) userid: String,
    pub(crate) date: String,
    pub(crate) request: String,
    pub(crate) code: u16,
    pub(crate) size: u64,
}

/// The dataset.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPacker,
    bitcode::Encode,
    bitcode::Decode,
    Clone,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct Logs {
    pub(crate) logs: Vec<Log>,
}

/// A line whose strings point into the encoded bytes.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct LogView<'a> {
    pub(crate) address: Address,
    pub(crate) identity: &'a str,
    pub(crate) userid: &'a str,
    pub(crate) date: &'a str,
    pub(crate) request: &'a str,
    pub(crate) code: u16,
    pub(crate) size: u64,
}

/// The dataset, borrowed.
#[derive(
    MessageCodec,
    serde::Serialize,
    serde::Deserialize,
    zerompk::ToMessagePack,
    zerompk::FromMessagePack,
    msgpacker::MsgPackerBorrowed,
    bitcode::Encode,
    bitcode::Decode,
    Debug,
    PartialEq,
)]
#[codec(as_array)]
pub(crate) struct LogsView<'a> {
    #[serde(borrow)]
    pub(crate) logs: Vec<LogView<'a>>,
}

impl Borrowable for Logs {
    type View<'a> = LogsView<'a>;

    fn view(&self) -> LogsView<'_> {
        LogsView {
            logs: self
                .logs
                .iter()
                .map(|log| LogView {
                    address: log.address,
                    identity: &log.identity,
                    userid: &log.userid,
                    date: &log.date,
                    request: &log.request,
                    code: log.code,
                    size: log.size,
                })
                .collect(),
        }
    }
}

const USERS: [&str; 9] = [
    "-", "alice", "bob", "carmen", "david", "eric", "frank", "george", "harry",
];

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "UPDATE", "DELETE"];

const ROUTES: [&str; 7] = [
    "/favicon.ico",
    "/css/index.css",
    "/css/font-awsome.min.css",
    "/img/logo-full.svg",
    "/img/splash.jpg",
    "/api/login",
    "/api/logout",
];

const PROTOCOLS: [&str; 4] = ["HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3"];

/// The registered HTTP status codes.
const CODES: [u16; 63] = [
    100, 101, 102, 103, // informational
    200, 201, 202, 203, 204, 205, 206, 207, 208, 226, // success
    300, 301, 302, 303, 304, 305, 306, 307, 308, // redirection
    400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418,
    421, 422, 423, 424, 425, 426, 428, 429, 431, 451, // client errors
    500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511, // server errors
];

fn line(rng: &mut Rng) -> Log {
    // The zone: whole hours from -12 to +12.
    let zone = rng.range(-12..13);
    let date = format!(
        "{}/{}/{}:{}:{}:{} {}{:02}00",
        rng.range(1..29),
        rng.pick(&MONTHS),
        rng.range(1970..2022),
        rng.range(0..24),
        rng.range(0..60),
        rng.range(0..60),
        if zone < 0 { '-' } else { '+' },
        zone.abs(),
    );
    let request = format!(
        "{} {} {}",
        rng.pick(&METHODS),
        rng.pick(&ROUTES),
        rng.pick(&PROTOCOLS)
    );
    Log {
        address: Address {
            x0: rng.u8(),
            x1: rng.u8(),
            x2: rng.u8(),
            x3: rng.u8(),
        },
        identity: "-".to_owned(),
        userid: (*rng.pick(&USERS)).to_owned(),
        date,
        request,
        code: *rng.pick(&CODES),
        size: rng.below(100_000_000),
    }
}

/// The dataset, the same on every run.
pub(crate) fn generate(rng: &mut Rng) -> Logs {
    Logs {
        logs: (0..LOGS).map(|_| line(rng)).collect(),
    }
}
