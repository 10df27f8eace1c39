//! `GET /v1/historical/gaps`: the capture gaps of a market's books, read from the book log. A gap is a stretch
//! of time in which the service could not vouch for a book (the feed dropped, went silent, skipped a sequence
//! number, was rate limited, or the service was not running); it ends when a fresh snapshot of the book
//! arrives. Any valid key; paged like the other historical routes.

use axum::extract::State;
use crossbook_core::{
    Exchange, Outcome, Timestamp,
    book::{BookKey, GapCause},
};
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::{
    AppState,
    access::{Gate, groups},
    error::{ApiError, ApiResult},
    json::Json,
    params::{FromQuery, QueryMap, Text, ValidQuery},
};

use super::{Cursor, PaginationOut, paging::*, params::Common};

/// Parameters of `/v1/historical/gaps`, besides `start_time`, `end_time`, `limit` and `pagination_key`.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct GapsParams {
    /// The venue of `market_id`.
    #[param(inline)]
    pub exchange: Exchange,
    /// Venue-native market id: venue_a ticker, venue_b condition id or numeric source id.
    #[param(inline)]
    pub market_id: Text,
    /// venue_b only: this token's gaps. Omit for both tokens' gaps.
    #[param(inline)]
    pub asset_id: Option<Text>,
    #[param(ignore)]
    pub(super) common: Common,
}

impl FromQuery for GapsParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let exchange = q.one_of("exchange")?.ok_or_else(|| ApiError::missing("exchange"))?;
        let common = Common::from_query(q)?;
        let asset_id: Option<Text> = q.get("asset_id")?;
        if exchange == Exchange::VenueA && asset_id.is_some() {
            return Err(ApiError::invalid(
                "asset_id",
                "asset_id is for venue_b markets only: a venue_a market has one book",
            ));
        }
        Ok(GapsParams {
            exchange,
            market_id: Text(common.market_id.clone()),
            asset_id,
            common,
        })
    }
}

/// How a gap ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GapEnd {
    /// A fresh snapshot of the book arrived.
    Resnapshot,
}

/// One capture gap of one book.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GapOut {
    pub exchange: Exchange,
    pub market_id: String,
    /// The venue_b token; null on venue_a.
    #[schema(required = true)]
    pub asset_id: Option<String>,
    /// The token's outcome (venue_b); null on venue_a.
    #[schema(required = true)]
    pub outcome: Option<Outcome>,
    /// When continuity was lost, Unix milliseconds (for a restart: the book's last event before it).
    pub start_time: i64,
    /// When the book was captured again, Unix milliseconds; null while the gap lasts.
    #[schema(required = true)]
    pub end_time: Option<i64>,
    /// Why continuity was lost.
    pub cause: GapCause,
    /// How it ended: `resnapshot`; null while the gap lasts.
    #[schema(required = true, inline)]
    pub ended_by: Option<GapEnd>,
}

/// A page of gaps.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GapsOut {
    pub gaps: Vec<GapOut>,
    pub pagination: PaginationOut,
}

/// Capture gaps of a market
///
/// The stretches of time in which the service could not vouch for a market's book, oldest first: each with
/// its start, its end (null while it lasts), its cause and how it ended. Without `start_time`/`end_time`, the
/// whole recorded history; with both, the gaps that overlap the range. A venue_b market lists both tokens'
/// gaps unless `asset_id` names one. Rows in `/v1/historical/*/orderbook` are never invented for a gap: a
/// gap shows as missing rows there and as an entry here.
#[utoipa::path(
    get,
    path = "/v1/historical/gaps",
    tag = "historical",
    params(GapsParams, super::RangeParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of gaps.", body = GapsOut),
        (status = 400, description = "A parameter is missing or invalid (named in the error).", body = crate::error::ErrorBody),
        (status = 401, description = "No valid API key.", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown market_id on that exchange, or an asset_id that is not a token of the market.", body = crate::error::ErrorBody),
    )
)]
pub(super) async fn gaps(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<GapsParams>,
) -> ApiResult<Json<GapsOut>> {
    let c = &p.common;
    let market = market_of(&state, p.exchange, &c.market_id).await?;
    let bind = binding("gaps", &market, p.asset_id.as_deref(), c, None);
    let cursor = cursor_of(c, &bind)?;
    let books: Vec<(BookKey, u8, Option<Outcome>)> = match p.exchange {
        Exchange::VenueA => vec![(BookKey::venue_a(&market.market_id), 0, None)],
        Exchange::VenueB => venue_b_books(&market, p.asset_id.as_deref())?
            .into_iter()
            .filter_map(|(b, outcome)| {
                let asset = b.asset_id?;
                Some((BookKey::venue_b(&market.market_id, &asset), b.rank, Some(outcome)))
            })
            .collect(),
    };
    let (from, to) = c
        .range
        .unwrap_or((Timestamp::from_millis(0), Timestamp::from_millis(i64::MAX / 2)));
    // Gaps are few (one per lost connection per book), so a market's are read whole and paged here.
    let mut rows = Vec::new();
    for (key, rank, outcome) in &books {
        for g in state.store.log_gaps(key, from, to).await? {
            rows.push((g.start.millis(), *rank, g, key.asset_id.clone(), *outcome));
        }
    }
    // Oldest first, the YES token's gap before the NO token's at the same instant; the cursor is the last
    // row's (start, token).
    rows.sort_by_key(|r| (r.0, r.1, r.2.seq));
    rows.retain(|r| cursor.is_none_or(|k| (r.0, r.1) > (k.pos, k.rank)));
    let limit = c.limit as usize;
    let next = (rows.len() > limit).then(|| {
        let last = &rows[limit - 1];
        Cursor {
            pos: last.0,
            rank: last.1,
        }
    });
    rows.truncate(limit);
    let gaps: Vec<GapOut> = rows
        .into_iter()
        .map(|(_, _, g, asset_id, outcome)| GapOut {
            exchange: p.exchange,
            market_id: market.market_id.clone(),
            asset_id,
            outcome,
            start_time: g.start.millis(),
            end_time: g.end.map(Timestamp::millis),
            cause: g.cause,
            ended_by: g.end.map(|_| GapEnd::Resnapshot),
        })
        .collect();
    Ok(Json(GapsOut {
        pagination: pagination(c, gaps.len(), next, &bind),
        gaps,
    }))
}
