//! The codecbus event bus (in progress).
