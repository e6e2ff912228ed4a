"""The Python TCP bridge client from PyPI (vertx-eventbus-client 1.0.0)
against a codecbus bridge whose event hook checks a token on the first
frame and keeps each user to its own inbox (bridge/events.rs).

    python_events.py PORT

Prints one JSON object on stdout: what each step saw.
"""

import json
import sys
import threading

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


def on_error(message):
    with lock:
        errors.append(message)
        lock.notify_all()


def wait(predicate, seconds=10):
    with lock:
        lock.wait_for(predicate, timeout=seconds)


eb = EventBus(
    host="127.0.0.1",
    port=port,
    options={"connect": True, "ping_interval": 1, "reply_timeout": 10, "timeout": 5},
    err_handler=on_error,
)

# No token on the first frame: refused.
eb.send("orders", body={"n": 0})
wait(lambda: len(errors) >= 1)
refused = [e.get("message") if isinstance(e, dict) else e for e in errors]

# The token: the request goes through, its user in its headers.
eb.send("orders", headers={"token": "t-ada"}, body={"n": 1}, reply_handler=keep("order"))

# The user's own inbox, then another's.
eb.register_handler("user.ada.inbox", keep("inbox"))
wait(lambda: "inbox" in seen)
eb.register_handler("user.bob.inbox", keep("bob"))
wait(lambda: len(errors) >= 2)
other = errors[1].get("message") if len(errors) > 1 and isinstance(errors[1], dict) else None

eb.close()
print(json.dumps({
    "refused": refused,
    "order": seen.get("order"),
    "inbox": seen.get("inbox"),
    "other_inbox": other,
}))
