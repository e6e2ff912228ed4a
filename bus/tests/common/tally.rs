//! Counting what consumers receive, per consumer name: shared by the
//! cluster tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use codecbus_bus::{EventBus, Message, MessageConsumer};

/// Counts messages per consumer name.
#[derive(Default, Clone)]
pub(crate) struct Tally(Arc<Mutex<HashMap<&'static str, Vec<u64>>>>);

impl Tally {
    /// Notes that `who` got `n`.
    pub(crate) fn add(&self, who: &'static str, n: u64) {
        self.0.lock().unwrap().entry(who).or_default().push(n);
    }

    /// What `who` got, in order.
    pub(crate) fn get(&self, who: &str) -> Vec<u64> {
        self.0.lock().unwrap().get(who).cloned().unwrap_or_default()
    }

    /// How many messages all consumers got.
    #[allow(dead_code)] // not every test binary sums
    pub(crate) fn total(&self) -> usize {
        self.0.lock().unwrap().values().map(Vec::len).sum()
    }
}

/// A consumer of `u64`s at `address` that notes them under `who`.
pub(crate) fn counting(
    bus: &EventBus,
    address: &str,
    who: &'static str,
    tally: &Tally,
) -> MessageConsumer {
    let tally = tally.clone();
    bus.consumer(address, move |m: Message<u64>| {
        let tally = tally.clone();
        async move { tally.add(who, *m.body()) }
    })
}
