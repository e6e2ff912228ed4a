"""The Python TCP bridge client from PyPI (vertx-eventbus-client 1.0.0)
over TLS (Python's ssl) against a codecbus bridge (bridge/tls.rs).

    python_tls.py PORT CA_FILE [CERT_FILE KEY_FILE]

Prints one JSON object on stdout: the echo's reply, or why none came.
"""

import json
import sys
import threading
import time

from vertx import EventBus

port = int(sys.argv[1])
ssl_options = {"ca_file": sys.argv[2], "check_hostname": True}
if len(sys.argv) > 4:
    ssl_options["cert_file"] = sys.argv[3]
    ssl_options["key_file"] = sys.argv[4]

seen = {}
errors = []
lock = threading.Condition()


def keep(message):
    with lock:
        seen["echo"] = message
        lock.notify_all()


def on_error(message):
    with lock:
        errors.append(message)
        lock.notify_all()


# The client pings from a thread of its own and reads from another, on
# one SSL socket, which OpenSSL does not take from two threads at once:
# its first ping goes before the request, and no other follows within the
# test.
eb = EventBus(
    host="127.0.0.1",
    port=port,
    options={
        "connect": True,
        "ping_interval": 60,
        "reply_timeout": 10,
        "timeout": 5,
        "ssl_options": ssl_options,
    },
    err_handler=on_error,
)
time.sleep(0.5)
eb.send("echo", headers={"h": "v"}, body={"over": "tls"}, reply_handler=keep)
eb.close()
print(json.dumps({"echo": seen.get("echo"), "errors": [str(e) for e in errors]}))
