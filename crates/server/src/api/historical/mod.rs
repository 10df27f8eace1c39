//! Historical order books (spec §4.2, §2.5–2.8, contracts §5): snapshots read from storage, per venue and in
//! one unified route. Any valid key (contracts §3).
//!
//! # Reads
//! Without `start_time`/`end_time`: the most recent snapshots, newest first. With both: oldest first, one row
//! per `granularity` bucket aligned to the Unix epoch (the last snapshot of the bucket, with its own
//! timestamp); empty buckets give no row. The store does the downsampling ([`SnapshotWindow`]); bucket
//! numbers and starts come from [`crossbook_core::history`].
//!
//! # Pages and cursors
//! Each page reads `limit + 1` rows, so `has_more` is exact; `pagination_key` is `null` on the last page. The
//! key holds the position of the page's last row: its timestamp (latest reads) or its bucket (range reads),
//! and which token it belongs to. The next page starts strictly after that position, so snapshots stored
//! while a client walks never shift a page boundary: newer snapshots sit above a newest-first walk, and a
//! snapshot added later to the bucket of a range page's last row does not bring that bucket back.
//!
//! A key is bound to its query: it carries a hash over the route, the resolved market, the token filter,
//! the range, the granularity and the format, together with the position. A key from another query, or
//! one edited or made up, fails that check and is a 400 naming `pagination_key`. (The hash is not a secret:
//! someone can mint a valid key for a position of their choice, which shows them nothing the same query
//! walked page by page would not.) `limit` is not bound: a client may change the page size mid-walk.
//!
//! # venue_b: two tokens per market
//! A venue_b market has a YES and a NO token, each its own book and its own rows. Without `asset_id` the
//! route interleaves both tokens' rows in one sequence, ordered by time (newest first, or by bucket oldest
//! first for ranges), with the YES row before the NO row at the same timestamp (or bucket). Pages cut that one
//! sequence anywhere, also between the two rows of one timestamp; the cursor names the token, so the next page
//! goes on with the other token's row. `asset_id` restricts the sequence to one token.
//!
//! # The unified route
//! One row per moment of the market, in the `unified` or `interval` format (default: `interval` for markets
//! with an interval code, else `unified`). venue_a: the market's single book; asks are derived from the
//! opposite bids (YES ask at `1 − p` for each NO bid at `p`, and the reverse). venue_b: the timeline is the
//! YES token's snapshots, paged as on the venue_b route with `asset_id` set to the YES token; each row's `no`
//! side is the NO token's latest snapshot at or before that row's timestamp (empty ladders when there is none).

use std::cmp::Reverse;

use axum::extract::State;
use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use crossbook_core::{Amount, BookSnapshot, Exchange, Level, Market, Price, Timestamp, TopOfBook, book, history};
use crossbook_store::{SnapshotQuery, SnapshotWindow};
use serde::Serialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    api::{
        also_unversioned,
        common::{ExchangeName, IntervalCodeName, iso},
    },
    auth::{Gate, groups},
    error::{ApiError, ApiResult},
    json::Json,
    params::{FromQuery, Limit, ParamEnum, QueryMap, ValidQuery, check_order, check_together},
};

/// `limit` of the historical routes (spec §8).
pub const HISTORY_LIMIT: Limit = Limit::new(100, 200);

/// Ask levels summed into `yes_depth` / `no_depth` of the interval format (contracts §5).
const DEPTH_LEVELS: usize = 5;

/// The historical routes, each also reachable without `/v1`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(also_unversioned(routes!(venue_a_orderbook)))
        .routes(also_unversioned(routes!(venue_b_orderbook)))
        .routes(also_unversioned(routes!(unified_orderbook)))
}

// ------------------------------------------------------------------------------------------------ outputs

/// One price level: `price` a 4-decimal string, `size` a number.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LevelOut {
    #[schema(examples("0.5300"))]
    pub price: String,
    #[schema(examples(120.0))]
    pub size: f64,
}

fn levels(ladder: &[Level]) -> Vec<LevelOut> {
    ladder
        .iter()
        .map(|l| LevelOut {
            price: l.price.to_string4(),
            size: size(l.size),
        })
        .collect()
}

/// Contracts or shares, rendered to 2 decimals.
fn size(a: Amount) -> f64 {
    a.to_f64(2)
}

fn price(p: Option<Price>) -> Option<f64> {
    p.map(Price::to_f64_4)
}

/// Mid and spread of a top of book as JSON numbers, when both sides exist. Core computes and rounds them
/// ([`book::mid`], [`book::spread`]); this only renders.
fn mid_spread(bid: Option<Price>, ask: Option<Price>) -> (Option<f64>, Option<f64>) {
    let quote = bid.zip(ask);
    (
        price(quote.map(|(b, a)| book::mid(b, a))),
        price(quote.map(|(b, a)| book::spread(b, a))),
    )
}

/// Page metadata (spec 2.5).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaginationOut {
    /// The page size asked for.
    pub limit: u32,
    /// Rows on this page.
    pub count: usize,
    /// Whether another page follows.
    pub has_more: bool,
    /// Opaque cursor of the next page (pass it as `pagination_key`); null on the last page.
    #[schema(required = true)]
    pub pagination_key: Option<String>,
}

/// A venue_a snapshot (spec 2.6). Best bid and ask are from the YES side; the YES ask is `1 −` the best NO bid.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueASnapshotOut {
    /// Market ticker.
    pub market_id: String,
    /// Snapshot time, Unix milliseconds.
    pub timestamp: i64,
    /// YES bids, best first.
    pub yes_bids: Vec<LevelOut>,
    /// NO bids, best first.
    pub no_bids: Vec<LevelOut>,
    /// Top YES bid; null when there is none.
    #[schema(required = true)]
    pub best_yes_bid: Option<f64>,
    /// Top YES ask (`1 −` the top NO bid); null when there is no NO bid.
    #[schema(required = true)]
    pub best_yes_ask: Option<f64>,
    /// `(best_yes_bid + best_yes_ask) / 2` when both exist.
    #[schema(required = true)]
    pub mid: Option<f64>,
    /// `best_yes_ask − best_yes_bid` when both exist.
    #[schema(required = true)]
    pub spread: Option<f64>,
}

impl From<&BookSnapshot> for VenueASnapshotOut {
    fn from(s: &BookSnapshot) -> Self {
        let top = TopOfBook::venue_a_yes(s);
        let (bid, ask) = (top.bid_price(), top.ask_price());
        let (mid, spread) = mid_spread(bid, ask);
        VenueASnapshotOut {
            market_id: s.market_id.clone(),
            timestamp: s.timestamp.millis(),
            yes_bids: levels(&s.bids),
            no_bids: levels(&s.no_bids),
            best_yes_bid: price(bid),
            best_yes_ask: price(ask),
            mid,
            spread,
        }
    }
}

/// `YES` or `NO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum OutcomeName {
    Yes,
    No,
}

/// A venue_b snapshot of one token (spec 2.7, contracts §5).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueBSnapshotOut {
    /// Condition id of the market.
    pub market_id: String,
    /// Token id.
    pub asset_id: String,
    /// Which side of the market the token is.
    pub outcome: OutcomeName,
    /// Snapshot time, Unix milliseconds.
    pub timestamp: i64,
    /// Bids, best first.
    pub bids: Vec<LevelOut>,
    /// Asks, best first.
    pub asks: Vec<LevelOut>,
    #[schema(required = true)]
    pub best_bid: Option<f64>,
    #[schema(required = true)]
    pub best_ask: Option<f64>,
    /// `(best_bid + best_ask) / 2` when both exist.
    #[schema(required = true)]
    pub mid: Option<f64>,
    /// `best_ask − best_bid` when both exist.
    #[schema(required = true)]
    pub spread: Option<f64>,
}

/// One side (YES or NO) of a unified row.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SideOut {
    pub bids: Vec<LevelOut>,
    pub asks: Vec<LevelOut>,
    #[schema(required = true)]
    pub best_bid: Option<f64>,
    #[schema(required = true)]
    pub best_ask: Option<f64>,
}

/// A row of the `unified` format: both sides of the market at one moment; `mid` and `spread` of the YES side.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnifiedRowOut {
    /// Unix milliseconds.
    pub timestamp: i64,
    pub yes: SideOut,
    pub no: SideOut,
    #[schema(required = true)]
    pub mid: Option<f64>,
    #[schema(required = true)]
    pub spread: Option<f64>,
}

/// A row of the `interval` format: top of book of both sides, the market's window, and depth.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IntervalRowOut {
    /// Unix milliseconds.
    pub timestamp: i64,
    /// The market's interval code; null for a market without one (`format=interval` asked explicitly).
    #[schema(required = true)]
    pub interval_code: Option<IntervalCodeName>,
    /// Window start, ISO 8601.
    #[schema(required = true, format = DateTime)]
    pub window_start: Option<String>,
    /// Window end, ISO 8601.
    #[schema(required = true, format = DateTime)]
    pub window_end: Option<String>,
    #[schema(required = true)]
    pub yes_bid: Option<f64>,
    #[schema(required = true)]
    pub yes_ask: Option<f64>,
    #[schema(required = true)]
    pub no_bid: Option<f64>,
    #[schema(required = true)]
    pub no_ask: Option<f64>,
    /// Of the YES side.
    #[schema(required = true)]
    pub mid: Option<f64>,
    /// Of the YES side.
    #[schema(required = true)]
    pub spread: Option<f64>,
    /// Contracts on the top 5 YES ask levels.
    pub yes_depth: f64,
    /// Contracts on the top 5 NO ask levels.
    pub no_depth: f64,
}

/// A row of the unified route, in the format the response names.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum UnifiedSnapshotOut {
    Unified(UnifiedRowOut),
    Interval(IntervalRowOut),
}

/// Response of `/v1/historical/venue_a/orderbook`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueAHistoryOut {
    pub snapshots: Vec<VenueASnapshotOut>,
    pub pagination: PaginationOut,
}

/// Response of `/v1/historical/venue_b/orderbook`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueBHistoryOut {
    pub snapshots: Vec<VenueBSnapshotOut>,
    pub pagination: PaginationOut,
}

/// Response of `/v1/historical/orderbook`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnifiedHistoryOut {
    pub exchange: ExchangeName,
    /// The market's venue-native id (for venue_b the condition id, also when asked by numeric id).
    pub market_id: String,
    pub format: FormatName,
    pub snapshots: Vec<UnifiedSnapshotOut>,
    pub pagination: PaginationOut,
}

// ------------------------------------------------------------------------------------------------ parameters

/// Bucket size of range reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum Granularity {
    #[serde(rename = "1m")]
    M1,
    #[serde(rename = "5m")]
    M5,
}

impl ParamEnum for Granularity {
    const VALUES: &'static [(&'static str, Self)] = &[("1m", Granularity::M1), ("5m", Granularity::M5)];
}

impl From<Granularity> for history::Granularity {
    fn from(g: Granularity) -> Self {
        match g {
            Granularity::M1 => history::Granularity::M1,
            Granularity::M5 => history::Granularity::M5,
        }
    }
}

/// Row format of the unified route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatName {
    Interval,
    Unified,
}

impl ParamEnum for FormatName {
    const VALUES: &'static [(&'static str, Self)] =
        &[("interval", FormatName::Interval), ("unified", FormatName::Unified)];
}

/// The parameters every historical route shares, validated.
#[derive(Debug, Clone)]
struct Common {
    market_id: String,
    range: Option<(Timestamp, Timestamp)>,
    granularity: Granularity,
    limit: u32,
    pagination_key: Option<String>,
}

impl Common {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let market_id = q.required_text("market_id")?;
        let start = q.unix_millis("start_time")?;
        let end = q.unix_millis("end_time")?;
        check_together("start_time", &start, "end_time", &end)?;
        check_order("start_time", start, "end_time", end)?;
        Ok(Common {
            market_id,
            range: start.zip(end),
            granularity: q.one_of("granularity")?.unwrap_or(Granularity::M1),
            limit: q.limit(HISTORY_LIMIT)?,
            pagination_key: q.text("pagination_key")?,
        })
    }
}

/// Parameters of `/v1/historical/venue_a/orderbook`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenueAParams {
    /// Market ticker.
    #[param(min_length = 1, max_length = 256)]
    pub market_id: String,
    /// Range start, Unix milliseconds (inclusive); must be set together with `end_time`.
    #[param(value_type = Option<String>, example = "1763752500000")]
    pub start_time: Option<String>,
    /// Range end, Unix milliseconds (inclusive); must be set together with `start_time`, not before it.
    #[param(value_type = Option<String>, example = "1763753400000")]
    pub end_time: Option<String>,
    /// Bucket size of range reads (one row per bucket: its last snapshot).
    #[param(inline, required = false, default = "1m")]
    pub granularity: Granularity,
    /// Maximum rows per page.
    #[param(required = false, minimum = 1, maximum = 200, default = 100)]
    pub limit: u32,
    /// Cursor from the previous response's `pagination.pagination_key`, with otherwise the same parameters.
    pub pagination_key: Option<String>,
    #[param(ignore)]
    common: Common,
}

impl FromQuery for VenueAParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let common = Common::from_query(q)?;
        Ok(VenueAParams {
            market_id: common.market_id.clone(),
            start_time: None,
            end_time: None,
            granularity: common.granularity,
            limit: common.limit,
            pagination_key: common.pagination_key.clone(),
            common,
        })
    }
}

/// Parameters of `/v1/historical/venue_b/orderbook`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenueBParams {
    /// Condition id (`0x…`) or the numeric source market id.
    #[param(min_length = 1, max_length = 256)]
    pub market_id: String,
    /// Token id: only this token's rows. Omit for both the YES and the NO token.
    #[param(min_length = 1, max_length = 256)]
    pub asset_id: Option<String>,
    /// Range start, Unix milliseconds (inclusive); must be set together with `end_time`.
    #[param(value_type = Option<String>, example = "1763752500000")]
    pub start_time: Option<String>,
    /// Range end, Unix milliseconds (inclusive).
    #[param(value_type = Option<String>, example = "1763753400000")]
    pub end_time: Option<String>,
    /// Bucket size of range reads.
    #[param(inline, required = false, default = "1m")]
    pub granularity: Granularity,
    /// Maximum rows per page (rows of both tokens count).
    #[param(required = false, minimum = 1, maximum = 200, default = 100)]
    pub limit: u32,
    /// Cursor from the previous response.
    pub pagination_key: Option<String>,
    #[param(ignore)]
    common: Common,
}

impl FromQuery for VenueBParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let common = Common::from_query(q)?;
        Ok(VenueBParams {
            market_id: common.market_id.clone(),
            asset_id: q.text("asset_id")?,
            start_time: None,
            end_time: None,
            granularity: common.granularity,
            limit: common.limit,
            pagination_key: common.pagination_key.clone(),
            common,
        })
    }
}

/// Parameters of `/v1/historical/orderbook`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UnifiedParams {
    /// The venue of `market_id`.
    #[param(inline)]
    pub exchange: ExchangeName,
    /// Venue-native market id: venue_a ticker, venue_b condition id or numeric source id.
    #[param(min_length = 1, max_length = 256)]
    pub market_id: String,
    /// Row format. Default: `interval` for markets with an interval code, else `unified`.
    #[param(inline)]
    pub format: Option<FormatName>,
    /// Range start, Unix milliseconds (inclusive); must be set together with `end_time`.
    #[param(value_type = Option<String>, example = "1763752500000")]
    pub start_time: Option<String>,
    /// Range end, Unix milliseconds (inclusive).
    #[param(value_type = Option<String>, example = "1763753400000")]
    pub end_time: Option<String>,
    /// Bucket size of range reads.
    #[param(inline, required = false, default = "1m")]
    pub granularity: Granularity,
    /// Maximum rows per page.
    #[param(required = false, minimum = 1, maximum = 200, default = 100)]
    pub limit: u32,
    /// Cursor from the previous response (beyond the spec's table: the envelope of contracts §5 carries one).
    pub pagination_key: Option<String>,
    #[param(ignore)]
    common: Common,
}

impl FromQuery for UnifiedParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let exchange = q.one_of("exchange")?.ok_or_else(|| ApiError::missing("exchange"))?;
        let common = Common::from_query(q)?;
        Ok(UnifiedParams {
            exchange,
            market_id: common.market_id.clone(),
            format: q.one_of("format")?,
            start_time: None,
            end_time: None,
            granularity: common.granularity,
            limit: common.limit,
            pagination_key: common.pagination_key.clone(),
            common,
        })
    }
}

// ------------------------------------------------------------------------------------------------ cursors

/// Where the next page starts: after the row at `pos` (a timestamp for latest reads, a bucket number for
/// range reads) of the book ranked `rank` (0 = YES / the only book, 1 = NO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub pos: i64,
    pub rank: u8,
}

const CURSOR_VERSION: u8 = 1;
const CURSOR_TAG_LEN: usize = 12;
const CURSOR_LEN: usize = 1 + 1 + 8 + CURSOR_TAG_LEN;

fn cursor_tag(binding: &str, body: &[u8]) -> [u8; CURSOR_TAG_LEN] {
    let mut h = Sha256::new();
    h.update(b"crossbook historical cursor\0");
    h.update(binding.as_bytes());
    h.update([0u8]);
    h.update(body);
    let digest = h.finalize();
    let mut tag = [0u8; CURSOR_TAG_LEN];
    tag.copy_from_slice(&digest[..CURSOR_TAG_LEN]);
    tag
}

impl Cursor {
    /// The opaque key: version, rank and position, then a hash over them and the query they belong to.
    pub fn encode(self, binding: &str) -> String {
        let mut bytes = Vec::with_capacity(CURSOR_LEN);
        bytes.push(CURSOR_VERSION);
        bytes.push(self.rank);
        bytes.extend_from_slice(&self.pos.to_be_bytes());
        let tag = cursor_tag(binding, &bytes);
        bytes.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Reads a key made by [`Cursor::encode`] for the same `binding`; anything else is a 400 naming
    /// `pagination_key`.
    pub fn decode(key: &str, binding: &str) -> ApiResult<Cursor> {
        let bad = || {
            ApiError::invalid(
                "pagination_key",
                "pagination_key is not a key of this query: pass the pagination_key of the previous page, with \
                 the same parameters",
            )
        };
        let bytes = URL_SAFE_NO_PAD.decode(key.as_bytes()).map_err(|_| bad())?;
        if bytes.len() != CURSOR_LEN || bytes[0] != CURSOR_VERSION {
            return Err(bad());
        }
        let (body, tag) = bytes.split_at(CURSOR_LEN - CURSOR_TAG_LEN);
        if !bool::from(cursor_tag(binding, body).ct_eq(tag)) {
            return Err(bad());
        }
        let rank = body[1];
        if rank > 1 {
            return Err(bad());
        }
        let mut pos = [0u8; 8];
        pos.copy_from_slice(&body[2..10]);
        Ok(Cursor {
            pos: i64::from_be_bytes(pos),
            rank,
        })
    }
}

// ------------------------------------------------------------------------------------------------ paging

/// One book a page reads from: its token (none on venue_a) and its rank among the market's books.
#[derive(Debug, Clone)]
struct Book {
    asset_id: Option<String>,
    rank: u8,
}

/// A page of rows from one or two books, merged in the route's order.
struct Page {
    rows: Vec<(u8, BookSnapshot)>,
    next: Option<Cursor>,
}

/// The query a page answers, for the cursor binding.
fn binding(route: &str, market: &Market, asset: Option<&str>, c: &Common, format: Option<FormatName>) -> String {
    let range = match c.range {
        Some((s, e)) => format!(
            "{}-{}/{}",
            s.millis(),
            e.millis(),
            history::Granularity::from(c.granularity).as_str()
        ),
        None => "latest".to_string(),
    };
    let format = match format {
        Some(FormatName::Interval) => "interval",
        Some(FormatName::Unified) => "unified",
        None => "-",
    };
    format!(
        "{route}|{}|{}|{}|{range}|{format}",
        market.exchange.as_str(),
        market.market_id,
        asset.unwrap_or("-")
    )
}

/// Reads one page: `limit + 1` rows of each book from the cursor on, merged, cut at `limit`.
async fn read_page(
    state: &AppState,
    market: &Market,
    books: &[Book],
    c: &Common,
    cursor: Option<Cursor>,
) -> ApiResult<Page> {
    let granularity = history::Granularity::from(c.granularity);
    let mut rows: Vec<(u8, BookSnapshot)> = Vec::new();
    for book in books {
        // Rows of a book ranked after the cursor's book may still sit at the cursor's own position.
        let later = cursor.is_some_and(|k| book.rank > k.rank);
        let window = match c.range {
            None => SnapshotWindow::Latest {
                before: cursor.map(|k| Timestamp::from_millis(if later { k.pos.saturating_add(1) } else { k.pos })),
            },
            // The store resumes after the bucket holding `after`: the cursor's bucket itself, or the one before.
            Some((start, end)) => SnapshotWindow::Range {
                start,
                end,
                bucket_ms: granularity.millis(),
                after: cursor.map(|k| {
                    let first = granularity.bucket_start(k.pos).millis();
                    Timestamp::from_millis(if later { first.saturating_sub(1) } else { first })
                }),
            },
        };
        let q = SnapshotQuery {
            exchange: market.exchange,
            market_id: market.market_id.clone(),
            asset_id: book.asset_id.clone(),
            window,
            limit: c.limit + 1,
        };
        rows.extend(state.store.snapshots(&q).await?.into_iter().map(|s| (book.rank, s)));
    }
    let position = |s: &BookSnapshot| match c.range {
        None => s.timestamp.millis(),
        Some(_) => granularity.bucket_of(s.timestamp),
    };
    match c.range {
        None => rows.sort_by_key(|(rank, s)| (Reverse(s.timestamp), *rank)),
        Some(_) => rows.sort_by_key(|(rank, s)| (position(s), *rank)),
    }
    let has_more = rows.len() > c.limit as usize;
    rows.truncate(c.limit as usize);
    let next = if has_more {
        rows.last().map(|(rank, s)| Cursor {
            pos: position(s),
            rank: *rank,
        })
    } else {
        None
    };
    Ok(Page { rows, next })
}

fn pagination(c: &Common, count: usize, next: Option<Cursor>, binding: &str) -> PaginationOut {
    PaginationOut {
        limit: c.limit,
        count,
        has_more: next.is_some(),
        pagination_key: next.map(|k| k.encode(binding)),
    }
}

async fn market_of(state: &AppState, exchange: Exchange, market_id: &str) -> ApiResult<Market> {
    state
        .store
        .get_market(exchange, market_id)
        .await?
        .map(|m| m.market)
        .ok_or_else(|| ApiError::not_found(format!("unknown market_id {market_id} on {exchange}")))
}

fn cursor_of(c: &Common, binding: &str) -> ApiResult<Option<Cursor>> {
    c.pagination_key
        .as_deref()
        .map(|k| Cursor::decode(k, binding))
        .transpose()
}

/// The venue_b tokens of `market` to read, YES first; `asset_id` narrows to one (404 when it is not a token
/// of the market).
fn venue_b_books(market: &Market, asset_id: Option<&str>) -> ApiResult<Vec<(Book, OutcomeName)>> {
    let tokens = [
        (market.yes_token_id.as_deref(), OutcomeName::Yes, 0u8),
        (market.no_token_id.as_deref(), OutcomeName::No, 1u8),
    ];
    let books: Vec<(Book, OutcomeName)> = tokens
        .into_iter()
        .filter_map(|(token, outcome, rank)| Some((token?, outcome, rank)))
        .filter(|(token, _, _)| asset_id.is_none_or(|a| a == *token))
        .map(|(token, outcome, rank)| {
            (
                Book {
                    asset_id: Some(token.to_string()),
                    rank,
                },
                outcome,
            )
        })
        .collect();
    if let Some(a) = asset_id
        && books.is_empty()
    {
        return Err(ApiError::not_found(format!(
            "asset_id {a} is not a token of market {}",
            market.market_id
        )));
    }
    Ok(books)
}

// ------------------------------------------------------------------------------------------------ handlers

/// venue_a order-book history
///
/// Snapshots of one venue_a market (spec 2.6). Without `start_time`/`end_time`: the most recent, newest
/// first. With both: oldest first, one row per `granularity` bucket (its last snapshot). Follow
/// `pagination.pagination_key` for the next page.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_a/orderbook",
    tag = "historical",
    params(VenueAParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of snapshots.", body = VenueAHistoryOut),
        (status = 401, description = "No valid API key.", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown market_id.", body = crate::error::ErrorBody),
    )
)]
async fn venue_a_orderbook(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<VenueAParams>,
) -> ApiResult<Json<VenueAHistoryOut>> {
    let c = p.common;
    let market = market_of(&state, Exchange::VenueA, &c.market_id).await?;
    let bind = binding("venue_a", &market, None, &c, None);
    let cursor = cursor_of(&c, &bind)?;
    let books = [Book {
        asset_id: None,
        rank: 0,
    }];
    let page = read_page(&state, &market, &books, &c, cursor).await?;
    let snapshots: Vec<VenueASnapshotOut> = page.rows.iter().map(|(_, s)| s.into()).collect();
    Ok(Json(VenueAHistoryOut {
        pagination: pagination(&c, snapshots.len(), page.next, &bind),
        snapshots,
    }))
}

/// venue_b order-book history
///
/// Snapshots of one venue_b market, one row per token (spec 2.7): both tokens interleaved (YES before NO at
/// the same time or bucket), or one token with `asset_id`. Same windows and paging as the venue_a route.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_b/orderbook",
    tag = "historical",
    params(VenueBParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of token snapshots.", body = VenueBHistoryOut),
        (status = 401, description = "No valid API key.", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown market_id, or an asset_id that is not a token of the market.", body = crate::error::ErrorBody),
    )
)]
async fn venue_b_orderbook(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<VenueBParams>,
) -> ApiResult<Json<VenueBHistoryOut>> {
    let c = p.common;
    let market = market_of(&state, Exchange::VenueB, &c.market_id).await?;
    let books = venue_b_books(&market, p.asset_id.as_deref())?;
    let bind = binding("venue_b", &market, p.asset_id.as_deref(), &c, None);
    let cursor = cursor_of(&c, &bind)?;
    let just_books: Vec<Book> = books.iter().map(|(b, _)| b.clone()).collect();
    let page = read_page(&state, &market, &just_books, &c, cursor).await?;
    let snapshots: Vec<VenueBSnapshotOut> = page
        .rows
        .iter()
        .map(|(rank, s)| {
            let outcome = if *rank == 0 { OutcomeName::Yes } else { OutcomeName::No };
            let top = TopOfBook::of(&s.bids, &s.asks);
            let (bid, ask) = (top.bid_price(), top.ask_price());
            let (mid, spread) = mid_spread(bid, ask);
            VenueBSnapshotOut {
                market_id: market.market_id.clone(),
                asset_id: s.asset_id.clone().unwrap_or_default(),
                outcome,
                timestamp: s.timestamp.millis(),
                bids: levels(&s.bids),
                asks: levels(&s.asks),
                best_bid: price(bid),
                best_ask: price(ask),
                mid,
                spread,
            }
        })
        .collect();
    Ok(Json(VenueBHistoryOut {
        pagination: pagination(&c, snapshots.len(), page.next, &bind),
        snapshots,
    }))
}

/// Both sides of a market at one moment, asks best first.
struct Sides {
    timestamp: i64,
    yes_bids: Vec<Level>,
    yes_asks: Vec<Level>,
    no_bids: Vec<Level>,
    no_asks: Vec<Level>,
}

impl Sides {
    /// venue_a: two bid ladders; each side's asks are the other side's bids at `1 − p`.
    fn venue_a(s: &BookSnapshot) -> Sides {
        Sides {
            timestamp: s.timestamp.millis(),
            yes_bids: s.bids.clone(),
            yes_asks: s.derived_yes_asks(),
            no_bids: s.no_bids.clone(),
            no_asks: s.derived_no_asks(),
        }
    }

    /// venue_b: the YES token's book and the NO token's book as of the same moment.
    fn venue_b(yes: &BookSnapshot, no: Option<&BookSnapshot>) -> Sides {
        Sides {
            timestamp: yes.timestamp.millis(),
            yes_bids: yes.bids.clone(),
            yes_asks: yes.asks.clone(),
            no_bids: no.map(|n| n.bids.clone()).unwrap_or_default(),
            no_asks: no.map(|n| n.asks.clone()).unwrap_or_default(),
        }
    }

    /// Mid and spread of the YES side.
    fn yes_mid_spread(&self) -> (Option<f64>, Option<f64>) {
        let top = TopOfBook::of(&self.yes_bids, &self.yes_asks);
        mid_spread(top.bid_price(), top.ask_price())
    }

    fn unified(&self) -> UnifiedRowOut {
        let side = |bids: &[Level], asks: &[Level]| SideOut {
            bids: levels(bids),
            asks: levels(asks),
            best_bid: price(book::best(bids)),
            best_ask: price(book::best(asks)),
        };
        let (mid, spread) = self.yes_mid_spread();
        UnifiedRowOut {
            timestamp: self.timestamp,
            yes: side(&self.yes_bids, &self.yes_asks),
            no: side(&self.no_bids, &self.no_asks),
            mid,
            spread,
        }
    }

    fn interval(&self, market: &Market) -> IntervalRowOut {
        let depth = |asks: &[Level]| size(book::depth(asks, DEPTH_LEVELS));
        let (mid, spread) = self.yes_mid_spread();
        IntervalRowOut {
            timestamp: self.timestamp,
            interval_code: market.interval_code.map(Into::into),
            window_start: market.window_start.map(iso),
            window_end: market.window_end.map(iso),
            yes_bid: price(book::best(&self.yes_bids)),
            yes_ask: price(book::best(&self.yes_asks)),
            no_bid: price(book::best(&self.no_bids)),
            no_ask: price(book::best(&self.no_asks)),
            mid,
            spread,
            yes_depth: depth(&self.yes_asks),
            no_depth: depth(&self.no_asks),
        }
    }
}

/// Unified order-book history
///
/// One row per moment of a market of either venue, in the `unified` format (both sides with bids, asks and
/// best prices) or the `interval` format (top of book, window and depth); by default `interval` for markets
/// with an interval code. venue_a asks are derived from the opposite bids. For venue_b the rows follow the
/// YES token's snapshots, each paired with the NO token's book as of that moment.
#[utoipa::path(
    get,
    path = "/v1/historical/orderbook",
    tag = "historical",
    params(UnifiedParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of rows.", body = UnifiedHistoryOut),
        (status = 401, description = "No valid API key.", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown market_id on that exchange.", body = crate::error::ErrorBody),
    )
)]
async fn unified_orderbook(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<UnifiedParams>,
) -> ApiResult<Json<UnifiedHistoryOut>> {
    let c = p.common;
    let exchange = Exchange::from(p.exchange);
    let market = market_of(&state, exchange, &c.market_id).await?;
    let format = p.format.unwrap_or(if market.interval_code.is_some() {
        FormatName::Interval
    } else {
        FormatName::Unified
    });
    let bind = binding("unified", &market, None, &c, Some(format));
    let cursor = cursor_of(&c, &bind)?;
    let (rows, next) = match exchange {
        Exchange::VenueA => {
            let books = [Book {
                asset_id: None,
                rank: 0,
            }];
            let page = read_page(&state, &market, &books, &c, cursor).await?;
            let rows: Vec<Sides> = page.rows.iter().map(|(_, s)| Sides::venue_a(s)).collect();
            (rows, page.next)
        }
        Exchange::VenueB => match market.yes_token_id.clone() {
            // Without token ids in the catalog there is no book to read.
            None => (Vec::new(), None),
            Some(yes) => {
                let books = [Book {
                    asset_id: Some(yes),
                    rank: 0,
                }];
                let page = read_page(&state, &market, &books, &c, cursor).await?;
                let times: Vec<Timestamp> = page.rows.iter().map(|(_, s)| s.timestamp).collect();
                let no = match market.no_token_id.as_deref() {
                    Some(no) if !times.is_empty() => {
                        state
                            .store
                            .snapshots_as_of(Exchange::VenueB, &market.market_id, Some(no), &times)
                            .await?
                    }
                    _ => vec![None; times.len()],
                };
                let rows = page
                    .rows
                    .iter()
                    .zip(&no)
                    .map(|((_, y), n)| Sides::venue_b(y, n.as_ref()))
                    .collect();
                (rows, page.next)
            }
        },
    };
    let snapshots: Vec<UnifiedSnapshotOut> = rows
        .iter()
        .map(|r| match format {
            FormatName::Unified => UnifiedSnapshotOut::Unified(r.unified()),
            FormatName::Interval => UnifiedSnapshotOut::Interval(r.interval(&market)),
        })
        .collect();
    Ok(Json(UnifiedHistoryOut {
        exchange: p.exchange,
        market_id: market.market_id.clone(),
        format,
        pagination: pagination(&c, snapshots.len(), next, &bind),
        snapshots,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::tests::assert_spellings_match_serde;

    #[test]
    fn wire_enums() {
        assert_spellings_match_serde::<Granularity>();
        assert_spellings_match_serde::<FormatName>();
    }

    #[test]
    fn mid_and_spread_are_exact_and_half_up() {
        let p = |m: i64| Some(Price::from_micros(m));
        assert_eq!(mid_spread(p(530_000), p(550_000)), (Some(0.54), Some(0.02)));
        // 0.53 and 0.5401 → mid 0.53505 → 0.5351 (half-up), spread 0.0101.
        assert_eq!(mid_spread(p(530_000), p(540_100)), (Some(0.5351), Some(0.0101)));
        // Crossed books keep their negative spread.
        assert_eq!(mid_spread(p(600_000), p(580_000)), (Some(0.59), Some(-0.02)));
        assert_eq!(mid_spread(None, p(1)), (None, None));
    }

    #[test]
    fn cursors_round_trip_and_reject_other_queries() {
        let k = Cursor {
            pos: 1_763_752_500_000,
            rank: 1,
        };
        let key = k.encode("q1");
        assert_eq!(Cursor::decode(&key, "q1").unwrap(), k);
        for bad in [
            Cursor::decode(&key, "q2"),
            Cursor::decode("", "q1"),
            Cursor::decode("not base64!", "q1"),
            Cursor::decode(&URL_SAFE_NO_PAD.encode([1u8; CURSOR_LEN]), "q1"),
        ] {
            match bad.unwrap_err() {
                ApiError::InvalidParameter { param, .. } => assert_eq!(param.as_deref(), Some("pagination_key")),
                other => panic!("{other:?}"),
            }
        }
        // Any edited byte breaks the key.
        let mut bytes = URL_SAFE_NO_PAD.decode(&key).unwrap();
        bytes[5] ^= 1;
        assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(&bytes), "q1").is_err());
    }
}
