"""The Python TCP bridge client from PyPI (vertx-eventbus-client 1.0.0)
against codecbus's bridge serving the reference consumers (bridge.rs).

    python_client.py PORT

Prints one JSON object on stdout: what each step saw. The Rust test
checks it; this script only exits non-zero when the client itself fails.
"""

import json
import sys
import threading
import time

from vertx import EventBus

port = int(sys.argv[1])
seen = {}
errors = []
lock = threading.Condition()


def keep(name):
    def handler(message):
        with lock:
            seen[name] = message
            lock.notify_all()

    return handler


def wait_for(name, seconds=10):
    with lock:
        lock.wait_for(lambda: name in seen, timeout=seconds)
        return seen.get(name)


def on_error(message):
    with lock:
        errors.append(message)
        lock.notify_all()


eb = EventBus(
    host="127.0.0.1",
    port=port,
    options={"connect": True, "ping_interval": 1, "reply_timeout": 10, "timeout": 5},
    err_handler=on_error,
)

# A request and its reply, with headers.
eb.send("echo", headers={"h": "v"}, body={"from": "python", "n": 1}, reply_handler=keep("echo"))

# A client registration: the bus's request reaches it, it answers through
# the frame's replyAddress.
def answer(message):
    with lock:
        seen["asked"] = message
    eb.send(message["replyAddress"], body={"answer": message["body"]["q"] * 2})


eb.register_handler("client.py", answer)
eb.send(
    "ask.client",
    body={"address": "client.py", "body": {"q": 21}},
    reply_handler=keep("answered"),
)

# A publish to a registered address comes back to the registration.
eb.register_handler("news", keep("news"))
eb.publish("news", body={"n": 7})
wait_for("news")

# A refused send is an err frame; the connection goes on.
eb.send("secret", body={"x": 1})
with lock:
    lock.wait_for(lambda: errors, timeout=10)
eb.send("echo", body={"after": "refusal"}, reply_handler=keep("after"))

time.sleep(0.2)
eb.close()
with lock:
    print(json.dumps({"seen": seen, "errors": errors}))
