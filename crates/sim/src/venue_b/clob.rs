//! CLOB order books (PROTOCOLS B.3) under `/clob`, and the public Data API trade tape (B.4) under `/data`.

use std::sync::Arc;

use axum::{
    extract::{Query as AxQuery, State},
    http::StatusCode,
    response::Response,
};
use crossbook_core::{Exchange, TakerSide};
use serde_json::{Value, json};

use super::json;
use crate::{
    http::{Params, Query, Shared, reply, trades_fault},
    model::Model,
};

const B: Exchange = Exchange::VenueB;

fn invalid_token() -> Response {
    reply(StatusCode::BAD_REQUEST, json!({"error": "Invalid token id"}))
}

/// The Data API's `side` filter (both tape versions): `BUY`, `SELL` or absent.
fn taker_side(q: &Query<'_>) -> Result<Option<TakerSide>, String> {
    match q.get("side") {
        None => Ok(None),
        Some("BUY") => Ok(Some(TakerSide::Buy)),
        Some("SELL") => Ok(Some(TakerSide::Sell)),
        Some(v) => Err(format!("invalid side: {v:?}")),
    }
}

fn is_token(id: &str) -> bool {
    !id.is_empty() && id.len() <= 78 && id.bytes().all(|b| b.is_ascii_digit())
}

/// The summary of a token with a live book; `None` for unknown tokens and markets that no longer trade.
fn summary(model: &Model, token: &str) -> Option<Value> {
    let (m, index) = model.market_by_token(token)?;
    if !m.trading() {
        return None;
    }
    let book = model.yes_book(B, &m.market_id).cloned().unwrap_or_default();
    Some(json::book_summary(m, &book, index, model.now()))
}

/// `GET /book?token_id=` → `OrderBookSummary`; 400 for a malformed id, 404 when there is no live book.
pub(crate) async fn book(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let q = Query(&p);
    let Some(token) = q.get("token_id").filter(|t| is_token(t)) else {
        return invalid_token();
    };
    match summary(&s.model(), token) {
        Some(v) => reply(StatusCode::OK, v),
        None => reply(
            StatusCode::NOT_FOUND,
            json!({"error": "No orderbook exists for the requested token id"}),
        ),
    }
}

/// `POST /books` with `[{"token_id": "…"}, …]` → array of summaries (tokens without a live book are left
/// out; an optional `side` per element is accepted and ignored).
pub(crate) async fn books(State(s): State<Arc<Shared>>, body: axum::body::Bytes) -> Response {
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(&body) else {
        return reply(StatusCode::BAD_REQUEST, json!({"error": "Invalid payload"}));
    };
    let mut tokens = Vec::new();
    for item in &items {
        match item.get("token_id").and_then(Value::as_str) {
            Some(t) if is_token(t) => tokens.push(t.to_string()),
            _ => return invalid_token(),
        }
    }
    let model = s.model();
    let out: Vec<Value> = tokens.iter().filter_map(|t| summary(&model, t)).collect();
    reply(StatusCode::OK, Value::Array(out))
}

/// Data API `GET /trades` → bare array, newest first. Filters: `market` (comma-separated condition ids) or
/// `eventId` (not both), `side`, `limit` (0–10,000, default 100), `offset` (0–10,000). `takerOnly` is
/// accepted; every simulated trade is listed once, from the taker's side.
pub(crate) async fn trades(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    if let Some(r) = trades_fault(&s.faults, B) {
        return r;
    }
    let q = Query(&p);
    let bad = |m: String| reply(StatusCode::BAD_REQUEST, json!({"error": m}));
    let limit = match q.int("limit", 0, 10_000) {
        Ok(v) => v.unwrap_or(100) as usize,
        Err(m) => return bad(m),
    };
    let offset = match q.int("offset", 0, 10_000) {
        Ok(v) => v.unwrap_or(0) as usize,
        Err(m) => return bad(m),
    };
    if let Err(m) = q.bool("takerOnly") {
        return bad(m);
    }
    let markets = q.all("market");
    let event = q.get("eventId");
    if !markets.is_empty() && event.is_some() {
        return bad("market and eventId are mutually exclusive".into());
    }
    let side = match taker_side(&q) {
        Ok(side) => side,
        Err(m) => return bad(m),
    };
    let model = s.model();
    let out: Vec<Value> = model
        .trades(B)
        .iter()
        .filter(|t| markets.is_empty() || markets.contains(&t.market_id))
        .filter(|t| event.is_none_or(|e| e == t.event_id))
        .filter(|t| side.is_none_or(|sd| sd == t.taker_side))
        .skip(offset)
        .take(limit)
        .map(|t| json::data_trade(&model, t))
        .collect();
    reply(StatusCode::OK, Value::Array(out))
}

/// Data API v2 `GET /v2/trades` → `{"data": [snake_case rows], "pagination": {"next_cursor", "has_more"}}`,
/// newest first. Filters: `condition` (comma-separated condition ids; `condition_id` and `conditionId` are
/// aliases) or `event_id`, `side`, `limit` (1–10,000, default 100) and the opaque `cursor` of the previous
/// page. `offset` is refused (400), as the venue refuses it; other parameters are ignored.
pub(crate) async fn trades_v2(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    if let Some(r) = trades_fault(&s.faults, B) {
        return r;
    }
    let q = Query(&p);
    let bad = |m: String| reply(StatusCode::BAD_REQUEST, json!({"error": m}));
    if q.get("offset").is_some() {
        return bad("offset is not supported; follow pagination.next_cursor".into());
    }
    let limit = match q.int("limit", 1, 10_000) {
        Ok(v) => v.unwrap_or(100) as usize,
        Err(m) => return bad(m),
    };
    // The cursor carries the position of the next row (opaque to clients).
    let from = match q.get("cursor") {
        None => 0,
        Some(c) => match c.strip_prefix("o").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => n,
            None => return bad(format!("invalid cursor: {c:?}")),
        },
    };
    let mut conditions = q.all("condition");
    conditions.extend(q.all("condition_id"));
    conditions.extend(q.all("conditionId"));
    let events = q.all("event_id");
    if !conditions.is_empty() && !events.is_empty() {
        return bad("condition and event_id are mutually exclusive".into());
    }
    let side = match taker_side(&q) {
        Ok(side) => side,
        Err(m) => return bad(m),
    };
    let model = s.model();
    let matching: Vec<&crate::SimTrade> = model
        .trades(B)
        .iter()
        .filter(|t| conditions.is_empty() || conditions.contains(&t.market_id))
        .filter(|t| events.is_empty() || events.contains(&t.event_id))
        .filter(|t| side.is_none_or(|sd| sd == t.taker_side))
        .collect();
    let rows: Vec<Value> = matching
        .iter()
        .skip(from)
        .take(limit)
        .map(|t| json::data_trade_v2(&model, t))
        .collect();
    let next = from + rows.len();
    let has_more = next < matching.len();
    reply(
        StatusCode::OK,
        json!({"data": rows, "pagination": {"next_cursor": has_more.then(|| format!("o{next}")), "has_more": has_more}}),
    )
}
