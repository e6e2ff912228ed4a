//! Message headers.

use std::fmt;
use std::sync::Arc;

/// The header a durable delivery arrives with: how many times the server
/// delivered the message (1 the first time). The bus moves it into
/// [`Message::delivery_count`](crate::Message::delivery_count); a handler
/// never sees it among the headers.
pub(crate) const DELIVERY_HEADER: &str = "Codecbus-Delivery";

/// The headers of a message: an ordered multimap of text names to text
/// values, names compared ASCII-case-insensitively (as Vert.x's `MultiMap`).
///
/// Cloning is cheap (the entries are shared until one copy is changed), and
/// an empty `Headers` allocates nothing, so messages without headers cost
/// nothing extra.
///
/// # Examples
///
/// ```
/// use codecbus_bus::Headers;
///
/// let mut headers = Headers::new();
/// headers.insert("Trace-Id", "42");
/// headers.append("tag", "a");
/// headers.append("tag", "b");
/// assert_eq!(headers.get("trace-id"), Some("42"));
/// assert_eq!(headers.get_all("TAG").collect::<Vec<_>>(), ["a", "b"]);
/// assert_eq!(headers.len(), 3);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers {
    entries: Option<Arc<Vec<Entry>>>,
}

type Entry = (Box<str>, Box<str>);

impl Headers {
    /// Empty headers (no allocation).
    pub const fn new() -> Self {
        Self { entries: None }
    }

    fn entries(&self) -> &[Entry] {
        self.entries.as_deref().map_or(&[], Vec::as_slice)
    }

    fn entries_mut(&mut self) -> &mut Vec<Entry> {
        Arc::make_mut(self.entries.get_or_insert_with(Default::default))
    }

    /// The number of entries (a name with two values counts twice).
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries()
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| &**v)
    }

    /// Every value of `name`, in insertion order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries()
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| &**v)
    }

    /// Whether `name` has at least one value.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets `name` to the single value `value`, replacing any values it had.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        self.remove(&name);
        self.append(name, value);
    }

    /// Adds `value` to the values of `name`.
    pub fn append(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.entries_mut()
            .push((name.into().into_boxed_str(), value.into().into_boxed_str()));
    }

    /// Removes every value of `name`; returns whether there was any.
    pub fn remove(&mut self, name: &str) -> bool {
        if !self.contains(name) {
            return false;
        }
        self.entries_mut()
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        true
    }

    /// Every `(name, value)` entry, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries().iter().map(|(n, v)| (&**n, &**v))
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<N: Into<String>, V: Into<String>> FromIterator<(N, V)> for Headers {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(iter: I) -> Self {
        let mut headers = Self::new();
        headers.extend(iter);
        headers
    }
}

impl<N: Into<String>, V: Into<String>> Extend<(N, V)> for Headers {
    fn extend<I: IntoIterator<Item = (N, V)>>(&mut self, iter: I) {
        for (n, v) in iter {
            self.append(n, v);
        }
    }
}
