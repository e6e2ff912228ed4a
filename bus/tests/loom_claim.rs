//! A handler consumer's run claim (`bus/src/transport/local/claim.rs`)
//! with its queue's pending count, under every interleaving `loom`
//! explores with up to two preemptions per thread: inline starts racing
//! the consumer's task, a release waking the task that waits for the claim,
//! pause and stop against a start, and the order of one sender's messages.
//! Built only with `--cfg loom`:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p codecbus-bus --test loom_claim --release
//! ```
#![allow(unexpected_cfgs)]
#![cfg(loom)]
#![allow(unreachable_pub, dead_code)]

#[path = "../src/transport/local/claim.rs"]
mod claim;

#[path = "common/loom.rs"]
mod bound;

use std::collections::VecDeque;

use bound::model;
use claim::{Attempt, Claim, Demand};
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// A consumer: its claim, its queue and pending count (as `queue.rs`
/// keeps them), and what its handler ran, in order.
struct Consumer {
    claim: Claim,
    pending: AtomicUsize,
    queue: Mutex<VecDeque<u32>>,
    running: AtomicUsize,
    handled: Mutex<Vec<u32>>,
}

impl Consumer {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            claim: Claim::new(),
            pending: AtomicUsize::new(0),
            queue: Mutex::new(VecDeque::new()),
            running: AtomicUsize::new(0),
            handled: Mutex::new(Vec::new()),
        })
    }

    /// A handler run: nobody else runs meanwhile.
    fn run(&self, n: u32) {
        assert_eq!(
            self.running.fetch_add(1, Ordering::AcqRel),
            0,
            "two runs at once"
        );
        self.handled.lock().unwrap().push(n);
        self.running.fetch_sub(1, Ordering::AcqRel);
    }

    /// A delivery as `Room::send_or_run` makes it: room reserved, then the
    /// handler started here when the queue was empty and the claim free
    /// (or freed while this looked again, as `Runner::claim` does), else
    /// queued. Whether it ran here, and whether its release found the
    /// consumer's task waiting.
    fn deliver(&self, n: u32) -> (bool, bool) {
        let before = self.pending.fetch_add(1, Ordering::AcqRel);
        if before == 0 && self.claim_soon() {
            self.pending.fetch_sub(1, Ordering::AcqRel);
            self.run(n);
            return (true, self.claim.release());
        }
        self.queue.lock().unwrap().push_back(n);
        (false, false)
    }

    /// The claim, looked at again while a run holds it, as
    /// `Runner::claim` does (twice here, yielding between: the model's
    /// stand-in for its spins).
    fn claim_soon(&self) -> bool {
        if self.claim.try_claim() {
            return true;
        }
        for _ in 0..2 {
            if !self.claim.held_by_a_run() {
                return self.claim.try_claim();
            }
            thread::yield_now();
        }
        false
    }

    /// The consumer's task, as `Dispatch` takes one queued message: the
    /// claim first, then the message no longer counts as pending. `None`
    /// when the queue is empty; `Some(false)` when the claim was busy (the
    /// task would sleep until the release wakes it).
    fn dispatch_one(&self) -> Option<bool> {
        let n = *self.queue.lock().unwrap().front()?;
        assert_eq!(self.claim.demand(), Demand::Flowing);
        match self.claim.claim_queued(false) {
            Attempt::Claimed => {}
            Attempt::Busy => return Some(false),
            other => panic!("unexpected {other:?}"),
        }
        self.queue.lock().unwrap().pop_front();
        self.pending.fetch_sub(1, Ordering::AcqRel);
        self.run(n);
        self.claim.release();
        Some(true)
    }
}

#[test]
fn one_run_at_a_time_and_one_senders_messages_in_order() {
    model(|| {
        let c = Consumer::new();
        let sender = {
            let c = Arc::clone(&c);
            thread::spawn(move || {
                c.deliver(1);
                c.deliver(2);
            })
        };
        // The consumer's task, polled again (here: yielding) until both
        // ran; a busy claim leaves WAITING set for the release to see.
        while c.handled.lock().unwrap().len() < 2 {
            if c.dispatch_one() != Some(true) {
                thread::yield_now();
            }
        }
        sender.join().unwrap();
        while c.dispatch_one().is_some() {}
        assert_eq!(*c.handled.lock().unwrap(), [1, 2]);
        assert_eq!(c.pending.load(Ordering::Acquire), 0);
    });
}

#[test]
fn deliveries_racing_for_a_held_claim_run_one_at_a_time_and_all() {
    model(|| {
        let c = Consumer::new();
        let senders: Vec<_> = [1, 2]
            .into_iter()
            .map(|n| {
                let c = Arc::clone(&c);
                thread::spawn(move || c.deliver(n))
            })
            .collect();
        for sender in senders {
            sender.join().unwrap();
        }
        // The consumer's task takes what was queued.
        while c.dispatch_one().is_some() {}
        let mut handled = c.handled.lock().unwrap().clone();
        handled.sort_unstable();
        assert_eq!(handled, [1, 2]);
        assert_eq!(c.pending.load(Ordering::Acquire), 0);
    });
}

#[test]
fn held_by_a_run_only_while_a_run_may_end_into_a_free_claim() {
    model(|| {
        let c = Claim::new();
        assert!(!c.held_by_a_run());
        assert!(c.try_claim());
        assert!(c.held_by_a_run());
        c.pause();
        assert!(!c.held_by_a_run());
        c.resume();
        assert!(c.held_by_a_run());
        c.stop();
        assert!(!c.held_by_a_run());
        c.release();
        assert!(!c.held_by_a_run());
    });
}

#[test]
fn a_task_that_finds_the_claim_busy_is_woken_by_its_release() {
    model(|| {
        let c = Consumer::new();
        // One message queued before the inline start races the task.
        c.pending.fetch_add(1, Ordering::AcqRel);
        c.queue.lock().unwrap().push_back(1);
        let inline = {
            let c = Arc::clone(&c);
            thread::spawn(move || {
                if c.claim.try_claim() {
                    c.run(0);
                    Some(c.claim.release())
                } else {
                    None
                }
            })
        };
        let first = c.dispatch_one();
        let released = inline.join().unwrap();
        if first == Some(false) {
            // The task would sleep: the release must have seen it wait.
            assert_eq!(
                released,
                Some(true),
                "a release lost the waiting task's wake-up"
            );
            assert_eq!(c.dispatch_one(), Some(true));
        }
        assert_eq!(
            c.handled.lock().unwrap().len(),
            1 + usize::from(released.is_some())
        );
    });
}

#[test]
fn no_inline_start_after_pause_or_stop_returned() {
    for stop in [false, true] {
        model(move || {
            let c = Claim::new();
            let c = Arc::new(c);
            let done = Arc::new(AtomicBool::new(false));
            let steer = {
                let (c, done) = (Arc::clone(&c), Arc::clone(&done));
                thread::spawn(move || {
                    if stop {
                        c.stop();
                    } else {
                        c.pause();
                    }
                    done.store(true, Ordering::Release);
                })
            };
            let saw_done = done.load(Ordering::Acquire);
            let claimed = c.try_claim();
            if saw_done {
                assert!(!claimed, "a run started after pause or stop returned");
            }
            if claimed {
                c.release();
            }
            steer.join().unwrap();
            assert!(!c.try_claim());
            // The consumer's task: paused, it needs a credit; stopped, nothing.
            if stop {
                assert_eq!(c.demand(), Demand::Stopped);
                assert_eq!(c.claim_queued(false), Attempt::Stopped);
            } else {
                assert_eq!(c.demand(), Demand::Wait);
                assert_eq!(c.claim_queued(false), Attempt::Paused);
                c.fetch(1);
                assert_eq!(c.demand(), Demand::Credit);
                assert_eq!(c.claim_queued(true), Attempt::Claimed);
                c.release();
            }
        });
    }
}

#[test]
fn a_shut_consumer_takes_no_run_and_shuts_only_when_idle() {
    model(|| {
        let c = Arc::new(Claim::new());
        let inline = {
            let c = Arc::clone(&c);
            thread::spawn(move || {
                if c.try_claim() {
                    thread::yield_now();
                    Some(c.release())
                } else {
                    None
                }
            })
        };
        c.stop();
        let mut woken_needed = false;
        while !c.shut() {
            woken_needed = true;
            thread::yield_now();
        }
        let released = inline.join().unwrap();
        if woken_needed {
            assert_eq!(released, Some(true), "the shut never learned the run ended");
        }
        assert!(!c.try_claim());
        assert_eq!(c.claim_queued(true), Attempt::Stopped);
    });
}
