// JetStream set-up of the durable addresses, when the bus connects: names
// (stream, subjects, consumers), and each address's stream and consumer of
// sends created with its `DurableOptions`, or checked against them when
// they exist (a difference is a `Config` error, never a silent update).
// `Durables` is what the rest of the transport knows of them.
//
// Per durable address, one stream `{PREFIX}_{address}` (sanitized) on the
// subjects `{prefix}.js.s.{address}` (sends) and `{prefix}.js.p.{address}`
// (publishes). Sends are taken by the pull consumer `send`, shared by
// every node (a work queue across the cluster); publishes by one pull
// consumer per node, `node-{connection name}`, so each node gets every
// publish once and a restarted node resumes where it stopped.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use async_nats::Client;
use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, pull};
use async_nats::jetstream::context::{ConsumerInfoErrorKind, GetStreamErrorKind};
use async_nats::jetstream::stream::{self, Placement, RetentionPolicy, StorageType};
use async_nats::jetstream::{self as js, Context, ErrorCode};

use crate::base::error::{BuildError, BuildErrorKind};
use crate::transport::nats::durable_options::{DEFAULT_STORE_TIMEOUT, DurableOptions, Retention};
use crate::transport::nats::wire;

/// The durable addresses of a bus and its JetStream context.
pub(crate) struct Durables {
    pub(super) js: Context,
    /// The node's name (its connection name), for its consumers of publishes.
    pub(super) node: String,
    pub(super) addresses: HashMap<Arc<str>, Arc<DurableAddress>>,
}

/// One durable address, resolved.
pub(crate) struct DurableAddress {
    pub(super) address: Arc<str>,
    pub(super) options: DurableOptions,
    pub(super) stream: String,
    pub(super) send_subject: String,
    pub(super) publish_subject: String,
    pub(super) dead_letter: Option<Arc<str>>,
}

/// The shared consumer of sends.
pub(super) const SEND_CONSUMER: &str = "send";

impl Durables {
    /// The settings of `address`, when it is durable.
    pub(super) fn get(&self, address: &str) -> Option<&Arc<DurableAddress>> {
        self.addresses.get(address)
    }

    /// The name of this node's consumer of publishes.
    pub(super) fn node_consumer(&self) -> String {
        format!("node-{}", sanitize(&self.node, 200))
    }
}

/// Keeps `[A-Za-z0-9_-]`, replaces every other byte with `_`, and appends
/// a hash of the original when anything was replaced or cut (so two names
/// differing only there stay apart).
pub(crate) fn sanitize(name: &str, max: usize) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out != name || out.len() > max {
        out.truncate(max);
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        name.hash(&mut h);
        out.push_str(&format!("_{:08x}", h.finish() as u32));
    }
    out
}

/// FNV-1a: a hash that stays the same across builds and platforms (names
/// are stored on the server).
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The stream name of `address` under `prefix`.
pub(crate) fn stream_name(prefix: &str, address: &str) -> String {
    sanitize(&format!("{prefix}_{address}"), 180)
}

fn config_error(message: String) -> BuildError {
    BuildError::new(BuildErrorKind::Config, message, None)
}

fn connect_error(
    message: String,
    source: impl std::error::Error + Send + Sync + 'static,
) -> BuildError {
    BuildError::new(BuildErrorKind::Connect, message, Some(Box::new(source)))
}

/// Resolves the declared durable addresses (adding their dead-letter
/// addresses) and creates or checks their streams and consumers of sends.
pub(crate) async fn setup(
    client: &Client,
    prefix: &str,
    declared: Vec<(String, DurableOptions)>,
    node: Option<&str>,
    domain: Option<&str>,
    servers: &str,
) -> Result<Option<Arc<Durables>>, BuildError> {
    if declared.is_empty() {
        return Ok(None);
    }
    if let Some(domain) = domain {
        check_domain(domain).map_err(config_error)?;
    }
    let Some(node) = node else {
        return Err(config_error(
            "durable addresses need a node name, NatsOptions::connection_name: each node's consumer of durable publishes is named after it and survives restarts"
                .to_owned(),
        ));
    };
    let mut all: Vec<(String, DurableOptions)> = Vec::new();
    for (address, options) in &declared {
        options.check(address).map_err(config_error)?;
        if all.iter().any(|(a, _)| a == address) {
            return Err(config_error(format!(
                "durable address {address:?} is declared twice"
            )));
        }
        all.push((address.clone(), options.clone()));
    }
    // Dead-letter addresses not declared on their own: the parent's
    // settings, unlimited deliveries.
    for (address, options) in &declared {
        if let Some(dead) = options.dead_letter_for(address)
            && !all.iter().any(|(a, _)| *a == dead)
        {
            all.push((dead, options.clone().unlimited_deliveries()));
        }
    }
    // The context's timeout bounds each publish acknowledgement; a store
    // is bounded by its address's own `store_timeout`, so the context's
    // must not run out first (it also bounds the set-up requests below).
    let mut js = match domain {
        Some(domain) => js::with_domain(client.clone(), domain),
        None => js::new(client.clone()),
    };
    let longest = all.iter().map(|(_, o)| o.store_timeout).max();
    js.set_timeout(longest.map_or(DEFAULT_STORE_TIMEOUT, |t| t.max(DEFAULT_STORE_TIMEOUT)));
    let mut addresses = HashMap::new();
    for (address, options) in all {
        let resolved = DurableAddress {
            stream: stream_name(prefix, &address),
            send_subject: wire::send_subject(&format!("{prefix}.js"), &address)
                .map_err(config_error)?,
            publish_subject: wire::publish_subject(&format!("{prefix}.js"), &address)
                .map_err(config_error)?,
            dead_letter: options.dead_letter_for(&address).map(Arc::from),
            address: Arc::from(address.as_str()),
            options,
        };
        ensure_stream(&js, &resolved, servers).await?;
        ensure_consumer(&js, &resolved, &send_consumer_config(&resolved)).await?;
        check_existing_consumer(&js, &resolved, node).await?;
        addresses.insert(Arc::clone(&resolved.address), Arc::new(resolved));
    }
    Ok(Some(Arc::new(Durables {
        js,
        node: node.to_owned(),
        addresses,
    })))
}

/// A JetStream domain is one token of the API subject `$JS.{domain}.API`.
fn check_domain(domain: &str) -> Result<(), String> {
    let bad = domain.is_empty()
        || domain
            .chars()
            .any(|c| c == '.' || c == '*' || c == '>' || c.is_whitespace());
    if bad {
        Err(format!(
            "JetStream domain {domain:?}: a domain is one non-empty subject token, without `.`, `*`, `>` or white space"
        ))
    } else {
        Ok(())
    }
}

fn stream_config(d: &DurableAddress) -> stream::Config {
    let o = &d.options;
    stream::Config {
        name: d.stream.clone(),
        subjects: vec![d.send_subject.clone(), d.publish_subject.clone()],
        retention: match o.retention {
            Retention::Limits => RetentionPolicy::Limits,
            Retention::Interest => RetentionPolicy::Interest,
            Retention::WorkQueue => RetentionPolicy::WorkQueue,
        },
        max_age: o.max_age.unwrap_or(Duration::ZERO),
        max_bytes: o
            .max_bytes
            .map_or(-1, |b| i64::try_from(b).unwrap_or(i64::MAX)),
        max_messages: -1,
        storage: StorageType::File,
        num_replicas: o.replicas,
        placement: placement(o),
        duplicate_window: o.duplicate_window,
        description: Some(format!("codecbus durable address {}", d.address)),
        ..Default::default()
    }
}

/// The stream's placement: `None` when neither a cluster nor tags are set.
fn placement(o: &DurableOptions) -> Option<Placement> {
    if o.placement_cluster.is_none() && o.placement_tags.is_empty() {
        return None;
    }
    let mut tags = o.placement_tags.clone();
    tags.sort();
    Some(Placement {
        cluster: o.placement_cluster.clone(),
        tags,
    })
}

/// A placement as compared: no placement and an empty one are the same,
/// and so are the same tags in another order.
fn placement_key(p: Option<&Placement>) -> (Option<&str>, Vec<&str>) {
    let Some(p) = p else {
        return (None, Vec::new());
    };
    let mut tags: Vec<&str> = p.tags.iter().map(String::as_str).collect();
    tags.sort_unstable();
    (p.cluster.as_deref().filter(|c| !c.is_empty()), tags)
}

/// Creates the stream of `d`, or checks the existing one.
async fn ensure_stream(js: &Context, d: &DurableAddress, servers: &str) -> Result<(), BuildError> {
    let want = stream_config(d);
    match js.get_stream(&d.stream).await {
        Ok(mut existing) => {
            let have = existing
                .info()
                .await
                .map_err(|e| connect_error(format!("cannot read JetStream stream {} at {servers}", d.stream), e))?
                .config
                .clone();
            let mut diffs = Vec::new();
            let mut subjects = have.subjects.clone();
            subjects.sort();
            let mut wanted = want.subjects.clone();
            wanted.sort();
            if subjects != wanted {
                diffs.push(format!("subjects {subjects:?}, not {wanted:?}"));
            }
            if have.retention != want.retention {
                diffs.push(format!(
                    "retention {:?}, not {:?}",
                    have.retention, want.retention
                ));
            }
            if have.max_age != want.max_age {
                diffs.push(format!(
                    "max age {:?}, not {:?} (0 is unlimited)",
                    have.max_age, want.max_age
                ));
            }
            if have.max_bytes != want.max_bytes {
                diffs.push(format!(
                    "max bytes {}, not {} (-1 is unlimited)",
                    have.max_bytes, want.max_bytes
                ));
            }
            if have.num_replicas != want.num_replicas {
                diffs.push(format!(
                    "{} replicas, not {}",
                    have.num_replicas, want.num_replicas
                ));
            }
            let (have_placement, want_placement) = (
                placement_key(have.placement.as_ref()),
                placement_key(want.placement.as_ref()),
            );
            if have_placement != want_placement {
                diffs.push(format!(
                    "placement (cluster, tags) {have_placement:?}, not {want_placement:?}"
                ));
            }
            if have.storage != want.storage {
                diffs.push(format!("storage {:?}, not file", have.storage));
            }
            if have.duplicate_window != want.duplicate_window {
                diffs.push(format!(
                    "duplicate window {:?}, not {:?}",
                    have.duplicate_window, want.duplicate_window
                ));
            }
            if diffs.is_empty() {
                Ok(())
            } else {
                Err(config_error(format!(
                    "durable address {:?}: its JetStream stream {} exists with other settings: {}; the bus does not reconfigure a stream (declare the same settings, or update or delete the stream with the nats CLI)",
                    &*d.address,
                    d.stream,
                    diffs.join("; ")
                )))
            }
        }
        Err(e) if matches!(e.kind(), GetStreamErrorKind::JetStream(ref j) if j.error_code() == ErrorCode::STREAM_NOT_FOUND) => {
            js.create_stream(want).await.map(drop).map_err(|e| {
                connect_error(
                    format!(
                        "cannot create the JetStream stream {} for durable address {:?} at {servers} (is JetStream enabled on the server, `-js`?)",
                        d.stream, &*d.address
                    ),
                    e,
                )
            })
        }
        Err(e) => Err(connect_error(
            format!(
                "cannot reach JetStream at {servers} for durable address {:?} (is JetStream enabled on the server, `-js`?)",
                &*d.address
            ),
            e,
        )),
    }
}

/// The consumer of sends of `d`, shared by every node.
pub(super) fn send_consumer_config(d: &DurableAddress) -> pull::Config {
    consumer_config(
        d,
        SEND_CONSUMER.to_owned(),
        &d.send_subject,
        DeliverPolicy::All,
    )
}

/// A node's consumer of publishes of `d`: publishes from its creation on.
pub(super) fn node_consumer_config(d: &DurableAddress, name: String) -> pull::Config {
    consumer_config(d, name, &d.publish_subject, DeliverPolicy::New)
}

fn consumer_config(
    d: &DurableAddress,
    name: String,
    filter: &str,
    deliver_policy: DeliverPolicy,
) -> pull::Config {
    pull::Config {
        durable_name: Some(name),
        filter_subject: filter.to_owned(),
        deliver_policy,
        ack_policy: AckPolicy::Explicit,
        ack_wait: d.options.ack_wait,
        // The bus counts deliveries itself and dead-letters: the server
        // never stops redelivering on its own, so nothing is left behind
        // silently.
        max_deliver: -1,
        max_ack_pending: i64::try_from(d.options.max_in_flight).unwrap_or(i64::MAX),
        num_replicas: 0,
        ..Default::default()
    }
}

/// Creates the consumer `want` on the stream of `d`, or checks the
/// existing one.
pub(super) async fn ensure_consumer(
    js: &Context,
    d: &DurableAddress,
    want: &pull::Config,
) -> Result<(), BuildError> {
    let name = want.durable_name.clone().unwrap_or_default();
    let stream = js
        .get_stream_no_info(&d.stream)
        .await
        .map_err(|e| connect_error(format!("cannot open JetStream stream {}", d.stream), e))?;
    match stream.consumer_info(&name).await {
        Ok(info) => check_consumer(d, &name, &info.config, want),
        Err(e) if e.kind() == ConsumerInfoErrorKind::NotFound => stream
            .create_consumer(want.clone())
            .await
            .map(drop)
            .map_err(|e| {
                connect_error(
                    format!(
                        "cannot create the JetStream consumer {name} of stream {}",
                        d.stream
                    ),
                    e,
                )
            }),
        Err(e) => Err(connect_error(
            format!(
                "cannot read the JetStream consumer {name} of stream {}",
                d.stream
            ),
            e,
        )),
    }
}

/// Checks this node's consumer of publishes, when it exists already.
async fn check_existing_consumer(
    js: &Context,
    d: &DurableAddress,
    node: &str,
) -> Result<(), BuildError> {
    let name = format!("node-{}", sanitize(node, 200));
    let want = node_consumer_config(d, name.clone());
    let stream = js
        .get_stream_no_info(&d.stream)
        .await
        .map_err(|e| connect_error(format!("cannot open JetStream stream {}", d.stream), e))?;
    match stream.consumer_info(&name).await {
        Ok(info) => check_consumer(d, &name, &info.config, &want),
        Err(_) => Ok(()),
    }
}

fn check_consumer(
    d: &DurableAddress,
    name: &str,
    have: &async_nats::jetstream::consumer::Config,
    want: &pull::Config,
) -> Result<(), BuildError> {
    let mut diffs = Vec::new();
    if have.filter_subject != want.filter_subject {
        diffs.push(format!(
            "filter subject {:?}, not {:?}",
            have.filter_subject, want.filter_subject
        ));
    }
    if have.ack_wait != want.ack_wait {
        diffs.push(format!(
            "ack wait {:?}, not {:?}",
            have.ack_wait, want.ack_wait
        ));
    }
    if have.ack_policy != want.ack_policy {
        diffs.push(format!("ack policy {:?}, not explicit", have.ack_policy));
    }
    if have.max_deliver != want.max_deliver {
        diffs.push(format!(
            "max deliver {}, not {} (the bus counts deliveries)",
            have.max_deliver, want.max_deliver
        ));
    }
    if have.max_ack_pending != want.max_ack_pending {
        diffs.push(format!(
            "max ack pending {}, not {} (max in flight)",
            have.max_ack_pending, want.max_ack_pending
        ));
    }
    if have.deliver_subject.is_some() {
        diffs.push("it is a push consumer, not a pull consumer".to_owned());
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(config_error(format!(
            "durable address {:?}: its JetStream consumer {name} of stream {} exists with other settings: {}; the bus does not reconfigure a consumer (declare the same settings, or delete the consumer with the nats CLI)",
            &*d.address,
            d.stream,
            diffs.join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_and_kept_apart() {
        assert_eq!(stream_name("codecbus", "orders"), "codecbus_orders");
        let a = stream_name("codecbus", "a.b");
        let b = stream_name("codecbus", "a_b");
        assert!(a.starts_with("codecbus_a_b_"), "{a}");
        assert_eq!(b, "codecbus_a_b");
        assert_ne!(a, b);
        let long = stream_name("codecbus", &"x".repeat(400));
        assert!(long.len() <= 190, "{}", long.len());
    }

    #[test]
    fn domains_are_one_token() {
        assert!(check_domain("hub").is_ok());
        assert!(check_domain("edge-1").is_ok());
        for bad in ["", "a.b", "a*", "a>", "a b"] {
            let err = check_domain(bad).unwrap_err();
            assert!(err.contains("JetStream domain"), "{err}");
        }
    }

    #[test]
    fn placements_compare_without_order_or_empty_parts() {
        let o = DurableOptions::new();
        assert!(placement(&o).is_none());
        let empty = Placement::default();
        assert_eq!(placement_key(None), placement_key(Some(&empty)));
        let a = placement(&o.clone().placement_tags(["b", "a"])).expect("tags");
        let b = placement(&o.clone().placement_tags(["a", "b"])).expect("tags");
        assert_eq!(placement_key(Some(&a)), placement_key(Some(&b)));
        let c = placement(&o.placement_cluster("east")).expect("cluster");
        assert_ne!(placement_key(Some(&a)), placement_key(Some(&c)));
        assert_eq!(placement_key(Some(&c)), (Some("east"), Vec::new()));
    }

    #[test]
    fn settings_are_checked() {
        assert!(DurableOptions::new().check("a").is_ok());
        let err = DurableOptions::new().replicas(0).check("a").unwrap_err();
        assert!(err.contains("replicas"), "{err}");
        let err = DurableOptions::new()
            .dead_letter("a")
            .check("a")
            .unwrap_err();
        assert!(err.contains("dead-letter"), "{err}");
        let err = DurableOptions::new()
            .placement_tags(["ssd", ""])
            .check("a")
            .unwrap_err();
        assert!(err.contains("placement tag"), "{err}");
        let err = DurableOptions::new()
            .placement_cluster("")
            .check("a")
            .unwrap_err();
        assert!(err.contains("placement cluster"), "{err}");
        let err = DurableOptions::new()
            .max_deliveries(0)
            .check("a")
            .unwrap_err();
        assert!(err.contains("at least 1"), "{err}");
    }
}
