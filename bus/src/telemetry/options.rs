//! What the bus reports through the `metrics` crate.

use std::fmt;
use std::sync::Arc;

/// How the bus reports its metrics through the [`metrics`] crate facade
/// (feature `metrics`): the series names' prefix and which address each
/// message counts under.
///
/// Every series has an `address` label. Addresses a program makes up at
/// run time (one per order, per user) would make a label value each;
/// [`group`](Self::group) folds them into one, [`exclude`](Self::exclude)
/// leaves them out, and past [`max_addresses`](Self::max_addresses)
/// distinct values (100 by default) any new address counts as `_other`,
/// so the number of series stays bounded whatever the traffic.
///
/// Patterns are globs: `*` stands for any run of characters (dots
/// included), everything else for itself. The first matching rule wins,
/// in the order the rules were added.
///
/// # Examples
///
/// ```
/// use codecbus_bus::{EventBus, MetricsOptions};
///
/// let options = MetricsOptions::new()
///     .prefix("vertx_eventbus") // Vert.x's names: its dashboards read these
///     .group("orders.*", "orders")
///     .exclude("internal.*")
///     .max_addresses(50);
/// assert_eq!(options.label_of("orders.eu.42").as_deref(), Some("orders"));
/// assert_eq!(options.label_of("internal.ping"), None);
/// assert_eq!(options.label_of("prices").as_deref(), Some("prices"));
/// let bus = EventBus::builder().metrics(options).build().unwrap();
/// # drop(bus);
/// ```
#[derive(Clone)]
#[must_use]
pub struct MetricsOptions {
    pub(crate) prefix: Arc<str>,
    rules: Vec<Rule>,
    pub(crate) max_addresses: usize,
    pub(crate) timings: bool,
}

#[derive(Clone, Debug)]
struct Rule {
    pattern: Box<str>,
    /// `None`: excluded.
    label: Option<Arc<str>>,
}

/// The label of every address past the limit.
pub(crate) const OTHER: &str = "_other";

/// The prefix of the series names unless set.
pub const DEFAULT_METRICS_PREFIX: &str = "codecbus_eventbus";

impl Default for MetricsOptions {
    fn default() -> Self {
        Self {
            prefix: Arc::from(DEFAULT_METRICS_PREFIX),
            rules: Vec::new(),
            max_addresses: 100,
            timings: true,
        }
    }
}

impl MetricsOptions {
    /// The defaults: prefix [`DEFAULT_METRICS_PREFIX`], every address its
    /// own label, at most 100 of them.
    pub fn new() -> Self {
        Self::default()
    }

    /// The prefix of every series name (`{prefix}_sent_total`, ...).
    /// `"vertx_eventbus"` gives the names Vert.x's Prometheus metrics use.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Arc::from(prefix.into());
        self
    }

    /// Counts every address matching `pattern` under the label `label`.
    pub fn group(mut self, pattern: impl Into<String>, label: impl Into<String>) -> Self {
        self.rules.push(Rule {
            pattern: pattern.into().into_boxed_str(),
            label: Some(Arc::from(label.into())),
        });
        self
    }

    /// Leaves the addresses matching `pattern` out of the metrics (they
    /// still count in [`EventBus::metrics`](crate::EventBus::metrics)).
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.rules.push(Rule {
            pattern: pattern.into().into_boxed_str(),
            label: None,
        });
        self
    }

    /// How many distinct address labels the series may have; any further
    /// address counts as `_other`. Group labels count too.
    pub fn max_addresses(mut self, max: usize) -> Self {
        self.max_addresses = max;
        self
    }

    /// Whether handler runs and requests are timed (the
    /// `processing_time_seconds` and `request_time_seconds` histograms; on
    /// by default). Each timing reads the clock twice, which is most of
    /// what metrics cost a local round trip (the guide, `book/src/performance.md`,
    /// "What observability costs"); counters and gauges stay either way.
    pub fn timings(mut self, on: bool) -> Self {
        self.timings = on;
        self
    }

    /// The label `address` counts under by the rules (`None`: excluded),
    /// before the limit of [`max_addresses`](Self::max_addresses) applies.
    pub fn label_of(&self, address: &str) -> Option<Arc<str>> {
        match self.rules.iter().find(|r| glob(&r.pattern, address)) {
            Some(rule) => rule.label.clone(),
            None => Some(Arc::from(address)),
        }
    }
}

impl fmt::Debug for MetricsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsOptions")
            .field("prefix", &self.prefix)
            .field("rules", &self.rules)
            .field("max_addresses", &self.max_addresses)
            .field("timings", &self.timings)
            .finish()
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters. Greedy with backtracking to the last `*`: linear for
/// patterns with one star, never worse than `pattern × text`.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        for (pattern, text, expected) in [
            ("orders.*", "orders.eu.1", true),
            ("orders.*", "orders.", true),
            ("orders.*", "orders", false),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("*.reply", "x.y.reply", true),
            ("exact", "exact", true),
            ("exact", "exacts", false),
            ("é*", "éa", true),
        ] {
            assert_eq!(glob(pattern, text), expected, "{pattern} ~ {text}");
        }
    }

    #[test]
    fn first_rule_wins() {
        let options = MetricsOptions::new()
            .exclude("a.secret")
            .group("a.*", "a")
            .group("*", "rest");
        assert_eq!(options.label_of("a.secret"), None);
        assert_eq!(options.label_of("a.b").as_deref(), Some("a"));
        assert_eq!(options.label_of("b").as_deref(), Some("rest"));
    }
}
