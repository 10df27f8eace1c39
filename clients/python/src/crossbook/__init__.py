"""crossbook's Python client: every route typed, DataFrames from replays and exports, a resuming live stream,
and webhook verification.

    import crossbook
    client = crossbook.Client("http://127.0.0.1:8080", key="cbk_…")   # or CROSSBOOK_URL and CROSSBOOK_KEY
    markets = client.search_markets(q="bitcoin", limit=5)
"""

from . import books, errors, frames, models, webhooks
from ._client import AsyncClient, Client
from ._version import __version__
from .errors import (
    ApiError,
    Conflict,
    CrossbookError,
    EntitlementRequired,
    InvalidParameter,
    NotFound,
    RateLimited,
    ServerError,
    StreamError,
    Unauthorized,
    Unavailable,
)
from .frames import ReplayError
from .stream import Stream

__all__ = [
    "AsyncClient",
    "Client",
    "Stream",
    "ApiError",
    "Conflict",
    "CrossbookError",
    "EntitlementRequired",
    "InvalidParameter",
    "NotFound",
    "RateLimited",
    "ReplayError",
    "ServerError",
    "StreamError",
    "Unauthorized",
    "Unavailable",
    "books",
    "errors",
    "frames",
    "models",
    "webhooks",
    "__version__",
]
