//! Cluster payloads (the codec prefix, then the body or its LZ4 form) read
//! as a node reads them: never a panic, and no allocation larger than the
//! size limit or the input; a body declaring more than the limit is
//! refused. And what a node writes, compressed or not, reads back whole.
//!
//! The first four bytes of the input choose the limit (up to 2 MiB) and
//! the compression threshold; the rest is the payload, and also the bytes
//! of a body written and read back.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use codecbus_bus::__fuzz::{read_payload, write_payload};
use codecbus_core::ext::Bytes;
use codecbus_core::{AnyBody, CodecRegistration};
use libfuzzer_sys::fuzz_target;

/// The system allocator, recording the largest allocation made while
/// armed.
struct Peak;

static ARMED: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

impl Peak {
    fn record(size: usize) {
        if ARMED.load(Ordering::Relaxed) {
            LARGEST.fetch_max(size, Ordering::Relaxed);
        }
    }

    /// The largest allocation `f` made.
    fn largest<T>(f: impl FnOnce() -> T) -> (T, usize) {
        LARGEST.store(0, Ordering::Relaxed);
        ARMED.store(true, Ordering::Relaxed);
        let value = f();
        ARMED.store(false, Ordering::Relaxed);
        (value, LARGEST.load(Ordering::Relaxed))
    }
}

// SAFETY: every call is passed on to `System` unchanged; the only addition
// is an atomic update, which does not allocate.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::record(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::record(layout.size());
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::record(new_size);
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Peak = Peak;

/// Room for what reading allocates besides the body: the codec name and
/// the text of an error.
const SLACK: usize = 1024;

/// The codec of the bodies written here: the bytes as one MessagePack bin.
static BYTES: CodecRegistration = CodecRegistration::of::<Bytes>("bytes");

fuzz_target!(|data: &[u8]| {
    let Some((head, payload)) = data.split_first_chunk::<4>() else {
        return;
    };
    let limit = (u32::from_le_bytes(*head) & 0x1f_ffff) as usize;
    check_read(payload, limit);
    check_write(payload, usize::from(head[0]) * 8);
});

/// Any payload: read without panic, nothing larger than the limit or the
/// input allocated, a compressed body at most the limit.
fn check_read(payload: &[u8], limit: usize) {
    let (read, largest) = Peak::largest(|| read_payload(payload, limit));
    assert!(
        largest <= limit.max(payload.len()) + SLACK,
        "{largest} bytes allocated at once reading {} bytes with a limit of {limit}",
        payload.len()
    );
    let Ok(body) = &read.body else {
        assert!(
            read.codec.is_some(),
            "only a named compressed body is refused"
        );
        return;
    };
    match prefix(payload) {
        None => {
            assert_eq!(read.codec, None);
            assert_eq!(body, payload, "a payload without a prefix is all body");
        }
        Some(None) => {
            assert_eq!(read.codec, None);
            assert!(body.is_empty(), "no body after a prefix without a name");
        }
        Some(Some(at)) if payload.get(at) == Some(&0xC1) => {
            assert!(read.codec.is_some());
            assert!(body.len() <= limit, "{} bytes over the limit", body.len());
            // The body was allocated while armed: the check above is not
            // vacuous.
            assert!(largest >= body.len(), "{largest} bytes recorded");
        }
        Some(Some(at)) => {
            assert!(read.codec.is_some());
            assert_eq!(body, &payload[at..], "a plain body is read as it is");
        }
    }
}

/// `None` without a codec prefix; else where the body starts after a
/// version 1 or 2 prefix with a name, `None` for another version or no
/// name.
fn prefix(payload: &[u8]) -> Option<Option<usize>> {
    let [0xC1, version, ..] = *payload else {
        return None;
    };
    let mut r = codecbus_core::Reader::new(&payload[2..]);
    Some((matches!(version, 1 | 2) && r.read_str().is_ok()).then(|| 2 + r.position()))
}

/// `bytes` as a body, written with a compression threshold of `above`:
/// compressed only when over it and smaller, read back whole within a
/// limit of its own size, refused one byte under it.
fn check_write(bytes: &[u8], above: usize) {
    let value = Bytes(bytes.to_vec());
    let body = codecbus_core::to_vec(&value).expect("bytes encode");
    let payload = write_payload(&BYTES, &(Arc::new(value) as AnyBody), Some(above))
        .expect("a node writes bytes");
    let at = prefix(&payload)
        .flatten()
        .expect("a node writes the codec prefix");
    assert_eq!(&payload[2..at], b"\xa5bytes");
    let compressed = payload[at] == 0xC1;
    if compressed {
        assert!(body.len() > above, "{} bytes compressed", body.len());
        assert!(
            payload.len() < at + body.len(),
            "compressed, yet not smaller"
        );
    } else {
        assert_eq!(&payload[at..], body.as_slice());
    }

    let read = read_payload(&payload, body.len());
    assert_eq!(read.version.as_deref(), Some("2"));
    assert_eq!(read.codec.as_deref(), Some("bytes"));
    assert_eq!(read.body.as_deref(), Ok(body.as_slice()), "{payload:02x?}");
    if compressed {
        let (under, largest) = Peak::largest(|| read_payload(&payload, body.len() - 1));
        let why = under.body.expect_err("a body over the limit is refused");
        assert!(why.contains("over the limit"), "{why}");
        assert!(
            largest <= payload.len() + SLACK,
            "{largest} bytes allocated"
        );
    }
}
