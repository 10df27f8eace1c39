#!/usr/bin/env python3
"""A crossbook webhook receiver that verifies each delivery with the standard library only (`hmac`).

    WEBHOOK_SECRET=<the registration's secret> python3 receiver_hmac.py [port]

Listens on 127.0.0.1 (port 8000 by default; 0 picks a free one) and prints the URL, then one line per event.
Answers 204 to a delivery that verifies and 400 to anything else.
"""

import base64
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

# The HMAC key is the secret's own characters (64 hex digits) as bytes: not hex-decoded, not base64-decoded.
SECRET = os.environ["WEBHOOK_SECRET"].encode()
# Deliveries older or newer than this are refused, so a captured delivery cannot be replayed later.
TOLERANCE_SECONDS = 300


class NotVerified(Exception):
    pass


def verify(headers, body):
    """The delivery's JSON payload; raises NotVerified when it does not verify."""
    h = {k.lower(): v for k, v in headers.items()}
    try:
        msg_id, ts = h["service-webhook-id"], h["service-webhook-timestamp"]
        signatures = h["service-webhook-signature"].split(" ")
        stale = abs(time.time() - int(ts)) > TOLERANCE_SECONDS
    except (KeyError, ValueError) as e:
        raise NotVerified(f"missing or malformed header: {e}") from e
    if stale:
        raise NotVerified("timestamp too old or too new")
    # Signed: "{id}.{timestamp}.{raw body}", exactly the bytes received.
    mac = hmac.new(SECRET, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(mac).decode()
    # A space-separated list, so that a rotated secret can be sent alongside the old one.
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise NotVerified("no matching signature")
    return json.loads(body)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            event = verify(dict(self.headers.items()), body)
        except NotVerified as e:
            print(f"rejected: {e}", flush=True)
            self.send_response(400)
        else:
            print(event["type"], event["data"], flush=True)
            self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass  # one line per event is printed above


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8000), Handler)
    print(f"listening on http://127.0.0.1:{server.server_port}/", flush=True)
    server.serve_forever()
