//! What a local round trip allocates, measured with a counting allocator:
//! an immutable body is shared, so a request and its reply allocate the
//! same few bytes whatever the body's size; a copied body is copied.
//!
//! One test in this binary, so nothing else allocates while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use codecbus_bus::{EventBus, Message, Shared};
use codecbus_core::{MessageCodec, MessageType};

struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the
// counter has no effect on the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(MessageCodec, Clone, Debug)]
struct Doc {
    lines: Vec<String>,
}

/// Bytes allocated per request/reply round trip of `body` to `address`.
async fn per_round_trip<T>(bus: &EventBus, address: &str, body: Arc<T>) -> usize
where
    T: MessageType + Send + Sync + 'static,
{
    const TRIPS: usize = 1_000;
    for _ in 0..100 {
        let _: Message<T> = bus
            .request(address, Shared(Arc::clone(&body)))
            .await
            .unwrap();
    }
    let before = ALLOCATED.load(Ordering::Relaxed);
    for _ in 0..TRIPS {
        let _: Message<T> = bus
            .request(address, Shared(Arc::clone(&body)))
            .await
            .unwrap();
    }
    (ALLOCATED.load(Ordering::Relaxed) - before) / TRIPS
}

#[test]
fn immutable_bodies_cost_the_same_whatever_their_size() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let bus = EventBus::new();
        // `Vec<u64>` is immutable: its elements are.
        let _shared = bus.consumer("shared", |m: Message<Vec<u64>>| async move {
            m.reply(Shared(Arc::clone(m.body_arc())))
        });
        // A derived struct without `#[codec(immutable)]`: each delivery is
        // a deep copy the consumer may change.
        let _copied = bus.consumer("copied", |m: Message<Doc>| async move {
            m.reply(Shared(Arc::clone(m.body_arc())))
        });

        let small = per_round_trip(&bus, "shared", Arc::new(vec![1u64; 4])).await;
        let large = per_round_trip(&bus, "shared", Arc::new(vec![1u64; 100_000])).await;
        assert_eq!(small, large, "an immutable body is never copied");
        // The request's envelope and its reply slot: 128 bytes per round
        // trip on x86_64 Linux. A budget, not a law: growing either by a
        // field fails here on purpose (a body copy would be kilobytes).
        assert!(small <= 136, "{small} bytes per round trip");

        let doc = Arc::new(Doc {
            lines: vec!["x".repeat(100); 100],
        });
        let copied = per_round_trip(&bus, "copied", doc).await;
        assert!(
            copied > 2 * 100 * 100,
            "two deep copies per round trip: {copied} bytes"
        );
    });
}
