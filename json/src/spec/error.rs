//! What checking a value against a spec reports: a [`Violation`] (where,
//! what was expected, what was found), and the errors of parsing and
//! decoding against a spec.

use std::fmt;

use codecbus_core::DecodeError;

use super::check::Miss;
use crate::path::JsPath;
use crate::text::JsParseError;

/// A place where a value breaks its spec: the JSON Pointer of the place,
/// what the spec expected there and what was found.
///
/// `Display` prints `pointer: expected ..., found ...`, with `(root)` for
/// the whole value.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: expected {expected}, found {found}", Where(&self.path))]
pub struct Violation {
    pub(super) path: JsPath,
    pub(super) expected: String,
    pub(super) found: String,
}

impl Violation {
    pub(crate) fn new(path: JsPath, miss: Miss) -> Violation {
        Violation {
            path,
            expected: miss.expected,
            found: miss.found,
        }
    }

    /// Where the violation is, as a path.
    pub fn path(&self) -> &JsPath {
        &self.path
    }

    /// Where the violation is, as JSON Pointer text (`/items/0/qty`, with
    /// `~0` and `~1` escapes; `""` for the whole value).
    pub fn pointer(&self) -> String {
        self.path.to_string()
    }

    /// What the spec expected there (`integer in 1..=100`, or the message
    /// of a user check).
    pub fn expected(&self) -> &str {
        &self.expected
    }

    /// What was found: a short rendering of the value (`0`, `"abc"`, `an
    /// array of 3 items`), or `nothing` for a missing member.
    pub fn found(&self) -> &str {
        &self.found
    }
}

/// A pointer for messages: the root's empty pointer would be invisible.
struct Where<'a>(&'a JsPath);

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_root() {
            f.write_str("(root)")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl fmt::Debug for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Violation({self})")
    }
}

/// Why [`Spec::parse`](super::Spec::parse) failed: the text is not JSON, or its value does not
/// conform to the spec.
#[derive(Debug, thiserror::Error)]
pub enum SpecParseError {
    /// The text is not JSON (or breaks a limit of the plain parser, such as
    /// its nesting depth), with the line and column of the problem.
    #[error(transparent)]
    Json(#[from] JsParseError),
    /// The first violation met; parsing stopped there.
    #[error("the value does not conform to its spec at {0}")]
    Invalid(Violation),
}

impl SpecParseError {
    /// The violation, when the text was JSON that breaks the spec.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            SpecParseError::Invalid(v) => Some(v),
            SpecParseError::Json(_) => None,
        }
    }
}

/// Why [`Spec::decode`](super::Spec::decode) failed: the bytes are not a JSON value in
/// MessagePack, or the value does not conform to the spec.
#[derive(Debug, thiserror::Error)]
pub enum SpecDecodeError {
    /// The bytes are not MessagePack of a JSON value, or break a
    /// [`DecodeLimits`](codecbus_core::DecodeLimits) limit, exactly as the plain decoder reports it.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The first violation met; decoding stopped there.
    #[error("the value does not conform to its spec at {0}")]
    Invalid(Violation),
}

impl SpecDecodeError {
    /// The violation, when the bytes held a value that breaks the spec.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            SpecDecodeError::Invalid(v) => Some(v),
            SpecDecodeError::Decode(_) => None,
        }
    }
}
