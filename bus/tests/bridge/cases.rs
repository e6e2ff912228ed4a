//! The named cases the bridge tests run against the Vert.x reference
//! (`tests/vertx/ReferenceBridge.java`) and against codecbus's bridge
//! serving the same addresses (`bridge.rs`, `reference_bus`). Each case is
//! a list of steps: a frame sent, how many frames the step waits for, and
//! how long it then listens for more.
//!
//! A sent frame may name a reply address the server generated as
//! `$reply1`, `$reply2`, ... (in the order they first came): the runner
//! puts the real address in.

use std::time::Duration;

use serde_json::{Value, json};

/// What a step sends.
pub(crate) enum Sent {
    /// A frame holding this JSON.
    Json(Value),
    /// These bytes as they are (malformed input), described by `about`.
    Raw { about: &'static str, bytes: Vec<u8> },
}

/// One step of a case.
pub(crate) struct Step {
    pub(crate) sent: Sent,
    /// How many frames the step waits for (5 s at most).
    pub(crate) expect: usize,
    /// How long it then listens for frames it did not expect.
    pub(crate) quiet: Duration,
}

/// A named case.
pub(crate) struct Case {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) steps: Vec<Step>,
}

/// The size of the body of the oversized frame: over the frame limit the
/// codecbus server under test is given (`TEST_MAX_FRAME`).
pub(crate) const BIG_BODY: usize = 80 * 1024;

/// The frame limit of the codecbus bridge under test.
pub(crate) const TEST_MAX_FRAME: usize = 64 * 1024;

const QUIET: Duration = Duration::from_millis(150);

fn step(frame: Value, expect: usize) -> Step {
    Step {
        sent: Sent::Json(frame),
        expect,
        quiet: QUIET,
    }
}

fn raw(about: &'static str, bytes: Vec<u8>, expect: usize) -> Step {
    Step {
        sent: Sent::Raw { about, bytes },
        expect,
        quiet: Duration::from_millis(300),
    }
}

fn ping() -> Step {
    step(json!({"type": "ping"}), 1)
}

/// Every case, in the order they run.
pub(crate) fn all() -> Vec<Case> {
    vec![
        Case {
            name: "ping",
            about: "a ping is answered with a pong",
            steps: vec![ping(), ping()],
        },
        Case {
            name: "send_reply",
            about: "a send with a replyAddress to a consumer that replies: the reply comes back as a message frame at the client's replyAddress, with the reply's headers",
            steps: vec![
                step(
                    json!({"type": "send", "address": "echo", "replyAddress": "my.reply",
                           "headers": {"h": "v"}, "body": {"a": 1, "s": "text"}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "echo", "replyAddress": "my.reply.2",
                           "body": {"nested": {"list": [1, 2.5, null, true, "x"]}}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "echo", "replyAddress": "my.reply.3",
                           "headers": {}, "body": {}}),
                    1,
                ),
            ],
        },
        Case {
            name: "send_no_reply",
            about: "a send without replyAddress: nothing comes back, whatever the consumer does",
            steps: vec![
                step(
                    json!({"type": "send", "address": "echo", "body": {"a": 1}}),
                    0,
                ),
                step(
                    json!({"type": "send", "address": "fail", "body": {"a": 1}}),
                    0,
                ),
                step(
                    json!({"type": "send", "address": "nobody", "body": {"a": 1}}),
                    0,
                ),
                ping(),
            ],
        },
        Case {
            name: "publish",
            about: "a publish to a permitted address: nothing comes back to a client that did not register it",
            steps: vec![
                step(
                    json!({"type": "publish", "address": "news", "body": {"n": 0}}),
                    0,
                ),
                step(
                    json!({"type": "publish", "address": "echo", "replyAddress": "ignored",
                           "body": {"n": 0}}),
                    0,
                ),
                ping(),
            ],
        },
        Case {
            name: "register_publish_unregister",
            about: "register an address, receive publishes and sends to it (the client's own and the server's), unregister, unregister again",
            steps: vec![
                step(json!({"type": "register", "address": "news"}), 0),
                step(
                    json!({"type": "publish", "address": "news", "headers": {"k": "v"},
                           "body": {"n": 1}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "news", "body": {"n": 2}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "publish.trigger", "body": {"n": 3}}),
                    1,
                ),
                step(json!({"type": "unregister", "address": "news"}), 0),
                step(
                    json!({"type": "publish", "address": "news", "body": {"n": 4}}),
                    0,
                ),
                step(json!({"type": "unregister", "address": "news"}), 1),
                ping(),
            ],
        },
        Case {
            name: "register_twice",
            about: "the same address registered twice on one connection, then unregistered once",
            steps: vec![
                step(json!({"type": "register", "address": "news"}), 0),
                step(json!({"type": "register", "address": "news"}), 0),
                step(
                    json!({"type": "publish", "address": "news", "body": {"n": 1}}),
                    1,
                ),
                step(json!({"type": "unregister", "address": "news"}), 0),
                step(
                    json!({"type": "publish", "address": "news", "body": {"n": 2}}),
                    0,
                ),
                ping(),
            ],
        },
        Case {
            name: "header_not_string",
            about: "a request whose header value is a number",
            steps: vec![
                step(
                    json!({"type": "send", "address": "echo", "replyAddress": "my.reply",
                           "headers": {"n": 1}, "body": {}}),
                    1,
                ),
                ping(),
            ],
        },
        Case {
            name: "send_fail",
            about: "a request to a consumer that fails with a code and a message",
            steps: vec![step(
                json!({"type": "send", "address": "fail", "replyAddress": "my.reply",
                       "body": {"a": 1}}),
                1,
            )],
        },
        Case {
            name: "send_no_handler",
            about: "a request to a permitted address nobody consumes",
            steps: vec![step(
                json!({"type": "send", "address": "nobody", "replyAddress": "my.reply",
                       "body": {"a": 1}}),
                1,
            )],
        },
        Case {
            name: "access_denied",
            about: "frames to addresses no permission lists: an err frame each, and the connection goes on",
            steps: vec![
                step(
                    json!({"type": "send", "address": "secret", "replyAddress": "my.reply",
                           "body": {"a": 1}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "secret", "body": {"a": 1}}),
                    1,
                ),
                step(
                    json!({"type": "publish", "address": "secret", "body": {"a": 1}}),
                    1,
                ),
                step(json!({"type": "register", "address": "secret"}), 1),
                step(json!({"type": "unregister", "address": "secret"}), 1),
                step(json!({"type": "register", "address": "echo"}), 1),
                step(
                    json!({"type": "send", "address": "regex", "replyAddress": "my.reply",
                           "body": {"a": 1}}),
                    1,
                ),
                ping(),
            ],
        },
        Case {
            name: "address_regex",
            about: "an address permitted by a regular expression",
            steps: vec![step(
                json!({"type": "send", "address": "regex.echo", "replyAddress": "my.reply",
                       "body": {"via": "regex"}}),
                1,
            )],
        },
        Case {
            name: "match",
            about: "an address permitted only for bodies that contain a JSON subset",
            steps: vec![
                step(
                    json!({"type": "send", "address": "match.echo", "replyAddress": "my.reply",
                           "body": {"action": "allowed", "x": 1}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "match.echo", "replyAddress": "my.reply.2",
                           "body": {"action": "other"}}),
                    1,
                ),
            ],
        },
        Case {
            name: "malformed_json",
            about: "a frame whose bytes are not JSON: dropped, the connection goes on",
            steps: vec![
                raw(
                    "a frame whose bytes are not JSON",
                    crate::runner::frame(b"{not json"),
                    0,
                ),
                ping(),
            ],
        },
        Case {
            name: "missing_type",
            about: "a frame without a type",
            steps: vec![step(json!({"address": "echo", "body": {}}), 0), ping()],
        },
        Case {
            name: "unknown_type",
            about: "a frame of a type the protocol does not have",
            steps: vec![
                step(json!({"type": "shout", "address": "echo", "body": {}}), 1),
                ping(),
            ],
        },
        Case {
            name: "missing_address",
            about: "a send and a register without an address",
            steps: vec![
                step(
                    json!({"type": "send", "replyAddress": "my.reply", "body": {}}),
                    1,
                ),
                step(json!({"type": "register"}), 1),
                ping(),
            ],
        },
        Case {
            name: "body_not_object",
            about: "a send whose body is a JSON string, not an object",
            steps: vec![
                step(
                    json!({"type": "send", "address": "echo", "replyAddress": "my.reply",
                           "body": "text"}),
                    1,
                ),
                ping(),
            ],
        },
        Case {
            name: "oversized",
            about: "a frame larger than the codecbus bridge's frame limit under test",
            steps: vec![
                step(
                    json!({"type": "send", "address": "echo", "replyAddress": "my.reply",
                           "body": {"data": "x".repeat(BIG_BODY)}}),
                    1,
                ),
                ping(),
            ],
        },
        Case {
            name: "server_request",
            about: "a server consumer requests the client's registered address: the client answers through the frame's replyAddress, first with a body, then with a failure",
            steps: vec![
                step(json!({"type": "register", "address": "client.svc"}), 0),
                step(
                    json!({"type": "send", "address": "ask.client", "replyAddress": "my.reply",
                           "body": {"address": "client.svc", "body": {"q": 1}}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "$reply1", "headers": {"k": "v"},
                           "body": {"answer": 2}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "ask.client", "replyAddress": "my.reply.2",
                           "body": {"address": "client.svc", "body": {"q": 3}}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "$reply2", "failureCode": 7,
                           "message": "nope"}),
                    1,
                ),
            ],
        },
        Case {
            name: "conversation",
            about: "a consumer replies asking for an answer: the reply carries a replyAddress, where the client answers, first with a body, then with a failure (the consumer publishes what it heard to news)",
            steps: vec![
                step(json!({"type": "register", "address": "news"}), 0),
                step(
                    json!({"type": "send", "address": "converse", "replyAddress": "r1",
                           "body": {"say": "hi"}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "$reply1", "body": {"say": "fine"}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "converse", "replyAddress": "r2",
                           "body": {"say": "hi again"}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "$reply2", "failureCode": 9,
                           "message": "rather not"}),
                    1,
                ),
            ],
        },
        Case {
            name: "client_answer_asks",
            about: "a server consumer requests the client's registered address; the client's answer carries a replyAddress of its own, the consumer's answer to it comes back there asking in turn, and the client's last word ends the conversation (the consumer then replies to the first request)",
            steps: vec![
                step(json!({"type": "register", "address": "client.talk"}), 0),
                step(
                    json!({"type": "send", "address": "converse.client", "replyAddress": "top",
                           "body": {"address": "client.talk", "body": {"q": 1}}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "$reply1", "replyAddress": "mine",
                           "body": {"a": 2}}),
                    1,
                ),
                step(
                    json!({"type": "send", "address": "$reply2", "body": {"bye": true}}),
                    1,
                ),
            ],
        },
    ]
}
