//! The vocabulary every room speaks, below them all: errors and their
//! kinds, headers, options, reports, bodies, the bus's counters, the
//! interceptor chains, the reply cell and what it carries, consumer guards.
//! The engine builds errors and the transports carry replies and ask
//! guards, so these sit under both rather than in the api or the engine.

pub(crate) mod body;
pub(crate) mod error;
pub(crate) mod guard;
pub(crate) mod hash;
pub(crate) mod headers;
pub(crate) mod interceptor;
pub(crate) mod metrics;
pub(crate) mod oneshot;
pub(crate) mod options;
pub(crate) mod reply;
pub(crate) mod report;
pub(crate) mod shapes;
