#!/usr/bin/env python3
"""A SockJS peer of the event bus bridge at /eventbus over one of SockJS's
HTTP transports: a scripted session run step by step and printed as one
normalised JSON record, so that the Vert.x reference's answers (the
committed frames/sockjs_http/<transport>.json) and codecbus's compare.

    python3 sockjs_http.py PORT TRANSPORT

TRANSPORT is xhr-streaming, xhr-polling, eventsource, htmlfile or jsonp.
Standard library only. Exits 1 with a message on stderr when the server at
127.0.0.1:PORT does not answer as SockJS.

The record: "open" (the first receiving request: status, headers, prelude,
frames), "steps" (each message sent with the send endpoint: what was sent,
the answer, the frames received meanwhile), "close" (a second receiving
request while the first is open, what the first and a third then receive,
the first ended by the client, then a send and a receive on the session),
"unknown_session_send", "probes" (wrong method, CORS preflights, callback
checks), "framing" and "escaping".

In it, SockJS's own frames are strings ("o", "h"), each frame of an a[...]
message is its JSON (a string when it is not JSON), a close frame
c[code,reason] is {"$close": [code, reason]}, the end of a receiving
response {"$end": true} and a response still open at the end of a look
{"$pending": true}. How an a[...] message is batched is not recorded, only
its frames. A reply address the server generated becomes $reply1,
$reply2... in the order it first came; the session id is never recorded
(paths show {session}), the Origin sent becomes $origin and an Expires
date $date. Heartbeats (h) are dropped. How each kind of frame travels on
the wire is recorded once under "framing" (an a-frame's payload shown as
a[...]), and under "escaping" the exact wire form, between its markers, of
a string full of characters to escape.
"""

import json
import random
import re
import signal
import socket
import string
import sys
import time
import urllib.parse

HOST = "127.0.0.1"
SERVER = "000"
# How long a step waits for the frames it expects, and then for any more.
EXPECT_WITHIN = 3.0
QUIET = 0.2
# How long one HTTP answer (its head, or a whole short body) may take.
ANSWER_WITHIN = 3.0
# The whole run, however the server behaves.
RUN_WITHIN = 9

TRANSPORTS = ("xhr-streaming", "xhr-polling", "eventsource", "htmlfile", "jsonp")
STREAMING = ("xhr-streaming", "eventsource", "htmlfile")
# The callback names the jsonp and htmlfile receivers use.
CALLBACK = "_jp.cb1"

# Response headers worth comparing (names in lower case).
KEPT_HEADERS = (
    "content-type",
    "cache-control",
    "expires",
    "set-cookie",
    "x-content-type-options",
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-allow-methods",
    "access-control-allow-headers",
    "access-control-max-age",
)

# A string whose wire form shows the escaping: between the markers, a
# character of each kind that some encoding escapes.
SPECIALS = "BEGIN\u00e9\u20ac\U0001f600\u2028/'\"\\\t\n\u0001<&>END"


class Failure(Exception):
    """The server does not answer as SockJS."""


def fail(message):
    raise Failure(message)


class Response:
    """One HTTP/1.1 exchange on a connection of its own, its body read as it
    comes (chunked, by length or to the end of the connection)."""

    def __init__(self, port, method, path, headers=(), body=b""):
        self.request = f"{method} {path}"
        try:
            self.sock = socket.create_connection((HOST, port), timeout=ANSWER_WITHIN)
        except OSError as e:
            fail(f"cannot connect to {HOST}:{port}: {e}")
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
        lines += [f"{k}: {v}" for k, v in headers]
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.sock.sendall(head + body)
        self.raw = b""
        self.eof = False
        self.done = False
        self.status = None
        self.headers = []
        self.mode = None
        self.left = 0
        self.chunk_state = "size"

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _recv(self, deadline):
        """More bytes from the socket before `deadline`; False when none."""
        if self.eof:
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.raw += data
        return True

    def read_head(self, within=ANSWER_WITHIN, deadline=None):
        """The status, once the head came; None when `deadline` (given)
        passed first, a Failure when `within` seconds did."""
        if self.status is not None:
            return self.status
        required = deadline is None
        if required:
            deadline = time.monotonic() + within
        while b"\r\n\r\n" not in self.raw:
            if not self._recv(deadline):
                if not required and not self.eof:
                    return None
                fail(f"{self.request}: no HTTP answer"
                     + (" (connection closed)" if self.eof else f" within {within} s"))
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            fail(f"{self.request}: not an HTTP status line: {lines[0]!r}")
        self.status = int(parts[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers.append((name.strip().lower(), value.strip()))
        names = dict(self.headers)
        if self.status in (204, 304) or 100 <= self.status < 200:
            self.mode = "none"
            self.done = True
        elif "chunked" in names.get("transfer-encoding", "").lower():
            self.mode = "chunked"
        elif "content-length" in names:
            self.mode = "length"
            self.left = int(names["content-length"])
            self.done = self.left == 0
        else:
            self.mode = "eof"
        return self.status

    def _decode(self):
        """The body bytes that the raw bytes read so far hold."""
        out = b""
        if self.mode == "length":
            take = self.raw[: self.left]
            self.raw = self.raw[len(take):]
            self.left -= len(take)
            self.done = self.left == 0
            return take
        if self.mode == "eof":
            out, self.raw = self.raw, b""
            self.done = self.eof
            return out
        while self.mode == "chunked" and not self.done:
            if self.chunk_state == "size":
                if b"\r\n" not in self.raw:
                    break
                line, self.raw = self.raw.split(b"\r\n", 1)
                try:
                    self.left = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    fail(f"{self.request}: a bad chunk size {line!r}")
                self.chunk_state = "data" if self.left else "trailer"
            elif self.chunk_state == "data":
                take = self.raw[: self.left]
                self.raw = self.raw[len(take):]
                self.left -= len(take)
                out += take
                if self.left:
                    break
                self.chunk_state = "crlf"
            elif self.chunk_state == "crlf":
                if len(self.raw) < 2:
                    break
                self.raw = self.raw[2:]
                self.chunk_state = "size"
            else:  # trailer: header lines, up to an empty one
                if self.raw.startswith(b"\r\n"):
                    self.raw = self.raw[2:]
                    self.done = True
                elif b"\r\n" in self.raw:
                    self.raw = self.raw.split(b"\r\n", 1)[1]
                else:
                    break
        return out

    def read_some(self, deadline):
        """Body bytes that came before `deadline` (maybe none)."""
        out = self._decode()
        while not out and not self.done:
            if not self._recv(deadline):
                if self.eof:
                    out += self._decode()
                    self.done = True
                break
            out += self._decode()
        return out

    def read_all(self, within=ANSWER_WITHIN):
        """The whole body; `None` when it did not end within `within`."""
        deadline = time.monotonic() + within
        body = b""
        while not self.done:
            body += self.read_some(deadline)
            if time.monotonic() >= deadline and not self.done:
                return None
        return body

    def ended(self):
        """Whether the server ended the answer or the connection."""
        return self.done or self.eof


class Session:
    """The state of one run: the port, the transport, the session id and
    how the record normalises what is random."""

    def __init__(self, port, transport):
        self.port = port
        self.transport = transport
        self.origin = f"http://{HOST}:{port}"
        self.session = self.fresh_id()
        self.replies = {}
        self.framing = {}

    @staticmethod
    def fresh_id():
        return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(12))

    def path(self, tail, session=None):
        return f"/eventbus/{SERVER}/{session or self.session}/{tail}"

    def shown(self, path, session=None):
        return path.replace(session or self.session, "{session}")

    def headers_of(self, response):
        kept = {}
        for name, value in response.headers:
            if name in KEPT_HEADERS:
                value = value.replace(self.origin, "$origin")
                if name == "expires":
                    value = "$date"
                kept[name] = kept[name] + "\n" + value if name in kept else value
        return kept

    def answer(self, response, body, path_shown):
        """The record of a short answer."""
        return {
            "request": f"{response.request.split(' ')[0]} {path_shown}",
            "status": response.status,
            "headers": self.headers_of(response),
            "body": None if body is None else body.decode("utf-8", "replace"),
        }

    def normalise(self, frame):
        if isinstance(frame, dict):
            reply = frame.get("replyAddress")
            if isinstance(reply, str):
                if reply not in self.replies:
                    self.replies[reply] = f"$reply{len(self.replies) + 1}"
                frame["replyAddress"] = self.replies[reply]
        return frame

    # ---- the receiving side ----

    def receive_path(self, session=None, callback=CALLBACK):
        tail = {
            "xhr-streaming": "xhr_streaming",
            "xhr-polling": "xhr",
            "eventsource": "eventsource",
            "htmlfile": f"htmlfile?c={urllib.parse.quote(callback)}",
            "jsonp": f"jsonp?c={urllib.parse.quote(callback)}",
        }[self.transport]
        return self.path(tail, session)

    def receive_request(self, session=None, origin=True):
        method = "POST" if self.transport.startswith("xhr") else "GET"
        headers = [("Origin", self.origin)] if origin else []
        return Response(self.port, method, self.receive_path(session), headers)

    # ---- the sending side ----

    def send_path(self, session=None):
        tail = "jsonp_send" if self.transport == "jsonp" else "xhr_send"
        return self.path(tail, session)

    def send_raw(self, body, content_type, extra=(), session=None):
        headers = list(extra)
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        response = Response(self.port, "POST", self.send_path(session), headers, body)
        response.read_head()
        data = response.read_all()
        response.close()
        return self.answer(response, data, self.shown(self.send_path(session), session))


def js_unescape(text):
    """A JavaScript string literal's content (as vertx-web escapes it)."""
    out = []
    i = 0
    simple = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        e = text[i + 1]
        if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2: i + 6]):
            out.append(chr(int(text[i + 2: i + 6], 16)))
            i += 6
        elif e == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", text[i + 2: i + 4]):
            out.append(chr(int(text[i + 2: i + 4], 16)))
            i += 4
        else:
            out.append(simple.get(e, e))
            i += 2
    # Escaped surrogate pairs become one character.
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def compact_prelude(text):
    """A prelude in a short deterministic form: a run of the same padding
    character shown as <char>*<count>."""
    if text and text.endswith("\n") and set(text[:-1]) == {"h"}:
        return f"h*{len(text) - 1}\n"
    return re.sub(r" {16,}", lambda m: f"<{len(m.group())} spaces>", text)


class Wire:
    """Splits a receiving response's body into SockJS frames, the way the
    transport frames them: (prefix, frame text as sent, suffix) each."""

    def __init__(self, transport):
        self.transport = transport
        self.buf = b""
        self.prelude = None  # text, once seen

    def feed(self, data):
        self.buf += data

    def take_prelude(self):
        """The prelude when complete: None while incomplete; "" when the
        transport has none."""
        if self.prelude is not None:
            return self.prelude
        t = self.transport
        if t in ("xhr-polling", "jsonp"):
            self.prelude = ""
        elif t == "xhr-streaming":
            # A line of h's; shorter lines are frames.
            if b"\n" not in self.buf:
                return None
            line, rest = self.buf.split(b"\n", 1)
            if len(line) > 1 and set(line) == {ord("h")}:
                self.prelude = line.decode() + "\n"
                self.buf = rest
            else:
                self.prelude = ""
        elif t == "eventsource":
            if len(self.buf) < 2:
                return None
            if self.buf.startswith(b"\r\n"):
                self.prelude = "\r\n"
                self.buf = self.buf[2:]
            else:
                self.prelude = ""
        elif t == "htmlfile":
            if b"\r\n" not in self.buf:
                return None
            page, self.buf = self.buf.split(b"\r\n", 1)
            self.prelude = page.decode("utf-8", "replace") + "\r\n"
        return self.prelude

    def frames(self):
        """The complete frames in the buffer."""
        out = []
        if self.take_prelude() is None:
            return out
        t = self.transport
        while True:
            if t in ("xhr-streaming", "xhr-polling"):
                if b"\n" not in self.buf:
                    break
                line, self.buf = self.buf.split(b"\n", 1)
                out.append(("", line.decode("utf-8", "replace"), "\n"))
            elif t == "eventsource":
                if b"\r\n\r\n" not in self.buf:
                    break
                event, self.buf = self.buf.split(b"\r\n\r\n", 1)
                event = event.decode("utf-8", "replace")
                if not event.startswith("data: "):
                    fail(f"eventsource: not a data line: {event!r}")
                out.append(("data: ", event[len("data: "):], "\r\n\r\n"))
            elif t == "htmlfile":
                end = b'");\n</script>\r\n'
                if end not in self.buf:
                    break
                block, self.buf = self.buf.split(end, 1)
                block = block.decode("utf-8", "replace")
                start = '<script>\np("'
                if not block.startswith(start):
                    fail(f"htmlfile: not a script block: {block!r}")
                out.append((start, js_unescape(block[len(start):]), end.decode(), block[len(start):]))
                continue
            else:  # jsonp: one call per answer, all of it
                text = self.buf.decode("utf-8", "replace")
                m = re.fullmatch(r'(/\*\*/[A-Za-z0-9_.\-]*\(")(.*)("\);\r\n)', text, re.S)
                if not m:
                    break
                self.buf = b""
                out.append((m.group(1), js_unescape(m.group(2)), m.group(3), m.group(2)))
                break
        # Uniform shape: (prefix, frame text, suffix, frame text as on the wire).
        return [f if len(f) == 4 else (f[0], f[1], f[2], f[1]) for f in out]


def parse_frame(text):
    """One SockJS frame as the record shows it: a list of frames for a."""
    if text in ("o", "h"):
        return [text]
    if text.startswith("c"):
        try:
            return [{"$close": json.loads(text[1:])}]
        except ValueError:
            return [{"$close": text[1:]}]
    if text.startswith("a"):
        try:
            items = json.loads(text[1:])
        except ValueError:
            fail(f"not a SockJS a-frame: {text!r}")
        frames = []
        for item in items:
            try:
                frames.append(json.loads(item))
            except (TypeError, ValueError):
                frames.append(item)
        return frames
    fail(f"not a SockJS frame: {text!r}")


class Receiver:
    """The receiving side of the session: one streaming answer, or polls
    one after the other (a new one as soon as one ends)."""

    def __init__(self, run, response):
        self.run = run
        self.response = response
        self.wire = Wire(run.transport)
        self.queue = []
        self.stopped = False
        self.ended = False
        self.raw_seen = []  # wire text of each a-frame taken, for "escaping"

    def _record_framing(self, prefix, text, suffix, wire_text):
        kind = text[:1]
        if kind in ("o", "a", "c", "h") and kind not in self.run.framing:
            shown = wire_text
            if kind == "a":
                shown = "a[...]"
            self.run.framing[kind] = prefix + shown + suffix

    def _take(self):
        for prefix, text, suffix, wire_text in self.wire.frames():
            self._record_framing(prefix, text, suffix, wire_text)
            if text.startswith("a"):
                self.raw_seen.append(wire_text)
            for frame in parse_frame(text):
                if frame != "h":
                    self.queue.append(self.run.normalise(frame))

    def next(self, wait):
        """The next frame within `wait` seconds, None when none came."""
        deadline = time.monotonic() + wait
        while not self.queue:
            if self.ended:
                return None
            if time.monotonic() >= deadline:
                return None
            if self.response.read_head(deadline=deadline) is None:
                return None
            if self.response.status != 200:
                fail(f"{self.response.request}: status {self.response.status}")
            data = self.response.read_some(deadline)
            self.wire.feed(data)
            self._take()
            if self.response.ended():
                self.response.close()
                if self.run.transport in STREAMING or self.stopped:
                    # The end of a stream, or of the last poll.
                    self.ended = True
                    self.queue.append({"$end": True})
                else:
                    # Polling: the next poll at once.
                    self.wire = Wire(self.run.transport)
                    # (Its head comes with its first frame.)
                    self.response = self.run.receive_request()
        return self.queue.pop(0)

    def collect(self, expect, within=EXPECT_WITHIN):
        got = []
        for _ in range(expect):
            frame = self.next(within)
            if frame is None:
                break
            got.append(frame)
        while True:
            frame = self.next(QUIET)
            if frame is None:
                break
            got.append(frame)
        return got

    def abort(self):
        self.stopped = True
        self.response.close()


def steps(transport):
    """The scripted steps: what is sent (frames, or a raw body with its
    content type) and how many frames it waits for."""
    jsonp = transport == "jsonp"
    form = "application/x-www-form-urlencoded"
    out = [
        # Origin and a JSESSIONID cookie: CORS and cookie handling.
        {"frames": [{"type": "ping"}], "expect": 0,
         "extra": [("Origin", "$origin"), ("Cookie", "JSESSIONID=abc")]},
        {"frames": [{"type": "send", "address": "echo", "replyAddress": "r1",
                     "headers": {"h": "v"}, "body": {"a": 1}}], "expect": 1},
        {"frames": [{"type": "send", "address": "secret", "body": {}}], "expect": 1},
        {"frames": [{"type": "send", "address": "fail", "replyAddress": "r2", "body": {}}],
         "expect": 1},
        {"frames": [{"type": "send", "address": "nobody", "replyAddress": "r3", "body": {}}],
         "expect": 1},
        {"frames": [{"type": "register", "address": "news"}], "expect": 0},
        {"frames": [{"type": "publish", "address": "publish.trigger", "body": {"n": 5}}],
         "expect": 1},
        {"frames": [{"type": "unregister", "address": "news"}], "expect": 0},
        {"frames": [{"type": "publish", "address": "publish.trigger", "body": {"n": 7}}],
         "expect": 0},
        # Characters to escape, sent as UTF-8 (not \u escapes).
        {"frames": [{"type": "send", "address": "echo", "replyAddress": "r4",
                     "body": {"s": SPECIALS}}], "expect": 1, "utf8": True, "escaping": True},
        # Two frames in one message.
        {"frames": [{"type": "send", "address": "echo", "replyAddress": "r5", "body": 1},
                    {"type": "send", "address": "echo", "replyAddress": "r6", "body": "two"}],
         "expect": 2},
        # One frame as a JSON string, not in an array.
        {"raw": json.dumps(json.dumps({"type": "send", "address": "echo",
                                       "replyAddress": "r7", "body": 8})), "expect": 1},
        # Not JSON.
        {"raw": "[", "expect": 0},
        # No payload.
        {"raw": "", "expect": 0},
    ]
    if jsonp:
        out += [
            {"raw": "d=", "content_type": form, "expect": 0},
            # A raw body (text/plain) rather than a form.
            {"raw": json.dumps([json.dumps({"type": "send", "address": "echo",
                                            "replyAddress": "r8", "body": 9})]),
             "content_type": "text/plain", "expect": 1},
            {"raw": "[]", "content_type": "application/json", "expect": 0},
            {"raw": "[]", "content_type": None, "expect": 0},
        ]
    else:
        out += [
            # A form where a raw body is expected.
            {"raw": "d=" + urllib.parse.quote(json.dumps([json.dumps({"type": "ping"})])),
             "content_type": form, "expect": 0},
        ]
    return out


def send_step(run, step):
    """Sends one step's message; the record of what was sent and of the
    answer."""
    jsonp = run.transport == "jsonp"
    extra = [(k, v.replace("$origin", run.origin)) for k, v in step.get("extra", [])]
    if "frames" in step:
        utf8 = step.get("utf8", False)
        texts = [json.dumps(f, ensure_ascii=not utf8) for f in step["frames"]]
        payload = json.dumps(texts, ensure_ascii=not utf8)
        if jsonp:
            body = ("d=" + urllib.parse.quote(payload.encode("utf-8"), safe="")).encode("ascii")
            content_type = "application/x-www-form-urlencoded"
        else:
            body = payload.encode("utf-8")
            content_type = "text/plain;charset=UTF-8"
        sent = {"frames": step["frames"]}
    else:
        raw = step["raw"]
        if "content_type" in step:
            content_type = step["content_type"]
            body = raw.encode("utf-8")
        elif jsonp:
            content_type = "application/x-www-form-urlencoded"
            body = ("d=" + urllib.parse.quote(raw, safe="")).encode("ascii") if raw else b""
        else:
            content_type = "text/plain;charset=UTF-8"
            body = raw.encode("utf-8")
        sent = {"body": body.decode("utf-8")}
    sent["content_type"] = content_type
    if step.get("extra"):
        sent["request_headers"] = {k: v for k, v in step["extra"]}
    answer = run.send_raw(body, content_type, extra)
    del answer["request"]
    return sent, answer


def short_exchange(run, method, path, headers=(), body=b"", within=ANSWER_WITHIN, session=None):
    response = Response(run.port, method, path, headers, body)
    response.read_head()
    data = response.read_all(within)
    response.close()
    return run.answer(response, data, run.shown(path, session))


def receive_exchange(run, session, path=None, origin=False):
    """A receiving request of its own (at `path`, or the transport's): its
    answer, its prelude and the frames it brought ({"$pending": true} when
    it was still open QUIET seconds after the last)."""
    if path is None:
        response = run.receive_request(session, origin=origin)
    else:
        response = Response(run.port, "GET", path)
    response.read_head()
    record = run.answer(response, b"", run.shown(response.request.split(" ", 1)[1], session))
    del record["body"]
    if response.status == 200:
        receiver = Receiver(run, response)
        receiver.stopped = True
        frames = []
        frame = receiver.next(EXPECT_WITHIN)
        while frame is not None:
            frames.append(frame)
            frame = receiver.next(QUIET)
        if not receiver.ended:
            frames.append({"$pending": True})
        record["prelude"] = compact_prelude(receiver.wire.prelude or "")
        record["received"] = frames
    else:
        data = response.read_all()
        record["body"] = None if data is None else data.decode("utf-8", "replace")
    response.close()
    return record


def run_session(port, transport):
    run = Session(port, transport)
    record = {"transport": transport}

    # Open.
    response = run.receive_request()
    response.read_head()
    if response.status != 200:
        fail(f"{response.request}: status {response.status}, not a SockJS session")
    receiver = Receiver(run, response)
    opened = receiver.next(EXPECT_WITHIN)
    if opened != "o":
        fail(f"{response.request}: expected the open frame o, got {opened!r}")
    record["open"] = {
        "request": f"{response.request.split(' ')[0]} {run.shown(response.request.split(' ', 1)[1])}",
        "status": response.status,
        "headers": run.headers_of(response),
        "prelude": compact_prelude(receiver.wire.prelude or ""),
        "received": ["o"] + receiver.collect(0),
    }

    # The scripted steps.
    record["steps"] = []
    for step in steps(transport):
        seen = len(receiver.raw_seen)
        sent, answer = send_step(run, step)
        received = receiver.collect(step["expect"])
        record["steps"].append({"sent": sent, "answer": answer, "received": received})
        if step.get("escaping"):
            wire = "".join(receiver.raw_seen[seen:])
            m = re.search(r"BEGIN(.*?)END", wire, re.S)
            record["escaping"] = m.group(1) if m else None

    # Close: a second receiving request while one is open (or pending),
    # then the first one ended by the client, then what the session says.
    close = {}
    close["second_receiver"] = receive_exchange(run, run.session)
    # Does the first one still receive? (Not long: it may not.)
    sent, answer = send_step(run, {"frames": [{"type": "send", "address": "echo",
                                               "replyAddress": "r9", "body": 9}]})
    close["send_after_second"] = {"sent": sent, "answer": answer}
    close["first_receiver_after_second"] = receiver.collect(1, within=0.5)
    # A third one, the first still open: what it gets.
    close["third_receiver"] = receive_exchange(run, run.session)
    receiver.abort()
    time.sleep(0.3)
    sent, answer = send_step(run, {"frames": [{"type": "ping"}]})
    close["send_after_client_closed"] = answer
    close["receive_after_client_closed"] = receive_exchange(run, run.session)
    record["close"] = close

    # A session nobody opened.
    unknown = Session.fresh_id()
    path = run.send_path(unknown)
    if transport == "jsonp":
        body, content_type = b"d=%5B%5D", "application/x-www-form-urlencoded"
    else:
        body, content_type = b"[]", "text/plain;charset=UTF-8"
    record["unknown_session_send"] = short_exchange(
        run, "POST", path, [("Content-Type", content_type)], body, session=unknown)

    # The methods, preflights and callbacks each transport answers.
    probes = {}
    probe_session = Session.fresh_id()
    wrong = "GET" if transport.startswith("xhr") else "POST"
    probes["wrong_method"] = short_exchange(
        run, wrong, run.receive_path(probe_session), session=probe_session)
    if transport.startswith("xhr"):
        preflight = [("Origin", run.origin), ("Access-Control-Request-Method", "POST"),
                     ("Access-Control-Request-Headers", "content-type")]
        probes["options_receive"] = short_exchange(
            run, "OPTIONS", run.receive_path(probe_session), preflight, session=probe_session)
        probes["options_send"] = short_exchange(
            run, "OPTIONS", run.send_path(probe_session), preflight, session=probe_session)
    if transport in ("jsonp", "htmlfile"):
        tail = "jsonp" if transport == "jsonp" else "htmlfile"
        base = run.path(tail, probe_session)
        probes["no_callback"] = short_exchange(run, "GET", base, session=probe_session)
        probes["bad_callback"] = short_exchange(
            run, "GET", base + "?c=" + urllib.parse.quote("a(b"), session=probe_session)
        # 33 characters that are all allowed: jsonp limits the length to 32.
        long_session = Session.fresh_id()
        long_path = run.path(tail, long_session) + "?c=" + "x" * 33
        probe = receive_exchange(run, long_session, path=long_path)
        probes["long_callback"] = probe
    record["probes"] = probes

    record["framing"] = run.framing
    return record


def main(argv):
    if len(argv) != 3 or argv[2] not in TRANSPORTS or not argv[1].isdigit():
        sys.stderr.write(f"usage: sockjs_http.py PORT ({' | '.join(TRANSPORTS)})\n")
        return 2

    def too_long(_signum, _frame):
        raise Failure(f"the session took over {RUN_WITHIN} s")

    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(RUN_WITHIN)
    try:
        record = run_session(int(argv[1]), argv[2])
    except Failure as e:
        sys.stderr.write(f"sockjs_http.py: {argv[2]} at {HOST}:{argv[1]}: {e}\n")
        return 1
    finally:
        signal.alarm(0)
    sys.stdout.write(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
