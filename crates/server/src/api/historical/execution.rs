//! `GET /v1/historical/{venue}/execution-price`: what a taker order for a size of one outcome would have paid
//! at a past instant, walking the book as the log holds it then (the same reconstruction as the order-book
//! routes), with the venue's taker fee and whether the book was continuous at that instant. The walk is the
//! core's ([`crossbook_core::arb::execute`]), the one the scanner prices legs with. Any valid key.

use axum::extract::State;
use crossbook_core::{
    Amount, Exchange, Outcome, Timestamp,
    arb::{AskLadders, Execution, MicroUsd, execute},
    book::{BookKey, GapCause},
};
use crossbook_store::books::history::books_as_of;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use crate::{
    AppState,
    access::{Gate, groups},
    error::{ApiError, ApiResult},
    json::Json,
    params::{AmountQuery, FromQuery, InstantQuery, ParamEnum, QueryMap, Text, ValidQuery},
};

use super::paging::market_of;

/// The most contracts one query prices: far above any book's depth, small enough that sums stay exact.
const MAX_SIZE_UNITS: i64 = 1_000_000_000;

/// The outcome bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SideName {
    Yes,
    No,
}

impl ParamEnum for SideName {
    const VALUES: &'static [(&'static str, Self)] = &[("yes", SideName::Yes), ("no", SideName::No)];
}

impl From<SideName> for Outcome {
    fn from(s: SideName) -> Outcome {
        match s {
            SideName::Yes => Outcome::Yes,
            SideName::No => Outcome::No,
        }
    }
}

/// Parameters of the execution-price routes.
#[derive(Debug, Clone, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExecutionParams {
    /// Venue-native market id: venue_a ticker, venue_b condition id or numeric source id.
    #[param(inline)]
    pub market_id: Text,
    /// The outcome to buy: `yes` or `no`.
    #[param(inline)]
    pub side: SideName,
    /// Contracts to buy: more than 0, at most 1,000,000,000, with at most 6 decimals.
    #[param(value_type = AmountQuery, inline)]
    pub size: Amount,
    /// The instant: Unix milliseconds, an RFC 3339 time (no offset means UTC) or a bare date (midnight UTC).
    #[param(value_type = InstantQuery, inline)]
    pub time: Timestamp,
}

impl FromQuery for ExecutionParams {
    fn from_query(q: &QueryMap) -> ApiResult<Self> {
        let market_id = Text(q.required_text("market_id")?);
        let side = q.one_of("side")?.ok_or_else(|| ApiError::missing("side"))?;
        let size = q
            .non_negative_amount("size")?
            .ok_or_else(|| ApiError::missing("size"))?;
        if size.micros() <= 0 || size > Amount::from_units(MAX_SIZE_UNITS) {
            return Err(ApiError::invalid(
                "size",
                format!("size must be more than 0 and at most {MAX_SIZE_UNITS} contracts"),
            ));
        }
        let time = q.instant("time")?.ok_or_else(|| ApiError::missing("time"))?;
        Ok(ExecutionParams {
            market_id,
            side,
            size,
            time,
        })
    }
}

/// A capture gap.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExecutionGapOut {
    /// Why continuity was lost.
    pub cause: GapCause,
    /// When, Unix milliseconds.
    pub start_time: i64,
    /// When the book was captured again, Unix milliseconds; null while the gap lasts.
    #[schema(required = true)]
    pub end_time: Option<i64>,
}

/// One ask level taken.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TakenLevelOut {
    /// Four-decimal price string.
    #[schema(examples("0.4500"))]
    pub price: String,
    /// Contracts taken at that price.
    pub size: f64,
}

/// What the order would have paid.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExecutionPriceOut {
    pub exchange: Exchange,
    pub market_id: String,
    /// The venue_b token bought; null on venue_a.
    #[schema(required = true)]
    pub asset_id: Option<String>,
    /// The outcome bought.
    pub side: SideName,
    /// The instant asked for, Unix milliseconds.
    pub time: i64,
    /// Whether the service could vouch for the book at that instant: false inside a capture gap, or before
    /// the book's first recorded state. Nothing is priced then.
    pub continuous: bool,
    /// The capture gap the instant falls in; null otherwise.
    #[schema(required = true)]
    pub gap: Option<ExecutionGapOut>,
    /// When the book was last changed at or before `time`, Unix milliseconds: the state walked. Null when not
    /// continuous.
    #[schema(required = true)]
    pub book_time: Option<i64>,
    /// Contracts asked for.
    pub size: f64,
    /// Contracts the asks filled: `size`, or all they offered when less.
    pub filled_size: f64,
    /// Contracts all the asks offered.
    pub available_size: f64,
    /// Average price per filled contract before fees (4 decimals); null when nothing filled.
    #[schema(required = true)]
    pub average_price: Option<f64>,
    /// The highest price paid (4 decimals); null when nothing filled.
    #[schema(required = true)]
    pub worst_price: Option<f64>,
    /// What the filled contracts cost before fees, dollars.
    pub cost_dollars: f64,
    /// Their taker fees, dollars: each contract's fee at its level's price, as the venue charges it.
    pub fee_dollars: f64,
    /// `cost_dollars + fee_dollars`.
    pub total_dollars: f64,
    /// The fee rate used, e.g. `venue_a:0.07` or `venue_b:crypto=0.07`.
    pub fee_model: String,
    /// The ask levels taken, best first.
    pub levels: Vec<TakenLevelOut>,
}

/// venue_a execution price at an instant
///
/// What buying `size` contracts of `side` on a venue_a market would have paid at `time`: the book as it stood
/// then (from the recorded log), walked best ask first (a YES ask is 1 − a NO bid, a NO ask 1 − a YES bid),
/// with the taker fee `ceil(7 × p × (1 − p))` cents per contract at each level's price. Inside a capture gap
/// the answer says `continuous: false` with the gap, and prices nothing.
#[utoipa::path(
    get,
    path = "/v1/historical/venue_a/execution-price",
    tag = "historical",
    params(ExecutionParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The price of the order at that instant.", body = ExecutionPriceOut),
        (status = 400, description = "A parameter is missing or invalid (named in the error).", body = crate::error::ErrorBody),
        (status = 401, description = "No valid API key.", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown market_id.", body = crate::error::ErrorBody),
    )
)]
pub(super) async fn venue_a_execution_price(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<ExecutionParams>,
) -> ApiResult<Json<ExecutionPriceOut>> {
    execution_price(&state, Exchange::VenueA, p).await.map(Json)
}

/// venue_b execution price at an instant
///
/// As the venue_a route, on a venue_b market: the book walked is the bought outcome's own token book (its
/// real asks), with the taker fee `rate × p × (1 − p)` dollars per contract at the rate set for the market's
/// category (0.07 by default).
#[utoipa::path(
    get,
    path = "/v1/historical/venue_b/execution-price",
    tag = "historical",
    params(ExecutionParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The price of the order at that instant.", body = ExecutionPriceOut),
        (status = 400, description = "A parameter is missing or invalid (named in the error).", body = crate::error::ErrorBody),
        (status = 401, description = "No valid API key.", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown market_id, or a market whose token ids are not known.", body = crate::error::ErrorBody),
    )
)]
pub(super) async fn venue_b_execution_price(
    State(state): State<AppState>,
    _gate: Gate<groups::Historical>,
    ValidQuery(p): ValidQuery<ExecutionParams>,
) -> ApiResult<Json<ExecutionPriceOut>> {
    execution_price(&state, Exchange::VenueB, p).await.map(Json)
}

async fn execution_price(state: &AppState, exchange: Exchange, p: ExecutionParams) -> ApiResult<ExecutionPriceOut> {
    let market = market_of(state, exchange, &p.market_id).await?;
    let outcome = Outcome::from(p.side);
    let key = match exchange {
        Exchange::VenueA => BookKey::venue_a(&market.market_id),
        Exchange::VenueB => {
            let token = match outcome {
                Outcome::Yes => market.yes_token_id.as_deref(),
                Outcome::No => market.no_token_id.as_deref(),
            };
            let token = token.ok_or_else(|| {
                ApiError::not_found(format!(
                    "the {} token of {} is not known",
                    outcome.as_str(),
                    market.market_id
                ))
            })?;
            BookKey::venue_b(&market.market_id, token)
        }
    };
    let fees = state.config.venue_b_fee_rate.for_market(&market);
    let book = books_as_of(state.store.as_ref(), &key, &[p.time])
        .await?
        .pop()
        .flatten();
    // No book at the instant: inside a capture gap (named), or before the book's first recorded state.
    let gap = match book {
        Some(_) => None,
        None => state
            .store
            .log_gaps(&key, p.time, p.time)
            .await?
            .into_iter()
            .find(|g| g.start <= p.time && g.end.is_none_or(|e| e > p.time)),
    };
    let ladders = book.as_ref().map(|b| match exchange {
        Exchange::VenueA => AskLadders::from_venue_a(b),
        // One token's book: its asks are the bought outcome's.
        Exchange::VenueB => match outcome {
            Outcome::Yes => AskLadders::new(b.asks.iter().copied(), std::iter::empty()),
            Outcome::No => AskLadders::new(std::iter::empty(), b.asks.iter().copied()),
        },
    });
    let e = match &ladders {
        Some(l) => execute(l.side(outcome), p.size, |price| fees.taker_fee(exchange, price)),
        None => Execution {
            requested: p.size,
            ..Execution::default()
        },
    };
    Ok(ExecutionPriceOut {
        exchange,
        market_id: market.market_id.clone(),
        asset_id: key.asset_id.clone(),
        side: p.side,
        time: p.time.millis(),
        continuous: book.is_some(),
        gap: gap.map(|g| ExecutionGapOut {
            cause: g.cause,
            start_time: g.start.millis(),
            end_time: g.end.map(Timestamp::millis),
        }),
        book_time: book.as_ref().map(|b| b.timestamp.millis()),
        size: p.size.to_f64(6),
        filled_size: e.filled.to_f64(6),
        available_size: e.available.to_f64(6),
        average_price: e.average_price().map(MicroUsd::dollars_f64_4),
        worst_price: e.worst_price().map(|p| p.to_f64_4()),
        cost_dollars: e.cost.dollars_f64(),
        fee_dollars: e.fee.dollars_f64(),
        total_dollars: (e.cost + e.fee).dollars_f64(),
        fee_model: fees.venue_label(exchange),
        levels: e
            .taken
            .iter()
            .map(|l| TakenLevelOut {
                price: l.price.to_string4(),
                size: l.size.to_f64(6),
            })
            .collect(),
    })
}
