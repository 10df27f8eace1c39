//! The trade tape: `GET /v1/historical/{venue_a|venue_b}/trades`, one market's recorded trades. Without a
//! range, the most recent first; with `start_time` and `end_time`, oldest first within it, as the order-book
//! routes read. Pages follow `pagination_key`, which names the page's last trade (its execution time and row)
//! and is bound to the query like the order-book cursors, so trades recorded while a client walks never shift
//! a page boundary.

use axum::extract::State;
use crossbook_core::{Exchange, Market, Outcome, Timestamp};
use crossbook_store::{StoredTrade, TradeQuery};
use crossbook_venues::venue_b::normalise::transaction_hash_of;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{HistoryLimit, PaginationOut, RangeParams, cursor::TradeKey, market_of, params::range_of, venue_b_books};
use crate::{
    AppState,
    access::{Gate, groups},
    api::common::iso,
    error::ApiResult,
    json::Json,
    params::{FromQuery, QueryMap, Text, ValidQuery},
};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(venue_a_trades))
        .routes(routes!(venue_b_trades))
}

/// The tape's own parameters, validated (documented by [`RangeParams`]).
#[derive(Debug, Clone)]
pub(super) struct Tape {
    market_id: String,
    asset_id: Option<String>,
    range: Option<(Timestamp, Timestamp)>,
    limit: u32,
    pagination_key: Option<String>,
}

impl Tape {
    fn from_query(q: &QueryMap, asset_id: Option<String>) -> ApiResult<Self> {
        Ok(Tape {
            market_id: q.required_text("market_id")?,
            asset_id,
            range: range_of(q)?,
            limit: q.get::<HistoryLimit>("limit")?.get(),
            pagination_key: q.text("pagination_key")?,
        })
    }
}

/// Parameters of `/v1/historical/venue_a/trades`, besides [`RangeParams`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenueATradesParams {
    /// Market ticker.
    #[param(inline)]
    pub market_id: Text,
    #[param(ignore)]
    tape: Tape,
}

impl FromQuery for VenueATradesParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let tape = Tape::from_query(q, None)?;
        Ok(VenueATradesParams {
            market_id: Text(tape.market_id.clone()),
            tape,
        })
    }
}

/// Parameters of `/v1/historical/venue_b/trades`, besides [`RangeParams`].
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VenueBTradesParams {
    /// Condition id (`0x…`) or the numeric source market id.
    #[param(inline)]
    pub market_id: Text,
    /// Token id: only the trades of this token. Omit for both the YES and the NO token's trades.
    #[param(inline)]
    pub asset_id: Option<Text>,
    #[param(ignore)]
    tape: Tape,
}

impl FromQuery for VenueBTradesParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let asset_id: Option<Text> = q.get("asset_id")?;
        let tape = Tape::from_query(q, asset_id.as_deref().map(str::to_string))?;
        Ok(VenueBTradesParams {
            market_id: Text(tape.market_id.clone()),
            asset_id,
            tape,
        })
    }
}

/// One trade of the tape.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradeOut {
    /// The venue's trade id.
    pub trade_id: String,
    pub market_id: String,
    /// The venue_b token traded; null on venue_a.
    #[schema(required = true)]
    pub asset_id: Option<String>,
    /// The outcome whose contracts were traded (`YES` or `NO`): on venue_a, the one the taker bought or sold.
    pub outcome: Outcome,
    /// The taker's side as the venue gives it: `buy` or `sell`.
    #[schema(examples("buy"))]
    pub side: String,
    /// Price of the outcome traded.
    #[schema(examples(0.53))]
    pub price: f64,
    /// Contracts (venue_a) or shares (venue_b).
    pub size: f64,
    /// `price × size` in dollars.
    pub notional: f64,
    /// Execution time, Unix milliseconds (as the order-book rows' `timestamp`).
    pub timestamp: i64,
    /// Execution time, ISO 8601 UTC with milliseconds.
    pub executed_at: String,
    /// venue_b: the hash of the on-chain transaction that settled the trade, when the venue gave one; null on
    /// venue_a.
    #[schema(required = true)]
    pub transaction_hash: Option<String>,
}

/// A page of the trade tape.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradesOut {
    pub exchange: Exchange,
    pub market_id: String,
    pub trades: Vec<TradeOut>,
    pub pagination: PaginationOut,
}

/// venue_a trade tape
///
/// The recorded trades of one venue_a market. Without `start_time`/`end_time`: the most recent, newest first.
/// With both: the trades executed in that range (inclusive), oldest first. Follow
/// `pagination.pagination_key` for the next page; trades recorded meanwhile never shift a page.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_a/trades",
    tag = "historical",
    params(VenueATradesParams, RangeParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of trades.", body = TradesOut),
        (status = 404, description = "Unknown market_id.", body = crate::error::ErrorBody),
    )
)]
async fn venue_a_trades(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<VenueATradesParams>,
) -> ApiResult<Json<TradesOut>> {
    let market = market_of(&state, Exchange::VenueA, &p.tape.market_id).await?;
    tape(&state, &market, None, &p.tape).await.map(Json)
}

/// venue_b trade tape
///
/// The recorded trades of one venue_b market: both tokens' trades in one sequence, or one token's with
/// `asset_id`. Same order and paging as the venue_a route.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_b/trades",
    tag = "historical",
    params(VenueBTradesParams, RangeParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "A page of trades.", body = TradesOut),
        (status = 404, description = "Unknown market_id, or an asset_id that is not a token of the market.", body = crate::error::ErrorBody),
    )
)]
async fn venue_b_trades(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<VenueBTradesParams>,
) -> ApiResult<Json<TradesOut>> {
    let market = market_of(&state, Exchange::VenueB, &p.tape.market_id).await?;
    let outcome = match p.asset_id.as_deref() {
        None => None,
        Some(asset) => venue_b_books(&market, Some(asset))?.first().map(|(_, o)| *o),
    };
    tape(&state, &market, outcome, &p.tape).await.map(Json)
}

/// One page of `market`'s tape (of `outcome`'s trades only, if given).
async fn tape(state: &AppState, market: &Market, outcome: Option<Outcome>, t: &Tape) -> ApiResult<TradesOut> {
    let range = match t.range {
        Some((s, e)) => format!("{}-{}", s.millis(), e.millis()),
        None => "latest".into(),
    };
    let binding = format!(
        "trades|{}|{}|{}|{range}",
        market.exchange.as_str(),
        market.market_id,
        t.asset_id.as_deref().unwrap_or("-")
    );
    let after = t
        .pagination_key
        .as_deref()
        .map(|k| TradeKey::decode(k, &binding))
        .transpose()?;
    let q = TradeQuery {
        exchange: market.exchange,
        market_id: &market.market_id,
        outcome,
        range: t.range,
        after: after.map(|k| (Timestamp::from_millis(k.at), k.id)),
        newest_first: t.range.is_none(),
        limit: t.limit + 1,
    };
    let mut rows = state.store.trade_page(&q).await?;
    let has_more = rows.len() > t.limit as usize;
    rows.truncate(t.limit as usize);
    let next = rows.last().filter(|_| has_more).map(|r| TradeKey {
        at: r.trade.executed_at.millis(),
        id: r.id,
    });
    let trades: Vec<TradeOut> = rows.iter().map(|r| trade_out(market, r)).collect();
    Ok(TradesOut {
        exchange: market.exchange,
        market_id: market.market_id.clone(),
        pagination: PaginationOut {
            limit: t.limit,
            count: trades.len(),
            has_more,
            pagination_key: next.map(|k| k.encode(&binding)),
        },
        trades,
    })
}

fn trade_out(market: &Market, r: &StoredTrade) -> TradeOut {
    let t = &r.trade;
    let asset_id = match (market.exchange, t.outcome) {
        (Exchange::VenueA, _) => None,
        (Exchange::VenueB, Outcome::Yes) => market.yes_token_id.clone(),
        (Exchange::VenueB, Outcome::No) => market.no_token_id.clone(),
    };
    TradeOut {
        trade_id: t.source_trade_id.clone(),
        market_id: t.market_id.clone(),
        asset_id,
        outcome: t.outcome,
        side: t.taker_side.as_str().to_string(),
        price: t.price.to_f64_4(),
        size: t.size.to_f64(6),
        notional: t.notional().to_f64(6),
        timestamp: t.executed_at.millis(),
        executed_at: iso(t.executed_at),
        transaction_hash: match market.exchange {
            Exchange::VenueA => None,
            Exchange::VenueB => transaction_hash_of(&t.source_trade_id).map(str::to_string),
        },
    }
}
