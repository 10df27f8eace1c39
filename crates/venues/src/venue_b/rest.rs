//! venue_b REST endpoints (PROTOCOLS B.2–B.4): Gamma (metadata), CLOB (books) and the Data API
//! (public tape). All public, no signing.

use reqwest::Method;
use serde_json::json;

use super::model;
use crate::{rest::RestRequest, wire::Lenient};

/// How a Gamma event listing is narrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventFilter {
    /// Every active event.
    All,
    /// `series_slug=…` (how the hidden 5m/15m up/down events are found).
    SeriesSlug(String),
    /// `tag_slug=…`.
    TagSlug(String),
    /// `id=…`.
    Id(String),
    /// `slug=…`.
    Slug(String),
}

impl EventFilter {
    fn push(&self, q: &mut Vec<(&'static str, String)>) {
        match self {
            EventFilter::All => q.push(("active", "true".into())),
            EventFilter::SeriesSlug(s) => q.push(("series_slug", s.clone())),
            EventFilter::TagSlug(s) => q.push(("tag_slug", s.clone())),
            EventFilter::Id(s) => q.push(("id", s.clone())),
            EventFilter::Slug(s) => q.push(("slug", s.clone())),
        }
    }
}

/// Page sizes: the keyset endpoint allows up to 500 events, the offset one is kept at 100.
pub const KEYSET_LIMIT: u32 = 500;
pub const OFFSET_LIMIT: u32 = 100;
/// Offsets beyond this are refused by the venue (HTTP 422).
pub const MAX_OFFSET: u32 = 2000;

/// `GET /events/keyset?…&after_cursor=` (keyset paging, `{"events": […], "next_cursor": …}`).
#[derive(Debug, Clone)]
pub struct ListEventsKeyset {
    pub filter: EventFilter,
    pub after_cursor: Option<String>,
}

impl RestRequest for ListEventsKeyset {
    type Response = model::GammaPage<model::GammaEvent>;
    fn name(&self) -> &'static str {
        "GET /events/keyset"
    }
    fn path(&self) -> String {
        "/events/keyset".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = vec![("closed", "false".to_string()), ("limit", KEYSET_LIMIT.to_string())];
        self.filter.push(&mut q);
        if let Some(c) = &self.after_cursor {
            q.push(("after_cursor", c.clone()));
        }
        q
    }
}

/// `GET /events?…&limit=&offset=` (offset paging, bare array).
#[derive(Debug, Clone)]
pub struct ListEvents {
    pub filter: EventFilter,
    /// Only open events (catalog listing) or any (lookup by id or slug).
    pub open_only: bool,
    pub offset: u32,
}

impl RestRequest for ListEvents {
    type Response = model::GammaPage<model::GammaEvent>;
    fn name(&self) -> &'static str {
        "GET /events"
    }
    fn path(&self) -> String {
        "/events".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = vec![("limit", OFFSET_LIMIT.to_string()), ("offset", self.offset.to_string())];
        if self.open_only {
            q.push(("closed", "false".to_string()));
        }
        self.filter.push(&mut q);
        q
    }
}

/// `GET /events/{id}` or `GET /events/slug/{slug}` (one event object).
#[derive(Debug, Clone)]
pub enum GetEvent {
    Id(String),
    Slug(String),
}

impl RestRequest for GetEvent {
    type Response = model::GammaEvent;
    fn name(&self) -> &'static str {
        match self {
            GetEvent::Id(_) => "GET /events/{id}",
            GetEvent::Slug(_) => "GET /events/slug/{slug}",
        }
    }
    fn path(&self) -> String {
        match self {
            GetEvent::Id(id) => format!("/events/{id}"),
            GetEvent::Slug(slug) => format!("/events/slug/{slug}"),
        }
    }
}

/// CLOB `GET /book?token_id=`.
#[derive(Debug, Clone)]
pub struct GetBook {
    pub token_id: String,
}

impl RestRequest for GetBook {
    type Response = model::OrderBookSummary;
    fn name(&self) -> &'static str {
        "GET /book"
    }
    fn path(&self) -> String {
        "/book".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        vec![("token_id", self.token_id.clone())]
    }
}

/// CLOB `POST /books` with `[{"token_id": …}, …]`.
#[derive(Debug, Clone)]
pub struct PostBooks {
    pub token_ids: Vec<String>,
}

/// Tokens per `POST /books`.
pub const TOKENS_PER_BOOKS_CALL: usize = 100;

impl RestRequest for PostBooks {
    type Response = Vec<Lenient<model::OrderBookSummary>>;
    fn name(&self) -> &'static str {
        "POST /books"
    }
    fn method(&self) -> Method {
        Method::POST
    }
    fn path(&self) -> String {
        "/books".into()
    }
    fn body(&self) -> Option<serde_json::Value> {
        Some(serde_json::Value::Array(
            self.token_ids.iter().map(|t| json!({ "token_id": t })).collect(),
        ))
    }
}

/// Data API `GET /trades?market=<conditionIds>&limit=&takerOnly=true`, newest first: a bare array (v1) or
/// the v2 envelope with a `cursor` for the next page (both read by [`model::DataTradesPage`]).
#[derive(Debug, Clone)]
pub struct ListTrades {
    pub condition_ids: Vec<String>,
    /// The v2 `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Condition ids per trades call (they go into the query string).
pub const MARKETS_PER_TRADES_CALL: usize = 20;
/// Trades per call (a practical cap of the venue).
pub const TRADES_LIMIT: u32 = 500;
/// Pages read per trades call when the venue pages (v2), newest first: enough to reach back a poll
/// interval's trades at any realistic rate, bounded so one call cannot walk the whole history.
pub const MAX_TRADE_PAGES: usize = 5;

impl RestRequest for ListTrades {
    type Response = model::DataTradesPage;
    fn name(&self) -> &'static str {
        "GET /trades"
    }
    fn path(&self) -> String {
        "/trades".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let ids = self.condition_ids.join(",");
        // v1 filters on `market`, v2 on `condition`; each ignores the other's name.
        let mut q = vec![
            ("market", ids.clone()),
            ("condition", ids),
            ("limit", TRADES_LIMIT.to_string()),
            ("takerOnly", "true".to_string()),
        ];
        if let Some(c) = &self.cursor {
            q.push(("cursor", c.clone()));
        }
        q
    }
}
