"""The API's objects, as typed dictionaries: what each route answers and each body takes.

Generated from crossbook's /openapi.json by scripts/generate.py: do not edit.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

#: Where a candle's close comes from.
CloseSource = Literal["trade", "mid"]
#: The machine-readable `code` of an error body.
ErrorCode = Literal[
    "invalid_parameter",
    "missing_parameter",
    "url_not_allowed",
    "unauthorized",
    "entitlement_required",
    "not_found",
    "method_not_allowed",
    "request_timeout",
    "conflict",
    "payload_too_large",
    "unsupported_media_type",
    "rate_limited",
    "internal",
    "unavailable",
]
#: A venue: `venue_a` or `venue_b`.
ExchangeName = Literal["venue_a", "venue_b"]
#: How a venue's books are fed.
FeedModeOut = Literal["idle", "websocket", "polling"]
FileBytes = bytes
#: Row format of the unified route.
FormatName = Literal["interval", "unified"]
#: Why a book lost continuity: `sequence_gap` (the venue's sequence number skipped), `disconnect` (the socket
#: dropped), `silence` (the feed went silent), `restart` (the service was not running), `rate_limited` (the
#: venue answered 429), `bad_message` (a venue change could not apply to the book) or `write_failed` (the
#: database refused writes for too long).
GapCauseName = Literal[
    "sequence_gap",
    "disconnect",
    "silence",
    "restart",
    "rate_limited",
    "bad_message",
    "write_failed",
]
#: Window length of an interval market: `5m`, `15m`, `1h`, `24h` or `1w`.
IntervalCodeName = Literal["5m", "15m", "1h", "24h", "1w"]
#: What an execution leg buys.
LegAction = Literal["buy_yes", "buy_no"]
#: Whether this process serves live data (live books, current arbitrage, the live stream).
LiveStatus = Literal["serving", "unavailable", "not_served"]
#: `YES` or `NO`.
OutcomeName = Literal["YES", "NO"]
#: `window` or `matched`.
PairKindName = Literal["window", "matched"]
#: Whether one part of a venue's ingestion works.
PartStatus = Literal["unknown", "ok", "failing"]
#: A plan name as it appears in `required_plan`.
PlanName = Literal["free", "builder", "trader"]
#: Readiness of the whole service.
ReadyStatus = Literal["ready", "not_ready"]
#: Which part of the service this process runs.
RoleOut = Literal["all", "api", "ingest"]
#: The outcome bought.
SideName = Literal["yes", "no"]
#: Period of `/whales/user/stats`.
StatsPeriod = Literal["24h", "7d", "all"]
#: Trading status: `active` or `closed`.
StatusName = Literal["active", "closed"]
#: Reachability of the store and whether writes succeed.
StoreStatus = Literal["ok", "degraded", "unavailable"]
TextValue = str
#: Where a view's threshold came from.
ThresholdSource = Literal["request", "watchlist", "default"]
#: Freshness of one venue's feed.
VenueStatus = Literal["not_configured", "waiting", "fresh", "stale", "degraded"]
#: A webhook type: `whale` or `arbitrage`.
WebhookTypeName = Literal["whale", "arbitrage"]
WebhookUrl = str
#: What a writer writes, in `/readyz` and in the `kind` label of `crossbook_write_failures_total` and
#: `crossbook_writes_dropped_total`.
WriteKindOut = Literal["book_events", "trades", "episodes", "deliveries", "catalog", "whales"]


class _AddByUrlInOptional(TypedDict, total=False):
    #: Notional in dollars at or above which a trade is a whale; default 1000.
    whale_threshold_usd: Optional[float]


class AddByUrlIn(_AddByUrlInOptional):
    """Body of `POST /whales/user/events/by-url`."""
    #: The address of the event's web page on its venue, with or without the leading `https`:
    #: `kalshi.com/markets/{series}/…/{event-ticker}` (venue_a) or `polymarket.com/event/{slug}` (venue_b).
    url: TextValue


class _AddEventInOptional(TypedDict, total=False):
    #: Notional in dollars at or above which a trade is a whale; default 1000.
    whale_threshold_usd: Optional[float]


class AddEventIn(_AddEventInOptional):
    """Body of `POST /whales/user/events/by-ticker`."""
    #: The venue's event id (venue_a event ticker; venue_b event id or slug).
    event_ticker: TextValue
    #: `venue_a` or `venue_b`.
    exchange: ExchangeName


_BacktestInRequired = TypedDict(
    "_BacktestInRequired",
    {
        "from": "int",
        "to": "int",
    },
)


_BacktestInOptional = TypedDict(
    "_BacktestInOptional",
    {
        "capital_per_trade_dollars": "Optional[float]",
        "capital_total_dollars": "Optional[float]",
        "interval_code": "Optional[str]",
        "latency_ms": "Optional[int]",
        "leg_order": "Optional[str]",
        "min_net_cents": "Optional[float]",
        "missing_leg": "Optional[str]",
        "venue_b_fee_rate": "Optional[str]",
    },
    total=False,
)


class BacktestIn(_BacktestInRequired, _BacktestInOptional):
    """The body of `POST /v1/backtests`. Only `from` and `to` are required."""


class BusOut(TypedDict):
    """The mirror of the ingesting process's live plane, in `/readyz` of an api process."""
    #: Books held (fresh and stale).
    books: int
    #: Connected to the bus now.
    connected: bool
    #: Holes seen in book sequences or in the message count (each made books stale until repaired).
    holes: int
    #: Age of that message now, in milliseconds: how far this process is behind (it grows while the ingesting
    #: process has nothing to send). Null before the first message.
    lag_ms: Optional[int]
    #: When the ingesting process sent the last message received (ISO 8601); null before the first.
    last_event_at: Optional[str]
    #: Messages that could not be read and were skipped.
    malformed: int
    #: Books held but not trusted until their next keyframe.
    stale_books: int


class CandleOut(TypedDict):
    """One candle."""
    #: Last trade's YES price; without trades, the book's mid at the interval's end (`close_source` says
    #: which); null when neither is known.
    close: Optional[float]
    close_source: Optional[CloseSource]
    high: Optional[float]
    low: Optional[float]
    #: First trade's YES price; null without trades.
    open: Optional[float]
    #: Interval start, ISO 8601 UTC with milliseconds.
    start: str
    #: Interval start, Unix milliseconds.
    timestamp: int
    trade_count: int
    #: Contracts traded.
    volume: float
    #: Dollars traded: the sum of price × size of each trade.
    volume_usd: float


class CatalogEventOut(TypedDict):
    """An event of the public catalog. Locked entries keep `exchange` and `title` and null the rest."""
    #: Null when locked.
    event_id: Optional[str]
    exchange: ExchangeName
    locked: bool
    #: The event's title (its id when the catalog does not have the event).
    title: str
    #: Trades of the last 24 hours, any size; null when locked.
    trades_24h: Optional[int]
    #: Their summed notional in dollars; null when locked.
    volume_24h: Optional[float]
    #: Trades of the last 24 hours at or above the public minimum; null when locked.
    whale_trades_24h: Optional[int]


class CatalogOut(TypedDict):
    """The public catalog: the day's pool in unlock order."""
    events: List[CatalogEventOut]
    #: The UTC day of the pool (`YYYY-MM-DD`).
    pool_date: str
    #: Events of the pool fully visible to this caller (the first ones).
    unlocked_events: int


class CombinedOut(TypedDict):
    """The combined search result."""
    events: List[EventOut]
    markets: List[MarketOut]
    series: List[SeriesOut]


class ConnectionsOut(TypedDict):
    """
    A venue's WebSocket connections: its followed markets are spread over as many as the venue's
    per-connection limit needs (`venue_a_ws_markets_per_connection`, `venue_b_ws_assets_per_connection`).
    """
    #: Of those, the ones open and subscribed.
    connected: int
    #: Reconnects of all of them since ingestion started.
    reconnects: int
    #: Sockets the venue's markets are spread over now (0 while polling).
    total: int


class _OpportunityOutOptional(TypedDict, total=False):
    orderbook: Optional[OrderbookOut]


class OpportunityOut(_OpportunityOutOptional):
    """
    An arbitrage opportunity: buy YES on one venue and NO on the other for less than 1 dollar after taker
    fees.
    """
    #: Venue on which to buy NO.
    buy_no_market: str
    #: Venue on which to buy YES.
    buy_yes_market: str
    #: Dollars needed to buy those contracts on both legs, fees included: `executable_size` less
    #: `max_profit_dollars`, since each pair of contracts pays one dollar however the market settles; null on
    #: locked rows.
    capital_dollars: Optional[float]
    #: Canonical event id: `BTC-15M-2026-11-21T19:00Z` for a BTC window, `PAIR-<venue_a ticker>` for a matched
    #: pair.
    event_id: str
    event_title: str
    #: Contracts executable while each still nets at least `min_net_cents`; null on locked rows.
    executable_size: Optional[float]
    #: Taker fees of both legs; null on locked rows.
    fee_cents: Optional[float]
    #: The taker fee rates `fee_cents` was computed at, so the figures can be checked even after the operator
    #: changes a rate. `;`-separated entries: `venue_a:<rate>` (venue_a charges `rate × p × (1 − p)` per
    #: contract rounded up to the cent) and `venue_b:<category>=<rate>` (venue_b charges `rate × p × (1 − p)`
    #: rounded half-up to 0.00001 dollar, at least 0.00001, at the rate the operator set for the venue_b
    #: market's category: `crypto`, `sports` or `other`; 0.07 unless configured otherwise). Rates are decimals
    #: without trailing zeros. New entries may be appended.
    fee_model: str
    #: `100 × (1 − yes_ask − no_ask)`; null on locked rows.
    gross_cents: Optional[float]
    #: `5m`, `15m`, `1h`, `24h` or `1w`; null for matched pairs.
    interval_code: Optional[str]
    label: str
    #: `binary`.
    market_type: str
    #: Summed net of those contracts, dollars; null on locked rows.
    max_profit_dollars: Optional[float]
    #: `gross_cents − fee_cents`; null on locked rows.
    net_cents: Optional[float]
    no_leg: ExecutionLegOut
    #: `up` for BTC up/down windows, `yes` for matched pairs.
    outcome_key: str
    #: The pair the opportunity prices, as `pair_id` in `/v1/arbitrage/pairs` (equal to `event_id`).
    pair_id: str
    #: Best `net_cents` of the episode (history), the current one otherwise; null on locked rows.
    peak_net_cents: Optional[float]
    #: Window settlement time.
    resolution_time: Optional[str]
    #: `100 × net / (cost + fees)`; null on locked rows.
    roi_percent: Optional[float]
    #: Whether the two legs settle on the same facts, as `settlement_basis` in `/v1/arbitrage/pairs`:
    #: `identical`, `same_window_different_source` or `unverified`.
    settlement_basis: str
    #: Snapshot time.
    timestamp: str
    venue_a: VenueALegOut
    venue_a_event_ticker: Optional[str]
    venue_b: VenueBLegOut
    venue_b_event_slug: Optional[str]
    yes_leg: ExecutionLegOut


class CurrentOut(OpportunityOut):
    """A row of `/v1/arbitrage/current`: the opportunity plus `opinion`."""
    #: Always null.
    opinion: Optional[str]


class DeletedEnvelope(TypedDict):
    """The envelope of a deletion: `data` is null."""
    data: Optional[Dict[str, Any]]
    message: str
    success: bool


class DeliveriesEnvelope(TypedDict):
    """The envelope of the delivery log, newest first."""
    data: List[DeliveryOut]
    message: str
    success: bool


class DeliveryEnvelope(TypedDict):
    """
    The envelope of a test delivery: the attempt. The request itself succeeded (the status is 200); `success`
    says whether the delivery did (the receiver answered 2xx), and `message` says why not when it did not.
    """
    data: DeliveryOut
    message: str
    #: Whether the receiver accepted the test delivery (answered 2xx); `data.error` says why not.
    success: bool


class DeliveryOut(TypedDict):
    """One delivery attempt."""
    #: The target resolved only to forbidden (private, loopback, ...) addresses and was not contacted.
    blocked: bool
    created_at: str
    #: Why the attempt failed (no answer, non-2xx status, blocked); null on success.
    error: Optional[str]
    #: `whale.entry`, `arbitrage.opportunity` or `webhook.test`.
    event_type: str
    #: The `Service-Webhook-Id` the attempt was sent with.
    id: str
    #: Time to the receiver's response headers (or to the failure).
    latency_ms: int
    #: The receiver's HTTP status; null when it did not answer (or was not contacted).
    status_code: Optional[int]


class EpisodeOut(TypedDict):
    """A recorded episode."""
    #: First observation.
    first_seen_at: str
    #: Latest observation.
    last_seen_at: str
    #: The latest observation, with the episode's peak.
    opportunity: HistoryOpportunityOut


class _ErrorBodyOptional(TypedDict, total=False):
    #: The query parameter at fault, when exactly one is.
    param: str
    #: On 403 only: the lowest plan that may call the route.
    required_plan: PlanName


class ErrorBody(_ErrorBodyOptional):
    """The body of every error response."""
    #: Stable machine-readable error code.
    code: ErrorCode
    #: Human-readable explanation, safe to show to a user.
    detail: str


_EventOhlcvOutRequired = TypedDict(
    "_EventOhlcvOutRequired",
    {
        "event_id": "str",
        "exchange": "ExchangeName",
        "from": "str",
        "interval": "str",
        "markets": "List[MarketCandlesOut]",
        "to": "str",
    },
)


class EventOhlcvOut(_EventOhlcvOutRequired):
    """Candles of one event's markets."""


class EventOut(TypedDict):
    """An event."""
    #: Source event ticker / ID.
    event_id: str
    exchange: ExchangeName
    #: Event image URL when available (often for venue_b).
    image_url: Optional[str]
    #: Number of child markets.
    market_count: int
    #: Questions of the child markets.
    market_questions: List[str]
    #: Parent series source ID.
    series_id: str
    status: StatusName
    #: Event title.
    title: str
    #: Sum of child market liquidity.
    total_liquidity: float
    #: Sum of child market volume.
    total_volume: float
    #: Exchange web page URL when available.
    url: Optional[str]


class EventStatsOut(TypedDict):
    """Whale stats of one watchlist event over the period."""
    #: `total_volume / trade_count`; 0 without trades.
    avg_trade_size: float
    #: Distinct markets among them.
    market_count: int
    #: Their summed notional, in dollars.
    total_volume: float
    #: Whale trades.
    trade_count: int


class ExecutionGapOut(TypedDict):
    """A capture gap."""
    #: Why continuity was lost.
    cause: GapCauseName
    #: When the book was captured again, Unix milliseconds; null while the gap lasts.
    end_time: Optional[int]
    #: When, Unix milliseconds.
    start_time: int


class _ExecutionLegOutOptional(TypedDict, total=False):
    #: The leg's taker fee per contract at its ask, cents; the two legs' fees sum to `fee_cents`. Null on a
    #: locked history row.
    fee_cents: Optional[float]


class ExecutionLegOut(_ExecutionLegOutOptional):
    """Where to execute one leg."""
    #: The order the leg places: `buy_yes` on `yes_leg`, `buy_no` on `no_leg`.
    action: LegAction
    #: `bid` or `ask`: the side of the `identifier`'s order book on which the order is placed. `bid` is an
    #: order to buy that instrument, `ask` an order to sell it; either way it fills against the resting orders
    #: of the other side, at the leg's ask price. venue_a has one YES book per market, so its YES leg is a
    #: `bid` and its NO leg an `ask` (selling YES there is buying NO). venue_b has one book per outcome token
    #: and `identifier` is the token bought, so its legs are always `bid`, on the YES token or the NO token.
    #: `action` says which outcome is bought.
    book_side: str
    #: venue_a market ticker or venue_b token id.
    identifier: str
    #: `venue_a` or `venue_b`.
    market: str


class ExecutionPriceOut(TypedDict):
    """What the order would have paid."""
    #: The venue_b token bought; null on venue_a.
    asset_id: Optional[str]
    #: Contracts all the asks offered.
    available_size: float
    #: Average price per filled contract before fees (4 decimals); null when nothing filled.
    average_price: Optional[float]
    #: When the book was last changed at or before `time`, Unix milliseconds: the state walked. Null when not
    #: continuous.
    book_time: Optional[int]
    #: Whether the service could vouch for the book at that instant: false inside a capture gap, or before the
    #: book's first recorded state. Nothing is priced then.
    continuous: bool
    #: What the filled contracts cost before fees, dollars.
    cost_dollars: float
    exchange: ExchangeName
    #: Their taker fees, dollars: each contract's fee at its level's price, as the venue charges it.
    fee_dollars: float
    #: The fee rate used, e.g. `venue_a:0.07` or `venue_b:crypto=0.07`.
    fee_model: str
    #: Contracts the asks filled: `size`, or all they offered when less.
    filled_size: float
    gap: Optional[ExecutionGapOut]
    #: The ask levels taken, best first.
    levels: List[TakenLevelOut]
    market_id: str
    #: The outcome bought.
    side: SideName
    #: Contracts asked for.
    size: float
    #: The instant asked for, Unix milliseconds.
    time: int
    #: `cost_dollars + fee_dollars`.
    total_dollars: float
    #: The highest price paid (4 decimals); null when nothing filled.
    worst_price: Optional[float]


class FeedStatsOut(TypedDict):
    """Aggregate 24h stats of a feed's event set."""
    #: `total_volume_24h / total_trades_24h` in dollars; 0 without trades.
    avg_trade_size: float
    #: Whale trades of the last 24 hours.
    total_trades_24h: int
    #: Summed notional of the whale trades of the last 24 hours, in dollars.
    total_volume_24h: float


class GapOut(TypedDict):
    """One capture gap of one book."""
    #: The venue_b token; null on venue_a.
    asset_id: Optional[str]
    #: Why continuity was lost.
    cause: GapCauseName
    #: When the book was captured again, Unix milliseconds; null while the gap lasts.
    end_time: Optional[int]
    #: How it ended: `resnapshot`; null while the gap lasts.
    ended_by: Optional[Literal["resnapshot"]]
    exchange: ExchangeName
    market_id: str
    outcome: Optional[OutcomeName]
    #: When continuity was lost, Unix milliseconds (for a restart: the book's last event before it).
    start_time: int


class GapsOut(TypedDict):
    """A page of gaps."""
    gaps: List[GapOut]
    pagination: PaginationOut


class HealthOut(TypedDict):
    """Liveness: always `ok` while the process serves requests."""
    status: str


class HistoryOpportunityOut(OpportunityOut):
    """A history opportunity: the opportunity plus `locked`."""
    #: `true` on masked preview rows.
    locked: bool


class HistoryPageOut(TypedDict):
    """The history page envelope."""
    #: Whether another page follows.
    has_more: bool
    #: Episodes, newest (`last_seen_at`) first.
    items: List[EpisodeOut]
    limit: int
    offset: int
    #: Episodes matching the filters, before paging.
    total: int


class IngestOut(TypedDict):
    """Ingestion in this process: its role and whether it holds the ingest lock (exactly one process does)."""
    #: This process ingests now (it holds the ingest lock).
    leader: bool
    role: RoleOut


class IntervalRowOut(TypedDict):
    """A row of the `interval` format: top of book of both sides, the market's window, and depth."""
    #: False when the capture lost continuity between the row before this one in time and this one, on the YES
    #: side (a dropped connection, a sequence gap, a silent feed, a restart): changes in between were not
    #: recorded. See `/v1/historical/gaps` for when and why. Rows recorded before the service kept every
    #: change are true.
    continuous: bool
    interval_code: Optional[IntervalCodeName]
    #: Of the YES side.
    mid: Optional[float]
    no_ask: Optional[float]
    no_bid: Optional[float]
    #: Contracts on the top 5 NO ask levels.
    no_depth: float
    #: Of the YES side.
    spread: Optional[float]
    #: Unix milliseconds.
    timestamp: int
    #: Window end, ISO 8601.
    window_end: Optional[str]
    #: Window start, ISO 8601.
    window_start: Optional[str]
    yes_ask: Optional[float]
    yes_bid: Optional[float]
    #: Contracts on the top 5 YES ask levels.
    yes_depth: float


class LegAsksOut(TypedDict):
    """Top ask levels of one leg."""
    #: Up to 5 levels, best first.
    asks: List[LevelOut]
    #: `venue_a` or `venue_b`.
    market: str


class LevelOut(TypedDict):
    """One price level: `price` a 4-decimal string, `size` a number."""
    price: str
    size: float


class _LiveOutOptional(TypedDict, total=False):
    bus: Optional[BusOut]
    publish: Optional[PublishOut]


class LiveOut(_LiveOutOptional):
    """The live plane in `/readyz`."""
    #: Why live data is `unavailable` here, and where it is served; null otherwise.
    reason: Optional[str]
    status: LiveStatus


class MarketCandlesOut(TypedDict):
    """One market's candles."""
    #: One candle per interval from `from` to `to`, oldest first, empty intervals included.
    candles: List[CandleOut]
    #: `last_price` minus the YES price of the last trade a day before `to` (signed); null when either is
    #: unknown.
    change_1d: Optional[float]
    #: As `change_1d`, over 30 days.
    change_30d: Optional[float]
    #: As `change_1d`, over 7 days.
    change_7d: Optional[float]
    event_id: str
    exchange: ExchangeName
    #: YES price of the last trade before `to`; null when none was recorded.
    last_price: Optional[float]
    market_id: str
    #: The market's title, or its question when the venue gives no title.
    title: str


class MarketOut(TypedDict):
    """A market."""
    #: Parent event source ID.
    event_id: str
    exchange: ExchangeName
    #: Last NO price, four-decimal string: `1 − last_yes_price` unless the venue gives its own; never null.
    last_no_price: str
    #: Last YES price as the venue reports it, four-decimal string (`"0.5300"`); before the first trade the
    #: venue's own value (`"0.0000"` on both venues), never null.
    last_yes_price: str
    #: Liquidity.
    liquidity: float
    #: Source market ticker / ID; used with the historical routes.
    market_id: str
    #: Market question text.
    question: str
    #: Parent series source ID.
    series_id: str
    #: Settlement time when closed (the venue's settlement time, or its close time until it settles), else
    #: null.
    settled_at: Optional[str]
    status: StatusName
    #: Compact disambiguator (strike or close time).
    subtitle: Optional[str]
    #: Formatted headline (venue_a); may be null for venue_b.
    title: Optional[str]
    #: Traded volume.
    volume: float
    #: End of that window, when the venue closes trading on the market; null when the venue states none.
    window_end: Optional[str]
    #: Start of the window the market settles on (a price window's start), null when the venue states none.
    #: With `window_end` it tells apart markets of one series that share a title.
    window_start: Optional[str]


class MarketWhalesOut(TypedDict):
    """One market's whale trades over a period."""
    event_id: str
    exchange: ExchangeName
    #: The newest whale trade's execution time.
    last_trade_at: str
    market_id: str
    #: venue_a: the market ticker; venue_b: the market slug (the condition id when it has none).
    market_ticker: str
    #: The market's headline (its id when the catalog does not have the market).
    market_title: str
    stats: WhaleStatsOut


class OffsetPaginationOut(TypedDict):
    """Offset paging of a whale feed: `limit` and `offset` as requested, and how many trades match in all."""
    #: Page size of the request.
    limit: int
    #: Trades skipped before this page.
    offset: int
    #: Whale trades matching the filters, over all pages.
    total: int


_OhlcvOutRequired = TypedDict(
    "_OhlcvOutRequired",
    {
        "from": "str",
        "interval": "str",
        "markets": "List[MarketCandlesOut]",
        "to": "str",
    },
)


class OhlcvOut(_OhlcvOutRequired):
    """Candles of the markets asked for."""


class OrderbookOut(TypedDict):
    """Top ask levels per leg, and the depth walk over them."""
    no: LegAsksOut
    #: The chunks the depth walk took, best first: the YES and NO ladders are merged cheapest first, and the
    #: walk stops at the first chunk whose net is below the threshold. Their sizes sum to `executable_size`
    #: and their `net × size` to `max_profit_dollars`.
    walk: List[WalkStepOut]
    yes: LegAsksOut


class PaginationOut(TypedDict):
    """Page metadata."""
    #: Rows on this page.
    count: int
    #: Whether another page follows.
    has_more: bool
    #: The page size asked for.
    limit: int
    #: Opaque cursor of the next page (pass it as `pagination_key`); null on the last page.
    pagination_key: Optional[str]


class PairLegOut(TypedDict):
    """One leg of a pair."""
    #: When the venue closes the market (its window end); null when the catalog has none.
    close_time: Optional[str]
    #: `venue_a` or `venue_b`.
    exchange: str
    #: venue_a market ticker or venue_b condition id.
    market_id: str
    #: What the market settles on, as the venue states it (venue_a settlement sources or rules, venue_b
    #: `resolutionSource`); null when the venue states nothing.
    resolution_source: Optional[str]
    #: The market's title as the venue lists it (else its question).
    title: str
    #: End of that window; null when none.
    window_end: Optional[str]
    #: Start of the window the market settles on, as this venue states it; null when none.
    window_start: Optional[str]
    #: The side YES stands for, as far as known: `Up` for a window, the team YES backs for a game (venue_a's
    #: subtitle, else the normalised team name); null for a plain yes/no question.
    yes_outcome: Optional[str]


class PairOut(TypedDict):
    """
    A pair the scanner forms: both legs, how they were matched, and the facts that decide whether they pay on
    the same outcome.
    """
    #: Interval of a window pair; null for matched pairs.
    interval_code: Optional[str]
    #: `window` (up/down windows) or `matched` (matched binary markets).
    kind: PairKindName
    #: `window` (same asset, interval and window), `teams_date` (the game matcher: same teams, same YES team,
    #: same day) or `operator` (an override, `crossbook pairs add`).
    match_source: str
    #: Stable id of the pair: the `event_id` (and `pair_id`) of its opportunities.
    pair_id: str
    #: The operator's reason for a rejection; null otherwise.
    rejection_reason: Optional[str]
    #: Whether the scanner prices the pair (`current`, `history`, webhooks, spreads).
    scanned: bool
    #: `identical` (same window, same resolution source after normalising case, whitespace and a trailing
    #: `/`), `same_window_different_source`, or `unverified` (a source not stated, or windows that differ).
    settlement_basis: str
    #: Why it is not scanned: `rejected` or `yes_outcomes_differ`; null when scanned.
    skip_reason: Optional[str]
    #: `active` or `rejected` (by the operator, `crossbook pairs reject`).
    status: str
    #: The pair's title, as its opportunities' `event_title`.
    title: str
    venue_a: PairLegOut
    venue_b: PairLegOut
    #: Whether YES provably backs different sides on the two venues (a game whose YES team differs).
    yes_outcomes_differ: bool


class PairsPageOut(TypedDict):
    """The pairs page envelope."""
    #: Whether another page follows.
    has_more: bool
    #: Pairs in `pair_id` order.
    items: List[PairOut]
    limit: int
    offset: int
    #: Pairs matching the filters, before paging.
    total: int


class PartOut(TypedDict):
    """One part of a venue's ingestion in `/readyz`."""
    #: Failed attempts since it last succeeded.
    failures: int
    #: Its latest error (kept after it recovers, with `last_error_at`).
    last_error: Optional[str]
    last_error_at: Optional[str]
    #: When it last succeeded.
    last_ok_at: Optional[str]
    status: PartStatus


class PartsOut(TypedDict):
    """The parts of a venue's ingestion, each able to fail on its own."""
    #: The books: the WebSocket, or REST book polling.
    books: PartOut
    #: The catalog sync.
    catalog: PartOut
    #: The trade tape (REST).
    trades: PartOut


class PatchEventIn(TypedDict):
    """Body of `PATCH /whales/user/events/{id}`."""
    #: The new threshold in dollars.
    whale_threshold_usd: float


class PublicFeedOut(TypedDict):
    """The public feed envelope."""
    #: Whale trades that match the same filters on the pool's events this caller cannot see (0 with a paid
    #: key, which sees the whole pool), so a preview caller knows what a paid key would show.
    locked_trades: int
    pagination: OffsetPaginationOut
    #: `true` for free and anonymous callers: only a prefix of the pool is unlocked.
    preview_only: bool
    #: Over the unlocked events only.
    stats: FeedStatsOut
    #: Whale trades of the unlocked events, newest first.
    trades: List[WhaleTradeOut]
    #: Events of the daily pool fully visible to this caller.
    unlocked_events: int


class PublishOut(TypedDict):
    """
    The leader's publisher on the bus, in `/readyz` of a process that may ingest. A bus that is down does not
    make the process unready: capture to the store goes on, and `connected` and `last_error` say what is
    wrong.
    """
    #: Connected to the bus now.
    connected: bool
    #: Events that did not reach the bus (the bus slow or away); readers repair their books from keyframes.
    dropped: int
    #: What is wrong with the bus now; null while it works.
    last_error: Optional[str]
    #: Messages handed to the bus since this process started.
    published: int
    #: This process leads and publishes its events (false in a standby).
    publishing: bool
    #: The term of this process's publisher (Unix ms when it started publishing); null before the first.
    term: Optional[int]


class ReadyOut(TypedDict):
    """The body of `/readyz`."""
    ingest: IngestOut
    live: LiveOut
    status: ReadyStatus
    store: StoreHealthOut
    venues: VenuesOut


class RecentEventOut(EventOut):
    """An event of the recent feed: the event object plus when it was first ingested."""
    #: When the service first saw the event.
    discovered_at: str


class RecentMarketOut(MarketOut):
    """A market of the recent feed: the market object plus when it was first ingested."""
    #: When the service first saw the market.
    discovered_at: str


class SeriesOut(TypedDict):
    """A series."""
    #: Category label; may be null.
    category: Optional[str]
    #: Earliest event window start; null when no event has a window.
    earliest_event_at: Optional[str]
    exchange: ExchangeName
    #: Latest event window end; null when no event has a window.
    latest_event_at: Optional[str]
    #: Events currently open for trading.
    n_events_active: int
    #: Total events in the series.
    n_events_total: int
    #: Source series ID; pass it as `series_id` to event and market search.
    series_id: str
    #: Web URL slug of venue_a; null for venue_b.
    slug: Optional[str]
    status: StatusName
    #: Human-readable title.
    title: str
    #: Exchange web page URL when available.
    url: Optional[str]


class SideOut(TypedDict):
    """One side (YES or NO) of a unified row."""
    asks: List[LevelOut]
    best_ask: Optional[float]
    best_bid: Optional[float]
    bids: List[LevelOut]


class SpreadOut(TypedDict):
    """A price-spread row: one side (YES or NO) of one venue_a/venue_b pair, with the pair it compares."""
    #: `side1_price − side2_price`.
    diff: float
    #: Canonical event id of the pair, as in the opportunities: `BTC-15M-2026-11-21T19:00Z` for a BTC window,
    #: `PAIR-<venue_a ticker>` for a matched pair.
    event_id: str
    #: `5m`, `15m`, `1h`, `24h` or `1w`; null for matched pairs.
    interval_code: Optional[str]
    #: Short display label of the pair, as in the opportunities.
    label: str
    #: `YES` or `NO`.
    side: str
    #: Display name of venue_a.
    side1: str
    #: venue_a ask for the side.
    side1_price: float
    #: Display name of venue_b.
    side2: str
    #: venue_b ask for the side.
    side2_price: float
    #: The pair's venue_a market ticker (`side1_price` is its ask).
    venue_a_market_id: str
    #: The pair's venue_b condition id (`side2_price` is the ask of its token for the side).
    venue_b_market_id: str
    #: End of that window; null for matched pairs.
    window_end: Optional[str]
    #: Start of the window the pair trades, as venue_a lists it; null for matched pairs.
    window_start: Optional[str]


class StoreHealthOut(TypedDict):
    """The store part of `/readyz`."""
    #: `sqlite` or `postgres`.
    backend: str
    #: The kinds of data whose last write failed (empty when writes succeed).
    failing: List[WriteKindOut]
    #: The latest error: of a failing write, or of the ping.
    last_error: Optional[str]
    #: Round-trip time of the ping, when it answered.
    latency_ms: Optional[int]
    #: Since when the store has been degraded or unavailable as seen by this process.
    since: Optional[str]
    status: StoreStatus


class _SubjectOutOptional(TypedDict, total=False):
    #: Market views only: the market.
    market_id: Optional[str]
    #: Market views only: the market's headline.
    market_title: Optional[str]


class SubjectOut(_SubjectOutOptional):
    """What a view covers: an event, or one market of it."""
    event_id: str
    #: The event's title; null when the catalog does not have the event.
    event_title: Optional[str]
    exchange: ExchangeName


class TakenLevelOut(TypedDict):
    """One ask level taken."""
    #: Four-decimal price string.
    price: str
    #: Contracts taken at that price.
    size: float


class ThresholdOut(TypedDict):
    """The threshold a view applied."""
    #: Whether the event is on the caller's watchlist.
    on_watchlist: bool
    threshold_source: ThresholdSource
    #: Notional in dollars at or above which a trade is counted.
    threshold_usd: float


class TopOfBookHistoryOut(TypedDict):
    """A page of top-of-book rows."""
    pagination: PaginationOut
    rows: List[TopOfBookOut]


class TopOfBookOut(TypedDict):
    """The best quotes of one book at one moment."""
    #: The venue_b token; null on venue_a (whose row is the YES side: the ask is derived from the best NO
    #: bid).
    asset_id: Optional[str]
    #: Best ask; null when no one offers.
    best_ask: Optional[float]
    best_ask_size: Optional[float]
    #: Best bid; null when no one bids.
    best_bid: Optional[float]
    best_bid_size: Optional[float]
    #: `false` when the capture lost continuity between the row before it in time and this one.
    continuous: bool
    market_id: str
    #: `(bid + ask) / 2`, rounded half-up; null unless both sides quote.
    mid: Optional[float]
    #: `YES` or `NO`: the outcome the quotes are for.
    outcome: OutcomeName
    #: `ask − bid`; null unless both sides quote.
    spread: Optional[float]
    #: The moment of the book (Unix milliseconds): its last change, as on the order-book routes.
    timestamp: int


class TradeOut(TypedDict):
    """One trade of the tape."""
    #: The venue_b token traded; null on venue_a.
    asset_id: Optional[str]
    #: Execution time, ISO 8601 UTC with milliseconds.
    executed_at: str
    market_id: str
    #: `price × size` in dollars.
    notional: float
    #: The outcome whose contracts were traded (`YES` or `NO`): on venue_a, the one the taker bought or sold.
    outcome: OutcomeName
    #: Price of the outcome traded.
    price: float
    #: The taker's side as the venue gives it: `buy` or `sell`.
    side: str
    #: Contracts (venue_a) or shares (venue_b).
    size: float
    #: Execution time, Unix milliseconds (as the order-book rows' `timestamp`).
    timestamp: int
    #: The venue's trade id.
    trade_id: str
    #: venue_b: the hash of the on-chain transaction that settled the trade, when the venue gave one; null on
    #: venue_a.
    transaction_hash: Optional[str]


class TradesOut(TypedDict):
    """A page of the trade tape."""
    exchange: ExchangeName
    market_id: str
    pagination: PaginationOut
    trades: List[TradeOut]


class UnifiedHistoryOut(TypedDict):
    """Response of `/v1/historical/orderbook`."""
    exchange: ExchangeName
    format: FormatName
    #: The market's venue-native id (for venue_b the condition id, also when asked by numeric id).
    market_id: str
    pagination: PaginationOut
    snapshots: List[UnifiedSnapshotOut]


class UnifiedRowOut(TypedDict):
    """
    A row of the `unified` format: both sides of the market at one moment; `mid` and `spread` of the YES side.
    """
    #: False when the capture lost continuity between the row before this one in time and this one, on the YES
    #: side (a dropped connection, a sequence gap, a silent feed, a restart): changes in between were not
    #: recorded. See `/v1/historical/gaps` for when and why. Rows recorded before the service kept every
    #: change are true.
    continuous: bool
    mid: Optional[float]
    no: SideOut
    spread: Optional[float]
    #: Unix milliseconds.
    timestamp: int
    yes: SideOut


class UserFeedOut(TypedDict):
    """The personal feed: whale trades of the caller's watchlist, newest first."""
    pagination: OffsetPaginationOut
    #: Over the watchlist events selected by `platform` and `event_id`, at the thresholds of the request.
    stats: FeedStatsOut
    trades: List[WhaleTradeOut]


class UserMarketsOut(TypedDict):
    """Markets of the watchlist's events ranked by whale volume."""
    #: Highest whale volume first, each event at its watchlist threshold.
    markets: List[MarketWhalesOut]
    pagination: OffsetPaginationOut
    period: StatsPeriod


class UserStatsOut(TypedDict):
    """
    `/whales/user/stats`: every watchlist event, with zero stats when it has no whale trades in the period.
    """
    events: List[WatchStatsOut]
    period: StatsPeriod


class VenueAHistoryOut(TypedDict):
    """Response of `/v1/historical/venue_a/orderbook`."""
    pagination: PaginationOut
    snapshots: List[VenueASnapshotOut]


class VenueALegOut(TypedDict):
    """venue_a leg snapshot."""
    market_ticker: str
    #: NO ask (1 − best YES bid); null on locked rows or without bids.
    no_ask: Optional[float]
    open_interest: float
    volume: float
    volume_24h: float
    #: YES ask (1 − best NO bid); null on locked rows or without bids.
    yes_ask: Optional[float]


class VenueASnapshotOut(TypedDict):
    """A venue_a snapshot. Best bid and ask are from the YES side; the YES ask is `1 −` the best NO bid."""
    #: Top YES ask (`1 −` the top NO bid); null when there is no NO bid.
    best_yes_ask: Optional[float]
    #: Top YES bid; null when there is none.
    best_yes_bid: Optional[float]
    #: False when the capture lost continuity between the row before this one in time and this one (a dropped
    #: connection, a sequence gap, a silent feed, a restart): changes in between were not recorded. See
    #: `/v1/historical/gaps` for when and why. Rows recorded before the service kept every change are true.
    continuous: bool
    #: Market ticker.
    market_id: str
    #: `(best_yes_bid + best_yes_ask) / 2` when both exist.
    mid: Optional[float]
    #: NO bids, best first.
    no_bids: List[LevelOut]
    #: `best_yes_ask − best_yes_bid` when both exist.
    spread: Optional[float]
    #: Snapshot time, Unix milliseconds.
    timestamp: int
    #: YES bids, best first.
    yes_bids: List[LevelOut]


class VenueBHistoryOut(TypedDict):
    """Response of `/v1/historical/venue_b/orderbook`."""
    pagination: PaginationOut
    snapshots: List[VenueBSnapshotOut]


class VenueBLegOut(TypedDict):
    """venue_b leg snapshot."""
    condition_id: str
    liquidity: float
    #: Best ask of the NO token; null on locked rows or without asks.
    no_ask: Optional[float]
    no_token_id: str
    volume: float
    #: Best ask of the YES token; null on locked rows or without asks.
    yes_ask: Optional[float]
    yes_token_id: str


class VenueBSnapshotOut(TypedDict):
    """A venue_b snapshot of one token."""
    #: Asks, best first.
    asks: List[LevelOut]
    #: Token id.
    asset_id: str
    best_ask: Optional[float]
    best_bid: Optional[float]
    #: Bids, best first.
    bids: List[LevelOut]
    #: False when the capture lost continuity between the row before this one in time and this one (a dropped
    #: connection, a sequence gap, a silent feed, a restart): changes in between were not recorded. See
    #: `/v1/historical/gaps` for when and why. Rows recorded before the service kept every change are true.
    continuous: bool
    #: Condition id of the market.
    market_id: str
    #: `(best_bid + best_ask) / 2` when both exist.
    mid: Optional[float]
    #: Which side of the market the token is.
    outcome: OutcomeName
    #: `best_ask − best_bid` when both exist.
    spread: Optional[float]
    #: Snapshot time, Unix milliseconds.
    timestamp: int


class VenueHealthOut(TypedDict):
    """One venue in `/readyz`: freshness and the feed's health as ingestion sees it."""
    #: Seconds since `last_update_at`: the age of the data (keepalives do not make it younger).
    age_seconds: Optional[int]
    #: Live books held in memory and up to date.
    books: int
    #: Books followed that the venue has not sent though asked several times: nothing of them is captured. The
    #: venue says nothing about subscriptions past its per-connection limit, so a count above 0 usually means
    #: the per-connection setting is above the venue's own limit.
    books_missing: int
    #: Capture gaps recorded since ingestion started: each time one book lost continuity (a dropped socket, a
    #: silent feed, a sequence gap, a failed poll, a restart). `GET /v1/historical/gaps` lists them.
    capture_gaps: int
    #: Every socket of the venue is open and subscribed (one down makes it false: its books are stale); when
    #: polling, the last REST poll succeeded.
    connected: bool
    #: The venue's WebSocket connections: how many, how many connected, their reconnects.
    connections: ConnectionsOut
    #: When the connection last showed it is alive: data, or a keepalive (venue_b's `PONG`, venue_a's
    #: heartbeat). A quiet market sends only keepalives and stays fresh.
    last_alive_at: Optional[str]
    #: When the last catalog sync finished.
    last_catalog_sync_at: Optional[str]
    #: The latest error of any part (`parts` says which part fails now).
    last_error: Optional[str]
    #: When the venue's feed last delivered data.
    last_update_at: Optional[str]
    #: Malformed messages skipped since ingestion started.
    malformed: int
    #: Age above which the venue is stale.
    max_age_seconds: int
    mode: FeedModeOut
    #: Books, trades and catalog, each with its status, last success and last error.
    parts: PartsOut
    #: Why the venue is `waiting`, `stale` or `degraded` (e.g. `connecting`, `disconnected: …`, `no books
    #: yet`, `trades failing (3 times in a row): …`); null when fresh or not configured.
    reason: Optional[str]
    #: Reconnects since ingestion started.
    reconnects: int
    #: Books waiting for a fresh snapshot (after a sequence gap or a reconnect).
    stale_books: int
    status: VenueStatus
    #: Since when `status` has held (ISO 8601), as this process watched it; null when not configured.
    status_since: Optional[str]


class VenuesOut(TypedDict):
    """Both venues in `/readyz`."""
    venue_a: VenueHealthOut
    venue_b: VenueHealthOut


class _ViewStatsOutOptional(SubjectOut, ThresholdOut, total=False):
    #: Event views: its markets with whale trades in the period, highest whale volume first (at most 50).
    markets: Optional[List[MarketWhalesOut]]


class ViewStatsOut(_ViewStatsOutOptional):
    """Whale stats of one event or market over a period; an event's also ranks its markets."""
    period: StatsPeriod
    stats: WhaleStatsOut


class ViewTradesOut(SubjectOut, ThresholdOut):
    """Whale trades of one event or market, newest first."""
    pagination: OffsetPaginationOut
    #: The last 24 hours at the same threshold.
    stats: FeedStatsOut
    trades: List[WhaleTradeOut]


class WalkStepOut(TypedDict):
    """
    One chunk of the depth walk: `size` contracts bought on both legs at one pair of asks, each netting
    `net_cents` after both fees.
    """
    #: Net edge per contract after both legs' fees, cents.
    net_cents: float
    #: NO ask of the chunk, a four-decimal price string.
    no_price: str
    #: Contracts on each leg.
    size: float
    #: YES ask of the chunk, a four-decimal price string.
    yes_price: str


class WatchRecordOut(TypedDict):
    """A watchlist record."""
    created_at: str
    #: The venue's event id.
    event_id: str
    #: The venue's event id, as the ticker it was added by.
    event_ticker: str
    #: The event's title; null when the catalog does not have the event.
    event_title: Optional[str]
    exchange: ExchangeName
    #: The numeric watchlist id (for PATCH and DELETE).
    id: int
    #: Whale trades of this event in the last 24 hours, at this threshold.
    whale_count_24h: int
    #: Notional in dollars at or above which a trade of this event is a whale.
    whale_threshold_usd: float


class WatchAddedOut(WatchRecordOut):
    """Answer to adding an event: `success`, `message` and the record's fields."""
    message: str
    success: bool


class WatchDeletedOut(TypedDict):
    """Answer to removing an event from the watchlist."""
    event_ticker: str
    exchange: ExchangeName
    #: The removed record's id.
    id: int
    success: bool


class WatchListOut(TypedDict):
    """The caller's watchlist."""
    #: Oldest first.
    tracked_events: List[WatchRecordOut]


class WatchStatsOut(TypedDict):
    """One watchlist event and its stats."""
    event_id: str
    event_title: Optional[str]
    exchange: ExchangeName
    #: The watchlist id.
    id: int
    stats: EventStatsOut


class WatchUpdatedOut(WatchRecordOut):
    """Answer to changing a threshold: `success` and the record's fields."""
    success: bool


class WebhookEnvelope(TypedDict):
    """The envelope of one registration."""
    data: WebhookOut
    message: str
    success: bool


class _WebhookErrorBodyOptional(TypedDict, total=False):
    param: str
    required_plan: PlanName


class WebhookErrorBody(_WebhookErrorBodyOptional):
    """
    An error of a webhook route: the envelope with `success: false` and `data: null`, plus the fields of the
    error body every other route answers (`detail`, `code`, `param` and `required_plan` where they apply).
    """
    code: ErrorCode
    data: Optional[Dict[str, Any]]
    detail: str
    #: Same text as `detail`.
    message: str
    success: bool


class _WebhookInOptional(TypedDict, total=False):
    #: Whether deliveries are active. POST: `false` registers without delivering until a PUT turns it on
    #: (default `true`). PUT: turns deliveries on or off (unchanged when absent).
    enabled: bool


class WebhookIn(_WebhookInOptional):
    """Body of POST and PUT."""
    #: Public `http` or `https` callback URL (no credentials, not port 0; private, loopback, link-local and
    #: similar hosts are refused).
    url: WebhookUrl


class WebhookListEnvelope(TypedDict):
    """The envelope of the list of the caller's registrations."""
    data: List[WebhookOut]
    message: str
    success: bool


class WebhookOut(TypedDict):
    """A webhook registration."""
    created_at: str
    #: Whether deliveries are active.
    enabled: bool
    #: Registration identifier.
    id: str
    #: Shared signing secret (64 lowercase hex characters); the HMAC key is its UTF-8 bytes. Returned on every
    #: GET, POST and PUT.
    secret: str
    type: WebhookTypeName
    updated_at: str
    #: Registered callback URL.
    url: str


class WhaleStatsOut(TypedDict):
    """Whale stats over a period."""
    #: `total_volume / trade_count`; 0 without trades.
    avg_trade_size: float
    #: Their summed notional, in dollars.
    total_volume: float
    #: Whale trades.
    trade_count: int


class WhaleTradeOut(TypedDict):
    """
    A whale trade as the feeds show it: the fields of the `whale.entry` webhook data (which also carries
    `event_title` and `outcome`) plus `id`.
    """
    #: The venue's event id.
    event_id: str
    #: The event's title, saying what the market is about; null when the catalog does not have the event.
    event_title: Optional[str]
    exchange: ExchangeName
    executed_at: str
    #: The stored trade's id.
    id: int
    market_id: str
    #: venue_a: the market ticker; venue_b: the market slug (the condition id when it has none).
    market_ticker: str
    #: The market's headline (its id when the catalog does not have the market).
    market_title: str
    #: `abs(price × size)` in dollars, 2 decimals.
    notional_usd: float
    #: `YES` or `NO`: the outcome whose contracts the whale traded. On venue_a, the outcome the taker bought
    #: (the trade's taker side); on venue_b, the outcome of the token traded. Buying YES and selling NO both
    #: bet on YES.
    outcome: str
    #: Price in dollars, 4 decimals.
    price: float
    #: Contracts (venue_a) or shares (venue_b), exact to 6 decimals.
    size: float
    #: The venue's trade id.
    source_trade_id: str
    #: `buy` or `sell`: what the whale (the taker) did with `outcome`. venue_a takers always buy.
    taker_side: str


#: A row of the unified route, in the format the response names.
UnifiedSnapshotOut = Union[UnifiedRowOut, IntervalRowOut]


__all__ = ["AddByUrlIn", "AddEventIn", "BacktestIn", "BusOut", "CandleOut", "CatalogEventOut", "CatalogOut",
    "CloseSource", "CombinedOut", "ConnectionsOut", "CurrentOut", "DeletedEnvelope", "DeliveriesEnvelope",
    "DeliveryEnvelope", "DeliveryOut", "EpisodeOut", "ErrorBody", "ErrorCode", "EventOhlcvOut", "EventOut",
    "EventStatsOut", "ExchangeName", "ExecutionGapOut", "ExecutionLegOut", "ExecutionPriceOut",
    "FeedModeOut", "FeedStatsOut", "FileBytes", "FormatName", "GapCauseName", "GapOut", "GapsOut",
    "HealthOut", "HistoryOpportunityOut", "HistoryPageOut", "IngestOut", "IntervalCodeName",
    "IntervalRowOut", "LegAction", "LegAsksOut", "LevelOut", "LiveOut", "LiveStatus", "MarketCandlesOut",
    "MarketOut", "MarketWhalesOut", "OffsetPaginationOut", "OhlcvOut", "OpportunityOut", "OrderbookOut",
    "OutcomeName", "PaginationOut", "PairKindName", "PairLegOut", "PairOut", "PairsPageOut", "PartOut",
    "PartStatus", "PartsOut", "PatchEventIn", "PlanName", "PublicFeedOut", "PublishOut", "ReadyOut",
    "ReadyStatus", "RecentEventOut", "RecentMarketOut", "RoleOut", "SeriesOut", "SideName", "SideOut",
    "SpreadOut", "StatsPeriod", "StatusName", "StoreHealthOut", "StoreStatus", "SubjectOut", "TakenLevelOut",
    "TextValue", "ThresholdOut", "ThresholdSource", "TopOfBookHistoryOut", "TopOfBookOut", "TradeOut",
    "TradesOut", "UnifiedHistoryOut", "UnifiedRowOut", "UnifiedSnapshotOut", "UserFeedOut", "UserMarketsOut",
    "UserStatsOut", "VenueAHistoryOut", "VenueALegOut", "VenueASnapshotOut", "VenueBHistoryOut",
    "VenueBLegOut", "VenueBSnapshotOut", "VenueHealthOut", "VenueStatus", "VenuesOut", "ViewStatsOut",
    "ViewTradesOut", "WalkStepOut", "WatchAddedOut", "WatchDeletedOut", "WatchListOut", "WatchRecordOut",
    "WatchStatsOut", "WatchUpdatedOut", "WebhookEnvelope", "WebhookErrorBody", "WebhookIn",
    "WebhookListEnvelope", "WebhookOut", "WebhookTypeName", "WebhookUrl", "WhaleStatsOut", "WhaleTradeOut",
    "WriteKindOut"]
