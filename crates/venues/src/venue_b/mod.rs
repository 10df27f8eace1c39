//! venue_b: Polymarket's public market-data surfaces (PROTOCOLS part B).
//!
//! - [`model`]: wire types (Gamma, CLOB, Data API, market WebSocket).
//! - [`rest`]: REST endpoints.
//! - [`ws`]: WebSocket protocol state (local books per token, keepalive).
//! - [`normalise`]: wire → core types.
//!
//! The catalog comes from Gamma, per configured series slug (`series_slug=…`, falling back to
//! `tag_slug=…`), keyset-paged and falling back to offset paging when the keyset endpoint is missing. Books
//! stream over the public market WebSocket; trades come from the Data API tape, read every few seconds and
//! whenever the socket announces a fill.

pub mod model;
pub mod normalise;
pub mod rest;
pub mod ws;

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use crossbook_core::{BookSnapshot, Exchange, Market, Timestamp, Trade};
use tokio_tungstenite::tungstenite::{client::IntoClientRequest, handshake::client::Request};
use tracing::{info, warn};

use self::rest::{
    EventFilter, GetBook, GetEvent, ListEvents, ListEventsKeyset, ListTrades, MARKETS_PER_TRADES_CALL, MAX_OFFSET,
    MAX_TRADE_PAGES, OFFSET_LIMIT, PostBooks, TOKENS_PER_BOOKS_CALL,
};
use crate::{
    error::{VenueError, report_malformed},
    rest::{RestClient, Throttle, http_client},
    venue::{CatalogBatch, MarketSet, Venue},
    wire::Lenient,
};

const EX: Exchange = Exchange::VenueB;
/// Upper bound of keyset pages per listing.
const MAX_KEYSET_PAGES: usize = 200;

/// Settings of the venue_b connector.
#[derive(Debug, Clone)]
pub struct VenueBConfig {
    /// Gamma base, e.g. `https://gamma-api.polymarket.com`.
    pub gamma_url: String,
    /// CLOB base, e.g. `https://clob.polymarket.com`.
    pub clob_url: String,
    /// Data API base, e.g. `https://data-api.polymarket.com`.
    pub data_url: String,
    /// Market channel, e.g. `wss://ws-subscriptions-clob.polymarket.com/ws/market`.
    pub ws_url: String,
    /// Gamma series (or tag) slugs; empty = every active event.
    pub series: Vec<String>,
    /// REST requests per second across all of this venue's tasks.
    pub requests_per_second: u32,
}

/// The venue_b connector.
#[derive(Debug)]
pub struct VenueB {
    gamma: RestClient,
    clob: RestClient,
    data: RestClient,
    ws_url: String,
    series: Vec<String>,
    /// Set once the keyset listing answered 404/405: offset paging from then on.
    offset_only: AtomicBool,
    /// Set once `POST /books` answered 404/405: one `GET /book` per token from then on.
    single_books: AtomicBool,
}

fn endpoint_missing(e: &VenueError) -> bool {
    matches!(e, VenueError::Http { status: 404 | 405, .. })
}

impl VenueB {
    pub fn new(cfg: &VenueBConfig) -> Result<Self, VenueError> {
        url::Url::parse(&cfg.ws_url).map_err(|e| VenueError::Config {
            exchange: EX,
            reason: format!("invalid WebSocket URL {:?}: {e}", cfg.ws_url),
        })?;
        let http = http_client(EX)?;
        let throttle = Arc::new(Throttle::per_second(cfg.requests_per_second));
        Ok(VenueB {
            gamma: RestClient::new(EX, http.clone(), &cfg.gamma_url, throttle.clone())?,
            clob: RestClient::new(EX, http.clone(), &cfg.clob_url, throttle.clone())?,
            data: RestClient::new(EX, http, &cfg.data_url, throttle)?,
            ws_url: cfg.ws_url.clone(),
            series: cfg.series.clone(),
            offset_only: AtomicBool::new(false),
            single_books: AtomicBool::new(false),
        })
    }

    /// Every open event matching `filter`, keyset-paged when the venue offers it.
    async fn list_events(&self, filter: &EventFilter) -> Result<Vec<model::GammaEvent>, VenueError> {
        let mut raw = Vec::new();
        if !self.offset_only.load(Ordering::Relaxed) {
            match self.list_keyset(filter, &mut raw).await {
                Ok(()) => return Ok(collect_events(raw)),
                Err(e) if endpoint_missing(&e) => {
                    info!(venue = %EX, "keyset event listing not available; using offset paging");
                    self.offset_only.store(true, Ordering::Relaxed);
                    raw.clear();
                }
                Err(e) => return Err(e),
            }
        }
        let mut offset = 0;
        loop {
            let page = self
                .gamma
                .send(&ListEvents {
                    filter: filter.clone(),
                    open_only: true,
                    offset,
                })
                .await?;
            let n = page.items.len() as u32;
            raw.extend(page.items);
            offset += n;
            if n < OFFSET_LIMIT || offset >= MAX_OFFSET {
                break;
            }
        }
        Ok(collect_events(raw))
    }

    async fn list_keyset(
        &self,
        filter: &EventFilter,
        out: &mut Vec<Lenient<model::GammaEvent>>,
    ) -> Result<(), VenueError> {
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_KEYSET_PAGES {
            let page = self
                .gamma
                .send(&ListEventsKeyset {
                    filter: filter.clone(),
                    after_cursor: cursor.clone(),
                })
                .await?;
            out.extend(page.items);
            match page.next_cursor {
                Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
                _ => break,
            }
        }
        Ok(())
    }

    /// Normalises events (with their series and markets) into `batch`.
    fn add_events(&self, batch: &mut CatalogBatch, events: Vec<model::GammaEvent>) {
        for e in events {
            let category = normalise::event_category(&e);
            let series = normalise::event_series(&e, category);
            let series_id = series.series_id.clone();
            let mut markets = Vec::new();
            for m in &e.markets {
                match m {
                    Lenient::Ok(m) => match normalise::market(&e, m, &series_id, category) {
                        Ok(m) => markets.push(m),
                        Err(err) => report_malformed(&err),
                    },
                    Lenient::Bad { error, raw } => report_malformed(&VenueError::malformed(EX, "market", error, raw)),
                }
            }
            let event = match normalise::event(&e, &markets, &series_id, category) {
                Ok(ev) => ev,
                Err(err) => {
                    report_malformed(&err);
                    continue;
                }
            };
            batch.series.push(series);
            batch.events.push(event);
            batch.markets.extend(markets);
        }
        batch.dedup();
    }

    /// One event by Gamma id (digits) or slug: the direct path first, then the filtered listing.
    async fn get_event(&self, id_or_slug: &str) -> Result<Option<model::GammaEvent>, VenueError> {
        let numeric = !id_or_slug.is_empty() && id_or_slug.bytes().all(|b| b.is_ascii_digit());
        let direct = if numeric {
            GetEvent::Id(id_or_slug.to_string())
        } else {
            GetEvent::Slug(id_or_slug.to_string())
        };
        match self.gamma.send(&direct).await {
            Ok(e) => return Ok(Some(e)),
            Err(e) if e.is_not_found() || endpoint_missing(&e) => {}
            Err(e) => return Err(e),
        }
        let filter = if numeric {
            EventFilter::Id(id_or_slug.to_string())
        } else {
            EventFilter::Slug(id_or_slug.to_string())
        };
        let page = self
            .gamma
            .send(&ListEvents {
                filter,
                open_only: false,
                offset: 0,
            })
            .await?;
        // A server that ignores the filter answers with other events: match on the id or slug.
        Ok(collect_events(page.items)
            .into_iter()
            .find(|e| e.id.0 == id_or_slug || e.slug.as_deref() == Some(id_or_slug)))
    }

    async fn books_one_by_one(&self, tokens: &[String]) -> Result<Vec<BookSnapshot>, VenueError> {
        let mut out = Vec::new();
        let mut last_err = None;
        for t in tokens {
            match self.clob.send(&GetBook { token_id: t.clone() }).await {
                Ok(b) => match normalise::book(&b, Timestamp::now()) {
                    Ok(b) => out.push(b),
                    Err(e) => report_malformed(&e),
                },
                // Resolved markets have no book (404): not an error of the feed.
                Err(e) if e.is_not_found() => {}
                Err(e) => last_err = Some(e),
            }
        }
        match last_err {
            Some(e) if out.is_empty() => Err(e),
            _ => Ok(out),
        }
    }
}

fn collect_events(items: Vec<Lenient<model::GammaEvent>>) -> Vec<model::GammaEvent> {
    items
        .into_iter()
        .filter_map(|e| match e {
            Lenient::Ok(e) => Some(e),
            Lenient::Bad { error, raw } => {
                report_malformed(&VenueError::malformed(EX, "event", error, &raw));
                None
            }
        })
        .collect()
}

impl Venue for VenueB {
    const EXCHANGE: Exchange = EX;
    type Session = ws::Session;

    async fn sync_catalog(&self, followed: &[String]) -> Result<CatalogBatch, VenueError> {
        let mut batch = CatalogBatch::default();
        if self.series.is_empty() {
            let events = self.list_events(&EventFilter::All).await?;
            self.add_events(&mut batch, events);
        }
        for slug in &self.series {
            let mut events = self.list_events(&EventFilter::SeriesSlug(slug.clone())).await?;
            if events.is_empty() {
                events = self.list_events(&EventFilter::TagSlug(slug.clone())).await?;
            }
            if events.is_empty() {
                warn!(venue = %EX, series = %slug, "no open events for configured series or tag slug");
            }
            self.add_events(&mut batch, events);
        }
        for id in followed {
            if batch
                .events
                .iter()
                .any(|e| &e.event_id == id || e.slug.as_ref() == Some(id))
            {
                continue;
            }
            match self.get_event(id).await {
                Ok(Some(e)) => self.add_events(&mut batch, vec![e]),
                Ok(None) => warn!(venue = %EX, event = %id, "followed event no longer known to the venue"),
                Err(e) => warn!(venue = %EX, event = %id, error = %e, "cannot refresh followed event"),
            }
        }
        Ok(batch)
    }

    async fn fetch_event(&self, event_id: &str) -> Result<Option<CatalogBatch>, VenueError> {
        Ok(self.get_event(event_id).await?.map(|e| {
            let mut batch = CatalogBatch::default();
            self.add_events(&mut batch, vec![e]);
            batch
        }))
    }

    async fn refresh_markets(&self, markets: &[Market]) -> Result<Vec<Market>, VenueError> {
        // Gamma nests markets in their event; read each parent event once.
        let mut by_event: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for m in markets {
            by_event
                .entry(m.event_id.as_str())
                .or_default()
                .push(m.market_id.as_str());
        }
        let mut out = Vec::new();
        for (event_id, ids) in by_event {
            if let Some(batch) = self.fetch_event(event_id).await? {
                out.extend(
                    batch
                        .markets
                        .into_iter()
                        .filter(|m| ids.contains(&m.market_id.as_str())),
                );
            }
        }
        Ok(out)
    }

    async fn fetch_books(&self, markets: &[Market]) -> Result<Vec<BookSnapshot>, VenueError> {
        let tokens: Vec<String> = markets
            .iter()
            .flat_map(|m| [m.yes_token_id.clone(), m.no_token_id.clone()])
            .flatten()
            .collect();
        if self.single_books.load(Ordering::Relaxed) {
            return self.books_one_by_one(&tokens).await;
        }
        let mut out = Vec::new();
        for chunk in tokens.chunks(TOKENS_PER_BOOKS_CALL) {
            let req = PostBooks {
                token_ids: chunk.to_vec(),
            };
            match self.clob.send(&req).await {
                Ok(books) => {
                    for b in books {
                        match b {
                            Lenient::Ok(b) => match normalise::book(&b, Timestamp::now()) {
                                Ok(b) => out.push(b),
                                Err(e) => report_malformed(&e),
                            },
                            Lenient::Bad { error, raw } => {
                                report_malformed(&VenueError::malformed(EX, "book", error, &raw))
                            }
                        }
                    }
                }
                Err(e) if endpoint_missing(&e) => {
                    info!(venue = %EX, "POST /books not available; reading books one by one");
                    self.single_books.store(true, Ordering::Relaxed);
                    return self.books_one_by_one(&tokens).await;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    async fn fetch_trades(&self, markets: &MarketSet, since: Timestamp) -> Result<Vec<Trade>, VenueError> {
        let ids: Vec<String> = markets.keys().cloned().collect();
        let mut out = Vec::new();
        for chunk in ids.chunks(MARKETS_PER_TRADES_CALL) {
            let mut cursor = None;
            for _ in 0..MAX_TRADE_PAGES {
                let page = self
                    .data
                    .send(&ListTrades {
                        condition_ids: chunk.to_vec(),
                        cursor: cursor.take(),
                    })
                    .await?;
                let mut reached_since = false;
                for t in page.rows {
                    let t = match t {
                        Lenient::Ok(t) => t,
                        Lenient::Bad { error, raw } => {
                            report_malformed(&VenueError::malformed(EX, "trade", error, &raw));
                            continue;
                        }
                    };
                    let Some(market) = markets.get(&t.condition_id) else {
                        continue;
                    };
                    match normalise::trade(&t, market) {
                        Ok(tr) if tr.executed_at >= since => out.push(tr),
                        Ok(_) => reached_since = true,
                        Err(e) => report_malformed(&e),
                    }
                }
                // Newest first: once a page reaches back past `since`, older pages hold nothing new.
                match page.next_cursor {
                    Some(next) if !reached_since => cursor = Some(next),
                    _ => break,
                }
            }
        }
        Ok(out)
    }

    fn ws_request(&self) -> Result<Option<Request>, VenueError> {
        self.ws_url
            .as_str()
            .into_client_request()
            .map(Some)
            .map_err(|e| VenueError::WebSocket {
                exchange: EX,
                reason: format!("invalid WebSocket URL: {e}"),
            })
    }

    fn new_session(&self) -> ws::Session {
        if self.follows_everything() {
            ws::Session::following_everything()
        } else {
            ws::Session::new()
        }
    }

    fn follows_everything(&self) -> bool {
        self.series.is_empty()
    }

    fn keepalive_interval(&self) -> Option<Duration> {
        Some(Duration::from_secs(10))
    }

    fn polls_trades_with_ws(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    //! The paging and endpoint fallbacks, against a tiny HTTP server that answers like an older deployment:
    //! no keyset listing, no `POST /books`.
    use std::sync::{Arc, Mutex};

    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::TcpListener,
    };

    use super::*;
    use crate::venue_b::normalise::transaction_hash_of;

    /// Serves `route(method, path_and_query) -> (status, body)`; records every request line.
    async fn serve(route: fn(&str, &str) -> (u16, String)) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    // Headers, then the body announced by Content-Length.
                    let (head_end, length) = loop {
                        let Ok(n) = tcp.read(&mut chunk).await else { return };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..pos]).to_ascii_lowercase();
                            let length = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (pos + 4, length);
                        }
                    };
                    while buf.len() < head_end + length {
                        let Ok(n) = tcp.read(&mut chunk).await else { return };
                        if n == 0 {
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let mut parts = head.split_whitespace();
                    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                    log.lock().unwrap().push(format!("{method} {target}"));
                    let (status, body) = route(method, target);
                    let resp = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tcp.write_all(resp.as_bytes()).await;
                });
            }
        });
        (base, seen)
    }

    fn event(id: usize) -> String {
        format!(
            r#"{{"id": "{id}", "slug": "btc-updown-5m-{}", "title": "BTC {id}", "markets": [{{"conditionId": "0x{id:04x}",
            "outcomes": "[\"Up\", \"Down\"]", "clobTokenIds": "[\"{id}1\", \"{id}2\"]"}}]}}"#,
            1_778_583_600 + 300 * id
        )
    }

    fn route(method: &str, target: &str) -> (u16, String) {
        let offset = |t: &str| {
            t.split(['?', '&'])
                .find_map(|kv| kv.strip_prefix("offset="))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0)
        };
        match (method, target.split('?').next().unwrap_or("")) {
            ("GET", "/events/keyset") | ("POST", "/books") => (404, r#"{"error": "not found"}"#.into()),
            // 130 events: a full page of 100, then 30.
            ("GET", "/events") => {
                let from = offset(target);
                let items: Vec<String> = (from..130.min(from + 100)).map(event).collect();
                (200, format!("[{}]", items.join(",")))
            }
            ("GET", "/book") => {
                let token = target.split("token_id=").nth(1).unwrap_or("");
                (
                    200,
                    format!(
                        r#"{{"market": "0x0001", "asset_id": "{token}", "timestamp": "1",
                        "bids": [{{"price": "0.40", "size": "1"}}, {{"price": "0.45", "size": "2"}}], "asks": null}}"#
                    ),
                )
            }
            _ => (404, "{}".into()),
        }
    }

    #[tokio::test]
    async fn falls_back_to_offset_paging_and_single_books() {
        let (base, seen) = serve(route).await;
        let venue = VenueB::new(&VenueBConfig {
            gamma_url: base.clone(),
            clob_url: base.clone(),
            data_url: base.clone(),
            ws_url: "ws://127.0.0.1:1/ws/market".into(),
            series: vec!["btc-up-or-down-5m".into()],
            requests_per_second: 0,
        })
        .unwrap();
        let batch = venue.sync_catalog(&[]).await.unwrap();
        assert_eq!(batch.events.len(), 130, "both offset pages");
        assert_eq!(batch.markets.len(), 130);
        assert!(
            batch
                .markets
                .iter()
                .all(|m| m.interval_code == Some(crossbook_core::IntervalCode::M5))
        );
        let requests = seen.lock().unwrap().clone();
        assert!(requests[0].starts_with("GET /events/keyset?"), "{requests:?}");
        assert!(requests.iter().any(|r| r.contains("offset=100")));
        assert!(
            requests.iter().all(|r| !r.contains("offset=200")),
            "stops on the short page"
        );
        // A second sync goes straight to offset paging.
        seen.lock().unwrap().clear();
        venue.sync_catalog(&[]).await.unwrap();
        assert!(seen.lock().unwrap().iter().all(|r| !r.contains("keyset")));

        let books = venue.fetch_books(&batch.markets[..1]).await.unwrap();
        assert_eq!(books.len(), 2);
        assert_eq!(books[0].bids[0].price, "0.45".parse().unwrap(), "best first");
        let requests = seen.lock().unwrap().clone();
        assert!(requests.iter().any(|r| r.starts_with("POST /books")));
        assert_eq!(requests.iter().filter(|r| r.starts_with("GET /book?")).count(), 2);
    }

    /// A Data API answering in the v2 shape: snake_case rows in `{"data", "pagination"}`, read page after
    /// page by cursor until a page reaches back past `since`; a row that cannot be read is skipped, not the
    /// whole answer.
    fn v2_tape(method: &str, target: &str) -> (u16, String) {
        let row = |tx: &str, size: &str, ms: i64| {
            format!(
                r#"{{"proxy_wallet": "0xw", "side": "BUY", "asset": "11", "condition_id": "0x0001", "size": "{size}",
                "price": "0.515", "timestamp": {ms}, "outcome": "Up", "outcome_index": 0, "transaction_hash": "{tx}"}}"#
            )
        };
        if method != "GET" || !target.starts_with("/trades?") {
            return (404, "{}".into());
        }
        assert!(target.contains("condition=0x0001"), "{target}");
        if target.contains("cursor=p2") {
            // Older: the second row is before `since`, so no third page is asked for.
            let rows = [row("0xc", "3", 1_700_000_050_000), row("0xd", "4", 1_600_000_000_000)];
            return (
                200,
                format!(
                    r#"{{"data": [{}], "pagination": {{"next_cursor": "p3", "has_more": true}}}}"#,
                    rows.join(",")
                ),
            );
        }
        let rows = [
            row("0xa", "1", 1_700_000_090_000),
            r#"{"side": "BUY", "condition_id": "0x0001", "size": "1", "price": "0.5", "timestamp": 1}"#.to_string(),
            row("0xb", "2.25", 1_700_000_080_000),
        ];
        (
            200,
            format!(
                r#"{{"data": [{}], "pagination": {{"next_cursor": "p2", "has_more": true}}}}"#,
                rows.join(",")
            ),
        )
    }

    #[tokio::test]
    async fn reads_the_data_api_v2_tape_page_by_page_skipping_bad_rows() {
        let (base, seen) = serve(v2_tape).await;
        let venue = VenueB::new(&VenueBConfig {
            gamma_url: base.clone(),
            clob_url: base.clone(),
            data_url: base.clone(),
            ws_url: "ws://127.0.0.1:1/ws/market".into(),
            series: Vec::new(),
            requests_per_second: 0,
        })
        .unwrap();
        let market = Market {
            yes_token_id: Some("11".into()),
            no_token_id: Some("12".into()),
            ..Market::new(EX, "0x0001", "E1", "S1", "BTC up or down")
        };
        let set = MarketSet::from([(market.market_id.clone(), market)]);
        let trades = venue
            .fetch_trades(&set, Timestamp::from_millis(1_700_000_000_000))
            .await
            .expect("a v2 answer with one bad row is read");
        let got: Vec<(String, i64, i64)> = trades
            .iter()
            .map(|t| {
                (
                    transaction_hash_of(&t.source_trade_id).unwrap_or("").to_string(),
                    t.size.micros(),
                    t.executed_at.millis(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("0xa".into(), 1_000_000, 1_700_000_090_000),
                ("0xb".into(), 2_250_000, 1_700_000_080_000),
                ("0xc".into(), 3_000_000, 1_700_000_050_000),
            ]
        );
        assert_eq!(trades[0].price, crossbook_core::Price::from_micros(515_000));
        let requests = seen.lock().unwrap().clone();
        assert_eq!(
            requests.len(),
            2,
            "stops at the page reaching past `since`: {requests:?}"
        );
        assert!(requests[1].contains("cursor=p2"), "{requests:?}");
    }
}
