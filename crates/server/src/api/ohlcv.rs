//! OHLCV candles: `GET /v1/markets/ohlcv` (up to 50 markets by id) and `GET /v1/events/{event_id}/ohlcv`
//! (the markets of one event). Candles are of the YES last-trade price, built from the stored aggregates of
//! [`crossbook_core::candle`] (a year of daily candles reads 365 rows); an interval without trades closes at
//! the mid of the market's book, and says so.

use axum::extract::State;
use crossbook_core::{
    Exchange, Market, Price, Status, Timestamp, TopOfBook,
    candle::{self, Candle, Interval},
};
use crossbook_store::{
    BookHistoryQuery, HistoryWindow, MarketQuery, TradeQuery,
    books::history::{HistoryRow, book_history},
};
use serde::Serialize;
use utoipa::{
    IntoParams, PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{Gate, groups},
    api::common::{find_market, iso},
    error::{ApiError, ApiResult, ErrorBody},
    json::Json,
    params::{
        Defaulted, FromQuery, InstantQuery, Limit, Offset, ParamDefault, ParamEnum, Path, QueryMap, Text, ValidQuery,
        enum_schema, text_value,
    },
};

/// Most markets one request names.
pub const MAX_MARKETS: usize = 50;
/// Most candles per market one request returns: a year of daily candles, or about a day of minutes.
pub const MAX_CANDLES: i64 = 1500;
/// Candles per market when `from` is absent: `from` is `to` minus this many intervals.
pub const DEFAULT_CANDLES: i64 = 100;
/// `limit` of the event route: markets per page.
pub type EventMarketsPage = Limit<50, { MAX_MARKETS as u32 }>;

const DAY_MS: i64 = 86_400_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(markets_ohlcv))
        .routes(routes!(event_ohlcv))
}

/// A candle interval: `1m`, `5m`, `1h`, `6h`, `1d` or `1w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalName(pub Interval);

/// `interval` when absent.
impl ParamDefault for IntervalName {
    const DEFAULT: Self = IntervalName(Interval::H1);
}

impl PartialSchema for IntervalName {
    fn schema() -> RefOr<Schema> {
        enum_schema::<IntervalName>()
    }
}

impl ToSchema for IntervalName {}

/// `market_ids` ([`MarketsOhlcvParams`]): 1 to [`MAX_MARKETS`] ids, each free text ([`Text`]).
pub struct MarketIdsQuery;

impl PartialSchema for MarketIdsQuery {
    fn schema() -> RefOr<Schema> {
        let items = serde_json::to_value(Text::schema()).expect("a schema serialises");
        let v = serde_json::json!({"type": "array", "items": items, "minItems": 1, "maxItems": MAX_MARKETS});
        serde_json::from_value(v).expect("a parameter schema is a valid schema")
    }
}

impl ToSchema for MarketIdsQuery {}

impl ParamEnum for IntervalName {
    const VALUES: &'static [(&'static str, Self)] = &[
        ("1m", IntervalName(Interval::M1)),
        ("5m", IntervalName(Interval::M5)),
        ("1h", IntervalName(Interval::H1)),
        ("6h", IntervalName(Interval::H6)),
        ("1d", IntervalName(Interval::D1)),
        ("1w", IntervalName(Interval::W1)),
    ];
}

/// The candles a request covers: every interval start from `from`'s interval up to `to` (exclusive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    interval: Interval,
    /// Start of the first interval.
    first: Timestamp,
    /// End of the last interval (exclusive).
    end: Timestamp,
    /// The request's `to`: the changes are measured at it.
    to: Timestamp,
}

impl Window {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let interval = q.get::<Defaulted<IntervalName>>("interval")?.0.0;
        let to = q.instant("to")?.unwrap_or_else(Timestamp::now);
        let from = match q.instant("from")? {
            Some(f) => f,
            None => Timestamp::from_millis(to.millis().saturating_sub(DEFAULT_CANDLES * interval.millis())),
        };
        if from >= to {
            return Err(ApiError::invalid("from", "from must be earlier than to"));
        }
        let first = interval.start_of(from);
        let last = interval.start_of(Timestamp::from_millis(to.millis() - 1));
        let count = (last.millis() - first.millis()) / interval.millis() + 1;
        if count > MAX_CANDLES {
            return Err(ApiError::invalid(
                "from",
                format!(
                    "from and to span {count} intervals of {}; at most {MAX_CANDLES} per request: narrow the range \
                     or choose a longer interval",
                    interval.as_str()
                ),
            ));
        }
        Ok(Window {
            interval,
            first,
            end: Timestamp::from_millis(last.millis() + interval.millis()),
            to,
        })
    }

    fn starts(&self) -> impl Iterator<Item = Timestamp> + '_ {
        (self.first.millis()..self.end.millis())
            .step_by(self.interval.millis() as usize)
            .map(Timestamp::from_millis)
    }
}

/// Query parameters of `/v1/markets/ohlcv`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MarketsOhlcvParams {
    /// Market ids, separated by commas or in repeated parameters (1 to 50): venue_a tickers, venue_b condition ids (`0x…`) or venue_b
    /// numeric market ids. Each is looked up on venue_a, then venue_b, unless `exchange` names one. An id given
    /// twice is answered once.
    #[param(value_type = MarketIdsQuery, inline, style = Form, explode = false)]
    pub market_ids: Vec<String>,
    /// Only look the ids up on this venue.
    #[param(inline)]
    pub exchange: Option<Exchange>,
    #[param(ignore)]
    window: Window,
}

impl FromQuery for MarketsOhlcvParams {
    // Generated clients ignore `explode: false` and repeat the parameter (`market_ids=A&market_ids=B`): both
    // forms, and a mix of them, name the same list.
    const REPEATING: &'static [&'static str] = &["market_ids"];

    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        // Not `required_text`: its length cap is for one id, and fifty venue_b ids are 3,400 characters.
        let given = q.all("market_ids");
        if given.is_empty() {
            return Err(ApiError::missing("market_ids"));
        }
        let mut ids: Vec<String> = Vec::new();
        for part in given.iter().flat_map(|v| v.split(',')) {
            let id = text_value("market_ids", part).map_err(|_| {
                ApiError::invalid("market_ids", "market_ids must be ids separated by commas, none empty")
            })?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if ids.len() > MAX_MARKETS {
            return Err(ApiError::invalid(
                "market_ids",
                format!(
                    "market_ids names {} markets; at most {MAX_MARKETS} per request",
                    ids.len()
                ),
            ));
        }
        Ok(MarketsOhlcvParams {
            market_ids: ids,
            exchange: q.one_of("exchange")?,
            window: Window::from_query(q)?,
        })
    }
}

/// Query parameters of `/v1/events/{event_id}/ohlcv`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventOhlcvParams {
    /// Status of the markets to include.
    #[param(inline, required = false)]
    pub status: Defaulted<Status>,
    /// Markets per page, highest volume first.
    #[param(inline, required = false)]
    pub limit: EventMarketsPage,
    /// Markets to skip.
    #[param(inline, required = false)]
    pub offset: Offset,
    #[param(ignore)]
    window: Window,
}

impl FromQuery for EventOhlcvParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        Ok(EventOhlcvParams {
            status: q.get("status")?,
            limit: q.get("limit")?,
            offset: q.get("offset")?,
            window: Window::from_query(q)?,
        })
    }
}

/// The parameters both routes share (documented once).
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WindowParams {
    /// Candle length. Intervals are aligned to UTC: minutes, hours and days from midnight UTC, weeks from Monday
    /// 00:00 UTC.
    #[param(inline, required = false)]
    pub interval: Defaulted<IntervalName>,
    /// Start (inclusive): ISO 8601, a date (midnight UTC) or Unix milliseconds. The first candle is the interval
    /// holding it. Default: 100 intervals before `to`. `from` must be earlier than `to`, and the two may span at most 1,500 intervals.
    #[param(value_type = Option<InstantQuery>, inline)]
    pub from: Option<String>,
    /// End (exclusive): ISO 8601, a date or Unix milliseconds. Default: now.
    #[param(value_type = Option<InstantQuery>, inline)]
    pub to: Option<String>,
}

/// Where a candle's close comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CloseSource {
    /// The last trade of the interval.
    Trade,
    /// No trade in the interval: the mid of the YES book at its end.
    Mid,
}

/// One candle.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CandleOut {
    /// Interval start, ISO 8601 UTC with milliseconds.
    pub start: String,
    /// Interval start, Unix milliseconds.
    pub timestamp: i64,
    /// First trade's YES price; null without trades.
    #[schema(required = true, examples(0.53))]
    pub open: Option<f64>,
    #[schema(required = true, examples(0.56))]
    pub high: Option<f64>,
    #[schema(required = true, examples(0.51))]
    pub low: Option<f64>,
    /// Last trade's YES price; without trades, the book's mid at the interval's end (`close_source` says
    /// which); null when neither is known.
    #[schema(required = true, examples(0.55))]
    pub close: Option<f64>,
    /// `trade` or `mid`; null when `close` is null.
    #[schema(required = true)]
    pub close_source: Option<CloseSource>,
    /// Contracts traded.
    pub volume: f64,
    /// Dollars traded: the sum of price × size of each trade.
    pub volume_usd: f64,
    pub trade_count: i64,
}

/// One market's candles.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MarketCandlesOut {
    pub exchange: Exchange,
    pub market_id: String,
    pub event_id: String,
    /// The market's title, or its question when the venue gives no title.
    pub title: String,
    /// YES price of the last trade before `to`; null when none was recorded.
    #[schema(required = true, examples(0.55))]
    pub last_price: Option<f64>,
    /// `last_price` minus the YES price of the last trade a day before `to` (signed); null when either is
    /// unknown.
    #[schema(required = true, examples(-0.02))]
    pub change_1d: Option<f64>,
    /// As `change_1d`, over 7 days.
    #[schema(required = true, examples(0.04))]
    pub change_7d: Option<f64>,
    /// As `change_1d`, over 30 days.
    #[schema(required = true, examples(0.11))]
    pub change_30d: Option<f64>,
    /// One candle per interval from `from` to `to`, oldest first, empty intervals included.
    pub candles: Vec<CandleOut>,
}

/// Candles of the markets asked for.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OhlcvOut {
    /// The candle length.
    #[schema(examples("1h"))]
    pub interval: String,
    /// Start of the first candle (ISO 8601).
    pub from: String,
    /// The end asked for (exclusive, ISO 8601).
    pub to: String,
    pub markets: Vec<MarketCandlesOut>,
}

/// Candles of one event's markets.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventOhlcvOut {
    pub exchange: Exchange,
    pub event_id: String,
    #[schema(examples("1d"))]
    pub interval: String,
    pub from: String,
    pub to: String,
    /// A page of the event's markets, highest volume first.
    pub markets: Vec<MarketCandlesOut>,
}

/// OHLCV candles of markets
///
/// Open, high, low and close of the YES last-trade price (a NO trade at p counts at 1 − p), volume in contracts
/// and dollars, and trade count, per interval, for up to 50 markets. An interval without trades closes at the mid
/// of the YES book at its end (`close_source: mid`). Each market also carries its last price and its change over
/// 1, 7 and 30 days before `to`. At most 1,500 candles per market: a year of daily candles in one request.
#[utoipa::path(
    get,
    path = "/v1/markets/ohlcv",
    tag = "historical",
    params(MarketsOhlcvParams, WindowParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Each market's candles, in the order asked.", body = OhlcvOut),
        (status = 404, description = "An id that names no market.", body = ErrorBody),
    )
)]
async fn markets_ohlcv(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<MarketsOhlcvParams>,
) -> ApiResult<Json<OhlcvOut>> {
    let mut markets = Vec::with_capacity(p.market_ids.len());
    for id in &p.market_ids {
        let Some(m) = find_market(&state, id, p.exchange).await? else {
            return Err(ApiError::not_found(format!("market_ids: no market {id}")));
        };
        markets.push(m);
    }
    let w = p.window;
    let mut out = Vec::with_capacity(markets.len());
    for m in &markets {
        out.push(market_candles(&state, m, &w).await?);
    }
    Ok(Json(OhlcvOut {
        interval: w.interval.as_str().to_string(),
        from: iso(w.first),
        to: iso(w.to),
        markets: out,
    }))
}

/// OHLCV candles of an event's markets
///
/// The candles of `/v1/markets/ohlcv` for the markets of one event (on whichever venue has it), highest volume
/// first, a page of up to 50 markets at a time.
#[utoipa::path(
    get,
    path = "/v1/events/{event_id}/ohlcv",
    tag = "historical",
    params(
        ("event_id" = inline(Text), Path, description = "Source event ticker / ID, as in `event_id` of an event."),
        EventOhlcvParams,
        WindowParams
    ),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of the event's markets with their candles.", body = EventOhlcvOut),
        (status = 404, description = "No event with this id.", body = ErrorBody),
    )
)]
async fn event_ohlcv(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    Path(event_id): Path<String>,
    ValidQuery(p): ValidQuery<EventOhlcvParams>,
) -> ApiResult<Json<EventOhlcvOut>> {
    let event_id = text_value("event_id", &event_id)?;
    let Some(event) = state.store.find_event(&event_id).await? else {
        return Err(ApiError::not_found(format!("no event with id {event_id:?}")));
    };
    let event = event.event;
    let query = MarketQuery::of_event(
        event.exchange,
        &event.event_id,
        p.status.0,
        p.limit.get(),
        p.offset.get(),
    );
    let w = p.window;
    let mut out = Vec::new();
    for m in state.store.search_markets(&query).await? {
        out.push(market_candles(&state, &m.market, &w).await?);
    }
    Ok(Json(EventOhlcvOut {
        exchange: event.exchange,
        event_id: event.event_id,
        interval: w.interval.as_str().to_string(),
        from: iso(w.first),
        to: iso(w.to),
        markets: out,
    }))
}

/// One market's candles over `w`, with its last price and changes.
async fn market_candles(state: &AppState, m: &Market, w: &Window) -> ApiResult<MarketCandlesOut> {
    let span = w.interval.span();
    let stored = state
        .store
        .candles(m.exchange, &m.market_id, span, w.first, w.end)
        .await?;
    let rolled = candle::roll_up(&stored, w.interval);
    let mut traded = rolled.iter().peekable();
    let starts: Vec<Timestamp> = w.starts().collect();
    let mids = if rolled.len() < starts.len() {
        book_mids(state, m, w).await?
    } else {
        Vec::new()
    };
    let mut mids = mids.into_iter().peekable();
    // The YES book's mid as of the end of the interval being built, carried over intervals without a change.
    let mut mid: Option<Price> = None;
    let mut candles = Vec::with_capacity(starts.len());
    for start in starts {
        while let Some((_, m)) = mids.next_if(|(at, _)| *at <= start) {
            mid = m;
        }
        let c = traded.next_if(|c| c.start == start);
        candles.push(candle_out(start, c, mid));
    }
    let last = last_price(state, m, w.to).await?;
    let change = |days: i64| async move {
        let before = last_price(state, m, Timestamp::from_millis(w.to.millis() - days * DAY_MS)).await?;
        ApiResult::Ok(
            last.zip(before)
                .map(|(now, then)| Price::from_micros(now.micros() - then.micros()).to_f64_4()),
        )
    };
    Ok(MarketCandlesOut {
        exchange: m.exchange,
        market_id: m.market_id.clone(),
        event_id: m.event_id.clone(),
        title: m.title.clone().unwrap_or_else(|| m.question.clone()),
        last_price: last.map(Price::to_f64_4),
        change_1d: change(1).await?,
        change_7d: change(7).await?,
        change_30d: change(30).await?,
        candles,
    })
}

fn candle_out(start: Timestamp, c: Option<&Candle>, mid: Option<Price>) -> CandleOut {
    let price = |p: Price| Some(p.to_f64_4());
    match c {
        Some(c) => CandleOut {
            start: iso(start),
            timestamp: start.millis(),
            open: price(c.open),
            high: price(c.high),
            low: price(c.low),
            close: price(c.close),
            close_source: Some(CloseSource::Trade),
            volume: c.volume.to_f64(6),
            volume_usd: c.notional.to_f64(6),
            trade_count: c.trades,
        },
        None => CandleOut {
            start: iso(start),
            timestamp: start.millis(),
            open: None,
            high: None,
            low: None,
            close: mid.map(Price::to_f64_4),
            close_source: mid.map(|_| CloseSource::Mid),
            volume: 0.0,
            volume_usd: 0.0,
            trade_count: 0,
        },
    }
}

/// The YES book's mid at the end of each interval of `w` in which it changed, keyed by the start of the next
/// interval (where it takes effect for a candle without trades), plus the mid before `w` at its first start.
/// One range read downsampled to one book per interval (per day for weeks, whose Monday alignment the store's
/// epoch-aligned buckets do not share), and one read of the book before the window.
async fn book_mids(state: &AppState, m: &Market, w: &Window) -> ApiResult<Vec<(Timestamp, Option<Price>)>> {
    let asset_id = match m.exchange {
        Exchange::VenueA => None,
        Exchange::VenueB => match &m.yes_token_id {
            Some(t) => Some(t.clone()),
            None => return Ok(Vec::new()),
        },
    };
    let mid_of = |r: &HistoryRow| TopOfBook::of_book(m.exchange, &r.snapshot).mid();
    let query = |window, limit| BookHistoryQuery {
        exchange: m.exchange,
        market_id: m.market_id.clone(),
        asset_id: asset_id.clone(),
        window,
        limit,
    };
    let mut out = Vec::new();
    let before = book_history(
        state.store.as_ref(),
        &query(HistoryWindow::Latest { before: Some(w.first) }, 1),
    )
    .await?;
    if let Some(r) = before.first() {
        out.push((w.first, mid_of(r)));
    }
    let bucket_ms = if w.interval == Interval::W1 {
        DAY_MS
    } else {
        w.interval.millis()
    };
    let buckets = (w.end.millis() - w.first.millis()) / bucket_ms;
    let rows = book_history(
        state.store.as_ref(),
        &query(
            HistoryWindow::Range {
                start: w.first,
                end: Timestamp::from_millis(w.end.millis() - 1),
                bucket_ms,
                after: None,
            },
            u32::try_from(buckets + 1).unwrap_or(u32::MAX),
        ),
    )
    .await?;
    // The last book of an interval is the mid from the next interval on; a candle of that same interval
    // without trades closes at it too, so it applies from the interval's own start.
    for r in &rows {
        out.push((w.interval.start_of(r.snapshot.timestamp), mid_of(r)));
    }
    Ok(out)
}

/// The YES price of the last trade of `m` executed before `at`.
async fn last_price(state: &AppState, m: &Market, at: Timestamp) -> ApiResult<Option<Price>> {
    let q = TradeQuery {
        exchange: m.exchange,
        market_id: &m.market_id,
        outcome: None,
        range: Some((Timestamp::from_millis(0), Timestamp::from_millis(at.millis() - 1))),
        after: None,
        newest_first: true,
        limit: 1,
    };
    let rows = state.store.trade_page(&q).await?;
    Ok(rows.first().map(|t| candle::yes_price(t.trade.outcome, t.trade.price)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(q: &str) -> ApiResult<Window> {
        Window::from_query(&QueryMap::parse(q).unwrap())
    }

    /// The parameter an error names.
    fn named<T: std::fmt::Debug>(r: ApiResult<T>) -> String {
        r.expect_err("an error").body().param.clone().unwrap_or_default()
    }

    #[test]
    fn the_window_is_whole_intervals_within_the_cap() {
        let w = window("interval=1d&from=2025-11-25&to=2026-11-25").unwrap();
        assert_eq!(w.first.to_iso(), "2025-11-25T00:00:00.000Z");
        assert_eq!(w.end.to_iso(), "2026-11-25T00:00:00.000Z");
        assert_eq!(w.starts().count(), 365);
        // A `to` inside an interval includes that interval.
        let w = window("interval=1h&from=1763337600000&to=1763341200001").unwrap();
        assert_eq!(w.starts().count(), 2);
        let w = window("interval=1w&from=2026-11-25T13:00:00Z&to=2026-11-26").unwrap();
        assert_eq!(w.first.to_iso(), "2026-11-23T00:00:00.000Z");
        assert_eq!(w.starts().count(), 1);
        assert_eq!(named(window("interval=1m&from=2026-11-20&to=2026-11-25")), "from");
        assert_eq!(named(window("from=2026-11-25&to=2026-11-25")), "from");
        assert_eq!(named(window("interval=2h")), "interval");
        assert_eq!(named(window("to=yesterday")), "to");
        assert_eq!(
            window("interval=1d&to=2026-11-25T12:00:00Z").unwrap().starts().count() as i64,
            DEFAULT_CANDLES + 1
        );
    }

    #[test]
    fn the_documented_caps_are_the_enforced_ones() {
        // The route's description, the historical data guide and the doc comment of `from` state these in words.
        assert_eq!((MAX_CANDLES, MAX_MARKETS, DEFAULT_CANDLES), (1500, 50, 100));
    }

    #[test]
    fn market_ids_are_a_list_of_up_to_fifty() {
        let p = |q: &str| {
            MarketsOhlcvParams::from_query(&QueryMap::parse_repeating(q, MarketsOhlcvParams::REPEATING).unwrap())
        };
        assert_eq!(p("market_ids=a,b,a").unwrap().market_ids, ["a", "b"]);
        assert_eq!(
            p("market_ids=a&market_ids=b,c&market_ids=a").unwrap().market_ids,
            ["a", "b", "c"]
        );
        assert_eq!(named(p("market_ids=a&market_ids=")), "market_ids");
        assert_eq!(named(p("market_ids=a,,b")), "market_ids");
        assert_eq!(named(p("")), "market_ids");
        let many: Vec<String> = (0..51).map(|i| format!("m{i}")).collect();
        assert_eq!(named(p(&format!("market_ids={}", many.join(",")))), "market_ids");
        assert_eq!(named(p("market_ids=a&exchange=venue_c")), "exchange");
    }
}
