"""Verifying crossbook's signed webhook deliveries.

A delivery is a `POST` with `Service-Webhook-Id`, `Service-Webhook-Timestamp` (Unix seconds) and
`Service-Webhook-Signature: v1,<base64>`, the HMAC-SHA256 of `{id}.{timestamp}.{raw body}` keyed with the
registration's secret, the 64 hex characters themselves as UTF-8 bytes (not hex-decoded, not base64-decoded).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

from .errors import CrossbookError

#: Deliveries whose timestamp is further than this from now are refused, so a captured one cannot be replayed.
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(CrossbookError):
    """The delivery is not a genuine, fresh delivery signed with the secret."""


def verify(
    headers: Mapping[str, str],
    body: Union[bytes, bytearray, str],
    secret: Union[str, bytes],
    *,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> Any:
    """The delivery's parsed JSON payload (`{"type", "data"}`), or raises `WebhookVerificationError`.

    `headers`: the request's headers, any case (a dict, or the headers object of a web framework).
    `body`: the raw bytes received, before any parsing (a `str` is taken as its UTF-8 bytes).
    `secret`: the registration's `secret` as the API shows it.
    """
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    raw = body.encode() if isinstance(body, str) else bytes(body)
    h = {str(k).lower(): v for k, v in headers.items()}
    try:
        msg_id = h["service-webhook-id"]
        stamp = h["service-webhook-timestamp"]
        signatures = h["service-webhook-signature"].split(" ")
        sent = int(stamp)
    except KeyError as e:
        raise WebhookVerificationError(f"missing header {e.args[0]}") from None
    except ValueError:
        raise WebhookVerificationError("Service-Webhook-Timestamp is not a whole number of seconds") from None
    current = time.time() if now is None else now
    if abs(current - sent) > tolerance_seconds:
        raise WebhookVerificationError(
            f"the delivery's timestamp is {abs(current - sent):.0f} s from now (at most {tolerance_seconds:.0f})"
        )
    mac = hmac.new(key, f"{msg_id}.{stamp}.".encode() + raw, hashlib.sha256).digest()
    expected = "v1," + base64.b64encode(mac).decode()
    # Several signatures may be sent, space-separated, so a rotated secret can sign beside the old one.
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise WebhookVerificationError("no signature matches the secret")
    try:
        return json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("the signed body is not JSON") from None
