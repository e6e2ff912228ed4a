//! What a node learned of its peers' codecs when they met
//! ([`EventBus::shape_report`](crate::EventBus::shape_report)).

use std::fmt;

use codecbus_core::shape::check::Finding;

/// The codecs of this node's peers, each held to this node's codec of the
/// same name: can this node read what the peer writes?
///
/// Nodes tell each other the shapes of their codecs when they meet (the
/// guide's chapter on evolving types, "At run time"); the report has a
/// row per peer still in the cluster, and in it a verdict per codec that
/// both know.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ShapeReport {
    /// The peers, by node name.
    pub peers: Vec<PeerReport>,
}

impl ShapeReport {
    /// Whether this node reads every codec of every peer.
    #[must_use]
    pub fn is_compatible(&self) -> bool {
        self.incompatible().next().is_none()
    }

    /// The codecs of a peer that this node cannot read, with their peer.
    pub fn incompatible(&self) -> impl Iterator<Item = (&PeerReport, &CodecVerdict)> {
        self.peers.iter().flat_map(|peer| {
            peer.codecs
                .iter()
                .filter(|c| matches!(c.verdict, ShapeVerdict::Incompatible(_)))
                .map(move |c| (peer, c))
        })
    }

    /// The peer named `node`.
    #[must_use]
    pub fn peer(&self, node: &str) -> Option<&PeerReport> {
        self.peers.iter().find(|p| p.node == node)
    }
}

/// One peer's codecs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PeerReport {
    /// The peer's node name: its connection name (`NatsOptions::connection_name`)
    /// and a suffix that tells its runs apart.
    pub node: String,
    /// The codecs it has and this node has too (by name or alias), by name.
    pub codecs: Vec<CodecVerdict>,
}

impl PeerReport {
    /// The verdict on `codec`.
    #[must_use]
    pub fn codec(&self, codec: &str) -> Option<&CodecVerdict> {
        self.codecs.iter().find(|c| c.codec == codec)
    }
}

/// A peer's codec held to this node's.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CodecVerdict {
    /// The codec's name, as the peer has it.
    pub codec: String,
    /// The fingerprint of the peer's shape of it.
    pub fingerprint: u64,
    /// Whether this node reads what the peer writes.
    pub verdict: ShapeVerdict,
}

/// Whether this node reads what a peer writes under a codec.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ShapeVerdict {
    /// The same shape.
    Same,
    /// Another shape that this node reads (a peer with a new optional
    /// field, say): counted in [`Metrics::shape_differences`](crate::Metrics::shape_differences).
    Compatible,
    /// A shape this node cannot read, and why: each finding names the
    /// field and the rule (the check's, backward: this node's reader,
    /// the peer's writer). Logged at error level and counted in
    /// [`Metrics::shape_mismatches`](crate::Metrics::shape_mismatches).
    Incompatible(Vec<Finding>),
}

impl fmt::Display for ShapeReport {
    /// A line per peer codec that is not the same, and a summary.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut same = 0;
        for peer in &self.peers {
            for c in &peer.codecs {
                match &c.verdict {
                    ShapeVerdict::Same => same += 1,
                    ShapeVerdict::Compatible => {
                        writeln!(f, "{}  {}  compatible (another shape)", peer.node, c.codec)?;
                    }
                    ShapeVerdict::Incompatible(findings) => {
                        for x in findings {
                            writeln!(
                                f,
                                "{}  {}  INCOMPATIBLE  {} {}: {}",
                                peer.node, c.codec, x.rule, x.path, x.why
                            )?;
                        }
                    }
                }
            }
        }
        write!(f, "{} peers, {} codecs the same", self.peers.len(), same)
    }
}
