//! Historical order books (spec §4.2, §2.5–2.8, contracts §5): snapshots read from storage, per venue and in
//! one unified route. Any valid key (contracts §3).
//!
//! # Reads
//! Without `start_time`/`end_time`: the most recent snapshots, newest first. With both: oldest first, one row
//! per `granularity` bucket aligned to the Unix epoch (the last snapshot of the bucket, with its own
//! timestamp); empty buckets give no row. The store does the downsampling ([`HistoryWindow`]); bucket
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

use axum::extract::State;
use crossbook_core::{Exchange, Outcome, Timestamp, TopOfBook, book::BookKey};
use crossbook_store::books::history::books_as_of;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{Gate, groups},
    api::also_unversioned,
    error::ApiResult,
    json::Json,
    params::{Limit, ValidQuery},
};

/// `limit` of the historical routes.
pub type HistoryLimit = Limit<100, 200>;

/// The historical routes, each also reachable without `/v1`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(also_unversioned(routes!(venue_a_orderbook)))
        .routes(also_unversioned(routes!(venue_b_orderbook)))
        .routes(also_unversioned(routes!(unified_orderbook)))
        .routes(also_unversioned(routes!(gaps::gaps)))
        .routes(also_unversioned(routes!(execution::venue_a_execution_price)))
        .routes(also_unversioned(routes!(execution::venue_b_execution_price)))
        .merge(trades::router())
        .merge(top::router())
}

mod cursor;
mod execution;
mod gaps;
mod out;
mod paging;
mod params;
mod top;
mod trades;

pub use self::cursor::{Cursor, TradeKey};
pub use self::execution::{ExecutionParams, ExecutionPriceOut};
pub use self::gaps::{GapEnd, GapOut, GapsOut, GapsParams};
use self::paging::*;
pub use self::top::{TopOfBookHistoryOut, TopOfBookOut};
pub use self::trades::{TradeOut, TradesOut, VenueATradesParams, VenueBTradesParams};
pub use self::{out::*, params::*};

/// venue_a order-book history
///
/// Snapshots of one venue_a market. Without `start_time`/`end_time`: the most recent, newest
/// first. With both: oldest first, one row per `granularity` bucket (its last snapshot). Follow
/// `pagination.pagination_key` for the next page.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_a/orderbook",
    tag = "historical",
    params(VenueAParams, RangeParams, GranularityParams),
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
/// Snapshots of one venue_b market, one row per token: both tokens interleaved (YES before NO at
/// the same time or bucket), or one token with `asset_id`. Same windows and paging as the venue_a route.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_b/orderbook",
    tag = "historical",
    params(VenueBParams, RangeParams, GranularityParams),
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
        .map(|(rank, row)| {
            let s = &row.snapshot;
            let outcome = if *rank == 0 { Outcome::Yes } else { Outcome::No };
            let top = TopOfBook::of_book(Exchange::VenueB, s);
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
                continuous: row.continuous,
            }
        })
        .collect();
    Ok(Json(VenueBHistoryOut {
        pagination: pagination(&c, snapshots.len(), page.next, &bind),
        snapshots,
    }))
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
    params(UnifiedParams, RangeParams, GranularityParams),
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
    let exchange = p.exchange;
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
                let times: Vec<Timestamp> = page.rows.iter().map(|(_, r)| r.snapshot.timestamp).collect();
                let no = match market.no_token_id.as_deref() {
                    Some(no) if !times.is_empty() => {
                        let no = BookKey::venue_b(&market.market_id, no);
                        books_as_of(state.store.as_ref(), &no, &times).await?
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
