//! Gamma metadata REST (PROTOCOLS B.2), served under `/gamma`.
//!
//! Two paging regimes, as the venue has them: `/events` and `/markets` take `limit` + `offset` and answer a
//! bare JSON array (offsets above 2,000 → 422); `/events/keyset` and `/markets/keyset` take `after_cursor`
//! and answer `{"events"|"markets": [...], "next_cursor"}` with `next_cursor` absent on the last page
//! (`offset` → 422). Both honour `order` (`id`, `endDate`, `startDate`, `startTime`, `volume24hr`,
//! `volume`, `liquidity`, `slug`, `title`) and `ascending` (default false when `order` is given; without
//! `order` items come by id ascending).

use std::sync::Arc;

use axum::{
    extract::{Path, Query as AxQuery, State},
    http::StatusCode,
    response::Response,
};
use crossbook_core::{Exchange, Timestamp};
use serde_json::{Value, json};

use super::json;
use crate::{
    http::{Params, Query, Shared, reply},
    model::{
        Model,
        types::{Phase, SimEvent, SimMarket},
    },
    render::{hex_decode, hex_encode},
};

const B: Exchange = Exchange::VenueB;
const MAX_OFFSET: i64 = 2_000;

fn error(status: StatusCode, msg: impl Into<String>) -> Response {
    reply(status, json!({"error": msg.into()}))
}

/// An early answer from a helper (boxed: a `Response` is large).
type Reject = Box<Response>;

fn reject(status: StatusCode, msg: impl Into<String>) -> Reject {
    Box::new(error(status, msg))
}

fn not_found() -> Response {
    reply(
        StatusCode::NOT_FOUND,
        json!({"type": "not found error", "error": "id not found"}),
    )
}

/// Filters both listings share.
struct Filter {
    ids: Vec<String>,
    slugs: Vec<String>,
    active: Option<bool>,
    closed: Option<bool>,
    archived: Option<bool>,
    tag_id: Option<String>,
    tag_slug: Option<String>,
    start_min: Option<Timestamp>,
    start_max: Option<Timestamp>,
    end_min: Option<Timestamp>,
    end_max: Option<Timestamp>,
    /// Events only.
    series_slug: Option<String>,
    series_id: Option<String>,
    /// Markets only.
    condition_ids: Vec<String>,
    token_ids: Vec<String>,
}

fn time_param(q: &Query<'_>, name: &str) -> Result<Option<Timestamp>, String> {
    q.get(name)
        .map(|v| Timestamp::parse_iso(v).map_err(|_| format!("invalid {name}: {v:?}")))
        .transpose()
}

impl Filter {
    fn parse(q: &Query<'_>) -> Result<Self, String> {
        Ok(Filter {
            ids: q.all("id"),
            slugs: q.all("slug"),
            active: q.bool("active")?,
            closed: q.bool("closed")?,
            archived: q.bool("archived")?,
            tag_id: q.get("tag_id").map(str::to_string),
            tag_slug: q.get("tag_slug").map(str::to_string),
            start_min: time_param(q, "start_date_min")?,
            start_max: time_param(q, "start_date_max")?,
            end_min: time_param(q, "end_date_min")?,
            end_max: time_param(q, "end_date_max")?,
            series_slug: q.get("series_slug").map(str::to_string),
            series_id: q.get("series_id").map(str::to_string),
            condition_ids: q.all("condition_ids"),
            token_ids: q.all("clob_token_ids"),
        })
    }

    fn dates(&self, start: Timestamp, end: Timestamp) -> bool {
        self.start_min.is_none_or(|t| start >= t)
            && self.start_max.is_none_or(|t| start <= t)
            && self.end_min.is_none_or(|t| end >= t)
            && self.end_max.is_none_or(|t| end <= t)
    }

    fn event(&self, model: &Model, e: &SimEvent) -> bool {
        let closed = json::event_closed(model, e);
        let series_gamma = model.series(B, &e.series_id).and_then(|s| s.gamma_id.clone());
        (self.ids.is_empty() || self.ids.contains(&e.event_id))
            && (self.slugs.is_empty() || e.slug.as_ref().is_some_and(|s| self.slugs.contains(s)))
            && self.active.is_none_or(|a| a)
            && self.closed.is_none_or(|c| c == closed)
            && self.archived.is_none_or(|a| !a)
            && self.tag_id.as_ref().is_none_or(|t| e.tags.iter().any(|x| x.id == t))
            && self
                .tag_slug
                .as_ref()
                .is_none_or(|t| e.tags.iter().any(|x| x.slug.eq_ignore_ascii_case(t)))
            && self.series_slug.as_ref().is_none_or(|s| *s == e.series_id)
            && self.series_id.as_ref().is_none_or(|s| series_gamma.as_ref() == Some(s))
            && self.dates(e.created, e.end)
    }

    fn market(&self, model: &Model, m: &SimMarket) -> bool {
        let tags = model
            .event(B, &m.event_id)
            .map(|e| e.tags.as_slice())
            .unwrap_or_default();
        let tokens = m.tokens.as_ref();
        (self.ids.is_empty() || m.gamma_id.as_ref().is_some_and(|g| self.ids.contains(g)))
            && (self.slugs.is_empty() || m.slug.as_ref().is_some_and(|s| self.slugs.contains(s)))
            && (self.condition_ids.is_empty() || self.condition_ids.contains(&m.market_id))
            && (self.token_ids.is_empty() || tokens.is_some_and(|ts| ts.iter().any(|t| self.token_ids.contains(t))))
            && self.active.is_none_or(|a| a)
            && self.closed.is_none_or(|c| c == (m.phase == Phase::Settled))
            && self.archived.is_none_or(|a| !a)
            && self.tag_id.as_ref().is_none_or(|t| tags.iter().any(|x| x.id == t))
            && self
                .tag_slug
                .as_ref()
                .is_none_or(|t| tags.iter().any(|x| x.slug.eq_ignore_ascii_case(t)))
            && self.dates(m.created, m.close_time)
    }
}

/// Sort order of a listing.
struct Order {
    field: String,
    ascending: bool,
}

impl Order {
    fn parse(q: &Query<'_>) -> Result<Self, String> {
        let ascending = q.bool("ascending")?;
        Ok(match q.get("order") {
            None | Some("") => Order {
                field: "id".into(),
                ascending: ascending.unwrap_or(true),
            },
            Some(f) => Order {
                field: f.to_string(),
                ascending: ascending.unwrap_or(false),
            },
        })
    }
}

/// A sort key as text that orders like the value: numbers zero-padded, times as epoch ms, text as is;
/// the numeric id breaks ties.
fn sort_key(field: &str, id: &str, num: impl Fn(&str) -> Option<i64>, text: impl Fn(&str) -> Option<String>) -> String {
    let main = match num(field) {
        Some(n) => format!("{:020}", n.max(0)),
        None => text(field).unwrap_or_default(),
    };
    format!("{main}\u{1}{id:0>12}")
}

fn event_key(model: &Model, e: &SimEvent, field: &str) -> String {
    let vol = || {
        e.markets
            .iter()
            .filter_map(|id| model.market(B, id))
            .map(|m| m.volume.micros())
            .sum::<i64>()
    };
    sort_key(
        field,
        &e.event_id,
        |f| match f {
            "id" => e.event_id.parse().ok(),
            "endDate" => Some(e.end.millis()),
            "startDate" | "creationDate" => Some(e.created.millis()),
            "startTime" => Some(e.start.millis()),
            "volume24hr" | "volume" | "liquidity" => Some(vol()),
            _ => None,
        },
        |f| match f {
            "slug" | "ticker" => e.slug.clone(),
            "title" => Some(e.title.clone()),
            _ => None,
        },
    )
}

fn market_key(m: &SimMarket, field: &str) -> String {
    let id = m.gamma_id.clone().unwrap_or_default();
    sort_key(
        field,
        &id,
        |f| match f {
            "id" => id.parse().ok(),
            "endDate" => Some(m.close_time.millis()),
            "startDate" => Some(m.created.millis()),
            "startTime" | "eventStartTime" => Some(m.open_time.millis()),
            "volume24hr" | "volume" | "volumeNum" | "liquidity" | "liquidityNum" => Some(m.volume.micros()),
            _ => None,
        },
        |f| match f {
            "slug" => m.slug.clone(),
            "question" | "title" => Some(m.question.clone()),
            _ => None,
        },
    )
}

/// Items sorted by `order`, each with its sort key.
fn sorted<T>(mut items: Vec<(String, T)>, order: &Order) -> Vec<(String, T)> {
    items.sort_by(|a, b| if order.ascending { a.0.cmp(&b.0) } else { b.0.cmp(&a.0) });
    items
}

/// Offset paging: `limit` (default 20, at most 500) and `offset` (at most 2,000).
fn offset_page<T>(q: &Query<'_>, items: Vec<(String, T)>) -> Result<Vec<T>, Reject> {
    let limit = q
        .int("limit", 0, i64::MAX)
        .map_err(|m| reject(StatusCode::BAD_REQUEST, m))?
        .unwrap_or(20)
        .min(500);
    let offset = match q
        .int("offset", 0, i64::MAX)
        .map_err(|m| reject(StatusCode::BAD_REQUEST, m))?
    {
        Some(o) if o > MAX_OFFSET => {
            return Err(reject(
                StatusCode::UNPROCESSABLE_ENTITY,
                "offset too large: use the keyset endpoints",
            ));
        }
        o => o.unwrap_or(0),
    };
    Ok(items
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(_, v)| v)
        .collect())
}

/// Keyset paging: `limit` (default 20, at most `max`) after `after_cursor`; the next cursor if more remain.
fn keyset_page<T>(
    q: &Query<'_>,
    items: Vec<(String, T)>,
    order: &Order,
    max: i64,
) -> Result<(Vec<T>, Option<String>), Reject> {
    if q.get("offset").is_some() {
        return Err(reject(
            StatusCode::UNPROCESSABLE_ENTITY,
            "offset is not supported here: use after_cursor",
        ));
    }
    let limit = q
        .int("limit", 1, max)
        .map_err(|m| reject(StatusCode::UNPROCESSABLE_ENTITY, m))?
        .unwrap_or(20) as usize;
    let after = match q.get("after_cursor").filter(|c| !c.is_empty()) {
        None => None,
        Some(c) => Some(hex_decode(c).ok_or_else(|| reject(StatusCode::UNPROCESSABLE_ENTITY, "invalid after_cursor"))?),
    };
    let mut page = Vec::new();
    let mut last = None;
    let mut more = false;
    for (key, item) in items {
        if let Some(a) = &after
            && (if order.ascending { key <= *a } else { key >= *a })
        {
            continue;
        }
        if page.len() == limit {
            more = true;
            break;
        }
        last = Some(key);
        page.push(item);
    }
    Ok((page, if more { last.map(|k| hex_encode(&k)) } else { None }))
}

macro_rules! try_or_reply {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(r) => return *r,
        }
    };
}

fn parse(p: &Params) -> Result<(Filter, Order), Reject> {
    let q = Query(p);
    let filter = Filter::parse(&q).map_err(|m| reject(StatusCode::UNPROCESSABLE_ENTITY, m))?;
    let order = Order::parse(&q).map_err(|m| reject(StatusCode::UNPROCESSABLE_ENTITY, m))?;
    Ok((filter, order))
}

// Only the page is rendered: at the full scale a listing matches thousands of items.
fn matching_events<'m>(model: &'m Model, filter: &Filter, order: &Order) -> Vec<(String, &'m SimEvent)> {
    let items = model
        .events(B)
        .filter(|e| filter.event(model, e))
        .map(|e| (event_key(model, e, &order.field), e))
        .collect();
    sorted(items, order)
}

fn matching_markets<'m>(model: &'m Model, filter: &Filter, order: &Order) -> Vec<(String, &'m SimMarket)> {
    let items = model
        .markets(B)
        .filter(|m| filter.market(model, m))
        .map(|m| (market_key(m, &order.field), m))
        .collect();
    sorted(items, order)
}

/// `GET /events` → bare array of events.
pub(crate) async fn list_events(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let (filter, order) = try_or_reply!(parse(&p));
    let model = s.model();
    let items = matching_events(&model, &filter, &order);
    let page = try_or_reply!(offset_page(&Query(&p), items));
    reply(
        StatusCode::OK,
        Value::Array(page.into_iter().map(|x| json::event(&model, x)).collect()),
    )
}

/// `GET /events/keyset` → `{"events": [...], "next_cursor"?}`.
pub(crate) async fn keyset_events(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let (filter, order) = try_or_reply!(parse(&p));
    let model = s.model();
    let items = matching_events(&model, &filter, &order);
    let (page, next) = try_or_reply!(keyset_page(&Query(&p), items, &order, 500));
    let page: Vec<Value> = page.into_iter().map(|x| json::event(&model, x)).collect();
    let mut body = json!({"events": page});
    if let Some(c) = next {
        body["next_cursor"] = json!(c);
    }
    reply(StatusCode::OK, body)
}

/// `GET /markets` → bare array of markets.
pub(crate) async fn list_markets(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let (filter, order) = try_or_reply!(parse(&p));
    let model = s.model();
    let items = matching_markets(&model, &filter, &order);
    let page = try_or_reply!(offset_page(&Query(&p), items));
    reply(
        StatusCode::OK,
        Value::Array(page.into_iter().map(|x| json::market(&model, x, true)).collect()),
    )
}

/// `GET /markets/keyset` → `{"markets": [...], "next_cursor"?}`.
pub(crate) async fn keyset_markets(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let (filter, order) = try_or_reply!(parse(&p));
    let model = s.model();
    let items = matching_markets(&model, &filter, &order);
    let (page, next) = try_or_reply!(keyset_page(&Query(&p), items, &order, 100));
    let page: Vec<Value> = page.into_iter().map(|x| json::market(&model, x, true)).collect();
    let mut body = json!({"markets": page});
    if let Some(c) = next {
        body["next_cursor"] = json!(c);
    }
    reply(StatusCode::OK, body)
}

/// `GET /events/{id}`.
pub(crate) async fn get_event(State(s): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let model = s.model();
    model
        .event(B, &id)
        .map_or_else(not_found, |e| reply(StatusCode::OK, json::event(&model, e)))
}

/// `GET /events/slug/{slug}`.
pub(crate) async fn get_event_by_slug(State(s): State<Arc<Shared>>, Path(slug): Path<String>) -> Response {
    let model = s.model();
    model
        .event_by_slug(&slug)
        .map_or_else(not_found, |e| reply(StatusCode::OK, json::event(&model, e)))
}

/// `GET /markets/{id}` (numeric Gamma id).
pub(crate) async fn get_market(State(s): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let model = s.model();
    let found = model.markets(B).find(|m| m.gamma_id.as_deref() == Some(id.as_str()));
    found.map_or_else(not_found, |m| reply(StatusCode::OK, json::market(&model, m, true)))
}

/// `GET /markets/slug/{slug}`.
pub(crate) async fn get_market_by_slug(State(s): State<Arc<Shared>>, Path(slug): Path<String>) -> Response {
    let model = s.model();
    let found = model.markets(B).find(|m| m.slug.as_deref() == Some(slug.as_str()));
    found.map_or_else(not_found, |m| reply(StatusCode::OK, json::market(&model, m, true)))
}

/// `GET /series` → bare array (`limit`/`offset`, `slug` filter).
pub(crate) async fn list_series(State(s): State<Arc<Shared>>, AxQuery(p): AxQuery<Params>) -> Response {
    let q = Query(&p);
    let slugs = q.all("slug");
    let model = s.model();
    let items: Vec<(String, Value)> = model
        .series_of(B)
        .filter(|x| slugs.is_empty() || slugs.contains(&x.series_id))
        .map(|x| (x.gamma_id.clone().unwrap_or_default(), json::series(&model, x)))
        .collect();
    let page = try_or_reply!(offset_page(&q, items));
    reply(StatusCode::OK, Value::Array(page))
}

/// `GET /series/{id}` (numeric Gamma id), with its events.
pub(crate) async fn get_series(State(s): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let model = s.model();
    let Some(x) = model.series_of(B).find(|x| x.gamma_id.as_deref() == Some(id.as_str())) else {
        return not_found();
    };
    let mut v = json::series(&model, x);
    let events: Vec<Value> = model
        .events(B)
        .filter(|e| e.series_id == x.series_id)
        .map(|e| {
            json!({"id": e.event_id, "slug": e.slug, "ticker": e.slug, "title": e.title,
                   "startTime": crate::render::iso_secs(e.start), "endDate": crate::render::iso_secs(e.end),
                   "closed": json::event_closed(&model, e)})
        })
        .collect();
    v["events"] = Value::Array(events);
    reply(StatusCode::OK, v)
}
