"""crossbook.webhooks.verify on deliveries the service really sent."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

import crossbook
from crossbook.webhooks import WebhookVerificationError, verify


class Receiver:
    """A local HTTP receiver that keeps every delivery's headers and raw body."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                received.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/whales"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def delivered(url, key, kind, target, times):
    """Registers `target` for `kind`, has the service send it `times` test deliveries, and removes it: the secret."""
    with crossbook.Client(url, key=key) as c:
        try:
            c.delete_webhook(kind)
        except crossbook.NotFound:
            pass
        secret = c.create_webhook(kind, body={"url": target})["data"]["secret"]
        try:
            for _ in range(times):
                attempt = c.test_webhook(kind)
                assert attempt["success"] is True, attempt
        finally:
            c.delete_webhook(kind)
    return secret


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def test_deliveries_of_the_service_verify_and_altered_ones_do_not(env, receiver):
    secret = delivered(env.url, env.builder, "whale", receiver.url, times=2)
    assert len(receiver.received) == 2
    for headers, body in receiver.received:
        payload = verify(headers, body, secret)
        assert payload["type"] == "webhook.test"
        # The secret as bytes, and headers in any case, verify the same.
        lower = {k.lower(): v for k, v in headers.items()}
        assert verify(lower, body, secret.encode()) == payload

        with pytest.raises(WebhookVerificationError, match="no signature"):
            verify(headers, body.replace(b"webhook.test", b"webhook.tost"), secret)
        with pytest.raises(WebhookVerificationError, match="no signature"):
            verify(headers, body, secret[:-1] + ("0" if secret[-1] != "0" else "1"))
        sent = int(lower["service-webhook-timestamp"])
        with pytest.raises(WebhookVerificationError, match="from now"):
            verify(headers, body, secret, now=sent + 301)
        assert verify(headers, body, secret, now=sent + 299) == payload
        with pytest.raises(WebhookVerificationError, match="missing header"):
            verify({k: v for k, v in headers.items() if k.lower() != "service-webhook-id"}, body, secret)


def test_verify_agrees_with_the_standard_webhooks_library(env, receiver):
    standardwebhooks = pytest.importorskip("standardwebhooks.webhooks")
    secret = delivered(env.url, env.trader, "arbitrage", receiver.url, times=1)
    headers, body = receiver.received[0]
    renamed = {k.lower().replace("service-webhook-", "webhook-"): v for k, v in headers.items()}
    assert standardwebhooks.Webhook(secret.encode()).verify(body, renamed) == verify(headers, body, secret)
    assert json.loads(body)["type"] == "webhook.test"
