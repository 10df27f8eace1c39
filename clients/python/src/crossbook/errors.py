"""The API's errors as exceptions.

Every error the service answers has a body `{"detail", "code", "param"?, "required_plan"?}`; the client raises
the exception class of its `code`, so a caller can catch exactly what it expects (`except NotFound`) or every
API error (`except ApiError`).
"""

from __future__ import annotations

from typing import Any, Optional


class CrossbookError(Exception):
    """Every error this package raises."""


class ApiError(CrossbookError):
    """An error answer of the service: its HTTP status and the fields of its error body."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        param: Optional[str] = None,
        required_plan: Optional[str] = None,
        retry_after: Optional[float] = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.param = param
        self.required_plan = required_plan
        self.retry_after = retry_after
        self.body = body


class InvalidParameter(ApiError):
    """400: a bad or missing parameter, named in `param`, or a webhook URL the service will not call."""


class Unauthorized(ApiError):
    """401: a key is required, or the key is unknown or revoked."""


class EntitlementRequired(ApiError):
    """403: the key's plan does not include the route; `required_plan` names the plan that does."""


class NotFound(ApiError):
    """404: an unknown market, event, backtest, registration or path."""


class Conflict(ApiError):
    """409: it already exists, or it is not ready yet (a backtest's trades before the run is done)."""


class RateLimited(ApiError):
    """429: over the plan's rate or its concurrent replays, exports or backtests; `retry_after` in seconds."""


class Unavailable(ApiError):
    """503: the service cannot serve the request now (its database, or live data on this process)."""


class ServerError(ApiError):
    """500 or another answer the API does not document."""


class StreamError(CrossbookError):
    """The live stream refused a message (`error`), or could not be resumed."""

    def __init__(self, code: str, detail: str, param: Optional[str] = None, required_plan: Optional[str] = None):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.param = param
        self.required_plan = required_plan


_BY_CODE = {
    "invalid_parameter": InvalidParameter,
    "missing_parameter": InvalidParameter,
    "url_not_allowed": InvalidParameter,
    "unauthorized": Unauthorized,
    "entitlement_required": EntitlementRequired,
    "not_found": NotFound,
    "conflict": Conflict,
    "rate_limited": RateLimited,
    "unavailable": Unavailable,
}


def error_from_response(status: int, headers: Any, body: Any) -> ApiError:
    """The exception for an error answer (`body` is its parsed JSON, or its text when it is not JSON)."""
    fields = body if isinstance(body, dict) else {}
    code = fields.get("code") or f"http_{status}"
    detail = fields.get("detail") or fields.get("message") or (body if isinstance(body, str) else "") or "error"
    retry_after = None
    value = headers.get("retry-after") if headers is not None else None
    if value is not None:
        try:
            retry_after = float(value)
        except ValueError:
            retry_after = None
    cls = _BY_CODE.get(code, ServerError)
    return cls(
        status,
        code,
        detail,
        param=fields.get("param"),
        required_plan=fields.get("required_plan"),
        retry_after=retry_after,
        body=body,
    )
