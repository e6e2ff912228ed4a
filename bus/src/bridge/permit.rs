//! Permissions: the entries a bridge is given, and their compiled form
//! (each entry's address or expression, and its JSON subset).

use codecbus_json::JsObj;
use regex::Regex;
use serde_json::{Map, Value};

use crate::bridge::error::BridgeError;
use crate::bridge::events::BridgeConnection;

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
    pub(crate) required_authority: Option<String>,
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
    /// What a connection must have been granted for this entry to let a
    /// frame through (Vert.x's `setRequiredAuthority`): granted by the
    /// bridge's event hook ([`BridgeConnection::grant`](crate::bridge::BridgeConnection::grant)).
    /// A frame this entry admits from a connection granted nothing gets
    /// `not_logged_in`, from one granted other authorities
    /// `access_denied`; a message for such a client is not delivered.
    #[must_use]
    pub fn required_authority(mut self, authority: impl Into<String>) -> Self {
        self.required_authority = Some(authority.into());
        self
    }
}

/// One compiled entry.
struct Entry {
    address: Option<String>,
    regex: Option<Regex>,
    subset: Option<Map<String, Value>>,
    authority: Option<String>,
}

/// What the permissions say of a frame: refused, or permitted by an entry
/// that may require an authority of the connection.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Permit<'a> {
    Refused,
    Permitted(Option<&'a str>),
}

/// The compiled entries of one direction.
pub(crate) struct Permits {
    entries: Vec<Entry>,
    /// Whether an entry has a `match` ([`reads_bodies`](Self::reads_bodies)).
    reads_bodies: bool,
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
                    authority: o.required_authority.clone(),
                })
            })
            .collect::<Result<Vec<Entry>, BridgeError>>()?;
        let reads_bodies = entries.iter().any(|e| e.subset.is_some());
        Ok(Self {
            entries,
            reads_bodies,
        })
    }

    /// Whether an entry looks into bodies (a `match`): when none does,
    /// [`permit`](Self::permit) says the same with a body or without.
    pub(crate) fn reads_bodies(&self) -> bool {
        self.reads_bodies
    }

    /// What the first entry that admits `address` (and `body`, when given:
    /// an entry with a `match` admits only a body that contains it) says,
    /// as Vert.x reads its list; `Refused` when none does.
    pub(crate) fn permit(&self, address: &str, body: Option<&str>) -> Permit<'_> {
        let parsed: std::cell::OnceCell<Option<Value>> = std::cell::OnceCell::new();
        self.entries
            .iter()
            .find(|e| {
                e.admits_address(address)
                    && e.subset.as_ref().is_none_or(|subset| match body {
                        None => true,
                        Some(body) => matches!(
                            parsed.get_or_init(|| serde_json::from_str(body).ok()),
                            Some(Value::Object(b)) if contains(b, subset)
                        ),
                    })
            })
            .map_or(Permit::Refused, |e| {
                Permit::Permitted(e.authority.as_deref())
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

/// The refusal of a frame by the permissions (`access_denied`) or by the
/// authority its entry requires (`not_logged_in` from a connection granted
/// none, `access_denied` from one granted others, as vertx-web); `None`
/// when it goes through.
pub(crate) fn refusal(permit: Permit<'_>, connection: &BridgeConnection) -> Option<&'static str> {
    match permit {
        Permit::Refused => Some("access_denied"),
        Permit::Permitted(None) => None,
        Permit::Permitted(Some(authority)) if connection.has_authority(authority) => None,
        Permit::Permitted(Some(_)) if connection.authorities().is_empty() => Some("not_logged_in"),
        Permit::Permitted(Some(_)) => Some("access_denied"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codecbus_json::jsobj;
    use serde_json::json;

    fn permits(options: &[PermittedOptions]) -> Permits {
        Permits::new(options).unwrap()
    }

    impl Permits {
        fn admits_address(&self, address: &str) -> bool {
            self.permit(address, None) != Permit::Refused
        }

        fn admits(&self, address: &str, body: &str) -> bool {
            self.permit(address, Some(body)) != Permit::Refused
        }
    }

    #[test]
    fn the_first_entry_that_admits_names_its_authority() {
        let p = permits(&[
            PermittedOptions::new()
                .address("orders")
                .matching(jsobj! {"vip": true})
                .required_authority("vip"),
            PermittedOptions::new()
                .address("orders")
                .required_authority("shop"),
            PermittedOptions::new().address("orders"),
        ]);
        assert_eq!(
            p.permit("orders", Some(r#"{"vip":true}"#)),
            Permit::Permitted(Some("vip"))
        );
        assert_eq!(
            p.permit("orders", Some("{}")),
            Permit::Permitted(Some("shop"))
        );
        assert_eq!(p.permit("other", Some("{}")), Permit::Refused);
        let connection = BridgeConnection::new(1, None, "tcp", Vec::new());
        let shop = Permit::Permitted(Some("shop"));
        assert_eq!(refusal(Permit::Refused, &connection), Some("access_denied"));
        assert_eq!(refusal(Permit::Permitted(None), &connection), None);
        assert_eq!(refusal(shop, &connection), Some("not_logged_in"));
        connection.grant("vip");
        assert_eq!(
            refusal(Permit::Permitted(Some("shop")), &connection),
            Some("access_denied")
        );
        connection.grant("shop");
        assert_eq!(refusal(Permit::Permitted(Some("shop")), &connection), None);
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
