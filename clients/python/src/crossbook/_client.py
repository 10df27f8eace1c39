"""`Client` and `AsyncClient`: every route (generated), paging, and the DataFrame helpers."""

from __future__ import annotations

import asyncio
import datetime as _dt
import queue
from typing import Any, AsyncIterator, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import httpx

from . import frames as _frames
from ._http import AsyncTransport, SyncTransport, query_params
from ._routes import PAGING, AsyncRoutes, SyncRoutes
from ._types import DateArg, TimeArg

Markets = Union[str, Sequence[str]]


def _paging(method: Callable[..., Any]) -> Any:
    """How the route of `method` pages, and the answer's list: `PAGING`'s entry."""
    name = getattr(method, "__name__", "")
    if name not in PAGING:
        raise ValueError(f"{name or method!r} is not a paged route; paged: {', '.join(sorted(PAGING))}")
    return PAGING[name]


def _items(answer: Any, field: Optional[str]) -> List[Any]:
    return answer if field is None else answer[field]


def _next(style: str, answer: Any, items: List[Any], params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The parameters of the next page, or `None` after the last."""
    if style == "key":
        key = answer.get("pagination", {}).get("pagination_key")
        return {**params, "pagination_key": key} if key else None
    limit = params.get("limit")
    pagination = answer.get("pagination") if isinstance(answer, dict) else None
    if pagination is not None and "has_more" in pagination:
        more = bool(pagination["has_more"])
    else:
        # A plain list: a short page is the last one (the route's default limit when none was given).
        more = bool(items) and (limit is None or len(items) >= int(limit))
    if not more or not items:
        return None
    return {**params, "offset": int(params.get("offset") or 0) + len(items)}


def _venue_market(exchange: Optional[str], market: str) -> str:
    if exchange is None or ":" in market:
        return market
    return f"{exchange}:{market}"


def _history_route(kind: str, exchange: str) -> str:
    if exchange not in ("venue_a", "venue_b"):
        raise ValueError(f"exchange must be venue_a or venue_b, not {exchange!r}")
    return f"{exchange}_{kind}"


class Client(SyncRoutes):
    """crossbook's API, synchronously.

    `base_url`: the service (default `CROSSBOOK_URL`, else `http://127.0.0.1:8080`); `key`: an API key (default
    `CROSSBOOK_KEY`; search and the service routes need none). A 429 is retried after its `Retry-After`, at most
    `max_retries` times; every other error answer raises the `crossbook.errors` class of its `code`.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        key: Optional[str] = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 5,
        headers: Optional[Mapping[str, str]] = None,
        http: Optional[httpx.Client] = None,
    ) -> None:
        self._transport = SyncTransport(base_url, key, timeout, max_retries, headers, http=http)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def key(self) -> Optional[str]:
        return self._transport.key

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- paging ---------------------------------------------------------------------------------------------

    def pages(self, method: Callable[..., Any], **params: Any) -> Iterator[Any]:
        """Every page of a paged route, from the one `params` asks for: `client.pages(client.gaps, exchange=…)`."""
        style, field = _paging(method)
        while params is not None:
            answer = method(**params)
            yield answer
            params = _next(style, answer, _items(answer, field), params)

    def iterate(self, method: Callable[..., Any], **params: Any) -> Iterator[Any]:
        """Every row of a paged route over all its pages (order books, trades, gaps, search lists, feeds…)."""
        _, field = _paging(method)
        for answer in self.pages(method, **params):
            yield from _items(answer, field)

    # --- frames ---------------------------------------------------------------------------------------------

    def replay(
        self,
        markets: Markets,
        start_time: TimeArg,
        end_time: TimeArg,
        *,
        exchange: Optional[str] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """The recorded books, trades and gaps of up to 50 markets between two instants, as a frame.

        A row per book level (the export's layout: `side`, `price`, `size`), per trade and per gap, in time order;
        see `crossbook.frames` for the columns and types, and `crossbook.books` to rebuild the books.
        """
        params = _replay_params(markets, start_time, end_time, exchange)
        response = self._transport.send("GET", "/v1/replay", params, stream=True)
        try:
            # Parsed block by block as it arrives: reading and parsing overlap.
            table = _frames.replay_table(response.iter_raw(1 << 20), exact)
        finally:
            response.close()
        return _frames.convert(table, frame)

    def orderbook_history(
        self,
        exchange: str,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        *,
        granularity: Optional[str] = None,
        asset_id: Optional[str] = None,
        limit: Optional[int] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """Order books as they were, a row per level (`level` 0 is the best), over every page of the range.

        Without a range, the latest `limit` rows (default 100), newest first; with one, oldest first, one book
        per `granularity` bucket (`1m` by default).
        """
        method = getattr(self, _history_route("orderbook", exchange))
        params = _history_params(exchange, market_id, start_time, end_time, granularity, asset_id)
        rows = _rows(self, method, params, limit)
        return _frames.convert(_frames.book_rows_table(rows, exchange, exact), frame)

    def trades(
        self,
        exchange: str,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        *,
        asset_id: Optional[str] = None,
        limit: Optional[int] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """A market's recorded trades over every page of the range (without one, the latest `limit`)."""
        method = getattr(self, _history_route("trades", exchange))
        params = _history_params(exchange, market_id, start_time, end_time, None, asset_id)
        rows = _rows(self, method, params, limit)
        return _frames.convert(_frames.trades_table(rows, exchange, exact), frame)

    def ohlcv(
        self,
        market_ids: Markets,
        *,
        interval: Optional[str] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
        exchange: Optional[str] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """Candles of the YES price of 1 to 50 markets: a row per market and interval, empty intervals included."""
        ids = [market_ids] if isinstance(market_ids, str) else list(market_ids)
        answer = self.markets_ohlcv(market_ids=ids, interval=interval, from_=from_, to=to, exchange=exchange)
        return _frames.convert(_frames.ohlcv_table(answer["markets"], exact), frame)

    def export(
        self,
        kind: str,
        exchange: str,
        market_id: str,
        date: DateArg,
        *,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """One market's UTC day as a frame: `kind` `books` (a row per changed level) or `trades`.

        Read from the Parquet file, whose columns are typed by the service.
        """
        data = self._transport.send(
            "GET", f"/v1/export/{_export_kind(kind)}", _export_params(exchange, market_id, date)
        )
        return _frames.convert(_frames.export_table(data.content, exact), frame)


class AsyncClient(AsyncRoutes):
    """crossbook's API for asyncio: the methods of `Client`, awaited (paging with `async for`)."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        key: Optional[str] = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 5,
        headers: Optional[Mapping[str, str]] = None,
        http: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._transport = AsyncTransport(base_url, key, timeout, max_retries, headers, http=http)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def key(self) -> Optional[str]:
        return self._transport.key

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def pages(self, method: Callable[..., Any], **params: Any) -> AsyncIterator[Any]:
        """Every page of a paged route: `async for page in client.pages(client.gaps, …)`."""
        style, field = _paging(method)
        while params is not None:
            answer = await method(**params)
            yield answer
            params = _next(style, answer, _items(answer, field), params)

    async def iterate(self, method: Callable[..., Any], **params: Any) -> AsyncIterator[Any]:
        """Every row of a paged route over all its pages."""
        _, field = _paging(method)
        async for answer in self.pages(method, **params):
            for item in _items(answer, field):
                yield item

    async def replay(
        self,
        markets: Markets,
        start_time: TimeArg,
        end_time: TimeArg,
        *,
        exchange: Optional[str] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """As `Client.replay`: the body is parsed on a worker thread as it arrives, and the event loop goes on."""
        params = _replay_params(markets, start_time, end_time, exchange)
        response = await self._transport.send("GET", "/v1/replay", params, stream=True)
        pieces: "queue.SimpleQueue[Optional[bytes]]" = queue.SimpleQueue()

        def arrived() -> Iterator[bytes]:
            while (piece := pieces.get()) is not None:
                yield piece

        parsing = asyncio.get_running_loop().run_in_executor(None, _frames.replay_table, arrived(), exact)
        try:
            async for piece in response.aiter_raw(1 << 20):
                # A parser that stopped (an error message in the stream) takes nothing more.
                if parsing.done():
                    break
                pieces.put(piece)
        finally:
            pieces.put(None)
            await response.aclose()
        return _frames.convert(await parsing, frame)

    async def orderbook_history(
        self,
        exchange: str,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        *,
        granularity: Optional[str] = None,
        asset_id: Optional[str] = None,
        limit: Optional[int] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """As `Client.orderbook_history`."""
        method = getattr(self, _history_route("orderbook", exchange))
        params = _history_params(exchange, market_id, start_time, end_time, granularity, asset_id)
        rows = await _arows(self, method, params, limit)
        return _frames.convert(_frames.book_rows_table(rows, exchange, exact), frame)

    async def trades(
        self,
        exchange: str,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        *,
        asset_id: Optional[str] = None,
        limit: Optional[int] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """As `Client.trades`."""
        method = getattr(self, _history_route("trades", exchange))
        params = _history_params(exchange, market_id, start_time, end_time, None, asset_id)
        rows = await _arows(self, method, params, limit)
        return _frames.convert(_frames.trades_table(rows, exchange, exact), frame)

    async def ohlcv(
        self,
        market_ids: Markets,
        *,
        interval: Optional[str] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
        exchange: Optional[str] = None,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """As `Client.ohlcv`."""
        ids = [market_ids] if isinstance(market_ids, str) else list(market_ids)
        answer = await self.markets_ohlcv(market_ids=ids, interval=interval, from_=from_, to=to, exchange=exchange)
        return _frames.convert(_frames.ohlcv_table(answer["markets"], exact), frame)

    async def export(
        self,
        kind: str,
        exchange: str,
        market_id: str,
        date: DateArg,
        *,
        frame: str = "pandas",
        exact: bool = False,
    ) -> Any:
        """As `Client.export`."""
        path = f"/v1/export/{_export_kind(kind)}"
        data = await self._transport.send("GET", path, _export_params(exchange, market_id, date))
        return _frames.convert(_frames.export_table(data.content, exact), frame)


def _replay_params(markets: Markets, start_time: TimeArg, end_time: TimeArg, exchange: Optional[str]) -> Any:
    ids = [markets] if isinstance(markets, str) else list(markets)
    return query_params(
        {
            "market_id": [_venue_market(exchange, m) for m in ids],
            "start_time": start_time,
            "end_time": end_time,
        }
    )


def _history_params(
    exchange: str,
    market_id: str,
    start_time: Optional[TimeArg],
    end_time: Optional[TimeArg],
    granularity: Optional[str],
    asset_id: Optional[str],
) -> Dict[str, Any]:
    params: Dict[str, Any] = {"market_id": market_id, "start_time": start_time, "end_time": end_time}
    if granularity is not None:
        params["granularity"] = granularity
    if exchange == "venue_b" and asset_id is not None:
        params["asset_id"] = asset_id
    return params


def _rows(client: Client, method: Callable[..., Any], params: Dict[str, Any], limit: Optional[int]) -> List[Any]:
    """A range: every row over all pages (200 a page). No range: the latest `limit` rows, one page."""
    if params.get("start_time") is None:
        _, field = _paging(method)
        return _items(method(**params, limit=limit), field)
    return list(client.iterate(method, **params, limit=200))


async def _arows(
    client: AsyncClient, method: Callable[..., Any], params: Dict[str, Any], limit: Optional[int]
) -> List[Any]:
    if params.get("start_time") is None:
        _, field = _paging(method)
        return _items(await method(**params, limit=limit), field)
    return [row async for row in client.iterate(method, **params, limit=200)]


def _export_kind(kind: str) -> str:
    if kind not in ("books", "trades"):
        raise ValueError(f"kind must be books or trades, not {kind!r}")
    return kind


def _export_params(exchange: str, market_id: str, date: DateArg) -> Any:
    day = date.isoformat() if isinstance(date, _dt.date) else date
    return query_params({"exchange": exchange, "market_id": market_id, "date": day, "format": "parquet"})
