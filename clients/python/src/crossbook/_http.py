"""The transport both clients share: the key, parameters as the API reads them, errors and retries."""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import os
import time
from decimal import Decimal
from typing import Any, AsyncIterator, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

import httpx

from ._version import __version__
from .errors import error_from_response

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
#: A 429 without `Retry-After` is retried after this many seconds.
DEFAULT_RETRY_SECONDS = 1.0


def query_value(value: Any) -> str:
    """One query value as the API reads it: times as RFC 3339 UTC, booleans as true/false, exact decimals."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueError("a datetime parameter needs a time zone (datetime.timezone.utc, say)")
        utc = value.astimezone(_dt.timezone.utc)
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if hasattr(value, "to_pydatetime"):  # a pandas Timestamp
        return query_value(value.to_pydatetime())
    return str(value)


def query_params(params: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """The query as pairs: `None` leaves a parameter out, a list repeats it (`market_id=A&market_id=B`)."""
    out: List[Tuple[str, str]] = []
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            out.extend((name, query_value(v)) for v in value)
        else:
            out.append((name, query_value(value)))
    return out


def path_value(value: Any) -> str:
    return quote(query_value(value), safe="")


class Transport:
    """What a client is configured with; `SyncTransport` and `AsyncTransport` send with it."""

    def __init__(
        self,
        base_url: str,
        key: Optional[str],
        timeout: float,
        max_retries: int,
        headers: Optional[Mapping[str, str]],
    ) -> None:
        self.base_url = (base_url or os.environ.get("CROSSBOOK_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.key = key if key is not None else os.environ.get("CROSSBOOK_KEY")
        self.timeout = timeout
        self.max_retries = max_retries
        self.headers: Dict[str, str] = {"User-Agent": f"crossbook-python/{__version__}"}
        if self.key:
            self.headers["X-API-Key"] = self.key
        if headers:
            self.headers.update(headers)

    def retry_delay(self, response: httpx.Response, attempt: int) -> Optional[float]:
        """Seconds to wait before sending again, or `None` to give up and raise."""
        if response.status_code != 429 or attempt >= self.max_retries:
            return None
        value = response.headers.get("retry-after")
        try:
            return max(0.0, float(value)) if value is not None else DEFAULT_RETRY_SECONDS
        except ValueError:
            return DEFAULT_RETRY_SECONDS

    @staticmethod
    def error(response: httpx.Response) -> Exception:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        return error_from_response(response.status_code, response.headers, body)


def decode(response: httpx.Response, kind: str) -> Any:
    if kind == "json":
        return response.json() if response.content else None
    if kind == "text":
        return response.text
    if kind == "none":
        return None
    return response.content


class SyncTransport(Transport):
    def __init__(self, *args: Any, http: Optional[httpx.Client] = None) -> None:
        super().__init__(*args)
        self.http = http or httpx.Client(base_url=self.base_url, headers=self.headers, timeout=self.timeout)

    def send(
        self,
        method: str,
        path: str,
        params: Sequence[Tuple[str, str]] = (),
        body: Any = None,
        stream: bool = False,
    ) -> httpx.Response:
        """The answer to a request, retried after `Retry-After` on 429; raises the API's error otherwise.

        With `stream`, the answer's body is left unread: the caller reads it and closes the answer.
        """
        attempt = 0
        while True:
            request = self.http.build_request(method, path, params=list(params), json=body)
            response = self.http.send(request, stream=stream)
            if response.status_code < 400:
                return response
            if stream:
                response.read()
                response.close()
            delay = self.retry_delay(response, attempt)
            if delay is None:
                raise self.error(response)
            attempt += 1
            time.sleep(delay)

    def call(self, method: str, path: str, params: Mapping[str, Any], body: Any, kind: str) -> Any:
        return decode(self.send(method, path, query_params(params), body), kind)

    def lines(self, method: str, path: str, params: Mapping[str, Any], body: Any) -> Iterator[Any]:
        """An NDJSON answer's messages, parsed as they arrive."""
        response = self.send(method, path, query_params(params), body, stream=True)
        try:
            for line in response.iter_lines():
                if line:
                    yield json.loads(line)
        finally:
            response.close()

    def close(self) -> None:
        self.http.close()


class AsyncTransport(Transport):
    def __init__(self, *args: Any, http: Optional[httpx.AsyncClient] = None) -> None:
        super().__init__(*args)
        self.http = http or httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=self.timeout)

    async def send(
        self,
        method: str,
        path: str,
        params: Sequence[Tuple[str, str]] = (),
        body: Any = None,
        stream: bool = False,
    ) -> httpx.Response:
        attempt = 0
        while True:
            request = self.http.build_request(method, path, params=list(params), json=body)
            response = await self.http.send(request, stream=stream)
            if response.status_code < 400:
                return response
            if stream:
                await response.aread()
                await response.aclose()
            delay = self.retry_delay(response, attempt)
            if delay is None:
                raise self.error(response)
            attempt += 1
            await asyncio.sleep(delay)

    async def call(self, method: str, path: str, params: Mapping[str, Any], body: Any, kind: str) -> Any:
        return decode(await self.send(method, path, query_params(params), body), kind)

    async def lines(self, method: str, path: str, params: Mapping[str, Any], body: Any) -> AsyncIterator[Any]:
        response = await self.send(method, path, query_params(params), body, stream=True)
        try:
            async for line in response.aiter_lines():
                if line:
                    yield json.loads(line)
        finally:
            await response.aclose()

    async def close(self) -> None:
        await self.http.aclose()
