//! venue_a: the Kalshi Trade API v2 (PROTOCOLS part A).
//!
//! - [`model`]: wire types, current and older shapes.
//! - [`rest`]: REST endpoints and the RSA-PSS signer.
//! - [`ws`]: WebSocket protocol state (subscriptions, `seq` checks, local books).
//! - [`normalise`]: wire → core types.
//!
//! The catalog is read per configured series (`GET /series/{t}`, then `GET /events` with nested markets for
//! the `open` and `unopened` statuses, cursor-paged), or every open event when no series is configured.
//! Books and trades stream over the signed WebSocket; without credentials the feed polls
//! `GET /markets/{t}/orderbook` instead, within the configured request rate.

pub mod model;
pub mod normalise;
pub mod rest;
pub mod ws;

use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::{Arc, Mutex},
};

use crossbook_core::{BookSnapshot, Category, Exchange, Market, Timestamp, Trade};
use tokio_tungstenite::tungstenite::{
    client::IntoClientRequest,
    handshake::client::Request,
    http::{HeaderName, HeaderValue},
};
use tracing::warn;

use self::rest::{GetEvent, GetOrderbook, GetSeries, KalshiSigner, ListEvents, ListMarkets, ListSeries, ListTrades};
use crate::{
    classify::category_of,
    error::{VenueError, report_malformed},
    rest::{RequestSigner, RestClient, Throttle, http_client},
    venue::{CatalogBatch, MarketSet, Venue},
    wire::Lenient,
};

const EX: Exchange = Exchange::VenueA;
/// Upper bound of pages read from one cursor listing (a guard against a cursor that never ends).
const MAX_PAGES: usize = 500;
/// Upper bound of trade pages per poll: 20 × 1000 trades.
const MAX_TRADE_PAGES: usize = 20;
/// Tickers per `GET /markets?tickers=` call.
const TICKERS_PER_CALL: usize = 100;

/// Settings of the venue_a connector.
#[derive(Debug, Clone)]
pub struct VenueAConfig {
    /// REST base, e.g. `https://external-api.kalshi.com/trade-api/v2`.
    pub rest_url: String,
    /// WebSocket URL, e.g. `wss://external-api-ws.kalshi.com/trade-api/ws/v2`.
    pub ws_url: String,
    /// API key id; with `private_key_file` it enables the WebSocket (and signed REST calls).
    pub key_id: Option<String>,
    /// PEM file of the RSA private key.
    pub private_key_file: Option<PathBuf>,
    /// Series tickers to ingest; empty = every open event.
    pub series: Vec<String>,
    /// REST requests per second across all of this venue's tasks.
    pub requests_per_second: u32,
}

/// The venue_a connector.
#[derive(Debug)]
pub struct VenueA {
    rest: RestClient,
    ws_url: String,
    /// The path signed on the WebSocket handshake (`/trade-api/ws/v2`).
    ws_path: String,
    signer: Option<Arc<KalshiSigner>>,
    series: Vec<String>,
    /// Category of each series seen, for events and markets read on their own (std mutex: never held across
    /// an `.await`).
    categories: Mutex<HashMap<String, Category>>,
    /// The `settlement_sources` of each series seen that lists any, which become its markets'
    /// `resolution_source` (the market payload names no source of its own besides its rules text).
    sources: Mutex<HashMap<String, String>>,
}

impl VenueA {
    /// Builds the connector; reads and checks the private key when credentials are configured.
    pub fn new(cfg: &VenueAConfig) -> Result<Self, VenueError> {
        let signer = match (&cfg.key_id, &cfg.private_key_file) {
            (Some(id), Some(file)) => Some(Arc::new(KalshiSigner::from_file(id, file)?)),
            (None, None) => None,
            _ => {
                return Err(VenueError::Credentials {
                    exchange: EX,
                    reason: "venue_a_key_id and venue_a_private_key_file must be set together".into(),
                });
            }
        };
        let ws = url::Url::parse(&cfg.ws_url).map_err(|e| VenueError::Config {
            exchange: EX,
            reason: format!("invalid WebSocket URL {:?}: {e}", cfg.ws_url),
        })?;
        let throttle = Arc::new(Throttle::per_second(cfg.requests_per_second));
        let mut rest = RestClient::new(EX, http_client(EX)?, &cfg.rest_url, throttle)?;
        if let Some(s) = &signer {
            rest = rest.with_signer(s.clone() as Arc<dyn RequestSigner>);
        }
        Ok(VenueA {
            rest,
            ws_url: cfg.ws_url.clone(),
            ws_path: ws.path().to_string(),
            signer,
            series: cfg.series.clone(),
            categories: Mutex::new(HashMap::new()),
            sources: Mutex::new(HashMap::new()),
        })
    }

    /// Whether the WebSocket can be used (credentials configured).
    pub fn has_credentials(&self) -> bool {
        self.signer.is_some()
    }

    fn category(&self, series_ticker: &str) -> Option<Category> {
        self.categories
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(series_ticker)
            .copied()
    }

    fn remember_series(&self, s: &model::Series) {
        self.categories
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(s.ticker.clone(), normalise::series_category(s));
        let mut sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        match normalise::settlement_sources(s) {
            Some(src) => sources.insert(s.ticker.clone(), src),
            None => sources.remove(&s.ticker),
        };
    }

    /// A normalised market with its series' settlement sources as its resolution source, when the series
    /// lists any (they name the index or feed; `rules_primary`, the fallback, is prose).
    fn with_series_source(&self, mut m: Market, series_ticker: &str) -> Market {
        if let Some(src) = self
            .sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(series_ticker)
        {
            m.resolution_source = Some(src.clone());
        }
        m
    }

    /// Every page of a cursor listing of events.
    async fn list_events(
        &self,
        series_ticker: Option<&str>,
        status: &'static str,
        out: &mut Vec<model::EventData>,
    ) -> Result<(), VenueError> {
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self
                .rest
                .send(&ListEvents {
                    series_ticker: series_ticker.map(str::to_string),
                    status: Some(status),
                    cursor: cursor.clone(),
                })
                .await?;
            for e in page.events {
                match e {
                    Lenient::Ok(e) => out.push(e),
                    Lenient::Bad { error, raw } => report_malformed(&VenueError::malformed(EX, "event", error, &raw)),
                }
            }
            match page.cursor.filter(|c| !c.is_empty()) {
                Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
                _ => break,
            }
        }
        Ok(())
    }

    /// Every series (no filter configured).
    async fn list_series(&self) -> Result<Vec<model::Series>, VenueError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let page = self.rest.send(&ListSeries { cursor: cursor.clone() }).await?;
            for s in page.series {
                match s {
                    Lenient::Ok(s) => out.push(s),
                    Lenient::Bad { error, raw } => report_malformed(&VenueError::malformed(EX, "series", error, &raw)),
                }
            }
            match page.cursor.filter(|c| !c.is_empty()) {
                Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
                _ => break,
            }
        }
        Ok(out)
    }

    /// One series; `None` when the venue does not know it.
    async fn get_series(&self, ticker: &str) -> Result<Option<model::Series>, VenueError> {
        match self
            .rest
            .send(&GetSeries {
                ticker: ticker.to_string(),
            })
            .await
        {
            Ok(one) => Ok(Some(one.series)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Normalises an event and its markets into `batch`; malformed markets are reported and left out.
    fn add_event(
        &self,
        batch: &mut CatalogBatch,
        e: model::EventData,
        extra_markets: Vec<Lenient<model::Market>>,
        now: Timestamp,
    ) {
        let series_ticker = if e.series_ticker.is_empty() {
            normalise::series_of_ticker(&e.event_ticker).to_string()
        } else {
            e.series_ticker.clone()
        };
        let category = self
            .category(&series_ticker)
            .unwrap_or_else(|| category_of(e.category.as_deref()));
        let mut seen = HashSet::new();
        let mut markets = Vec::new();
        for m in e.markets.iter().chain(extra_markets.iter()) {
            match m {
                Lenient::Ok(m) => {
                    if !seen.insert(m.ticker.clone()) {
                        continue;
                    }
                    match normalise::market(m, &series_ticker, category, now) {
                        Ok(m) => markets.push(self.with_series_source(m, &series_ticker)),
                        Err(err) => report_malformed(&err),
                    }
                }
                Lenient::Bad { error, raw } => report_malformed(&VenueError::malformed(EX, "market", error, raw)),
            }
        }
        let event = normalise::event(&e, &markets, category);
        // A placeholder parent, dropped by `dedup` when the series itself was read.
        batch.series.push(normalise::bare_series(&series_ticker, category));
        batch.events.push(event);
        batch.markets.extend(markets);
    }
}

impl Venue for VenueA {
    const EXCHANGE: Exchange = EX;
    type Session = ws::Session;

    async fn sync_catalog(&self, followed: &[String]) -> Result<CatalogBatch, VenueError> {
        let now = Timestamp::now();
        let mut batch = CatalogBatch::default();
        let series = if self.series.is_empty() {
            self.list_series().await?
        } else {
            let mut out = Vec::new();
            for t in &self.series {
                match self.get_series(t).await? {
                    Some(s) => out.push(s),
                    None => warn!(venue = %EX, series = %t, "configured series unknown to the venue"),
                }
            }
            out
        };
        for s in &series {
            self.remember_series(s);
            batch.series.push(normalise::series(s));
        }
        // `open` events trade now; `unopened` ones are the next windows, listed ahead of time.
        let mut events = Vec::new();
        for status in ["open", "unopened"] {
            if self.series.is_empty() {
                self.list_events(None, status, &mut events).await?;
            } else {
                for t in &self.series {
                    self.list_events(Some(t), status, &mut events).await?;
                }
            }
        }
        for e in events {
            self.add_event(&mut batch, e, Vec::new(), now);
        }
        batch.dedup();
        for id in followed {
            if batch.events.iter().any(|e| &e.event_id == id) {
                continue;
            }
            match self.fetch_event(id).await {
                Ok(Some(b)) => batch.merge(b),
                Ok(None) => warn!(venue = %EX, event = %id, "followed event no longer known to the venue"),
                Err(e) => warn!(venue = %EX, event = %id, error = %e, "cannot refresh followed event"),
            }
        }
        Ok(batch)
    }

    async fn fetch_event(&self, event_id: &str) -> Result<Option<CatalogBatch>, VenueError> {
        let one = match self
            .rest
            .send(&GetEvent {
                event_ticker: event_id.to_string(),
            })
            .await
        {
            Ok(one) => one,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut batch = CatalogBatch::default();
        let series_ticker = if one.event.series_ticker.is_empty() {
            normalise::series_of_ticker(&one.event.event_ticker).to_string()
        } else {
            one.event.series_ticker.clone()
        };
        if let Some(s) = self.get_series(&series_ticker).await? {
            self.remember_series(&s);
            batch.series.push(normalise::series(&s));
        }
        self.add_event(&mut batch, one.event, one.markets, Timestamp::now());
        batch.dedup();
        Ok(Some(batch))
    }

    async fn refresh_markets(&self, markets: &[Market]) -> Result<Vec<Market>, VenueError> {
        let now = Timestamp::now();
        let market_ids: Vec<String> = markets.iter().map(|m| m.market_id.clone()).collect();
        let wanted: HashSet<&String> = market_ids.iter().collect();
        let mut out = Vec::new();
        for chunk in market_ids.chunks(TICKERS_PER_CALL) {
            let page = self
                .rest
                .send(&ListMarkets {
                    tickers: chunk.to_vec(),
                    cursor: None,
                })
                .await?;
            for m in page.markets {
                match m {
                    Lenient::Ok(m) if wanted.contains(&m.ticker) => {
                        let series = normalise::series_of_ticker(&m.ticker).to_string();
                        let category = self.category(&series).unwrap_or(Category::Other);
                        match normalise::market(&m, &series, category, now) {
                            Ok(m) => out.push(self.with_series_source(m, &series)),
                            Err(e) => report_malformed(&e),
                        }
                    }
                    Lenient::Ok(_) => {}
                    Lenient::Bad { error, raw } => report_malformed(&VenueError::malformed(EX, "market", error, &raw)),
                }
            }
        }
        Ok(out)
    }

    async fn fetch_books(&self, markets: &[Market]) -> Result<Vec<BookSnapshot>, VenueError> {
        let mut books = Vec::new();
        let mut last_err = None;
        for m in markets {
            let req = GetOrderbook {
                ticker: m.market_id.clone(),
            };
            match self.rest.send(&req).await {
                Ok(resp) => match normalise::rest_book(&m.market_id, &resp, Timestamp::now()) {
                    Ok(b) => books.push(b),
                    Err(e) => report_malformed(&e),
                },
                Err(e) => {
                    warn!(venue = %EX, market = %m.market_id, error = %e, "order book poll failed");
                    last_err = Some(e);
                }
            }
        }
        match last_err {
            Some(e) if books.is_empty() => Err(e),
            _ => Ok(books),
        }
    }

    async fn fetch_trades(&self, markets: &MarketSet, since: Timestamp) -> Result<Vec<Trade>, VenueError> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TRADE_PAGES {
            let page = self
                .rest
                .send(&ListTrades {
                    ticker: None,
                    min_ts: Some(since.secs()),
                    cursor: cursor.clone(),
                })
                .await?;
            let mut reached_older = false;
            for t in page.trades {
                let t = match t {
                    Lenient::Ok(t) => t,
                    Lenient::Bad { error, raw } => {
                        report_malformed(&VenueError::malformed(EX, "trade", error, &raw));
                        continue;
                    }
                };
                let Some(market) = markets.get(&t.ticker) else {
                    continue;
                };
                if t.is_block_trade == Some(true) {
                    continue;
                }
                match normalise::trade(&t, &market.event_id) {
                    Ok(tr) if tr.executed_at < since => reached_older = true,
                    Ok(tr) => out.push(tr),
                    Err(e) => report_malformed(&e),
                }
            }
            // Newest first: once a page reaches back past `since`, the rest is older still.
            if reached_older {
                break;
            }
            match page.cursor.filter(|c| !c.is_empty()) {
                Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
                _ => break,
            }
        }
        Ok(out)
    }

    fn ws_request(&self) -> Result<Option<Request>, VenueError> {
        let Some(signer) = &self.signer else {
            return Ok(None);
        };
        let ws_err = |reason: String| VenueError::WebSocket { exchange: EX, reason };
        let mut req = self
            .ws_url
            .as_str()
            .into_client_request()
            .map_err(|e| ws_err(format!("invalid WebSocket URL: {e}")))?;
        for (name, value) in signer.headers("GET", &self.ws_path)? {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| ws_err(format!("header {name}: {e}")))?;
            let value = HeaderValue::from_str(&value).map_err(|e| ws_err(format!("header value: {e}")))?;
            req.headers_mut().insert(name, value);
        }
        Ok(Some(req))
    }

    fn new_session(&self) -> ws::Session {
        ws::Session::new()
    }
}
