"""One method per route of the API, for the synchronous and the asynchronous client.

Generated from crossbook's /openapi.json by scripts/generate.py: do not edit.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Dict, Iterator, List, Literal, Optional, Union

from ._http import path_value
from ._types import DateArg, NumberArg, TimeArg
from .models import (
    AddByUrlIn,
    AddEventIn,
    BacktestIn,
    CatalogOut,
    CombinedOut,
    CurrentOut,
    DeletedEnvelope,
    DeliveriesEnvelope,
    DeliveryEnvelope,
    EventOhlcvOut,
    EventOut,
    ExchangeName,
    ExecutionPriceOut,
    GapsOut,
    HealthOut,
    HistoryPageOut,
    MarketOut,
    OhlcvOut,
    PairsPageOut,
    PatchEventIn,
    PublicFeedOut,
    ReadyOut,
    RecentEventOut,
    RecentMarketOut,
    SeriesOut,
    SpreadOut,
    TopOfBookHistoryOut,
    TradesOut,
    UnifiedHistoryOut,
    UserFeedOut,
    UserMarketsOut,
    UserStatsOut,
    VenueAHistoryOut,
    VenueBHistoryOut,
    ViewStatsOut,
    ViewTradesOut,
    WatchAddedOut,
    WatchDeletedOut,
    WatchListOut,
    WatchUpdatedOut,
    WebhookEnvelope,
    WebhookIn,
    WebhookListEnvelope,
    WebhookTypeName,
)


class SyncRoutes:
    """Every route of the API as a method."""

    _transport: Any

    def arbitrage_current(
        self,
        *,
        min_net_cents: Optional[NumberArg] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        orderbook: Optional[bool] = None,
        max_staleness_seconds: Optional[int] = None,
        window_tolerance_seconds: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> List[CurrentOut]:
        """Current arbitrage.

        `GET /v1/arbitrage/current` (also at `/arbitrage/current`).
        """
        return self._transport.call(
            "GET",
            "/v1/arbitrage/current",
            {
                "min_net_cents": min_net_cents,
                "interval_code": interval_code,
                "orderbook": orderbook,
                "max_staleness_seconds": max_staleness_seconds,
                "window_tolerance_seconds": window_tolerance_seconds,
                "limit": limit,
            },
            None,
            "json",
        )

    def arbitrage_difference(
        self,
        *,
        minutes: Optional[int] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        limit: Optional[int] = None,
    ) -> List[SpreadOut]:
        """Price spreads.

        `GET /v1/arbitrage/current/difference` (also at `/arbitrage/current/difference`).
        """
        return self._transport.call(
            "GET",
            "/v1/arbitrage/current/difference",
            {
                "minutes": minutes,
                "interval_code": interval_code,
                "limit": limit,
            },
            None,
            "json",
        )

    def arbitrage_history(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        category: Optional[Literal["crypto", "sports"]] = None,
        min_net_cents: Optional[NumberArg] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
    ) -> HistoryPageOut:
        """Arbitrage history.

        `GET /v1/arbitrage/history` (also at `/arbitrage/history`).
        """
        return self._transport.call(
            "GET",
            "/v1/arbitrage/history",
            {
                "limit": limit,
                "offset": offset,
                "interval_code": interval_code,
                "category": category,
                "min_net_cents": min_net_cents,
                "from": from_,
                "to": to,
            },
            None,
            "json",
        )

    def arbitrage_pairs(
        self,
        *,
        kind: Optional[Literal["window", "matched"]] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> PairsPageOut:
        """Matched pairs.

        `GET /v1/arbitrage/pairs` (also at `/arbitrage/pairs`).
        """
        return self._transport.call(
            "GET",
            "/v1/arbitrage/pairs",
            {
                "kind": kind,
                "interval_code": interval_code,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def backtest_trades(self, id: str, *, format: Optional[Literal["csv", "json"]] = None) -> str:
        """A backtest's trades.

        `GET /v1/backtests/{id}/trades`.
        """
        return self._transport.call(
            "GET",
            f"/v1/backtests/{path_value(id)}/trades",
            {
                "format": format,
            },
            None,
            "text",
        )

    def create_backtest(self, *, body: BacktestIn) -> Dict[str, Any]:
        """Start a backtest.

        `POST /v1/backtests`.
        """
        return self._transport.call("POST", "/v1/backtests", {}, body, "json")

    def create_webhook(self, type: WebhookTypeName, *, body: WebhookIn) -> WebhookEnvelope:
        """Register a callback URL for one type.

        `POST /v1/webhooks/{type}`.
        """
        return self._transport.call("POST", f"/v1/webhooks/{path_value(type)}", {}, body, "json")

    def delete_backtest(self, id: str) -> None:
        """Delete a backtest.

        `DELETE /v1/backtests/{id}`.
        """
        return self._transport.call("DELETE", f"/v1/backtests/{path_value(id)}", {}, None, "none")

    def delete_webhook(self, type: WebhookTypeName) -> DeletedEnvelope:
        """Delete the registration of one type (and its delivery log).

        `DELETE /v1/webhooks/{type}`.
        """
        return self._transport.call("DELETE", f"/v1/webhooks/{path_value(type)}", {}, None, "json")

    def docs_page(self) -> str:
        """API reference.

        `GET /docs`.
        """
        return self._transport.call("GET", "/docs", {}, None, "text")

    def event_markets(
        self,
        event_id: str,
        *,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[MarketOut]:
        """Markets of one event.

        `GET /v1/search/events/{event_id}/markets` (also at `/search/events/{event_id}/markets`).
        """
        return self._transport.call(
            "GET",
            f"/v1/search/events/{path_value(event_id)}/markets",
            {
                "status": status,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def event_ohlcv(
        self,
        event_id: str,
        *,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        interval: Optional[Literal["1m", "5m", "1h", "6h", "1d", "1w"]] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
    ) -> EventOhlcvOut:
        """OHLCV candles of an event's markets.

        `GET /v1/events/{event_id}/ohlcv`.
        """
        return self._transport.call(
            "GET",
            f"/v1/events/{path_value(event_id)}/ohlcv",
            {
                "status": status,
                "limit": limit,
                "offset": offset,
                "interval": interval,
                "from": from_,
                "to": to,
            },
            None,
            "json",
        )

    def export_books(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        date: DateArg,
        format: Optional[Literal["csv", "parquet"]] = None,
    ) -> bytes:
        """Export a day of order books.

        `GET /v1/export/books`.
        """
        return self._transport.call(
            "GET",
            "/v1/export/books",
            {
                "exchange": exchange,
                "market_id": market_id,
                "date": date,
                "format": format,
            },
            None,
            "bytes",
        )

    def export_trades(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        date: DateArg,
        format: Optional[Literal["csv", "parquet"]] = None,
    ) -> bytes:
        """Export a day of trades.

        `GET /v1/export/trades`.
        """
        return self._transport.call(
            "GET",
            "/v1/export/trades",
            {
                "exchange": exchange,
                "market_id": market_id,
                "date": date,
                "format": format,
            },
            None,
            "bytes",
        )

    def gaps(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
    ) -> GapsOut:
        """Capture gaps of a market.

        `GET /v1/historical/gaps` (also at `/historical/gaps`).
        """
        return self._transport.call(
            "GET",
            "/v1/historical/gaps",
            {
                "exchange": exchange,
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
            },
            None,
            "json",
        )

    def get_backtest(self, id: str) -> Dict[str, Any]:
        """A backtest.

        `GET /v1/backtests/{id}`.
        """
        return self._transport.call("GET", f"/v1/backtests/{path_value(id)}", {}, None, "json")

    def get_webhook(self, type: WebhookTypeName) -> WebhookEnvelope:
        """Get the caller's registration of one type.

        `GET /v1/webhooks/{type}`.
        """
        return self._transport.call("GET", f"/v1/webhooks/{path_value(type)}", {}, None, "json")

    def healthz(self) -> HealthOut:
        """Liveness.

        `GET /healthz`.
        """
        return self._transport.call("GET", "/healthz", {}, None, "json")

    def list_backtests(self) -> Dict[str, Any]:
        """Backtests.

        `GET /v1/backtests`.
        """
        return self._transport.call("GET", "/v1/backtests", {}, None, "json")

    def list_webhooks(self) -> WebhookListEnvelope:
        """List the caller's registrations.

        `GET /v1/webhooks`.
        """
        return self._transport.call("GET", "/v1/webhooks", {}, None, "json")

    def markets_ohlcv(
        self,
        *,
        market_ids: Union[str, List[str]],
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        interval: Optional[Literal["1m", "5m", "1h", "6h", "1d", "1w"]] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
    ) -> OhlcvOut:
        """OHLCV candles of markets.

        `GET /v1/markets/ohlcv`.
        """
        return self._transport.call(
            "GET",
            "/v1/markets/ohlcv",
            {
                "market_ids": market_ids,
                "exchange": exchange,
                "interval": interval,
                "from": from_,
                "to": to,
            },
            None,
            "json",
        )

    def metrics(self) -> str:
        """Prometheus metrics.

        `GET /metrics`.
        """
        return self._transport.call("GET", "/metrics", {}, None, "text")

    def openapi(self) -> Dict[str, Any]:
        """OpenAPI document.

        `GET /openapi.json`.
        """
        return self._transport.call("GET", "/openapi.json", {}, None, "json")

    def readyz(self) -> ReadyOut:
        """Readiness.

        `GET /readyz`.
        """
        return self._transport.call("GET", "/readyz", {}, None, "json")

    def recent_events(
        self,
        *,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[RecentEventOut]:
        """Recently ingested events.

        `GET /v1/search/recent/events` (also at `/search/recent/events`).
        """
        return self._transport.call(
            "GET",
            "/v1/search/recent/events",
            {
                "exchange": exchange,
                "status": status,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def recent_markets(
        self,
        *,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[RecentMarketOut]:
        """Recently ingested markets.

        `GET /v1/search/recent/markets` (also at `/search/recent/markets`).
        """
        return self._transport.call(
            "GET",
            "/v1/search/recent/markets",
            {
                "exchange": exchange,
                "status": status,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def replay_messages(
        self,
        *,
        market_id: Union[str, List[str]],
        start_time: TimeArg,
        end_time: TimeArg,
        exchange: Optional[ExchangeName] = None,
    ) -> Iterator[Dict[str, Any]]:
        """Replay.

        `GET /v1/replay`.
        """
        return self._transport.lines(
            "GET",
            "/v1/replay",
            {
                "exchange": exchange,
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
            },
            None,
        )

    def search(
        self,
        *,
        q: str,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
    ) -> CombinedOut:
        """Combined search.

        `GET /v1/search` (also at `/search`).
        """
        return self._transport.call(
            "GET",
            "/v1/search",
            {
                "q": q,
                "exchange": exchange,
                "status": status,
                "limit": limit,
            },
            None,
            "json",
        )

    def search_events(
        self,
        *,
        q: Optional[str] = None,
        series_id: Optional[str] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        category: Optional[str] = None,
        status: Optional[Literal["active", "closed"]] = None,
        min_volume: Optional[NumberArg] = None,
        discovered_after: Optional[TimeArg] = None,
        sort_by: Optional[Literal["relevance", "newest", "markets", "volume", "liquidity"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[EventOut]:
        """Search events.

        `GET /v1/search/events` (also at `/search/events`).
        """
        return self._transport.call(
            "GET",
            "/v1/search/events",
            {
                "q": q,
                "series_id": series_id,
                "exchange": exchange,
                "category": category,
                "status": status,
                "min_volume": min_volume,
                "discovered_after": discovered_after,
                "sort_by": sort_by,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def search_markets(
        self,
        *,
        q: Optional[str] = None,
        series_id: Optional[str] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        category: Optional[str] = None,
        status: Optional[Literal["active", "closed"]] = None,
        min_volume: Optional[NumberArg] = None,
        min_liquidity: Optional[NumberArg] = None,
        discovered_after: Optional[TimeArg] = None,
        settled_after: Optional[TimeArg] = None,
        settled_before: Optional[TimeArg] = None,
        sort_by: Optional[Literal["relevance", "newest", "volume", "liquidity"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[MarketOut]:
        """Search markets.

        `GET /v1/search/markets` (also at `/search/markets`).
        """
        return self._transport.call(
            "GET",
            "/v1/search/markets",
            {
                "q": q,
                "series_id": series_id,
                "exchange": exchange,
                "category": category,
                "status": status,
                "min_volume": min_volume,
                "min_liquidity": min_liquidity,
                "discovered_after": discovered_after,
                "settled_after": settled_after,
                "settled_before": settled_before,
                "sort_by": sort_by,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def search_series(
        self,
        *,
        q: Optional[str] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        category: Optional[str] = None,
        status: Optional[Literal["active", "closed"]] = None,
        sort_by: Optional[Literal["title", "newest"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[SeriesOut]:
        """Search series.

        `GET /v1/search/series` (also at `/search/series`).
        """
        return self._transport.call(
            "GET",
            "/v1/search/series",
            {
                "q": q,
                "exchange": exchange,
                "category": category,
                "status": status,
                "sort_by": sort_by,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def test_webhook(self, type: WebhookTypeName) -> DeliveryEnvelope:
        """Send a signed test delivery now and return the attempt.

        `POST /v1/webhooks/{type}/test`.
        """
        return self._transport.call("POST", f"/v1/webhooks/{path_value(type)}/test", {}, None, "json")

    def unified_orderbook(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        format: Optional[Literal["interval", "unified"]] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> UnifiedHistoryOut:
        """Unified order-book history.

        `GET /v1/historical/orderbook` (also at `/historical/orderbook`).
        """
        return self._transport.call(
            "GET",
            "/v1/historical/orderbook",
            {
                "exchange": exchange,
                "market_id": market_id,
                "format": format,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    def unwatch_event(self, id: int) -> WatchDeletedOut:
        """Removes one of the caller's watchlist entries by id.

        `DELETE /whales/user/events/{id}`.
        """
        return self._transport.call("DELETE", f"/whales/user/events/{path_value(id)}", {}, None, "json")

    def unwatch_event_by_ticker(self, exchange: ExchangeName, event_ticker: str) -> WatchDeletedOut:
        """Removes an event from the caller's watchlist by venue and event ticker.

        `DELETE /whales/user/events/by-ticker/{exchange}/{event_ticker}`.
        """
        return self._transport.call(
            "DELETE",
            f"/whales/user/events/by-ticker/{path_value(exchange)}/{path_value(event_ticker)}",
            {
            },
            None,
            "json",
        )

    def update_watched_event(self, id: int, *, body: PatchEventIn) -> WatchUpdatedOut:
        """Changes the whale threshold of one of the caller's watchlist entries.

        `PATCH /whales/user/events/{id}`.
        """
        return self._transport.call("PATCH", f"/whales/user/events/{path_value(id)}", {}, body, "json")

    def update_webhook(self, type: WebhookTypeName, *, body: WebhookIn) -> WebhookEnvelope:
        """Change the callback URL of one type, and optionally turn it on or off.

        `PUT /v1/webhooks/{type}`.
        """
        return self._transport.call("PUT", f"/v1/webhooks/{path_value(type)}", {}, body, "json")

    def venue_a_execution_price(
        self,
        *,
        market_id: str,
        side: Literal["yes", "no"],
        size: NumberArg,
        time: TimeArg,
    ) -> ExecutionPriceOut:
        """venue_a execution price at an instant.

        `GET /v1/historical/venue_a/execution-price` (also at `/historical/venue_a/execution-price`).
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_a/execution-price",
            {
                "market_id": market_id,
                "side": side,
                "size": size,
                "time": time,
            },
            None,
            "json",
        )

    def venue_a_orderbook(
        self,
        *,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> VenueAHistoryOut:
        """venue_a order-book history.

        `GET /v1/historical/venue_a/orderbook` (also at `/historical/venue_a/orderbook`).
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_a/orderbook",
            {
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    def venue_a_top_of_book(
        self,
        *,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> TopOfBookHistoryOut:
        """venue_a top of book over time.

        `GET /v1/historical/venue_a/top-of-book`.
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_a/top-of-book",
            {
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    def venue_a_trades(
        self,
        *,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
    ) -> TradesOut:
        """venue_a trade tape.

        `GET /v1/historical/venue_a/trades`.
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_a/trades",
            {
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
            },
            None,
            "json",
        )

    def venue_b_execution_price(
        self,
        *,
        market_id: str,
        side: Literal["yes", "no"],
        size: NumberArg,
        time: TimeArg,
    ) -> ExecutionPriceOut:
        """venue_b execution price at an instant.

        `GET /v1/historical/venue_b/execution-price` (also at `/historical/venue_b/execution-price`).
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_b/execution-price",
            {
                "market_id": market_id,
                "side": side,
                "size": size,
                "time": time,
            },
            None,
            "json",
        )

    def venue_b_orderbook(
        self,
        *,
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> VenueBHistoryOut:
        """venue_b order-book history.

        `GET /v1/historical/venue_b/orderbook` (also at `/historical/venue_b/orderbook`).
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_b/orderbook",
            {
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    def venue_b_top_of_book(
        self,
        *,
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> TopOfBookHistoryOut:
        """venue_b top of book over time.

        `GET /v1/historical/venue_b/top-of-book`.
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_b/top-of-book",
            {
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    def venue_b_trades(
        self,
        *,
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
    ) -> TradesOut:
        """venue_b trade tape.

        `GET /v1/historical/venue_b/trades`.
        """
        return self._transport.call(
            "GET",
            "/v1/historical/venue_b/trades",
            {
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
            },
            None,
            "json",
        )

    def watch_event(self, *, body: AddEventIn) -> WatchAddedOut:
        """Adds an event to the caller's watchlist.

        `POST /whales/user/events/by-ticker`.
        """
        return self._transport.call("POST", "/whales/user/events/by-ticker", {}, body, "json")

    def watch_event_by_url(self, *, body: AddByUrlIn) -> WatchAddedOut:
        """Adds an event to the watchlist by its web address.

        `POST /whales/user/events/by-url`.
        """
        return self._transport.call("POST", "/whales/user/events/by-url", {}, body, "json")

    def webhook_deliveries(self, type: WebhookTypeName) -> DeliveriesEnvelope:
        """The last 100 delivery attempts of one type, newest first.

        `GET /v1/webhooks/{type}/deliveries`.
        """
        return self._transport.call("GET", f"/v1/webhooks/{path_value(type)}/deliveries", {}, None, "json")

    def whale_event_stats(
        self,
        event_id: str,
        *,
        period: Optional[Literal["24h", "7d", "all"]] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewStatsOut:
        """Whale stats of one event.

        `GET /whales/user/event/{event_id}/stats`.
        """
        return self._transport.call(
            "GET",
            f"/whales/user/event/{path_value(event_id)}/stats",
            {
                "period": period,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    def whale_event_trades(
        self,
        event_id: str,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewTradesOut:
        """Whale trades of one event.

        `GET /whales/user/event/{event_id}`.
        """
        return self._transport.call(
            "GET",
            f"/whales/user/event/{path_value(event_id)}",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    def whale_feed(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        platform: Optional[Literal["venue_a", "venue_b"]] = None,
        event_id: Optional[str] = None,
        min_trade_size: Optional[NumberArg] = None,
    ) -> UserFeedOut:
        """Whale trades on the caller's watchlist, newest first.

        `GET /whales/user/feed`.
        """
        return self._transport.call(
            "GET",
            "/whales/user/feed",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "platform": platform,
                "event_id": event_id,
                "min_trade_size": min_trade_size,
            },
            None,
            "json",
        )

    def whale_market_stats(
        self,
        market_id: str,
        *,
        period: Optional[Literal["24h", "7d", "all"]] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewStatsOut:
        """Whale stats of one market.

        `GET /whales/user/market/{market_id}/stats`.
        """
        return self._transport.call(
            "GET",
            f"/whales/user/market/{path_value(market_id)}/stats",
            {
                "period": period,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    def whale_market_trades(
        self,
        market_id: str,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewTradesOut:
        """Whale trades of one market.

        `GET /whales/user/market/{market_id}/trades`.
        """
        return self._transport.call(
            "GET",
            f"/whales/user/market/{path_value(market_id)}/trades",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    def whale_markets(
        self,
        *,
        period: Optional[Literal["24h", "7d", "all"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        platform: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> UserMarketsOut:
        """Markets of the watchlist by whale volume.

        `GET /whales/user/markets`.
        """
        return self._transport.call(
            "GET",
            "/whales/user/markets",
            {
                "period": period,
                "limit": limit,
                "offset": offset,
                "platform": platform,
            },
            None,
            "json",
        )

    def whale_public_events(self, *, platform: Optional[Literal["venue_a", "venue_b"]] = None) -> CatalogOut:
        """The day's public pool with per-event 24h stats, in unlock order.

        `GET /v1/whales/public/events`.
        """
        return self._transport.call("GET", "/v1/whales/public/events", {"platform": platform}, None, "json")

    def whale_public_feed(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        platform: Optional[Literal["venue_a", "venue_b"]] = None,
        min_trade_size: Optional[NumberArg] = None,
    ) -> PublicFeedOut:
        """Whale trades of the day's public pool, newest first.

        `GET /v1/whales/public/feed`.
        """
        return self._transport.call(
            "GET",
            "/v1/whales/public/feed",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "platform": platform,
                "min_trade_size": min_trade_size,
            },
            None,
            "json",
        )

    def whale_stats(self, *, period: Optional[Literal["24h", "7d", "all"]] = None) -> UserStatsOut:
        """Whale stats of every watchlist event over `period`, each at its own threshold.

        `GET /whales/user/stats`.
        """
        return self._transport.call("GET", "/whales/user/stats", {"period": period}, None, "json")

    def whale_watched_events(self) -> WatchListOut:
        """The caller's watchlist, oldest entry first.

        `GET /whales/user/events`.
        """
        return self._transport.call("GET", "/whales/user/events", {}, None, "json")

class AsyncRoutes:
    """Every route of the API as a method to await."""

    _transport: Any

    async def arbitrage_current(
        self,
        *,
        min_net_cents: Optional[NumberArg] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        orderbook: Optional[bool] = None,
        max_staleness_seconds: Optional[int] = None,
        window_tolerance_seconds: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> List[CurrentOut]:
        """Current arbitrage.

        `GET /v1/arbitrage/current` (also at `/arbitrage/current`).
        """
        return await self._transport.call(
            "GET",
            "/v1/arbitrage/current",
            {
                "min_net_cents": min_net_cents,
                "interval_code": interval_code,
                "orderbook": orderbook,
                "max_staleness_seconds": max_staleness_seconds,
                "window_tolerance_seconds": window_tolerance_seconds,
                "limit": limit,
            },
            None,
            "json",
        )

    async def arbitrage_difference(
        self,
        *,
        minutes: Optional[int] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        limit: Optional[int] = None,
    ) -> List[SpreadOut]:
        """Price spreads.

        `GET /v1/arbitrage/current/difference` (also at `/arbitrage/current/difference`).
        """
        return await self._transport.call(
            "GET",
            "/v1/arbitrage/current/difference",
            {
                "minutes": minutes,
                "interval_code": interval_code,
                "limit": limit,
            },
            None,
            "json",
        )

    async def arbitrage_history(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        category: Optional[Literal["crypto", "sports"]] = None,
        min_net_cents: Optional[NumberArg] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
    ) -> HistoryPageOut:
        """Arbitrage history.

        `GET /v1/arbitrage/history` (also at `/arbitrage/history`).
        """
        return await self._transport.call(
            "GET",
            "/v1/arbitrage/history",
            {
                "limit": limit,
                "offset": offset,
                "interval_code": interval_code,
                "category": category,
                "min_net_cents": min_net_cents,
                "from": from_,
                "to": to,
            },
            None,
            "json",
        )

    async def arbitrage_pairs(
        self,
        *,
        kind: Optional[Literal["window", "matched"]] = None,
        interval_code: Optional[Literal["5m", "15m", "1h", "24h", "1w"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> PairsPageOut:
        """Matched pairs.

        `GET /v1/arbitrage/pairs` (also at `/arbitrage/pairs`).
        """
        return await self._transport.call(
            "GET",
            "/v1/arbitrage/pairs",
            {
                "kind": kind,
                "interval_code": interval_code,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    async def backtest_trades(self, id: str, *, format: Optional[Literal["csv", "json"]] = None) -> str:
        """A backtest's trades.

        `GET /v1/backtests/{id}/trades`.
        """
        return await self._transport.call(
            "GET",
            f"/v1/backtests/{path_value(id)}/trades",
            {
                "format": format,
            },
            None,
            "text",
        )

    async def create_backtest(self, *, body: BacktestIn) -> Dict[str, Any]:
        """Start a backtest.

        `POST /v1/backtests`.
        """
        return await self._transport.call("POST", "/v1/backtests", {}, body, "json")

    async def create_webhook(self, type: WebhookTypeName, *, body: WebhookIn) -> WebhookEnvelope:
        """Register a callback URL for one type.

        `POST /v1/webhooks/{type}`.
        """
        return await self._transport.call("POST", f"/v1/webhooks/{path_value(type)}", {}, body, "json")

    async def delete_backtest(self, id: str) -> None:
        """Delete a backtest.

        `DELETE /v1/backtests/{id}`.
        """
        return await self._transport.call("DELETE", f"/v1/backtests/{path_value(id)}", {}, None, "none")

    async def delete_webhook(self, type: WebhookTypeName) -> DeletedEnvelope:
        """Delete the registration of one type (and its delivery log).

        `DELETE /v1/webhooks/{type}`.
        """
        return await self._transport.call("DELETE", f"/v1/webhooks/{path_value(type)}", {}, None, "json")

    async def docs_page(self) -> str:
        """API reference.

        `GET /docs`.
        """
        return await self._transport.call("GET", "/docs", {}, None, "text")

    async def event_markets(
        self,
        event_id: str,
        *,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[MarketOut]:
        """Markets of one event.

        `GET /v1/search/events/{event_id}/markets` (also at `/search/events/{event_id}/markets`).
        """
        return await self._transport.call(
            "GET",
            f"/v1/search/events/{path_value(event_id)}/markets",
            {
                "status": status,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    async def event_ohlcv(
        self,
        event_id: str,
        *,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        interval: Optional[Literal["1m", "5m", "1h", "6h", "1d", "1w"]] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
    ) -> EventOhlcvOut:
        """OHLCV candles of an event's markets.

        `GET /v1/events/{event_id}/ohlcv`.
        """
        return await self._transport.call(
            "GET",
            f"/v1/events/{path_value(event_id)}/ohlcv",
            {
                "status": status,
                "limit": limit,
                "offset": offset,
                "interval": interval,
                "from": from_,
                "to": to,
            },
            None,
            "json",
        )

    async def export_books(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        date: DateArg,
        format: Optional[Literal["csv", "parquet"]] = None,
    ) -> bytes:
        """Export a day of order books.

        `GET /v1/export/books`.
        """
        return await self._transport.call(
            "GET",
            "/v1/export/books",
            {
                "exchange": exchange,
                "market_id": market_id,
                "date": date,
                "format": format,
            },
            None,
            "bytes",
        )

    async def export_trades(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        date: DateArg,
        format: Optional[Literal["csv", "parquet"]] = None,
    ) -> bytes:
        """Export a day of trades.

        `GET /v1/export/trades`.
        """
        return await self._transport.call(
            "GET",
            "/v1/export/trades",
            {
                "exchange": exchange,
                "market_id": market_id,
                "date": date,
                "format": format,
            },
            None,
            "bytes",
        )

    async def gaps(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
    ) -> GapsOut:
        """Capture gaps of a market.

        `GET /v1/historical/gaps` (also at `/historical/gaps`).
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/gaps",
            {
                "exchange": exchange,
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
            },
            None,
            "json",
        )

    async def get_backtest(self, id: str) -> Dict[str, Any]:
        """A backtest.

        `GET /v1/backtests/{id}`.
        """
        return await self._transport.call("GET", f"/v1/backtests/{path_value(id)}", {}, None, "json")

    async def get_webhook(self, type: WebhookTypeName) -> WebhookEnvelope:
        """Get the caller's registration of one type.

        `GET /v1/webhooks/{type}`.
        """
        return await self._transport.call("GET", f"/v1/webhooks/{path_value(type)}", {}, None, "json")

    async def healthz(self) -> HealthOut:
        """Liveness.

        `GET /healthz`.
        """
        return await self._transport.call("GET", "/healthz", {}, None, "json")

    async def list_backtests(self) -> Dict[str, Any]:
        """Backtests.

        `GET /v1/backtests`.
        """
        return await self._transport.call("GET", "/v1/backtests", {}, None, "json")

    async def list_webhooks(self) -> WebhookListEnvelope:
        """List the caller's registrations.

        `GET /v1/webhooks`.
        """
        return await self._transport.call("GET", "/v1/webhooks", {}, None, "json")

    async def markets_ohlcv(
        self,
        *,
        market_ids: Union[str, List[str]],
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        interval: Optional[Literal["1m", "5m", "1h", "6h", "1d", "1w"]] = None,
        from_: Optional[TimeArg] = None,
        to: Optional[TimeArg] = None,
    ) -> OhlcvOut:
        """OHLCV candles of markets.

        `GET /v1/markets/ohlcv`.
        """
        return await self._transport.call(
            "GET",
            "/v1/markets/ohlcv",
            {
                "market_ids": market_ids,
                "exchange": exchange,
                "interval": interval,
                "from": from_,
                "to": to,
            },
            None,
            "json",
        )

    async def metrics(self) -> str:
        """Prometheus metrics.

        `GET /metrics`.
        """
        return await self._transport.call("GET", "/metrics", {}, None, "text")

    async def openapi(self) -> Dict[str, Any]:
        """OpenAPI document.

        `GET /openapi.json`.
        """
        return await self._transport.call("GET", "/openapi.json", {}, None, "json")

    async def readyz(self) -> ReadyOut:
        """Readiness.

        `GET /readyz`.
        """
        return await self._transport.call("GET", "/readyz", {}, None, "json")

    async def recent_events(
        self,
        *,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[RecentEventOut]:
        """Recently ingested events.

        `GET /v1/search/recent/events` (also at `/search/recent/events`).
        """
        return await self._transport.call(
            "GET",
            "/v1/search/recent/events",
            {
                "exchange": exchange,
                "status": status,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    async def recent_markets(
        self,
        *,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[RecentMarketOut]:
        """Recently ingested markets.

        `GET /v1/search/recent/markets` (also at `/search/recent/markets`).
        """
        return await self._transport.call(
            "GET",
            "/v1/search/recent/markets",
            {
                "exchange": exchange,
                "status": status,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    def replay_messages(
        self,
        *,
        market_id: Union[str, List[str]],
        start_time: TimeArg,
        end_time: TimeArg,
        exchange: Optional[ExchangeName] = None,
    ) -> AsyncIterator[Dict[str, Any]]:
        """Replay.

        `GET /v1/replay`.
        """
        return self._transport.lines(
            "GET",
            "/v1/replay",
            {
                "exchange": exchange,
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
            },
            None,
        )

    async def search(
        self,
        *,
        q: str,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        status: Optional[Literal["active", "closed"]] = None,
        limit: Optional[int] = None,
    ) -> CombinedOut:
        """Combined search.

        `GET /v1/search` (also at `/search`).
        """
        return await self._transport.call(
            "GET",
            "/v1/search",
            {
                "q": q,
                "exchange": exchange,
                "status": status,
                "limit": limit,
            },
            None,
            "json",
        )

    async def search_events(
        self,
        *,
        q: Optional[str] = None,
        series_id: Optional[str] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        category: Optional[str] = None,
        status: Optional[Literal["active", "closed"]] = None,
        min_volume: Optional[NumberArg] = None,
        discovered_after: Optional[TimeArg] = None,
        sort_by: Optional[Literal["relevance", "newest", "markets", "volume", "liquidity"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[EventOut]:
        """Search events.

        `GET /v1/search/events` (also at `/search/events`).
        """
        return await self._transport.call(
            "GET",
            "/v1/search/events",
            {
                "q": q,
                "series_id": series_id,
                "exchange": exchange,
                "category": category,
                "status": status,
                "min_volume": min_volume,
                "discovered_after": discovered_after,
                "sort_by": sort_by,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    async def search_markets(
        self,
        *,
        q: Optional[str] = None,
        series_id: Optional[str] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        category: Optional[str] = None,
        status: Optional[Literal["active", "closed"]] = None,
        min_volume: Optional[NumberArg] = None,
        min_liquidity: Optional[NumberArg] = None,
        discovered_after: Optional[TimeArg] = None,
        settled_after: Optional[TimeArg] = None,
        settled_before: Optional[TimeArg] = None,
        sort_by: Optional[Literal["relevance", "newest", "volume", "liquidity"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[MarketOut]:
        """Search markets.

        `GET /v1/search/markets` (also at `/search/markets`).
        """
        return await self._transport.call(
            "GET",
            "/v1/search/markets",
            {
                "q": q,
                "series_id": series_id,
                "exchange": exchange,
                "category": category,
                "status": status,
                "min_volume": min_volume,
                "min_liquidity": min_liquidity,
                "discovered_after": discovered_after,
                "settled_after": settled_after,
                "settled_before": settled_before,
                "sort_by": sort_by,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    async def search_series(
        self,
        *,
        q: Optional[str] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
        category: Optional[str] = None,
        status: Optional[Literal["active", "closed"]] = None,
        sort_by: Optional[Literal["title", "newest"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[SeriesOut]:
        """Search series.

        `GET /v1/search/series` (also at `/search/series`).
        """
        return await self._transport.call(
            "GET",
            "/v1/search/series",
            {
                "q": q,
                "exchange": exchange,
                "category": category,
                "status": status,
                "sort_by": sort_by,
                "limit": limit,
                "offset": offset,
            },
            None,
            "json",
        )

    async def test_webhook(self, type: WebhookTypeName) -> DeliveryEnvelope:
        """Send a signed test delivery now and return the attempt.

        `POST /v1/webhooks/{type}/test`.
        """
        return await self._transport.call("POST", f"/v1/webhooks/{path_value(type)}/test", {}, None, "json")

    async def unified_orderbook(
        self,
        *,
        exchange: Literal["venue_a", "venue_b"],
        market_id: str,
        format: Optional[Literal["interval", "unified"]] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> UnifiedHistoryOut:
        """Unified order-book history.

        `GET /v1/historical/orderbook` (also at `/historical/orderbook`).
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/orderbook",
            {
                "exchange": exchange,
                "market_id": market_id,
                "format": format,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    async def unwatch_event(self, id: int) -> WatchDeletedOut:
        """Removes one of the caller's watchlist entries by id.

        `DELETE /whales/user/events/{id}`.
        """
        return await self._transport.call("DELETE", f"/whales/user/events/{path_value(id)}", {}, None, "json")

    async def unwatch_event_by_ticker(self, exchange: ExchangeName, event_ticker: str) -> WatchDeletedOut:
        """Removes an event from the caller's watchlist by venue and event ticker.

        `DELETE /whales/user/events/by-ticker/{exchange}/{event_ticker}`.
        """
        return await self._transport.call(
            "DELETE",
            f"/whales/user/events/by-ticker/{path_value(exchange)}/{path_value(event_ticker)}",
            {
            },
            None,
            "json",
        )

    async def update_watched_event(self, id: int, *, body: PatchEventIn) -> WatchUpdatedOut:
        """Changes the whale threshold of one of the caller's watchlist entries.

        `PATCH /whales/user/events/{id}`.
        """
        return await self._transport.call("PATCH", f"/whales/user/events/{path_value(id)}", {}, body, "json")

    async def update_webhook(self, type: WebhookTypeName, *, body: WebhookIn) -> WebhookEnvelope:
        """Change the callback URL of one type, and optionally turn it on or off.

        `PUT /v1/webhooks/{type}`.
        """
        return await self._transport.call("PUT", f"/v1/webhooks/{path_value(type)}", {}, body, "json")

    async def venue_a_execution_price(
        self,
        *,
        market_id: str,
        side: Literal["yes", "no"],
        size: NumberArg,
        time: TimeArg,
    ) -> ExecutionPriceOut:
        """venue_a execution price at an instant.

        `GET /v1/historical/venue_a/execution-price` (also at `/historical/venue_a/execution-price`).
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_a/execution-price",
            {
                "market_id": market_id,
                "side": side,
                "size": size,
                "time": time,
            },
            None,
            "json",
        )

    async def venue_a_orderbook(
        self,
        *,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> VenueAHistoryOut:
        """venue_a order-book history.

        `GET /v1/historical/venue_a/orderbook` (also at `/historical/venue_a/orderbook`).
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_a/orderbook",
            {
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    async def venue_a_top_of_book(
        self,
        *,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> TopOfBookHistoryOut:
        """venue_a top of book over time.

        `GET /v1/historical/venue_a/top-of-book`.
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_a/top-of-book",
            {
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    async def venue_a_trades(
        self,
        *,
        market_id: str,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
    ) -> TradesOut:
        """venue_a trade tape.

        `GET /v1/historical/venue_a/trades`.
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_a/trades",
            {
                "market_id": market_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
            },
            None,
            "json",
        )

    async def venue_b_execution_price(
        self,
        *,
        market_id: str,
        side: Literal["yes", "no"],
        size: NumberArg,
        time: TimeArg,
    ) -> ExecutionPriceOut:
        """venue_b execution price at an instant.

        `GET /v1/historical/venue_b/execution-price` (also at `/historical/venue_b/execution-price`).
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_b/execution-price",
            {
                "market_id": market_id,
                "side": side,
                "size": size,
                "time": time,
            },
            None,
            "json",
        )

    async def venue_b_orderbook(
        self,
        *,
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> VenueBHistoryOut:
        """venue_b order-book history.

        `GET /v1/historical/venue_b/orderbook` (also at `/historical/venue_b/orderbook`).
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_b/orderbook",
            {
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    async def venue_b_top_of_book(
        self,
        *,
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
        granularity: Optional[Literal["1s", "10s", "1m", "5m", "1h"]] = None,
    ) -> TopOfBookHistoryOut:
        """venue_b top of book over time.

        `GET /v1/historical/venue_b/top-of-book`.
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_b/top-of-book",
            {
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
                "granularity": granularity,
            },
            None,
            "json",
        )

    async def venue_b_trades(
        self,
        *,
        market_id: str,
        asset_id: Optional[str] = None,
        start_time: Optional[TimeArg] = None,
        end_time: Optional[TimeArg] = None,
        limit: Optional[int] = None,
        pagination_key: Optional[str] = None,
    ) -> TradesOut:
        """venue_b trade tape.

        `GET /v1/historical/venue_b/trades`.
        """
        return await self._transport.call(
            "GET",
            "/v1/historical/venue_b/trades",
            {
                "market_id": market_id,
                "asset_id": asset_id,
                "start_time": start_time,
                "end_time": end_time,
                "limit": limit,
                "pagination_key": pagination_key,
            },
            None,
            "json",
        )

    async def watch_event(self, *, body: AddEventIn) -> WatchAddedOut:
        """Adds an event to the caller's watchlist.

        `POST /whales/user/events/by-ticker`.
        """
        return await self._transport.call("POST", "/whales/user/events/by-ticker", {}, body, "json")

    async def watch_event_by_url(self, *, body: AddByUrlIn) -> WatchAddedOut:
        """Adds an event to the watchlist by its web address.

        `POST /whales/user/events/by-url`.
        """
        return await self._transport.call("POST", "/whales/user/events/by-url", {}, body, "json")

    async def webhook_deliveries(self, type: WebhookTypeName) -> DeliveriesEnvelope:
        """The last 100 delivery attempts of one type, newest first.

        `GET /v1/webhooks/{type}/deliveries`.
        """
        return await self._transport.call(
            "GET",
            f"/v1/webhooks/{path_value(type)}/deliveries",
            {
            },
            None,
            "json",
        )

    async def whale_event_stats(
        self,
        event_id: str,
        *,
        period: Optional[Literal["24h", "7d", "all"]] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewStatsOut:
        """Whale stats of one event.

        `GET /whales/user/event/{event_id}/stats`.
        """
        return await self._transport.call(
            "GET",
            f"/whales/user/event/{path_value(event_id)}/stats",
            {
                "period": period,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    async def whale_event_trades(
        self,
        event_id: str,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewTradesOut:
        """Whale trades of one event.

        `GET /whales/user/event/{event_id}`.
        """
        return await self._transport.call(
            "GET",
            f"/whales/user/event/{path_value(event_id)}",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    async def whale_feed(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        platform: Optional[Literal["venue_a", "venue_b"]] = None,
        event_id: Optional[str] = None,
        min_trade_size: Optional[NumberArg] = None,
    ) -> UserFeedOut:
        """Whale trades on the caller's watchlist, newest first.

        `GET /whales/user/feed`.
        """
        return await self._transport.call(
            "GET",
            "/whales/user/feed",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "platform": platform,
                "event_id": event_id,
                "min_trade_size": min_trade_size,
            },
            None,
            "json",
        )

    async def whale_market_stats(
        self,
        market_id: str,
        *,
        period: Optional[Literal["24h", "7d", "all"]] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewStatsOut:
        """Whale stats of one market.

        `GET /whales/user/market/{market_id}/stats`.
        """
        return await self._transport.call(
            "GET",
            f"/whales/user/market/{path_value(market_id)}/stats",
            {
                "period": period,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    async def whale_market_trades(
        self,
        market_id: str,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        min_trade_size: Optional[NumberArg] = None,
        exchange: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> ViewTradesOut:
        """Whale trades of one market.

        `GET /whales/user/market/{market_id}/trades`.
        """
        return await self._transport.call(
            "GET",
            f"/whales/user/market/{path_value(market_id)}/trades",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "min_trade_size": min_trade_size,
                "exchange": exchange,
            },
            None,
            "json",
        )

    async def whale_markets(
        self,
        *,
        period: Optional[Literal["24h", "7d", "all"]] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        platform: Optional[Literal["venue_a", "venue_b"]] = None,
    ) -> UserMarketsOut:
        """Markets of the watchlist by whale volume.

        `GET /whales/user/markets`.
        """
        return await self._transport.call(
            "GET",
            "/whales/user/markets",
            {
                "period": period,
                "limit": limit,
                "offset": offset,
                "platform": platform,
            },
            None,
            "json",
        )

    async def whale_public_events(self, *, platform: Optional[Literal["venue_a", "venue_b"]] = None) -> CatalogOut:
        """The day's public pool with per-event 24h stats, in unlock order.

        `GET /v1/whales/public/events`.
        """
        return await self._transport.call(
            "GET",
            "/v1/whales/public/events",
            {
                "platform": platform,
            },
            None,
            "json",
        )

    async def whale_public_feed(
        self,
        *,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        start_date: Optional[TimeArg] = None,
        end_date: Optional[TimeArg] = None,
        platform: Optional[Literal["venue_a", "venue_b"]] = None,
        min_trade_size: Optional[NumberArg] = None,
    ) -> PublicFeedOut:
        """Whale trades of the day's public pool, newest first.

        `GET /v1/whales/public/feed`.
        """
        return await self._transport.call(
            "GET",
            "/v1/whales/public/feed",
            {
                "limit": limit,
                "offset": offset,
                "start_date": start_date,
                "end_date": end_date,
                "platform": platform,
                "min_trade_size": min_trade_size,
            },
            None,
            "json",
        )

    async def whale_stats(self, *, period: Optional[Literal["24h", "7d", "all"]] = None) -> UserStatsOut:
        """Whale stats of every watchlist event over `period`, each at its own threshold.

        `GET /whales/user/stats`.
        """
        return await self._transport.call("GET", "/whales/user/stats", {"period": period}, None, "json")

    async def whale_watched_events(self) -> WatchListOut:
        """The caller's watchlist, oldest entry first.

        `GET /whales/user/events`.
        """
        return await self._transport.call("GET", "/whales/user/events", {}, None, "json")

#: Paged routes: how each pages (`key`: pagination_key, `offset`: limit and offset) and the answer's list.
PAGING: Dict[str, Any] = {
    "arbitrage_history": ("offset", "items"),
    "arbitrage_pairs": ("offset", "items"),
    "event_markets": ("offset", None),
    "event_ohlcv": ("offset", "markets"),
    "gaps": ("key", "gaps"),
    "recent_events": ("offset", None),
    "recent_markets": ("offset", None),
    "search_events": ("offset", None),
    "search_markets": ("offset", None),
    "search_series": ("offset", None),
    "unified_orderbook": ("key", "snapshots"),
    "venue_a_orderbook": ("key", "snapshots"),
    "venue_a_top_of_book": ("key", "rows"),
    "venue_a_trades": ("key", "trades"),
    "venue_b_orderbook": ("key", "snapshots"),
    "venue_b_top_of_book": ("key", "rows"),
    "venue_b_trades": ("key", "trades"),
    "whale_event_trades": ("offset", "trades"),
    "whale_feed": ("offset", "trades"),
    "whale_market_trades": ("offset", "trades"),
    "whale_markets": ("offset", "markets"),
    "whale_public_feed": ("offset", "trades"),
}
