// Nodes telling each other their codecs' shapes when they meet, every
// cluster transport alike: what a node announces (the snapshot of its
// codecs' shapes, the same JSON as a snapshot file), and what it makes of
// a peer's announcement (`learn`): each codec both have is held to this
// node's with the compatibility check both ways. Backward (this node's
// reader, the peer's writer) gives the verdict: an incompatible codec is
// logged at error level, naming the field and the rule, and counted; a
// compatible difference is counted. The verdicts are kept per peer for
// `EventBus::shape_report`, and a message that states a shape this node
// cannot read is refused (`inbound.rs`). Forward (the peer's reader, this
// node's writer) marks this node's codecs the peer cannot read: their
// messages state their shape (`Peers::tag`, the `Codecbus-Shape` header),
// so that the peer refuses them rather than misreads them.
//
// Bounded: an announcement over `MAX_ANNOUNCEMENT` bytes, a node name over
// `MAX_NODE_NAME`, text that is not a snapshot are refused with a logged
// reason; at most `MAX_PEERS` peers are kept, the one learned longest ago
// making room.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};

use codecbus_core::shape::check::Finding;

#[cfg(feature = "shapes")]
use codecbus_core::shape::ShapeSet;
#[cfg(feature = "shapes")]
use codecbus_core::shape::check::{Direction, Mode, Rule, check};

#[cfg(feature = "shapes")]
use crate::base::shapes::CodecVerdict;
use crate::base::shapes::{PeerReport, ShapeReport, ShapeVerdict};
#[cfg(feature = "shapes")]
use crate::telemetry::record::{Event, record};
#[cfg(feature = "shapes")]
use crate::transport::Node;

/// The largest announcement taken from a peer, in bytes.
#[cfg_attr(not(feature = "shapes"), allow(dead_code))]
pub(crate) const MAX_ANNOUNCEMENT: usize = 1024 * 1024;

/// The longest node name taken from a peer, in bytes.
#[cfg_attr(not(feature = "shapes"), allow(dead_code))]
pub(crate) const MAX_NODE_NAME: usize = 256;

/// The most peers kept.
pub(crate) const MAX_PEERS: usize = 1024;

/// The header naming the node that sent an announcement.
#[cfg_attr(not(feature = "nats"), allow(dead_code))]
pub(crate) const H_NODE: &str = "Codecbus-Node";

/// What this node knows of its peers' codecs.
#[derive(Default)]
pub(crate) struct Peers {
    /// The peers, the one learned longest ago first.
    known: Mutex<VecDeque<Known>>,
    /// Whether `tagged` has a codec: read on the way out of every message,
    /// so that a cluster whose nodes all read each other pays one load.
    tagging: AtomicBool,
    /// This node's codecs that some peer cannot read, by name, with the
    /// fingerprint of their shape: the messages of these codecs say it
    /// (`Codecbus-Shape`), and such a peer refuses them.
    tagged: RwLock<HashMap<String, u64>>,
}

/// A peer, and which of this node's codecs it cannot read.
struct Known {
    report: PeerReport,
    /// This node's codecs (name, fingerprint) the peer cannot read.
    cannot_read: Vec<(String, u64)>,
}

impl Peers {
    /// The report of every peer.
    pub(crate) fn report(&self) -> ShapeReport {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let mut peers: Vec<PeerReport> = known.iter().map(|k| k.report.clone()).collect();
        peers.sort_by(|a, b| a.node.cmp(&b.node));
        ShapeReport { peers }
    }

    /// The fingerprint a message of this node's codec `codec` states, when
    /// some peer cannot read its shape.
    #[inline]
    pub(crate) fn tag(&self, codec: &str) -> Option<u64> {
        if !self.tagging.load(Ordering::Relaxed) {
            return None;
        }
        let tagged = self.tagged.read().unwrap_or_else(PoisonError::into_inner);
        tagged.get(codec).copied()
    }

    /// Why this node cannot read a message of `codec` (as the message names
    /// it) written with the shape `fingerprint`, when a peer told it that
    /// shape: the peer and the findings.
    pub(crate) fn mismatch(&self, codec: &str, fingerprint: u64) -> Option<(String, Vec<Finding>)> {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.iter().rev().find_map(|k| {
            k.report.codecs.iter().find_map(|c| match &c.verdict {
                ShapeVerdict::Incompatible(findings)
                    if c.codec == codec && c.fingerprint == fingerprint =>
                {
                    Some((k.report.node.clone(), findings.clone()))
                }
                _ => None,
            })
        })
    }

    /// Forgets the peer `node` (it left).
    #[cfg_attr(not(feature = "shapes"), allow(dead_code))]
    pub(crate) fn forget(&self, node: &str) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.retain(|k| k.report.node != node);
        self.retag(&known);
    }

    #[cfg_attr(not(feature = "shapes"), allow(dead_code))]
    fn keep(&self, peer: Known) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known.retain(|k| k.report.node != peer.report.node);
        if known.len() >= MAX_PEERS {
            known.pop_front();
        }
        known.push_back(peer);
        self.retag(&known);
    }

    /// Recomputes the codecs to tag from the peers `known` (under its lock).
    fn retag(&self, known: &VecDeque<Known>) {
        let tagged: HashMap<String, u64> = known
            .iter()
            .flat_map(|k| k.cannot_read.iter().cloned())
            .collect();
        self.tagging.store(!tagged.is_empty(), Ordering::Relaxed);
        *self.tagged.write().unwrap_or_else(PoisonError::into_inner) = tagged;
    }
}

/// The shapes an announcement (or an entry of the shapes bucket) from
/// `source` says, or why it is refused: over [`MAX_ANNOUNCEMENT`] bytes,
/// not UTF-8, not a shape snapshot (or one whose fingerprints do not
/// match). The one reader of what peers tell: nodes, the tap and the
/// bucket's readers go through it.
#[cfg(feature = "shapes")]
pub(crate) fn read_announcement(source: &str, payload: &[u8]) -> Result<ShapeSet, String> {
    if payload.len() > MAX_ANNOUNCEMENT {
        return Err(format!(
            "an announcement of {} bytes, over {MAX_ANNOUNCEMENT}",
            payload.len()
        ));
    }
    let text =
        std::str::from_utf8(payload).map_err(|_| "an announcement that is not UTF-8".to_owned())?;
    ShapeSet::from_snapshot(text, source).map_err(|e| format!("not a shape snapshot: {e}"))
}

/// What `node` tells its peers: the snapshot of its codecs' shapes.
#[cfg(feature = "shapes")]
pub(crate) fn announcement(node: &dyn Node) -> String {
    node.shapes().to_snapshot()
}

/// Takes the announcement `payload` of the peer `peer`, which `from` (the
/// transport, for logs) brought: holds its codecs to this node's, logs and
/// counts what does not match, and keeps the verdicts. Returns why it was
/// refused, which is logged.
#[cfg(feature = "shapes")]
pub(crate) fn learn(node: &dyn Node, peer: &str, payload: &[u8], from: &str) -> Result<(), String> {
    let refused = |why: String| {
        tracing::warn!(peer = %truncated(peer), transport = from, "a peer's codec shapes were refused: {why}");
        Err(why)
    };
    if peer.len() > MAX_NODE_NAME {
        return refused(format!(
            "a node name of {} bytes, over {MAX_NODE_NAME}",
            peer.len()
        ));
    }
    let theirs = match read_announcement(peer, payload) {
        Ok(set) => set,
        Err(why) => return refused(why),
    };
    let ours = node.shapes();
    let mut codecs = Vec::new();
    let mut cannot_read = Vec::new();
    for codec in theirs.iter() {
        let Some(mine) = ours.find(&codec.name) else {
            continue;
        };
        let fingerprint = codec.fingerprint();
        let verdict = if fingerprint == mine.fingerprint() && mine.name == codec.name {
            ShapeVerdict::Same
        } else {
            // Both ways: backward, this node reads the peer's; forward,
            // the peer reads this node's.
            let old = ShapeSet::from_codecs([codec.clone()]);
            let new = ShapeSet::from_codecs([mine.clone()]);
            let (findings, theirs_cannot): (Vec<_>, Vec<_>) = check(&old, &new, Mode::Full)
                .findings
                .into_iter()
                .filter(|f| reads_now(f.rule))
                .partition(|f| f.direction == Direction::Backward);
            if !theirs_cannot.is_empty() {
                tracing::warn!(
                    peer = %peer,
                    codec = %mine.name,
                    "a peer cannot read this node's shape of a codec: its messages of it state the shape, and the peer refuses them"
                );
                cannot_read.push((mine.name.clone(), mine.fingerprint()));
            }
            if findings.is_empty() {
                record(node.counters(), None, Event::ShapeDifference);
                tracing::info!(
                    peer = %peer,
                    codec = %codec.name,
                    "a peer writes another shape of a codec, which this node reads"
                );
                ShapeVerdict::Compatible
            } else {
                record(node.counters(), None, Event::ShapeMismatch);
                for f in &findings {
                    tracing::error!(
                        peer = %peer,
                        codec = %f.codec,
                        field = %f.path,
                        rule = %f.rule,
                        fix = %f.fix,
                        "a peer writes a shape of a codec this node cannot read: {}",
                        f.why
                    );
                }
                ShapeVerdict::Incompatible(findings)
            }
        };
        codecs.push(CodecVerdict {
            codec: codec.name.clone(),
            fingerprint,
            verdict,
        });
    }
    node.peers().keep(Known {
        report: PeerReport {
            node: peer.to_owned(),
            codecs,
        },
        cannot_read,
    });
    Ok(())
}

/// Whether a finding of `rule` stops this node from reading what the peer
/// writes now: the rules about reservations keep a codec's history
/// honest (a name removed is not reused), which does not matter between
/// two builds that run side by side.
#[cfg(feature = "shapes")]
fn reads_now(rule: Rule) -> bool {
    !matches!(rule, Rule::RemovedNotReserved | Rule::ReservedReused)
}

/// At most the first 64 bytes of `s`, for a log line about a name that
/// was refused for its length.
#[cfg(feature = "shapes")]
fn truncated(s: &str) -> &str {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
