//! Why a bridge could not start.

use std::error::Error as StdError;

/// Why a bridge could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// A permission's `address_regex` is not a regular expression.
    #[error("invalid address regex {pattern:?}: {source}")]
    Regex {
        /// The expression as given.
        pattern: String,
        /// What is wrong with it.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// The listening socket could not be opened.
    #[error("cannot listen for bridge clients on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The TLS certificates or key given are not usable.
    #[error("bridge TLS: {0}")]
    Tls(String),
}

impl BridgeError {
    pub(crate) fn regex(pattern: &str, source: regex::Error) -> Self {
        Self::Regex {
            pattern: pattern.to_string(),
            source: Box::new(source),
        }
    }
}
