//! CLOB read routes beside `/book(s)`, the ones the venue's own clients call (PROTOCOLS B.3): prices,
//! midpoints, spreads, last trades, tick size, neg-risk flag, fee rate, the market list, `/ok` and `/time`.
//! Every figure is computed from the model's book of the token at the time of the request; the per-token
//! routes take `?token_id=` and their batch forms take a JSON array body (`POST`) or comma-separated
//! `?token_ids=` (`GET`).
//!
//! Errors are shaped like the venue's: `400 {"error": "Invalid token id"}` for a malformed id or side,
//! `400 {"error": "Invalid payload"}` for a body that is not an array of `{token_id}` objects, and
//! `404 {"error": "No orderbook exists for the requested token id"}` for a token without a live book.

use std::sync::Arc;

use axum::{
    extract::{Path, Query as AxQuery, State},
    http::{Method, StatusCode},
    response::Response,
};
use base64::{Engine, engine::general_purpose::STANDARD};
use crossbook_core::{Exchange, Price, TakerSide};
use serde_json::{Map, Value, json};

use super::json::{price_text, tick_text};
use crate::{
    http::{Params, Query, Shared, reply},
    model::{Model, types::SimMarket},
    render::{iso_secs, trimmed},
};

const B: Exchange = Exchange::VenueB;
/// Most tokens one batch request may name.
const BATCH_MAX: usize = 500;
/// Markets per `/markets` page.
const MARKETS_PAGE: usize = 1_000;
/// The cursor the venue returns on the last page.
const END_CURSOR: &str = "LTE=";

fn bad(msg: &str) -> Response {
    reply(StatusCode::BAD_REQUEST, json!({"error": msg}))
}

fn no_book() -> Response {
    reply(
        StatusCode::NOT_FOUND,
        json!({"error": "No orderbook exists for the requested token id"}),
    )
}

fn is_token(id: &str) -> bool {
    !id.is_empty() && id.len() <= 78 && id.bytes().all(|b| b.is_ascii_digit())
}

/// Best bid and ask of a token with a live book, in micro-dollars, and its market.
struct TokenTop<'a> {
    market: &'a SimMarket,
    bid: Option<i64>,
    ask: Option<i64>,
}

fn token_top<'a>(model: &'a Model, token: &str) -> Option<TokenTop<'a>> {
    let (m, index) = model.market_by_token(token)?;
    if !m.trading() {
        return None;
    }
    let (bid, ask) = model
        .yes_book(B, &m.market_id)
        .map(|b| b.token_top(index))
        .unwrap_or_default();
    Some(TokenTop {
        market: m,
        bid: bid.map(Price::micros),
        ask: ask.map(Price::micros),
    })
}

/// `BUY` is the best bid and `SELL` the best ask, as the live venue answers.
fn side_price(t: &TokenTop<'_>, side: &str) -> Option<Option<String>> {
    let p = match side {
        "BUY" | "buy" => t.bid,
        "SELL" | "sell" => t.ask,
        _ => return None,
    };
    Some(p.map(|p| price_text(Price::from_micros(p), t.market.tick)))
}

fn mid(t: &TokenTop<'_>) -> Option<String> {
    Some(trimmed((t.bid? + t.ask?) / 2))
}

fn spread(t: &TokenTop<'_>) -> Option<String> {
    Some(trimmed(t.ask? - t.bid?))
}

/// The token named by `?token_id=`, checked.
fn token_param(p: &Params) -> Result<String, Box<Response>> {
    Query(p)
        .get("token_id")
        .filter(|t| is_token(t))
        .map(str::to_string)
        .ok_or_else(|| Box::new(bad("Invalid token id")))
}

/// `(token, side)` pairs of a batch request: a JSON array of `{"token_id", "side"?}` (POST) or
/// `?token_ids=a,b&sides=BUY,SELL` (GET).
fn batch(method: &Method, p: &Params, body: &[u8]) -> Result<Vec<(String, Option<String>)>, Box<Response>> {
    let items: Vec<(String, Option<String>)> = if method == Method::POST {
        let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(body) else {
            return Err(Box::new(bad("Invalid payload")));
        };
        let mut out = Vec::with_capacity(items.len());
        for item in &items {
            let Some(token) = item.get("token_id").and_then(Value::as_str) else {
                return Err(Box::new(bad("Invalid payload")));
            };
            out.push((
                token.to_string(),
                item.get("side").and_then(Value::as_str).map(str::to_string),
            ));
        }
        out
    } else {
        let q = Query(p);
        let tokens = q.all("token_ids");
        let sides = q.all("sides");
        if tokens.is_empty() {
            return Err(Box::new(bad("Invalid payload")));
        }
        if !sides.is_empty() && sides.len() != tokens.len() {
            return Err(Box::new(bad("token_ids and sides must have the same length")));
        }
        tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| (t, sides.get(i).cloned()))
            .collect()
    };
    if items.len() > BATCH_MAX {
        return Err(Box::new(bad("Too many tokens: at most 500 per request")));
    }
    if items.iter().any(|(t, _)| !is_token(t)) {
        return Err(Box::new(bad("Invalid token id")));
    }
    Ok(items)
}

/// `GET /price?token_id=&side=BUY|SELL` → `{"price": "0.47"}`.
pub(crate) async fn price(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let token = match token_param(&p) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let Some(side) = Query(&p).get("side").map(str::to_string) else {
        return bad("Invalid side");
    };
    let model = s.model();
    let Some(t) = token_top(&model, &token) else {
        return no_book();
    };
    match side_price(&t, &side) {
        None => bad("Invalid side"),
        Some(None) => no_book(),
        Some(Some(price)) => reply(StatusCode::OK, json!({"price": price})),
    }
}

/// `POST /prices` (`[{"token_id", "side"}]`) or `GET /prices?token_ids=&sides=` → `{"<token>": {"BUY":
/// "0.47"}}`; a token listed with both sides gets both. Tokens without a live book are left out.
pub(crate) async fn prices(
    State(s): State<Arc<Shared>>,
    method: Method,
    AxQuery(p): AxQuery<Params>,
    body: axum::body::Bytes,
) -> Response {
    let items = match batch(&method, &p, &body) {
        Ok(i) => i,
        Err(r) => return *r,
    };
    let model = s.model();
    let mut out = Map::new();
    for (token, side) in items {
        let Some(side) = side else { return bad("Invalid side") };
        let Some(t) = token_top(&model, &token) else { continue };
        let Some(price) = side_price(&t, &side) else {
            return bad("Invalid side");
        };
        if let Some(price) = price {
            let entry = out.entry(token).or_insert_with(|| json!({}));
            entry[side.to_uppercase()] = Value::String(price);
        }
    }
    reply(StatusCode::OK, Value::Object(out))
}

/// `GET /midpoint?token_id=` → `{"mid": "0.475"}`: exactly (best bid + best ask) / 2.
pub(crate) async fn midpoint(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    single(&s, &p, |t| mid(t).map(|m| json!({"mid": m})))
}

/// `GET /spread?token_id=` → `{"spread": "0.01"}`: best ask − best bid.
pub(crate) async fn spread_one(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    single(&s, &p, |t| spread(t).map(|v| json!({"spread": v})))
}

fn single(s: &Shared, p: &Params, f: impl Fn(&TokenTop<'_>) -> Option<Value>) -> Response {
    let token = match token_param(p) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let model = s.model();
    match token_top(&model, &token).as_ref().and_then(f) {
        Some(v) => reply(StatusCode::OK, v),
        None => no_book(),
    }
}

/// `POST /midpoints` or `GET /midpoints?token_ids=` → `{"<token>": "0.475"}`.
pub(crate) async fn midpoints(
    State(s): State<Arc<Shared>>,
    method: Method,
    AxQuery(p): AxQuery<Params>,
    body: axum::body::Bytes,
) -> Response {
    many(&s, &method, &p, &body, mid)
}

/// `POST /spreads` or `GET /spreads?token_ids=` → `{"<token>": "0.01"}`.
pub(crate) async fn spreads(
    State(s): State<Arc<Shared>>,
    method: Method,
    AxQuery(p): AxQuery<Params>,
    body: axum::body::Bytes,
) -> Response {
    many(&s, &method, &p, &body, spread)
}

fn many(s: &Shared, method: &Method, p: &Params, body: &[u8], f: fn(&TokenTop<'_>) -> Option<String>) -> Response {
    let items = match batch(method, p, body) {
        Ok(i) => i,
        Err(r) => return *r,
    };
    let model = s.model();
    let out: Map<String, Value> = items
        .into_iter()
        .filter_map(|(token, _)| {
            let v = token_top(&model, &token).as_ref().and_then(f)?;
            Some((token, Value::String(v)))
        })
        .collect();
    reply(StatusCode::OK, Value::Object(out))
}

/// The last trade of a token as `(price, taker side relative to the token)`: from the trade tape, else the
/// market's last traded price with no side.
fn last_trade(model: &Model, token: &str) -> Option<(String, &'static str)> {
    let (m, index) = model.market_by_token(token)?;
    let on_tape = model.trades(B).iter().find(|t| t.market_id == m.market_id);
    if let Some(t) = on_tape {
        let same = t.token_id.as_deref() == Some(token);
        let price = if same { t.price } else { t.price.complement() };
        let side = match (t.taker_side, same) {
            (TakerSide::Buy, true) | (TakerSide::Sell, false) => "BUY",
            _ => "SELL",
        };
        return Some((price_text(price, m.tick), side));
    }
    let p = m.last_price?;
    let p = if index == 0 { p } else { p.complement() };
    Some((price_text(p, m.tick), ""))
}

/// `GET /last-trade-price?token_id=` → `{"price": "0.47", "side": "BUY"}` (`"0.5"` and `""` before the
/// first trade, as the venue answers for a market that never traded).
pub(crate) async fn last_trade_price(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let token = match token_param(&p) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let model = s.model();
    if model.market_by_token(&token).is_none() {
        return no_book();
    }
    let (price, side) = last_trade(&model, &token).unwrap_or(("0.5".into(), ""));
    reply(StatusCode::OK, json!({"price": price, "side": side}))
}

/// `POST /last-trades-prices` or `GET /last-trades-prices?token_ids=` → `[{"token_id", "price", "side"}]`
/// (at most 500 tokens; unknown tokens left out).
pub(crate) async fn last_trades_prices(
    State(s): State<Arc<Shared>>,
    method: Method,
    AxQuery(p): AxQuery<Params>,
    body: axum::body::Bytes,
) -> Response {
    let items = match batch(&method, &p, &body) {
        Ok(i) => i,
        Err(r) => return *r,
    };
    let model = s.model();
    let out: Vec<Value> = items
        .into_iter()
        .filter(|(t, _)| model.market_by_token(t).is_some())
        .map(|(token, _)| {
            let (price, side) = last_trade(&model, &token).unwrap_or(("0.5".into(), ""));
            json!({"token_id": token, "price": price, "side": side})
        })
        .collect();
    reply(StatusCode::OK, Value::Array(out))
}

/// A per-token metadata route: 400 for a malformed id, 404 for an unknown token.
fn token_meta(s: &Shared, p: &Params, f: impl Fn(&SimMarket) -> Value) -> Response {
    let token = match token_param(p) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let model = s.model();
    match model.market_by_token(&token) {
        Some((m, _)) => reply(StatusCode::OK, f(m)),
        None => no_book(),
    }
}

/// `GET /tick-size?token_id=` → `{"minimum_tick_size": 0.01}` (a number, as the venue sends it).
pub(crate) async fn tick_size(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    token_meta(&s, &p, |m| {
        let tick: Value = serde_json::from_str(&tick_text(m.tick)).unwrap_or(json!(0.01));
        json!({"minimum_tick_size": tick})
    })
}

/// `GET /neg-risk?token_id=` → `{"neg_risk": false}` (no simulated market is neg-risk).
pub(crate) async fn neg_risk(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    token_meta(&s, &p, |_| json!({"neg_risk": false}))
}

/// `GET /fee-rate?token_id=` or `/fee-rate/{token_id}` → `{"base_fee": 1000}`: the legacy figure Gamma's
/// `takerBaseFee` shows, not the rate charged (that is Gamma's `feeSchedule`).
pub(crate) async fn fee_rate(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    token_meta(&s, &p, |_| json!({"base_fee": 1000}))
}

pub(crate) async fn fee_rate_path(State(s): State<Arc<Shared>>, Path(token): Path<String>) -> Response {
    let p: Params = vec![("token_id".into(), token)];
    token_meta(&s, &p, |_| json!({"base_fee": 1000}))
}

/// A CLOB market object.
fn clob_market(model: &Model, m: &SimMarket) -> Value {
    let tokens: Vec<Value> = m
        .tokens
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            let price = model
                .yes_book(B, &m.market_id)
                .and_then(|b| {
                    let (bid, ask) = b.token_top(i);
                    Some((bid?.micros() + ask?.micros()) / 2)
                })
                .or_else(|| {
                    m.last_price
                        .map(|p| if i == 0 { p.micros() } else { p.complement().micros() })
                })
                .unwrap_or(500_000);
            let winner = m
                .result
                .is_some_and(|r| (r == crossbook_core::Outcome::Yes) == (i == 0));
            json!({
                "token_id": t,
                "outcome": if i == 0 { &m.yes_label } else { &m.no_label },
                "price": serde_json::from_str::<Value>(&trimmed(price)).unwrap_or(json!(0.5)),
                "winner": winner,
            })
        })
        .collect();
    let settled = m.phase == crate::model::types::Phase::Settled;
    json!({
        "enable_order_book": true,
        "active": !settled,
        "closed": settled,
        "archived": false,
        "accepting_orders": m.trading(),
        "accepting_order_timestamp": iso_secs(m.created),
        "minimum_order_size": 5,
        "minimum_tick_size": serde_json::from_str::<Value>(&tick_text(m.tick)).unwrap_or(json!(0.01)),
        "condition_id": m.market_id,
        "question_id": m.wire_uuid,
        "question": m.question,
        "description": m.description,
        "market_slug": m.slug,
        "end_date_iso": iso_secs(m.close_time),
        "game_start_time": Value::Null,
        "seconds_delay": 0,
        "fpmm": "",
        "maker_base_fee": 1000,
        "taker_base_fee": 1000,
        "notifications_enabled": true,
        "neg_risk": false,
        "neg_risk_market_id": "",
        "neg_risk_request_id": "",
        "is_50_50_outcome": false,
        "tokens": tokens,
        "rewards": {"rates": Value::Null, "min_size": 0, "max_spread": 0},
        "tags": [],
    })
}

fn encode_cursor(offset: usize) -> String {
    STANDARD.encode(offset.to_string())
}

fn decode_cursor(c: &str) -> Option<usize> {
    let bytes = STANDARD.decode(c).ok()?;
    String::from_utf8(bytes).ok()?.parse().ok()
}

/// `GET /markets?next_cursor=` → `{"limit", "count", "next_cursor", "data": [market]}`, 1,000 markets a
/// page; `next_cursor` is `"LTE="` on the last page (and answers an empty page).
pub(crate) async fn markets(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let from = match Query(&p).get("next_cursor").filter(|c| !c.is_empty()) {
        None => 0,
        Some(END_CURSOR) => usize::MAX,
        Some(c) => match decode_cursor(c) {
            Some(n) => n,
            None => return bad("invalid next_cursor"),
        },
    };
    let model = s.model();
    let all: Vec<&SimMarket> = model.markets(B).collect();
    let data: Vec<Value> = all
        .iter()
        .skip(from)
        .take(MARKETS_PAGE)
        .map(|m| clob_market(&model, m))
        .collect();
    let next = from.saturating_add(data.len());
    let next_cursor = if next < all.len() {
        encode_cursor(next)
    } else {
        END_CURSOR.to_string()
    };
    reply(
        StatusCode::OK,
        json!({"limit": MARKETS_PAGE, "count": data.len(), "next_cursor": next_cursor, "data": data}),
    )
}

/// `GET /markets/{condition_id}` → one market object; 404 when unknown.
pub(crate) async fn market(State(s): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let model = s.model();
    match model.market(B, &id) {
        Some(m) => reply(StatusCode::OK, clob_market(&model, m)),
        None => reply(StatusCode::NOT_FOUND, json!({"error": "market not found"})),
    }
}

/// `GET /` and `GET /ok` → `"OK"`.
pub(crate) async fn ok() -> Response {
    reply(StatusCode::OK, json!("OK"))
}

/// `GET /time` → the server's Unix time in seconds (a bare number), from the model clock.
pub(crate) async fn time(State(s): State<Arc<Shared>>) -> Response {
    reply(StatusCode::OK, json!(s.model().now().secs()))
}
