//! The reply cell (`bus/src/base/oneshot.rs`) under every interleaving `loom`
//! explores with up to two preemptions per thread: completions racing each
//! other, the receiver, the last sender leaving, and the receiver going
//! away. Built only with `--cfg loom`:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p codecbus-bus --test loom_reply --release
//! ```
#![allow(unexpected_cfgs)]
#![cfg(loom)]
#![allow(unreachable_pub, dead_code)]

#[path = "../src/base/oneshot.rs"]
mod oneshot;

#[path = "common/loom.rs"]
mod bound;

use bound::model;
use loom::future::block_on;
use loom::thread;
use oneshot::{Closed, channel};

#[test]
fn a_completion_from_another_thread_reaches_the_waiting_receiver() {
    model(|| {
        let (tx, rx) = channel::<u32>();
        let t = thread::spawn(move || {
            assert!(tx.complete(7).is_ok());
        });
        assert_eq!(block_on(rx), Some(7));
        t.join().unwrap();
    });
}

#[test]
fn the_last_sender_leaving_unanswered_wakes_the_receiver_with_none() {
    model(|| {
        let (tx, rx) = channel::<u32>();
        let other = tx.clone();
        let t1 = thread::spawn(move || drop(tx));
        let t2 = thread::spawn(move || drop(other));
        assert_eq!(block_on(rx), None);
        t1.join().unwrap();
        t2.join().unwrap();
    });
}

#[test]
fn of_two_racing_completions_exactly_one_wins_and_is_received() {
    model(|| {
        let (tx, rx) = channel::<u32>();
        let other = tx.clone();
        let t1 = thread::spawn(move || tx.complete(1).err());
        let t2 = thread::spawn(move || other.complete(2).err());
        let got = block_on(rx).expect("one completion");
        let lost1 = t1.join().unwrap();
        let lost2 = t2.join().unwrap();
        match got {
            1 => assert!(lost1.is_none() && lost2 == Some((Closed::Answered, 2))),
            2 => assert!(lost2.is_none() && lost1 == Some((Closed::Answered, 1))),
            other => panic!("received {other}, never sent"),
        }
    });
}

#[test]
fn a_completion_is_received_whichever_sender_leaves_first() {
    // The dispatcher's claim and the message's: one answers, the other is
    // dropped unanswered, in any order. The receiver must see the answer,
    // never "no reply".
    model(|| {
        let (tx, rx) = channel::<u32>();
        let guard = tx.clone();
        let t1 = thread::spawn(move || {
            assert!(tx.complete(5).is_ok());
        });
        let t2 = thread::spawn(move || drop(guard));
        assert_eq!(block_on(rx), Some(5));
        t1.join().unwrap();
        t2.join().unwrap();
    });
}

#[test]
fn a_completion_racing_the_receivers_drop_is_taken_or_handed_back() {
    model(|| {
        let (tx, rx) = channel::<String>();
        let t = thread::spawn(move || {
            let open_before = tx.is_open();
            let result = tx.complete("late".to_owned());
            (open_before, result)
        });
        drop(rx);
        let (_, result) = t.join().unwrap();
        match result {
            // Completed before the drop was seen: the value is dropped
            // with the cell (loom checks that nothing leaks).
            Ok(()) => {}
            Err((closed, value)) => {
                assert_eq!(closed, Closed::RequesterGone);
                assert_eq!(value, "late");
            }
        }
    });
}

#[test]
fn after_a_completion_the_cell_is_closed_for_every_sender() {
    model(|| {
        let (tx, rx) = channel::<u32>();
        let other = tx.clone();
        let t = thread::spawn(move || {
            assert!(tx.complete(1).is_ok());
        });
        t.join().unwrap();
        assert!(!other.is_open());
        assert_eq!(other.complete(2), Err((Closed::Answered, 2)));
        drop(other);
        assert_eq!(block_on(rx), Some(1));
    });
}

#[test]
fn a_receiver_polled_while_senders_come_and_go_resolves_once_answered() {
    // A sender is cloned and dropped on one thread while another answers;
    // the count of senders must never reach zero before the answer.
    model(|| {
        let (tx, rx) = channel::<u32>();
        let spare = tx.clone();
        let t1 = thread::spawn(move || {
            let again = spare.clone();
            drop(spare);
            drop(again);
        });
        let t2 = thread::spawn(move || {
            assert!(tx.complete(9).is_ok());
        });
        assert_eq!(block_on(rx), Some(9));
        t1.join().unwrap();
        t2.join().unwrap();
    });
}
