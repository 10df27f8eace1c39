#!/usr/bin/env python3
"""A crossbook webhook receiver that verifies each delivery with the `standardwebhooks` library.

    pip install standardwebhooks
    WEBHOOK_SECRET=<the registration's secret> python3 receiver_standardwebhooks.py [port]

Listens on 127.0.0.1 (port 8000 by default; 0 picks a free one) and prints the URL, then one line per event.
Answers 204 to a delivery that verifies and 400 to anything else.
"""

import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

# Bytes, not str: the HMAC key is the 64 hex characters themselves. Given a str, the library base64-decodes
# it into another key and every delivery fails with "No matching signature found".
hook = Webhook(os.environ["WEBHOOK_SECRET"].encode())


def verify(headers, body):
    """The delivery's JSON payload; raises WebhookVerificationError when it does not verify."""
    # crossbook sends Service-Webhook-{Id,Timestamp,Signature}; the library reads webhook-{id,timestamp,signature}.
    renamed = {k.lower().replace("service-webhook-", "webhook-"): v for k, v in headers.items()}
    return hook.verify(body, renamed)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            event = verify(dict(self.headers.items()), body)
        except WebhookVerificationError as e:
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
