//! Permissions: the entries a bridge is given, and their compiled form
//! (each entry's address or expression, and its JSON subset).

use codecbus_json::JsObj;
use regex::Regex;
use serde_json::{Map, Value};

use crate::bridge::error::BridgeError;

/// One permission (Vert.x's `PermittedOptions`): the addresses it admits,
/// by name or by regular expression, and optionally only bodies that
/// contain a JSON subset.
///
/// An entry with neither an address nor a regular expression admits every
/// address, as in Vert.x. With both, the address wins.
///
/// # Examples
///
/// ```
/// use codecbus_bus::bridge::PermittedOptions;
/// use codecbus_json::jsobj;
///
/// let retail_orders = PermittedOptions::new()
///     .address_regex("^orders\\..+")
///     .matching(jsobj! {"kind": "retail"});
/// let echo = PermittedOptions::new().address("echo");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PermittedOptions {
    pub(crate) address: Option<String>,
    pub(crate) address_regex: Option<String>,
    pub(crate) matching: Option<JsObj>,
}

impl PermittedOptions {
    /// An entry that admits every address.
    pub fn new() -> Self {
        Self::default()
    }

    /// Admits exactly `address`.
    #[must_use]
    pub fn address(mut self, address: impl Into<String>) -> Self {
        self.address = Some(address.into());
        self
    }

    /// Admits the addresses that `regex` matches as a whole (Java's
    /// `Matcher.matches`, as Vert.x does; the syntax is the `regex`
    /// crate's). An invalid expression is refused when the bridge is made
    /// ([`BridgeError::Regex`](crate::bridge::BridgeError::Regex)).
    #[must_use]
    pub fn address_regex(mut self, regex: impl Into<String>) -> Self {
        self.address_regex = Some(regex.into());
        self
    }

    /// Admits only bodies that are JSON objects containing `subset`: every
    /// member of `subset` is in the body with an equal value, where a
    /// member that is an object is itself a subset of the body's (Vert.x's
    /// `match`). Outbound, a message whose body it refuses is not
    /// delivered to the client.
    #[must_use]
    pub fn matching(mut self, subset: JsObj) -> Self {
        self.matching = Some(subset);
        self
    }
}

/// One compiled entry.
struct Entry {
    address: Option<String>,
    regex: Option<Regex>,
    subset: Option<Map<String, Value>>,
}

/// The compiled entries of one direction.
pub(crate) struct Permits {
    entries: Vec<Entry>,
}

impl Permits {
    /// Compiles `options`.
    pub(crate) fn new(options: &[PermittedOptions]) -> Result<Self, BridgeError> {
        let entries = options
            .iter()
            .map(|o| {
                let regex = match (&o.address, &o.address_regex) {
                    (None, Some(pattern)) => Some(
                        // As Java's `Matcher.matches`: the whole address.
                        Regex::new(&format!("^(?:{pattern})$"))
                            .map_err(|source| BridgeError::regex(pattern, source))?,
                    ),
                    _ => None,
                };
                let subset = o.matching.as_ref().map(|m| match Value::from(m) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                });
                Ok(Entry {
                    address: o.address.clone(),
                    regex,
                    subset,
                })
            })
            .collect::<Result<_, BridgeError>>()?;
        Ok(Self { entries })
    }

    /// Whether some entry admits `address` (a registration: no body yet,
    /// so a subset is not asked).
    pub(crate) fn admits_address(&self, address: &str) -> bool {
        self.entries.iter().any(|e| e.admits_address(address))
    }

    /// Whether some entry admits `address` with `body` (its JSON text,
    /// read only when an entry asks for a subset).
    pub(crate) fn admits(&self, address: &str, body: &str) -> bool {
        let parsed = std::cell::OnceCell::new();
        let body = || parsed.get_or_init(|| serde_json::from_str::<Value>(body).ok());
        self.entries.iter().any(|e| {
            e.admits_address(address)
                && e.subset.as_ref().is_none_or(
                    |subset| matches!(body(), Some(Value::Object(b)) if contains(b, subset)),
                )
        })
    }
}

impl Entry {
    fn admits_address(&self, address: &str) -> bool {
        match (&self.address, &self.regex) {
            (Some(name), _) => name == address,
            (None, Some(regex)) => regex.is_match(address),
            (None, None) => true,
        }
    }
}

/// Whether `body` contains `subset`: each member equal, an object member
/// a subset of the body's object there.
fn contains(body: &Map<String, Value>, subset: &Map<String, Value>) -> bool {
    subset
        .iter()
        .all(|(key, want)| match (body.get(key), want) {
            (Some(Value::Object(have)), Value::Object(want)) => contains(have, want),
            (Some(have), want) => have == want,
            (None, _) => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use codecbus_json::jsobj;
    use serde_json::json;

    fn permits(options: &[PermittedOptions]) -> Permits {
        Permits::new(options).unwrap()
    }

    #[test]
    fn nothing_is_permitted_unless_listed() {
        let none = permits(&[]);
        assert!(!none.admits_address("a"));
        assert!(!none.admits("a", "{}"));
    }

    #[test]
    fn address_regex_and_match() {
        let p = permits(&[
            PermittedOptions::new().address("exact"),
            PermittedOptions::new().address_regex("^client\\..+"),
            PermittedOptions::new()
                .address("m")
                .matching(jsobj! {"a": {"b": 1}, "c": "x"}),
        ]);
        assert!(p.admits_address("exact"));
        assert!(!p.admits_address("exact.not"));
        assert!(p.admits_address("client.one"));
        assert!(!p.admits_address("client."));
        assert!(!p.admits_address("xclient.one"));
        assert!(p.admits(
            "m",
            &json!({"a": {"b": 1, "z": 2}, "c": "x", "d": 3}).to_string()
        ));
        assert!(!p.admits("m", &json!({"a": {"b": 2}, "c": "x"}).to_string()));
        assert!(!p.admits("m", &json!({"c": "x"}).to_string()));
        assert!(!p.admits("m", &json!("text").to_string()));
    }

    #[test]
    fn a_regex_matches_the_whole_address() {
        let p = permits(&[PermittedOptions::new().address_regex("a|b")]);
        assert!(p.admits_address("a") && p.admits_address("b"));
        assert!(!p.admits_address("ab"));
    }

    #[test]
    fn an_empty_entry_admits_every_address() {
        assert!(permits(&[PermittedOptions::new()]).admits_address("anything"));
    }

    #[test]
    fn a_bad_regex_is_an_error() {
        let err = Permits::new(&[PermittedOptions::new().address_regex("(")]).err();
        assert!(matches!(err, Some(BridgeError::Regex { .. })));
    }
}
