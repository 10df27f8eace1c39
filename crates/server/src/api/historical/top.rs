//! Top of book over time: `GET /v1/historical/{venue_a|venue_b}/top-of-book`. The rows of the order-book
//! routes (same windows, buckets, paging and cursor rules) cut down to the best bid and ask with their sizes,
//! the mid and the spread: what a chart of a market's quotes needs, at a fraction of the bytes.

use axum::extract::State;
use crossbook_core::{Exchange, Level, Outcome, TopOfBook};
use crossbook_store::books::history::HistoryRow;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    Book, GranularityParams, PaginationOut, RangeParams, VenueAParams, VenueBParams, binding, cursor_of, market_of,
    out::price, pagination, read_page, size, venue_b_books,
};
use crate::{
    AppState,
    access::{Gate, groups},
    error::ApiResult,
    json::Json,
    params::ValidQuery,
};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(venue_a_top_of_book))
        .routes(routes!(venue_b_top_of_book))
}

/// The best quotes of one book at one moment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TopOfBookOut {
    pub market_id: String,
    /// The venue_b token; null on venue_a (whose row is the YES side: the ask is derived from the best NO bid).
    #[schema(required = true)]
    pub asset_id: Option<String>,
    /// `YES` or `NO`: the outcome the quotes are for.
    pub outcome: Outcome,
    /// The moment of the book (Unix milliseconds): its last change, as on the order-book routes.
    pub timestamp: i64,
    /// Best bid; null when no one bids.
    #[schema(required = true, examples(0.53))]
    pub best_bid: Option<f64>,
    #[schema(required = true)]
    pub best_bid_size: Option<f64>,
    /// Best ask; null when no one offers.
    #[schema(required = true, examples(0.55))]
    pub best_ask: Option<f64>,
    #[schema(required = true)]
    pub best_ask_size: Option<f64>,
    /// `(bid + ask) / 2`, rounded half-up; null unless both sides quote.
    #[schema(required = true, examples(0.54))]
    pub mid: Option<f64>,
    /// `ask − bid`; null unless both sides quote.
    #[schema(required = true, examples(0.02))]
    pub spread: Option<f64>,
    /// `false` when the capture lost continuity between the row before it in time and this one.
    pub continuous: bool,
}

/// A page of top-of-book rows.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TopOfBookHistoryOut {
    pub rows: Vec<TopOfBookOut>,
    pub pagination: PaginationOut,
}

fn row(market_id: &str, asset_id: Option<String>, outcome: Outcome, top: TopOfBook, r: &HistoryRow) -> TopOfBookOut {
    let sz = |l: Option<Level>| l.map(|l| size(l.size));
    TopOfBookOut {
        market_id: market_id.to_string(),
        asset_id,
        outcome,
        timestamp: r.snapshot.timestamp.millis(),
        best_bid: price(top.bid_price()),
        best_bid_size: sz(top.bid),
        best_ask: price(top.ask_price()),
        best_ask_size: sz(top.ask),
        mid: price(top.mid()),
        spread: price(top.spread()),
        continuous: r.continuous,
    }
}

/// venue_a top of book over time
///
/// The best YES bid and ask (the ask derived from the best NO bid) with their sizes, the mid and the spread of
/// one venue_a market. Windows, buckets (`granularity`) and paging as on the venue_a order-book route: without
/// `start_time`/`end_time` the most recent rows, newest first; with both, oldest first, one row per bucket.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_a/top-of-book",
    tag = "historical",
    params(VenueAParams, RangeParams, GranularityParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of rows.", body = TopOfBookHistoryOut),
        (status = 404, description = "Unknown market_id.", body = crate::error::ErrorBody),
    )
)]
async fn venue_a_top_of_book(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<VenueAParams>,
) -> ApiResult<Json<TopOfBookHistoryOut>> {
    let c = p.common;
    let market = market_of(&state, Exchange::VenueA, &c.market_id).await?;
    let bind = binding("venue_a_top", &market, None, &c, None);
    let cursor = cursor_of(&c, &bind)?;
    let books = [Book {
        asset_id: None,
        rank: 0,
    }];
    let page = read_page(&state, &market, &books, &c, cursor).await?;
    let rows: Vec<TopOfBookOut> = page
        .rows
        .iter()
        .map(|(_, r)| {
            let top = TopOfBook::of_book(Exchange::VenueA, &r.snapshot);
            row(&market.market_id, None, Outcome::Yes, top, r)
        })
        .collect();
    Ok(Json(TopOfBookHistoryOut {
        pagination: pagination(&c, rows.len(), page.next, &bind),
        rows,
    }))
}

/// venue_b top of book over time
///
/// The best bid and ask with their sizes, the mid and the spread of each token of one venue_b market: both
/// tokens interleaved (YES before NO at the same time or bucket), or one token with `asset_id`. Windows,
/// buckets and paging as on the venue_b order-book route.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_b/top-of-book",
    tag = "historical",
    params(VenueBParams, RangeParams, GranularityParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of rows.", body = TopOfBookHistoryOut),
        (status = 404, description = "Unknown market_id, or an asset_id that is not a token of the market.", body = crate::error::ErrorBody),
    )
)]
async fn venue_b_top_of_book(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<VenueBParams>,
) -> ApiResult<Json<TopOfBookHistoryOut>> {
    let c = p.common;
    let market = market_of(&state, Exchange::VenueB, &c.market_id).await?;
    let books = venue_b_books(&market, p.asset_id.as_deref())?;
    let bind = binding("venue_b_top", &market, p.asset_id.as_deref(), &c, None);
    let cursor = cursor_of(&c, &bind)?;
    let just_books: Vec<Book> = books.iter().map(|(b, _)| b.clone()).collect();
    let page = read_page(&state, &market, &just_books, &c, cursor).await?;
    let rows: Vec<TopOfBookOut> = page
        .rows
        .iter()
        .map(|(rank, r)| {
            let outcome = if *rank == 0 { Outcome::Yes } else { Outcome::No };
            let s = &r.snapshot;
            row(
                &market.market_id,
                s.asset_id.clone(),
                outcome,
                TopOfBook::of_book(Exchange::VenueB, s),
                r,
            )
        })
        .collect();
    Ok(Json(TopOfBookHistoryOut {
        pagination: pagination(&c, rows.len(), page.next, &bind),
        rows,
    }))
}
