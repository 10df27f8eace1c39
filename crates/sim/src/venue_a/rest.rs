//! venue_a REST market data under `/trade-api/v2` (PROTOCOLS A.3–A.5).
//!
//! Listings page with an opaque `cursor` (empty string on the last page). The cursor is the key of the last
//! item served (ticker order for events and markets, trade number for trades), so paging stays consistent
//! while windows appear and disappear between requests.

use std::sync::Arc;

use axum::{
    extract::{Path, Query as AxQuery, State},
    http::StatusCode,
    response::Response,
};
use crossbook_core::{Amount, Exchange};
use serde_json::{Value, json};

use super::json;
use crate::{
    http::{Params, Query, Shared, reply},
    model::types::Phase,
    render::{hex_decode, hex_encode},
};

const A: Exchange = Exchange::VenueA;

fn bad_request(msg: impl Into<String>) -> Response {
    reply(
        StatusCode::BAD_REQUEST,
        json!({"error": {"code": "bad_request", "message": msg.into()}}),
    )
}

fn not_found(what: &str) -> Response {
    reply(
        StatusCode::NOT_FOUND,
        json!({"error": {"code": "not_found", "message": format!("{what} not found")}}),
    )
}

fn ok(body: Value) -> Response {
    reply(StatusCode::OK, body)
}

/// The decoded `cursor`, `None` when absent or empty; an error for a cursor this server never issued.
fn cursor(q: &Query<'_>) -> Result<Option<String>, Box<Response>> {
    match q.get("cursor").filter(|c| !c.is_empty()) {
        None => Ok(None),
        Some(c) => hex_decode(c)
            .map(Some)
            .ok_or_else(|| Box::new(bad_request("invalid cursor"))),
    }
}

/// Serves up to `limit` items after the cursor key and the cursor of the next page (`""` when done).
fn page<T>(items: impl Iterator<Item = (String, T)>, after: Option<&str>, limit: usize) -> (Vec<T>, String) {
    let mut out = Vec::new();
    let mut last = String::new();
    let mut more = false;
    for (key, item) in items.filter(|(k, _)| after.is_none_or(|a| k.as_str() > a)) {
        if out.len() == limit {
            more = true;
            break;
        }
        last = key;
        out.push(item);
    }
    (out, if more { hex_encode(&last) } else { String::new() })
}

macro_rules! try_param {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(msg) => return bad_request(msg),
        }
    };
}

/// `GET /series` → `{"series": [Series]}`.
pub(crate) async fn list_series(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let q = Query(&p);
    let with_volume = try_param!(q.bool("include_volume")).unwrap_or(false);
    let category = q.get("category");
    let model = s.model();
    let list: Vec<Value> = model
        .series_of(A)
        .filter(|x| category.is_none_or(|c| c.eq_ignore_ascii_case(&x.category)))
        .map(|x| {
            let vol = with_volume.then(|| {
                model
                    .markets(A)
                    .filter(|m| m.series_id == x.series_id)
                    .fold(Amount::ZERO, |a, m| a.saturating_add(m.volume))
            });
            json::series(x, vol)
        })
        .collect();
    ok(json!({"series": list}))
}

/// `GET /series/{ticker}` → `{"series": Series}`.
pub(crate) async fn get_series(State(s): State<Arc<Shared>>, Path(ticker): Path<String>) -> Response {
    let model = s.model();
    match model.series(A, &ticker) {
        Some(x) => ok(json!({"series": json::series(x, None)})),
        None => not_found("series"),
    }
}

/// `GET /events` → `{"events": [EventData], "cursor": str}`.
pub(crate) async fn list_events(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let q = Query(&p);
    let limit = try_param!(q.int("limit", 1, 200)).unwrap_or(200) as usize;
    let nested = try_param!(q.bool("with_nested_markets")).unwrap_or(false);
    let status = q.get("status");
    if let Some(st) = status
        && !["unopened", "open", "closed", "settled"].contains(&st)
    {
        return bad_request(format!("invalid status: {st:?}"));
    }
    let min_close = try_param!(q.int("min_close_ts", 0, i64::MAX));
    let series = q.get("series_ticker");
    let after = match cursor(&q) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let model = s.model();
    let items = model
        .events(A)
        .filter(|e| series.is_none_or(|x| x == e.series_id))
        .filter(|e| status.is_none_or(|st| json::event_status(&model, e) == st))
        .filter(|e| min_close.is_none_or(|t| e.end.secs() >= t))
        .map(|e| (e.event_id.clone(), e));
    let (events, next) = page(items, after.as_deref(), limit);
    let events: Vec<Value> = events.into_iter().map(|e| json::event(&model, e, nested)).collect();
    ok(json!({"events": events, "cursor": next}))
}

/// `GET /events/{ticker}` → `{"event": EventData, "markets": [Market]}`.
pub(crate) async fn get_event(
    State(s): State<Arc<Shared>>,
    Path(ticker): Path<String>,
    AxQuery(p): AxQuery<Params>,
) -> Response {
    let q = Query(&p);
    let nested = try_param!(q.bool("with_nested_markets")).unwrap_or(false);
    let model = s.model();
    match model.event(A, &ticker) {
        Some(e) => ok(json!({"event": json::event(&model, e, nested), "markets": json::event_markets(&model, e)})),
        None => not_found("event"),
    }
}

fn status_phase(status: &str) -> Option<Option<Phase>> {
    match status {
        "unopened" => Some(Some(Phase::Upcoming)),
        "open" => Some(Some(Phase::Open)),
        // Nothing is ever paused in the simulator.
        "paused" => Some(None),
        "closed" => Some(Some(Phase::Closed)),
        "settled" => Some(Some(Phase::Settled)),
        _ => None,
    }
}

/// `GET /markets` → `{"markets": [Market], "cursor": str}`.
pub(crate) async fn list_markets(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let q = Query(&p);
    let limit = try_param!(q.int("limit", 1, 1000)).unwrap_or(100) as usize;
    let phase = match q.get("status") {
        None => None,
        Some(st) => match status_phase(st) {
            Some(ph) => Some(ph),
            None => return bad_request(format!("invalid status: {st:?}")),
        },
    };
    let range = |lo: &str, hi: &str| -> Result<(Option<i64>, Option<i64>), String> {
        Ok((q.int(lo, 0, i64::MAX)?, q.int(hi, 0, i64::MAX)?))
    };
    let close = try_param!(range("min_close_ts", "max_close_ts"));
    let created = try_param!(range("min_created_ts", "max_created_ts"));
    let settled = try_param!(range("min_settled_ts", "max_settled_ts"));
    let event = q.get("event_ticker");
    let series = q.get("series_ticker");
    let tickers = q.all("tickers");
    let after = match cursor(&q) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let within = |t: i64, (lo, hi): (Option<i64>, Option<i64>)| lo.is_none_or(|l| t >= l) && hi.is_none_or(|h| t <= h);
    let model = s.model();
    let items = model
        .markets(A)
        .filter(|m| event.is_none_or(|e| e == m.event_id))
        .filter(|m| series.is_none_or(|x| x == m.series_id))
        .filter(|m| tickers.is_empty() || tickers.contains(&m.market_id))
        .filter(|m| phase.is_none_or(|ph| ph == Some(m.phase)))
        .filter(|m| within(m.close_time.secs(), close) && within(m.created.secs(), created))
        .filter(|m| match (settled, m.settled_at) {
            ((None, None), _) => true,
            (range, Some(t)) => within(t.secs(), range),
            (_, None) => false,
        })
        .map(|m| (m.market_id.clone(), m));
    let (markets, next) = page(items, after.as_deref(), limit);
    let markets: Vec<Value> = markets.into_iter().map(|m| json::market(&model, m)).collect();
    ok(json!({"markets": markets, "cursor": next}))
}

/// `GET /markets/{ticker}` → `{"market": Market}`; 404 for unknown tickers.
pub(crate) async fn get_market(State(s): State<Arc<Shared>>, Path(ticker): Path<String>) -> Response {
    let model = s.model();
    match model.market(A, &ticker) {
        Some(m) => ok(json!({"market": json::market(&model, m)})),
        None => not_found("market"),
    }
}

fn depth(q: &Query<'_>) -> Result<usize, String> {
    Ok(q.int("depth", i64::MIN, 100)?.unwrap_or(0).max(0) as usize)
}

/// `GET /markets/{ticker}/orderbook?depth=N` → `{"orderbook_fp": …}`. Unknown tickers get 200 with two
/// empty ladders, as the venue does.
pub(crate) async fn orderbook(
    State(s): State<Arc<Shared>>,
    Path(ticker): Path<String>,
    AxQuery(p): AxQuery<Params>,
) -> Response {
    let depth = try_param!(depth(&Query(&p)));
    let model = s.model();
    ok(json!({"orderbook_fp": json::orderbook_fp(model.yes_book(A, &ticker), depth)}))
}

/// `GET /markets/orderbooks?tickers=A&tickers=B` → `{"orderbooks": [{"ticker", "orderbook_fp"}]}`.
pub(crate) async fn orderbooks(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let q = Query(&p);
    let tickers = q.all("tickers");
    if tickers.is_empty() || tickers.len() > 100 {
        return bad_request("tickers: between 1 and 100 tickers are required");
    }
    let model = s.model();
    let books: Vec<Value> = tickers
        .iter()
        .map(|t| json!({"ticker": t, "orderbook_fp": json::orderbook_fp(model.yes_book(A, t), 0)}))
        .collect();
    ok(json!({"orderbooks": books}))
}

/// `GET /markets/trades` → `{"trades": [Trade], "cursor": str}`, newest first.
pub(crate) async fn trades(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    if let Some(r) = crate::http::trades_fault(&s.faults, A) {
        return r;
    }
    let q = Query(&p);
    let limit = try_param!(q.int("limit", 1, 1000)).unwrap_or(100) as usize;
    let min_ts = try_param!(q.int("min_ts", 0, i64::MAX));
    let max_ts = try_param!(q.int("max_ts", 0, i64::MAX));
    let ticker = q.get("ticker");
    let before: Option<u64> = match cursor(&q) {
        Ok(None) => None,
        Ok(Some(c)) => match c.parse() {
            Ok(n) => Some(n),
            Err(_) => return bad_request("invalid cursor"),
        },
        Err(r) => return *r,
    };
    let model = s.model();
    let mut out = Vec::new();
    let mut next = String::new();
    let matching = model
        .trades(A)
        .iter()
        .filter(|t| before.is_none_or(|b| t.seq < b))
        .filter(|t| ticker.is_none_or(|x| x == t.market_id))
        .filter(|t| min_ts.is_none_or(|m| t.at.secs() >= m) && max_ts.is_none_or(|m| t.at.secs() <= m));
    let mut last_seq = 0;
    for t in matching {
        if out.len() == limit {
            next = hex_encode(&last_seq.to_string());
            break;
        }
        last_seq = t.seq;
        out.push(json::trade(t));
    }
    ok(json!({"trades": out, "cursor": next}))
}

/// `GET /exchange/status`.
pub(crate) async fn exchange_status() -> Response {
    ok(json!({"exchange_active": true, "trading_active": true}))
}
