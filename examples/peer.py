#!/usr/bin/env python3
"""A codecbus peer in Python, written from the guide's wire contract
(book/src/wire.md, versions 1 and 2) alone: it talks to the Rust node of
examples/peer_node.rs through a NATS server and checks every answer, and
reads the wire corpus (bus/tests/wire/corpus/) with its own reader.

    python3 -m pip install nats-py==2.16.0 msgpack==1.2.4 lz4==4.4.4
    python3 examples/peer.py nats://127.0.0.1:4222              # version 2
    python3 examples/peer.py --wire 1 nats://127.0.0.1:4222     # version 1 only
    python3 examples/peer.py --corpus bus/tests/wire/corpus     # no server

With `--wire 1` the peer speaks only version 1, as a peer written from
the contract of November 2026 does: it names codecs in the
`Codecbus-Codec` header, never writes or expects a codec prefix, and
checks that the node (run with `wire_version(WireVersion::V1)`) answers
in the header form. By default it speaks version 2 and also sends
version 1's forms, which every node reads. With `--corpus DIR` it decodes
every message of the corpus (`--wire 1`: of version 1 only) and checks
it against what the file says it carries.

Exits 0 when every check passed, 1 on the first mismatch, 2 on bad usage.
`scripts/peer-check` runs it against a fresh server and node.
"""

import asyncio
import json
import os
import sys
import time

import lz4.block
import msgpack
import nats
from nats.errors import NoRespondersError, TimeoutError as NatsTimeout

PREFIX = "codecbus"  # the node's subject prefix (the default)
WIRE = 2  # the version of the wire contract this peer speaks (--wire)
TIMEOUT = 5.0  # seconds per request


class Mismatch(Exception):
    pass


def send_subject(address):
    """`{prefix}.s.{A'}`: send and request (queue group `{prefix}`).
    The addresses used here are plain tokens, so `A'` is `A`."""
    return f"{PREFIX}.s.{address}"


def publish_subject(address):
    return f"{PREFIX}.p.{address}"


def codec(name, **user):
    """Headers naming the codec `name` of a body: the header form, which is
    version 1 (a node of version 2 names it in the payload, see `framed`)."""
    return {"Codecbus-Codec": f"1 {name}", **user}


MARK = 0xC1  # the byte MessagePack never uses: a payload naming its codec


def framed(name, body, version=2):
    """A payload naming its codec, as a node of version 2 writes it: 0xC1,
    the wire version, the codec name as a MessagePack str, then the body.
    (Nodes built before version 2 wrote the same with the byte 1.)"""
    return bytes([MARK, version]) + msgpack.packb(name) + body


def compressed(name, body):
    """A payload whose body is LZ4-compressed (version 2): after the codec
    prefix, the mark 0xC1 again, the body's size as a MessagePack uint,
    then the body as one LZ4 block."""
    block = lz4.block.compress(body, store_size=False)
    return framed(name, bytes([MARK]) + msgpack.packb(len(body)) + block)


def unframe(data, version=2):
    """The codec name and the body of a payload of version 2 (decompressed
    when it came compressed); no name without the codec prefix."""
    if len(data) < 2 or data[0] != MARK:
        return None, data
    if data[1] != version:
        raise Mismatch(f"codec prefix of wire version {data[1]}, not {version}: {data!r}")
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data[2:])
    name = unpacker.unpack()
    body = data[2 + unpacker.tell():]
    if body[:1] == bytes([MARK]):
        sizes = msgpack.Unpacker()
        sizes.feed(body[1:])
        size = sizes.unpack()
        body = lz4.block.decompress(body[1 + sizes.tell():], uncompressed_size=size)
    return name, body


def read_body(headers, data, version):
    """The codec name and the body bytes of a message with a body, read as
    `version` writes it: version 1 names the codec in the Codecbus-Codec
    header and the payload is the body; version 2 names it in the payload's
    prefix and sends no codec header."""
    named = (headers or {}).get("Codecbus-Codec")
    if version == 1:
        if named is None or " " not in named:
            raise Mismatch(f"version 1: no Codecbus-Codec header: {headers!r}, payload {data!r}")
        stated, name = named.split(" ", 1)
        if stated != "1":
            raise Mismatch(f"version 1: a codec header of version {stated!r}")
        if data[:1] == bytes([MARK]):
            raise Mismatch(f"version 1: a payload starting with 0xC1: {data!r}")
        return name, data
    if named is not None:
        raise Mismatch(f"version {version}: a Codecbus-Codec header {named!r}")
    name, body = unframe(data, version)
    if name is None:
        raise Mismatch(f"version {version}: no codec prefix: {data!r}")
    return name, body


def read_failure(headers, version):
    """The kind and code of a failure reply's header, which states the
    version its node writes; `None` when the message is no failure."""
    failure = (headers or {}).get("Codecbus-Failure")
    if failure is None:
        return None
    stated, kind, code = failure.split(" ", 2)
    if stated != str(version):
        raise Mismatch(f"a failure header of version {stated!r}, not {version}: {failure!r}")
    return kind, int(code)


def pack(value):
    # msgpack-python writes integers in their smallest form, floats as
    # float 64 and str as str: what the Rust codecs write and read.
    return msgpack.packb(value)


def unpack(data):
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def header(msg, name):
    return (msg.headers or {}).get(name)


checks = 0


def check(what, ok, detail=""):
    global checks
    if not ok:
        raise Mismatch(f"{what}: {detail}")
    checks += 1
    print(f"ok   {what}")


def expect_reply(what, msg, codec_name, value):
    name, body = read_body(msg.headers, msg.data, WIRE)
    check(
        f"{what}: reply codec",
        name == codec_name,
        f"headers {msg.headers!r}, payload {msg.data!r}",
    )
    got = unpack(body)
    check(f"{what}: reply body", got == value, f"expected {value!r}, got {got!r}")
    return got


def body_of(msg):
    """The decoded body of a reply of this peer's version."""
    return unpack(read_body(msg.headers, msg.data, WIRE)[1])


def expect_failure(what, msg, kind, code, text=None):
    failure = header(msg, "Codecbus-Failure")
    check(
        f"{what}: {kind} {code}",
        failure == f"{WIRE} {kind} {code}" and header(msg, "Codecbus-Codec") is None,
        f"headers {msg.headers!r}, body {msg.data!r}",
    )
    message = msg.data.decode("utf-8")
    if text is not None:
        check(f"{what}: failure message", text in message, f"{message!r} lacks {text!r}")
    return message


async def request(nc, address, body, headers):
    return await nc.request(send_subject(address), body, timeout=TIMEOUT, headers=headers)


async def wait_for_node(nc):
    """The node may still be subscribing: "no responders" is retried."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return await request(nc, "peer.upper", pack("up?"), codec("string"))
        except NoRespondersError:
            if time.monotonic() > deadline:
                raise Mismatch("the node did not subscribe to peer.upper within 20 s")
            await asyncio.sleep(0.1)


async def requests(nc):
    msg = await wait_for_node(nc)
    expect_reply("string request", msg, "string", "UP?")

    quote = {"sku": "tea", "qty": 3}
    unit = sum(b"tea") % 900 + 100
    expected = {"sku": "tea", "qty": 3, "unit_cents": unit, "total_cents": 3 * unit}
    msg = await request(nc, "peer.quote", pack(quote), codec("peer.quote-request"))
    expect_reply("derived request (map)", msg, "peer.quote", expected)

    msg = await request(nc, "peer.quote", pack(["tea", 3]), codec("peer.quote-request"))
    expect_reply("derived request (positional)", msg, "peer.quote", expected)

    text = "compress me " * 500
    if WIRE == 1:
        # Version 1 has no compressed form: the node's large reply (over
        # its compress_above of 1 KiB) comes plain.
        msg = await request(nc, "peer.upper", pack(text), codec("string"))
        check("version 1: the node's large reply came plain", msg.data == pack(text.upper()),
              f"payload starts {msg.data[:12]!r}")
        expect_reply("large request and reply", msg, "string", text.upper())
    else:
        # The codec named in the payload, as a node does: no header at all.
        msg = await request(nc, "peer.quote", framed("peer.quote-request", pack(quote)), None)
        expect_reply("derived request, codec in the payload", msg, "peer.quote", expected)

        # The prefix of nodes built before version 2 (the byte 1) is read too.
        msg = await request(nc, "peer.quote", framed("peer.quote-request", pack(quote), 1), None)
        expect_reply("derived request, the previous build's codec prefix", msg, "peer.quote",
                     expected)

        # A large body, compressed both ways: this peer compresses its
        # request, the node its reply (its bodies over 1 KiB).
        msg = await request(nc, "peer.upper", compressed("string", pack(text)), None)
        check("the node's large reply came compressed", msg.data[9:10] == bytes([MARK]),
              f"payload starts {msg.data[:12]!r}")
        check("compressed on the wire, a fraction of its size",
              len(msg.data) * 3 < len(pack(text)),
              f"{len(msg.data)} bytes for {len(pack(text))}")
        expect_reply("compressed request and reply", msg, "string", text.upper())

    obj = {"hello": "from python", "n": -7, "pi": 3.25, "list": [1, None, True], "nested": {"a": {}}}
    msg = await request(
        nc, "peer.echo", pack(obj),
        codec("json-obj-value", **{"Trace-Id": "42", "Codecbus-Future": "1 ignored"}),
    )
    expect_reply(
        "JsObj request (unknown Codecbus-* header ignored, user header kept)",
        msg, "json-obj-value", {**obj, "echoed": True, "headers": ["Trace-Id"]},
    )

    msg = await request(nc, "peer.codecs", pack(None), codec("unit"))
    names = set(body_of(msg))
    builtin = {
        "string", "bool", "char", "unit",
        "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64",
        "json-obj-value", "json-array-value", "json-value", "serde-json-value",
    }
    check("built-in codec names", builtin <= names, f"missing {sorted(builtin - names)}")


async def failures(nc):
    msg = await request(nc, "peer.quote", pack({"sku": "tea", "qty": 0}), codec("peer.quote-request"))
    expect_failure("failure reply", msg, "RECIPIENT_FAILURE", 400, "quantity of tea must be at least 1")

    msg = await request(nc, "peer.quote", pack("tea"), codec("string"))
    expect_failure("another type than the consumer's", msg, "TYPE_MISMATCH", -1)

    try:
        await request(nc, "peer.nobody", pack("x"), codec("string"))
        raise Mismatch("no consumer: expected NATS no responders")
    except NoRespondersError:
        check("no consumer anywhere: NATS no responders", True)


async def hostile(nc):
    cases = [
        ("garbage body", "peer.quote", b"\xc1\xff\x00", codec("peer.quote-request"), "cannot decode"),
        ("trailing bytes", "peer.upper", pack("hi") + b"\x00", codec("string"), "1 bytes left after the value"),
        ("wrong MessagePack type", "peer.upper", pack(5), codec("string"), "cannot decode"),
        ("declared length past the end", "peer.echo", b"\xdf\xff\xff\xff\xff", codec("json-obj-value"), "cannot decode"),
        ("no codec prefix, no Codecbus-Codec header", "peer.upper", pack("hi"), None,
         "no Codecbus-Codec header"),
        ("user headers only", "peer.upper", pack("hi"), {"Trace-Id": "1"}, "no Codecbus-Codec header"),
        ("a Codecbus-Failure header", "peer.upper", pack("hi"),
         {"Codecbus-Failure": "1 RECIPIENT_FAILURE 1"}, "no Codecbus-Codec header"),
        ("unknown codec name", "peer.upper", pack("hi"), codec("no.such.codec"), "Unknown codec"),
        # The header form is version 1 only.
        ("codec header of wire version 2", "peer.upper", pack("hi"), {"Codecbus-Codec": "2 string"},
         "wire version"),
        ("no version", "peer.upper", pack("hi"), {"Codecbus-Codec": "string"}, "wire version"),
    ]
    if WIRE == 2:
        cases += [
            ("codec prefix of wire version 3", "peer.upper", b"\xc1\x03" + pack("string") + pack("hi"),
             None, "wire version"),
            ("codec prefix cut short", "peer.upper", b"\xc1\x02\xa6str", None, "no codec name"),
            ("codec prefix, unknown codec", "peer.upper", framed("no.such.codec", pack("hi")), None,
             "Unknown codec"),
            ("codec prefix, garbage body", "peer.upper", framed("string", b"\xdb\xff\xff\xff\xff"),
             None, "cannot decode"),
            ("compressed body declaring 1 GiB", "peer.upper",
             framed("string", b"\xc1" + msgpack.packb(1 << 30) + b"\x1f\x00\x01\x00"), None,
             "over the limit"),
            ("compressed body, broken block", "peer.upper", framed("string", b"\xc1\x06\x60\xa5he"),
             None, "cannot be decompressed"),
        ]
    for what, address, body, headers, text in cases:
        msg = await request(nc, address, body, headers)
        expect_failure(f"hostile request, {what}", msg, "CODEC", -1, text)
    # A Codecbus-Failure header on a request is ignored (only replies carry
    # one), whatever its version.
    msg = await request(nc, "peer.upper", pack("failure header"),
                        codec("string", **{"Codecbus-Failure": "2 SOMETHING_NEW 1"}))
    expect_reply("request with Codecbus-Codec and Codecbus-Failure", msg, "string", "FAILURE HEADER")
    # A publish subject never answers: a request there times out.
    try:
        await nc.request(publish_subject("peer.upper"), pack("x"), timeout=0.5, headers=codec("string"))
        raise Mismatch("a request to a publish subject was answered")
    except NatsTimeout:
        check("a request to a publish subject gets no answer", True)
    # The node is still fine.
    msg = await request(nc, "peer.upper", pack("still there"), codec("string"))
    expect_reply("request after the hostile ones", msg, "string", "STILL THERE")


async def seen(nc):
    msg = await request(nc, "peer.seen", pack(None), codec("unit"))
    return body_of(msg)


async def publish_and_send(nc):
    before = await seen(nc)
    await nc.publish(publish_subject("peer.notes"), pack("note-1"), headers=codec("string"))
    await nc.publish(send_subject("peer.notes"), pack("job-1"), headers=codec("string"))
    if WIRE == 1:
        await nc.publish(send_subject("peer.notes"), pack("job-2"), headers=codec("string"))
    else:
        await nc.publish(send_subject("peer.notes"), framed("string", pack("job-2")))
    # Undecodable sends and publishes are dropped (and counted).
    await nc.publish(send_subject("peer.notes"), pack("no header"))
    await nc.publish(publish_subject("peer.notes"), pack("x") + b"\x00", headers=codec("string"))
    # An unknown Codecbus-* header on a send is ignored.
    await nc.publish(send_subject("peer.notes"), pack("job-3"),
                     headers=codec("string", **{"Codecbus-Future": "x"}))
    await nc.flush()
    want = {"publish": ["note-1"], "send": ["job-1", "job-2", "job-3"]}
    deadline = time.monotonic() + 5
    while True:
        now = await seen(nc)
        got = {
            "publish": now["publish"][len(before["publish"]):],
            "send": sorted(now["send"][len(before["send"]):]),
        }
        undecodable = now["undecodable"] - before["undecodable"]
        if (got == want and undecodable == 2) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    check("publish delivered once", got["publish"] == want["publish"], f"got {got}")
    check("sends to the queue group delivered once each", got["send"] == want["send"], f"got {got}")
    check("undecodable send and publish dropped and counted", undecodable == 2, f"counted {undecodable}")


async def queue_member(nc):
    """This peer joins the queue group of `peer.py` and serves the node."""
    served = []

    async def serve(msg):
        try:
            name, body = read_body(msg.headers, msg.data, WIRE)
            served.append(name)
            body = unpack(body)
        except Exception as e:  # a failure reply, as a node answers
            served.append(f"unreadable: {e}")
            body, answer, headers = None, str(e).encode(), {"Codecbus-Failure": f"{WIRE} CODEC -1"}
        if body == "bare":  # a reply without a bus header
            answer, headers = pack("bare"), None
        elif body == "refuse":  # a failure of a kind from a newer contract
            answer, headers = b"not today", {"Codecbus-Failure": f"{WIRE} SOMETHING_NEW 7"}
        elif body is not None:
            answer, headers = pack(f"pong:{body}"), codec("string")
        # A reply is a plain publish to the request's reply subject.
        await nc.publish(msg.reply, answer, headers=headers)

    sub = await nc.subscribe(send_subject("peer.py"), queue=PREFIX, cb=serve)
    await nc.flush()
    try:
        msg = await request(nc, "peer.relay", pack("ping"), codec("string"))
        expect_reply("node's request served by this peer (queue group)", msg, "string", "pong:ping")
        form = "a Codecbus-Codec header" if WIRE == 1 else "the payload's prefix"
        check(f"the node's request named its codec in {form} (version {WIRE})",
              served == ["string"], f"got {served}")
        msg = await request(nc, "peer.relay", pack("bare"), codec("string"))
        expect_failure("a reply without Codecbus-Codec is a Codec error for the node",
                       msg, "RECIPIENT_FAILURE", 502, "peer.py answered Codec -1")
        msg = await request(nc, "peer.relay", pack("refuse"), codec("string"))
        expect_failure("an unknown failure kind reads as a recipient failure",
                       msg, "RECIPIENT_FAILURE", 502, "peer.py answered RecipientFailure 7: not today")
    finally:
        await sub.unsubscribe()


async def conversation(nc):
    msg = await request(nc, "peer.login", pack("alice"), codec("string"))
    expect_reply("conversation turn 1", msg, "string", "password?")
    check("turn 1 carries a reply subject", bool(msg.reply), "no reply subject")
    msg = await nc.request(msg.reply, pack("hunter2"), timeout=TIMEOUT, headers=codec("string"))
    expect_reply("conversation turn 2", msg, "string", "otp?")
    check("turn 2 carries a reply subject", bool(msg.reply), "no reply subject")
    msg = await nc.request(msg.reply, pack("123456"), timeout=TIMEOUT, headers=codec("string"))
    expect_reply("conversation end", msg, "bool", True)
    check("the last reply carries no reply subject", not msg.reply, f"reply subject {msg.reply!r}")

    # A turn answered with a failure ends the conversation on the node's side.
    msg = await request(nc, "peer.login", pack("bob"), codec("string"))
    expect_reply("conversation 2, turn 1", msg, "string", "password?")
    msg = await nc.request(msg.reply, pack("wrong"), timeout=TIMEOUT, headers=codec("string"))
    expect_failure("conversation 2, refused turn", msg, "RECIPIENT_FAILURE", 401, "wrong password for bob")

    # A turn the node cannot decode is answered with CODEC.
    msg = await request(nc, "peer.login", pack("carol"), codec("string"))
    expect_reply("conversation 3, turn 1", msg, "string", "password?")
    msg = await nc.request(msg.reply, pack("hunter2") + b"\xc0", timeout=TIMEOUT, headers=codec("string"))
    expect_failure("conversation 3, hostile turn", msg, "CODEC", -1, "left after the value")


def corpus(folder):
    """Reads every message of the wire corpus (bus/tests/wire/corpus/, its
    README.md says the format) with this peer's reader, each in the version
    its folder holds, and checks it carries what its file says."""
    versions = (1,) if WIRE == 1 else (1, 2)
    for version in versions:
        folder_v = os.path.join(folder, f"v{version}")
        names = sorted(n for n in os.listdir(folder_v) if n.endswith(".json"))
        check(f"corpus v{version}: cases", len(names) > 0, f"no case in {folder_v}")
        for name in names:
            with open(os.path.join(folder_v, name), encoding="utf-8") as f:
                case = json.load(f)
            what = f"corpus v{version}/{case['case']}"
            check(f"{what}: version {version}", case["wire_version"] == version,
                  f"the file says version {case['wire_version']}")
            for i, message in enumerate(case["messages"]):
                subject = message["subject"]
                check(f"{what} #{i}: subject {subject}",
                      subject == "_INBOX" or subject.startswith(f"{PREFIX}."), subject)
                headers = {}
                for line in message["headers"]:
                    key, value = line.split(": ", 1)
                    headers.setdefault(key, value)
                data = bytes.fromhex(message["payload"])
                carries = message["carries"]
                failure = read_failure(headers, version)
                if "failure" in carries:
                    want = carries["failure"]
                    got = failure and (failure[0], failure[1], data.decode("utf-8"))
                    check(f"{what} #{i}: failure {want['kind']} {want['code']}",
                          got == (want["kind"], want["code"], want["message"]), f"read {got!r}")
                else:
                    want = carries["body"]
                    check(f"{what} #{i}: not a failure", failure is None, f"read {failure!r}")
                    name, body = read_body(headers, data, version)
                    value = unpack(body)
                    check(f"{what} #{i}: {name} {value!r:.40}",
                          (name, value) == (want["codec"], want["value"]),
                          f"read {name!r} {value!r}, the file says {want!r}")


async def main(url):
    nc = await nats.connect(url, name="codecbus-peer-py", connect_timeout=3,
                            max_reconnect_attempts=0, allow_reconnect=False)
    try:
        for step in (requests, failures, hostile, publish_and_send, queue_member, conversation):
            print(f"---- {step.__name__} (wire version {WIRE})")
            await step(nc)
    finally:
        await nc.close()
    print(f"all {checks} checks passed (wire version {WIRE})")


USAGE = "usage: peer.py [--wire 1|2] nats://HOST:PORT | peer.py [--wire 1|2] --corpus DIR"

if __name__ == "__main__":
    args = sys.argv[1:]
    folder = None
    try:
        while args and args[0].startswith("--"):
            flag = args.pop(0)
            if flag == "--wire":
                WIRE = int(args.pop(0))
                if WIRE not in (1, 2):
                    raise ValueError(WIRE)
            elif flag == "--corpus":
                folder = args.pop(0)
            else:
                raise ValueError(flag)
    except (IndexError, ValueError):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    if len(args) != (0 if folder else 1):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    try:
        if folder:
            corpus(folder)
            print(f"all {checks} corpus checks passed")
        else:
            asyncio.run(main(args[0]))
    except (Mismatch, NatsTimeout, NoRespondersError) as e:
        print(f"FAIL {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
