// Refusals: the publishes the server refused this connection for lack of
// permission. The server drops such a message and says so only with an
// asynchronous `-ERR`, after the call returned: requests in flight learn
// of it here (and fail instead of waiting for their timeout), and later
// messages to a subject refused moments ago fail before leaving.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

/// How long a refusal makes later messages to its subject fail at once. A
/// permission granted meanwhile (a reloaded server config) is noticed at
/// the latest this much later, or at the next reconnection.
pub(crate) const REMEMBERED: Duration = Duration::from_secs(10);

/// At most this many subjects are remembered; refusals past it are still
/// counted and handed to requests in flight.
const MAX_REMEMBERED: usize = 1024;

/// The refusals of one connection.
pub(crate) struct Refusals {
    /// Each refused subject, as it comes, for the requests in flight.
    live: broadcast::Sender<Arc<str>>,
    /// Subjects refused within [`REMEMBERED`], with when.
    recent: Mutex<HashMap<Arc<str>, Instant>>,
    /// Whether `recent` may hold anything: messages skip the lock while
    /// nothing was ever refused (or since the last reconnection).
    any: AtomicBool,
}

impl Default for Refusals {
    fn default() -> Self {
        // A request that lags behind a burst of 64 refusals waits for its
        // timeout instead.
        let (live, _) = broadcast::channel(64);
        Self {
            live,
            recent: Mutex::new(HashMap::new()),
            any: AtomicBool::new(false),
        }
    }
}

impl Refusals {
    /// The server refused a publish to `subject`.
    pub(crate) fn record(&self, subject: &str, now: Instant) {
        let subject: Arc<str> = Arc::from(subject);
        {
            let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
            if recent.len() >= MAX_REMEMBERED {
                recent.retain(|_, at| now.saturating_duration_since(*at) < REMEMBERED);
            }
            if recent.len() < MAX_REMEMBERED {
                recent.insert(Arc::clone(&subject), now);
                self.any.store(true, Ordering::Release);
            }
        }
        let _ = self.live.send(subject);
    }

    /// A new connection: its permissions may differ, so nothing is
    /// remembered.
    pub(crate) fn forget(&self) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.clear();
        self.any.store(false, Ordering::Release);
    }

    /// How long ago the server refused a publish to `subject`, if within
    /// [`REMEMBERED`]. Reads the clock only when something was refused: every
    /// outbound message asks.
    pub(crate) fn refused_recently(&self, subject: &str) -> Option<Duration> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        self.refused_since(subject, Instant::now())
    }

    /// [`refused_recently`](Self::refused_recently) at `now`.
    fn refused_since(&self, subject: &str, now: Instant) -> Option<Duration> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let age = now.saturating_duration_since(*recent.get(subject)?);
        if age < REMEMBERED {
            return Some(age);
        }
        recent.remove(subject);
        if recent.is_empty() {
            self.any.store(false, Ordering::Release);
        }
        None
    }

    /// Resolves when the server refuses a publish to `subject` from now on
    /// (never, should the refusals stop coming). Subscribes at once, so a
    /// refusal that comes before the first poll counts.
    pub(crate) fn refused(&self, subject: &str) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.live.subscribe();
        let subject: Arc<str> = Arc::from(subject);
        async move {
            loop {
                match rx.recv().await {
                    Ok(refused) if refused == subject => return,
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt as _;

    use super::*;

    #[test]
    fn refusals_are_remembered_for_a_while() {
        let r = Refusals::default();
        let t0 = Instant::now();
        assert_eq!(r.refused_since("a.s.x", t0), None);
        r.record("a.s.x", t0);
        let later = t0 + Duration::from_secs(3);
        assert_eq!(
            r.refused_since("a.s.x", later),
            Some(Duration::from_secs(3))
        );
        assert_eq!(r.refused_since("a.s.y", later), None);
        assert_eq!(r.refused_since("a.s.x", t0 + REMEMBERED), None);
        // Expired entries go, and with the last one the fast path is back.
        assert!(!r.any.load(Ordering::Acquire));
        r.record("a.s.x", t0);
        r.forget();
        assert_eq!(r.refused_since("a.s.x", t0), None);
    }

    #[test]
    fn the_memory_is_bounded() {
        let r = Refusals::default();
        let t0 = Instant::now();
        for i in 0..MAX_REMEMBERED + 10 {
            r.record(&format!("s.{i}"), t0);
        }
        assert_eq!(r.recent.lock().unwrap().len(), MAX_REMEMBERED);
        // Once the old ones expired, new ones are remembered again.
        let later = t0 + REMEMBERED;
        r.record("s.new", later);
        assert_eq!(r.refused_since("s.new", later), Some(Duration::ZERO));
        assert_eq!(r.recent.lock().unwrap().len(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_waiting_request_hears_of_its_subject_only() {
        let r = Refusals::default();
        let wait = r.refused("a.s.x");
        r.record("a.s.other", Instant::now());
        r.record("a.s.x", Instant::now());
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("the refusal of a.s.x reached the waiting request");
        let other = r.refused("a.s.x");
        r.record("a.s.other", Instant::now());
        assert!(other.now_or_never().is_none());
    }
}
