//! The loom models' common bound (`loom_reply.rs`, `loom_claim.rs`).

/// Every interleaving with at most two preemptions per thread (as tokio
/// checks its own channels; `LOOM_MAX_PREEMPTIONS` overrides it): enough
/// for every race between two parties, and it keeps each model to seconds.
pub fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(f);
}
