//! Service routes (contracts §10): liveness, readiness, Prometheus metrics, the OpenAPI document and the API
//! reference page. Not versioned, not rate limited, no key.

use std::time::{Duration, Instant};

use axum::{
    extract::State,
    http::{StatusCode, header},
    response::{Html, IntoResponse, Response},
};
use crossbook_core::{Exchange, Timestamp};
use crossbook_store::WriteKind;
use crossbook_venues::{FeedHealth, Freshness, Part, PartHealth};
use serde::Serialize;
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{AppState, config::Role, error::JSON_CONTENT_TYPE, json::Json, state::FRESHNESS_LIMIT};

/// How long `/readyz` waits for the store's answer.
const STORE_PING_TIMEOUT: Duration = Duration::from_secs(2);

/// The service routes.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(openapi_json))
        .routes(routes!(docs))
}

/// Liveness: always `ok` while the process serves requests.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthOut {
    #[schema(examples("ok"))]
    pub status: String,
}

/// Readiness of the whole service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadyStatus {
    /// Store reachable and writing, and every configured venue fresh.
    Ready,
    /// Something below is not.
    NotReady,
}

/// Reachability of the store and whether writes succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoreStatus {
    /// The store answers and the last write of every kind succeeded.
    Ok,
    /// The store answers a ping, but writes of the kinds in `failing` fail (a full disk, a read-only file
    /// system, a database refusing writes). Data that cannot be written is held for another try, and what had
    /// to be dropped is counted in `crossbook_writes_dropped_total` and recorded as capture gaps.
    Degraded,
    /// The store does not answer.
    Unavailable,
}

/// What a writer writes, in `/readyz` and in the `kind` label of `crossbook_write_failures_total` and
/// `crossbook_writes_dropped_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteKindOut {
    BookEvents,
    Trades,
    Episodes,
    Deliveries,
    Catalog,
    Whales,
}

impl From<WriteKind> for WriteKindOut {
    fn from(k: WriteKind) -> Self {
        match k {
            WriteKind::BookEvents => WriteKindOut::BookEvents,
            WriteKind::Trades => WriteKindOut::Trades,
            WriteKind::Episodes => WriteKindOut::Episodes,
            WriteKind::Deliveries => WriteKindOut::Deliveries,
            WriteKind::Catalog => WriteKindOut::Catalog,
            WriteKind::Whales => WriteKindOut::Whales,
        }
    }
}

/// The store part of `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StoreHealthOut {
    pub status: StoreStatus,
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// Round-trip time of the ping, when it answered.
    #[schema(required = true)]
    pub latency_ms: Option<u64>,
    /// The kinds of data whose last write failed (empty when writes succeed).
    pub failing: Vec<WriteKindOut>,
    /// The latest error: of a failing write, or of the ping.
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// Since when the store has been degraded or unavailable as seen by this process.
    #[schema(required = true, format = DateTime)]
    pub since: Option<String>,
}

/// Freshness of one venue's feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VenueStatus {
    /// This process does not ingest (`--role api`, or a standby waiting for the ingest lock); it does not
    /// count for readiness.
    NotConfigured,
    /// Ingestion started but the venue serves nothing yet: connecting, or connected with no books yet.
    Waiting,
    /// Connected (or the last poll succeeded), data newer than `max_age_seconds`, and books held.
    Fresh,
    /// Was serving and can no longer vouch for its data: disconnected (at once, not `max_age_seconds`
    /// later), neither data nor a keepalive for over `max_age_seconds`, or every book waiting for a fresh
    /// snapshot.
    Stale,
    /// The books are fresh, but the trade tape or the catalog sync keeps failing (3 attempts in a row): trades
    /// or new markets are being missed. `reason` and `parts` name the part and its error. Not ready.
    Degraded,
}

/// Whether one part of a venue's ingestion works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartStatus {
    /// Not attempted yet (or not ingested by this process).
    Unknown,
    /// Its latest attempt succeeded.
    Ok,
    /// Its latest attempt failed.
    Failing,
}

/// One part of a venue's ingestion in `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PartOut {
    pub status: PartStatus,
    /// Failed attempts since it last succeeded.
    pub failures: u32,
    /// When it last succeeded.
    #[schema(required = true, format = DateTime)]
    pub last_ok_at: Option<String>,
    /// Its latest error (kept after it recovers, with `last_error_at`).
    #[schema(required = true)]
    pub last_error: Option<String>,
    #[schema(required = true, format = DateTime)]
    pub last_error_at: Option<String>,
}

impl From<&PartHealth> for PartOut {
    fn from(p: &PartHealth) -> Self {
        PartOut {
            status: if p.failing() {
                PartStatus::Failing
            } else if p.last_ok_at.is_some() {
                PartStatus::Ok
            } else {
                PartStatus::Unknown
            },
            failures: p.failures,
            last_ok_at: p.last_ok_at.map(Timestamp::to_iso),
            last_error: p.last_error.clone(),
            last_error_at: p.last_error_at.map(Timestamp::to_iso),
        }
    }
}

/// The parts of a venue's ingestion, each able to fail on its own.
#[derive(Debug, Serialize, ToSchema)]
pub struct PartsOut {
    /// The books: the WebSocket, or REST book polling.
    pub books: PartOut,
    /// The trade tape (REST).
    pub trades: PartOut,
    /// The catalog sync.
    pub catalog: PartOut,
}

/// A venue's WebSocket connections: its followed markets are spread over as many as the venue's
/// per-connection limit needs (`venue_a_ws_markets_per_connection`, `venue_b_ws_assets_per_connection`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectionsOut {
    /// Sockets the venue's markets are spread over now (0 while polling).
    pub total: u64,
    /// Of those, the ones open and subscribed.
    pub connected: u64,
    /// Reconnects of all of them since ingestion started.
    pub reconnects: u64,
}

/// How a venue's books are fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FeedModeOut {
    /// Not started (or not ingested by this process).
    Idle,
    /// Live over the venue's WebSocket.
    Websocket,
    /// Polling the REST order books (venue_a without credentials).
    Polling,
}

/// One venue in `/readyz`: freshness and the feed's health as ingestion sees it.
#[derive(Debug, Serialize, ToSchema)]
pub struct VenueHealthOut {
    pub status: VenueStatus,
    /// When the venue's feed last delivered data.
    #[schema(required = true, format = DateTime)]
    pub last_update_at: Option<String>,
    /// Seconds since `last_update_at`: the age of the data (keepalives do not make it younger).
    #[schema(required = true)]
    pub age_seconds: Option<u64>,
    /// When the connection last showed it is alive: data, or a keepalive (venue_b's `PONG`, venue_a's
    /// heartbeat). A quiet market sends only keepalives and stays fresh.
    #[schema(required = true, format = DateTime)]
    pub last_alive_at: Option<String>,
    /// Age above which the venue is stale.
    pub max_age_seconds: u64,
    pub mode: FeedModeOut,
    /// Every socket of the venue is open and subscribed (one down makes it false: its books are stale); when
    /// polling, the last REST poll succeeded.
    pub connected: bool,
    /// The venue's WebSocket connections: how many, how many connected, their reconnects.
    pub connections: ConnectionsOut,
    /// Live books held in memory and up to date.
    pub books: u64,
    /// Books waiting for a fresh snapshot (after a sequence gap or a reconnect).
    pub stale_books: u64,
    /// Books followed that the venue has not sent though asked several times: nothing of them is captured.
    /// The venue says nothing about subscriptions past its per-connection limit, so a count above 0 usually
    /// means the per-connection setting is above the venue's own limit.
    pub books_missing: u64,
    /// When the last catalog sync finished.
    #[schema(required = true, format = DateTime)]
    pub last_catalog_sync_at: Option<String>,
    /// Reconnects since ingestion started.
    pub reconnects: u64,
    /// Malformed messages skipped since ingestion started.
    pub malformed: u64,
    /// Capture gaps recorded since ingestion started: each time one book lost continuity (a dropped socket, a
    /// silent feed, a sequence gap, a failed poll, a restart). `GET /v1/historical/gaps` lists them.
    pub capture_gaps: u64,
    /// The latest error of any part (`parts` says which part fails now).
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// Why the venue is `waiting`, `stale` or `degraded` (e.g. `connecting`, `disconnected: …`, `no books
    /// yet`, `trades failing (3 times in a row): …`); null when fresh or not configured.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// Since when `status` has held (ISO 8601), as this process watched it; null when not configured.
    #[schema(required = true, format = DateTime)]
    pub status_since: Option<String>,
    /// Books, trades and catalog, each with its status, last success and last error.
    pub parts: PartsOut,
}

/// Which part of the service this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoleOut {
    All,
    Api,
    Ingest,
}

/// Ingestion in this process: its role and whether it holds the ingest lock (exactly one process does).
#[derive(Debug, Serialize, ToSchema)]
pub struct IngestOut {
    pub role: RoleOut,
    /// This process ingests now (it holds the ingest lock).
    pub leader: bool,
}

/// Both venues in `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct VenuesOut {
    pub venue_a: VenueHealthOut,
    pub venue_b: VenueHealthOut,
}

/// Whether this process serves live data (live books, current arbitrage, the live stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LiveStatus {
    /// It ingests and serves the routes that answer from live books.
    Serving,
    /// It serves the API but holds no live data; those routes answer 503 `unavailable`.
    Unavailable,
    /// It serves no API (`--role ingest`).
    NotServed,
}

/// The live plane in `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LiveOut {
    pub status: LiveStatus,
    /// Why live data is `unavailable` here, and where it is served; null otherwise.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// The bus this process mirrors the live plane from (a `--role api` process with `bus_url`); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<BusOut>,
    /// The bus this process publishes the live plane on while it ingests (a process that may ingest, with
    /// `bus_url`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publish: Option<PublishOut>,
}

/// The leader's publisher on the bus, in `/readyz` of a process that may ingest. A bus that is down does not
/// make the process unready: capture to the store goes on, and `connected` and `last_error` say what is wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct PublishOut {
    /// This process leads and publishes its events (false in a standby).
    pub publishing: bool,
    /// Connected to the bus now.
    pub connected: bool,
    /// The term of this process's publisher (Unix ms when it started publishing); null before the first.
    #[schema(required = true)]
    pub term: Option<u64>,
    /// Messages handed to the bus since this process started.
    pub published: u64,
    /// Events that did not reach the bus (the bus slow or away); readers repair their books from keyframes.
    pub dropped: u64,
    /// What is wrong with the bus now; null while it works.
    #[schema(required = true)]
    pub last_error: Option<String>,
}

/// The mirror of the ingesting process's live plane, in `/readyz` of an api process.
#[derive(Debug, Serialize, ToSchema)]
pub struct BusOut {
    /// Connected to the bus now.
    pub connected: bool,
    /// Books held (fresh and stale).
    pub books: u64,
    /// Books held but not trusted until their next keyframe.
    pub stale_books: u64,
    /// When the ingesting process sent the last message received (ISO 8601); null before the first.
    #[schema(required = true)]
    pub last_event_at: Option<String>,
    /// Age of that message now, in milliseconds: how far this process is behind (it grows while the
    /// ingesting process has nothing to send). Null before the first message.
    #[schema(required = true)]
    pub lag_ms: Option<u64>,
    /// Messages that could not be read and were skipped.
    pub malformed: u64,
    /// Holes seen in book sequences or in the message count (each made books stale until repaired).
    pub holes: u64,
}

/// The body of `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadyOut {
    pub status: ReadyStatus,
    pub store: StoreHealthOut,
    pub venues: VenuesOut,
    pub ingest: IngestOut,
    pub live: LiveOut,
}

/// Liveness
///
/// Answers 200 while the process is up. It does not touch the store; use `/readyz` for that.
#[utoipa::path(get, path = "/healthz", tag = "service", responses((status = 200, description = "The process is up.", body = HealthOut)))]
async fn healthz() -> Json<HealthOut> {
    Json(HealthOut {
        status: "ok".to_string(),
    })
}

/// One venue's entry from its health, its freshness at `now` and since when that has held
/// ([`crossbook_venues::VenueHealth::freshness_since`]); `None` when this process does not ingest.
fn venue_health(health: Option<(FeedHealth, Freshness, Timestamp)>, now: Timestamp) -> VenueHealthOut {
    let max_age = FRESHNESS_LIMIT.as_secs();
    let (h, freshness, since) = match health {
        Some((h, freshness, since)) => (h, Some(freshness), Some(since)),
        None => (FeedHealth::default(), None, None),
    };
    let last = h.last_message_at;
    let age_ms = last.map(|t| (now.millis() - t.millis()).max(0));
    let (status, reason) = match freshness {
        None => (VenueStatus::NotConfigured, None),
        Some(Freshness::Fresh) => (VenueStatus::Fresh, None),
        Some(Freshness::Waiting(why)) => (VenueStatus::Waiting, Some(why)),
        Some(Freshness::Stale(why)) => (VenueStatus::Stale, Some(why)),
        Some(Freshness::Degraded(why)) => (VenueStatus::Degraded, Some(why)),
    };
    VenueHealthOut {
        status,
        last_update_at: last.map(Timestamp::to_iso),
        age_seconds: age_ms.map(|ms| (ms / 1000) as u64),
        last_alive_at: h.last_alive_at.map(Timestamp::to_iso),
        max_age_seconds: max_age,
        mode: match h.mode {
            crossbook_venues::FeedMode::Idle => FeedModeOut::Idle,
            crossbook_venues::FeedMode::WebSocket => FeedModeOut::Websocket,
            crossbook_venues::FeedMode::Polling => FeedModeOut::Polling,
        },
        connected: h.connected,
        connections: ConnectionsOut {
            total: h.connections.total as u64,
            connected: h.connections.connected as u64,
            reconnects: h.connections.reconnects,
        },
        books: h.books as u64,
        stale_books: h.stale_books as u64,
        books_missing: h.books_missing() as u64,
        last_catalog_sync_at: h.last_catalog_sync_at.map(Timestamp::to_iso),
        reconnects: h.reconnects,
        malformed: h.malformed,
        capture_gaps: h.capture_gaps,
        parts: PartsOut {
            books: h.part(Part::Books).into(),
            trades: h.part(Part::Trades).into(),
            catalog: h.part(Part::Catalog).into(),
        },
        last_error: h.last_error,
        reason,
        status_since: since.map(Timestamp::to_iso),
    }
}

/// Readiness
///
/// 200 when the store answers, its writes succeed and, if this process ingests, both venues are fresh:
/// connected, alive (data or a keepalive) within the last 60 s, books held, and neither the trade tape nor
/// the catalog sync failing repeatedly; 503 otherwise. A venue that disconnects is `stale` at once, with the
/// reason; one whose books are fresh but whose trades or catalog keep failing is `degraded`, and `parts`
/// names the failing part with its last error. The body breaks the answer down by store and venue either way (feed
/// mode, connection, books held and stale as they are at the moment of the request, reconnects, malformed
/// messages). While writes fail (a full disk, a database
/// refusing writes) the store is `degraded`, with the kinds of data that fail, the last error and since when;
/// it is `ok` again, and the answer 200, once they succeed again (a kind written rarely also clears once the
/// store has taken other writes and the kind has not failed for 10 s). A process that does not ingest (`--role api`, or a standby
/// waiting for the ingest lock; `ingest.leader` is false) reports the venues as `not_configured`: its stored
/// data comes from the store, which the leader keeps up to date. It holds no live data, though, so its `live`
/// is `unavailable` with the reason, and the answer is 503: it never reports ready with an empty live plane.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "service",
    responses(
        (status = 200, description = "Ready.", body = ReadyOut),
        (status = 503, description = "Not ready; the body says why.", body = ReadyOut),
    )
)]
async fn readyz(State(state): State<AppState>) -> Response {
    let started = Instant::now();
    let ping = tokio::time::timeout(STORE_PING_TIMEOUT, state.store.ping()).await;
    let writes = state.store.write_health().status();
    let ping_error = match ping {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(format!("the store did not answer within {STORE_PING_TIMEOUT:?}")),
    };
    let status = if ping_error.is_some() {
        StoreStatus::Unavailable
    } else if writes.is_degraded() {
        StoreStatus::Degraded
    } else {
        StoreStatus::Ok
    };
    let since = match status {
        StoreStatus::Ok => None,
        StoreStatus::Degraded => writes.since,
        StoreStatus::Unavailable => Some(state.store_unreachable_since(true).unwrap_or_else(Timestamp::now)),
    };
    let store = StoreHealthOut {
        status,
        backend: state.store.backend().to_string(),
        latency_ms: ping_error.is_none().then(|| started.elapsed().as_millis() as u64),
        failing: writes.failing.iter().map(|&k| k.into()).collect(),
        last_error: ping_error.or(writes.last_error),
        since: since.map(Timestamp::to_iso),
    };
    if status != StoreStatus::Unavailable {
        state.store_unreachable_since(false);
    }
    let now = Timestamp::now();
    // Ingestion follows both venues while it runs; a venue without an entry yet is waiting.
    let leader = state.ingest.is_running();
    let venue = |ex: Exchange| {
        let health = leader.then(|| {
            let h = state.health.get(ex).unwrap_or_default();
            let (freshness, since) = state.health.freshness_since(ex, &h, now, FRESHNESS_LIMIT);
            (h, freshness, since)
        });
        venue_health(health, now)
    };
    let venues = VenuesOut {
        venue_a: venue(Exchange::VenueA),
        venue_b: venue(Exchange::VenueB),
    };
    let venues_ok = [&venues.venue_a, &venues.venue_b]
        .iter()
        .all(|v| matches!(v.status, VenueStatus::NotConfigured | VenueStatus::Fresh));
    let live = match state.live_unavailable() {
        _ if state.config.role == Role::Ingest => LiveOut {
            status: LiveStatus::NotServed,
            reason: None,
            bus: None,
            publish: publish_health(&state),
        },
        Some(why) => LiveOut {
            status: LiveStatus::Unavailable,
            reason: Some(why.to_string()),
            bus: bus_health(&state, now),
            publish: publish_health(&state),
        },
        None => LiveOut {
            status: LiveStatus::Serving,
            reason: None,
            bus: bus_health(&state, now),
            publish: publish_health(&state),
        },
    };
    let ready = store.status == StoreStatus::Ok && venues_ok && live.status != LiveStatus::Unavailable;
    let body = ReadyOut {
        status: if ready {
            ReadyStatus::Ready
        } else {
            ReadyStatus::NotReady
        },
        store,
        venues,
        ingest: IngestOut {
            role: match state.config.role {
                Role::All => RoleOut::All,
                Role::Api => RoleOut::Api,
                Role::Ingest => RoleOut::Ingest,
            },
            leader,
        },
        live,
    };
    log_readiness_change(&state, &body);
    let code = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}

/// The publisher's part of `/readyz`, in a process that may ingest and has a bus.
fn publish_health(state: &AppState) -> Option<PublishOut> {
    let p = state.publisher.as_ref()?.read();
    Some(PublishOut {
        publishing: p.publishing,
        connected: p.connected,
        term: (p.term > 0).then_some(p.term),
        published: p.published,
        dropped: p.dropped,
        last_error: p.last_error,
    })
}

/// The mirror's part of `/readyz`, in a process that mirrors the bus.
fn bus_health(state: &AppState, now: Timestamp) -> Option<BusOut> {
    let m = state.mirror.as_ref()?.read();
    let (mut books, mut stale) = (0, 0);
    for ex in [Exchange::VenueA, Exchange::VenueB] {
        let (fresh, s) = state.live.counts(ex);
        books += (fresh + s) as u64;
        stale += s as u64;
    }
    Some(BusOut {
        connected: m.connected,
        books,
        stale_books: stale,
        last_event_at: m.last_event_at.map(Timestamp::to_iso),
        lag_ms: m.last_event_at.map(|t| (now.millis() - t.millis()).max(0) as u64),
        malformed: m.malformed,
        holes: m.holes,
    })
}

/// Logs readiness when it changes, not per request: a probe's 503 is an answer about the service, not an
/// error of it. Not ready at WARN with what is wrong, ready again at INFO.
fn log_readiness_change(state: &AppState, body: &ReadyOut) {
    let ready = body.status == ReadyStatus::Ready;
    if state.readiness_changed(ready).is_none() {
        return;
    }
    if ready {
        tracing::info!("ready again: the store takes writes and every venue is fresh");
        return;
    }
    let venue = |v: &VenueHealthOut| match (v.status, &v.reason) {
        (VenueStatus::NotConfigured | VenueStatus::Fresh, _) => None,
        (_, Some(why)) => Some(why.clone()),
        (_, None) => Some(format!("{:?}", v.status)),
    };
    tracing::warn!(
        live = body.live.reason.as_deref().unwrap_or("ok"),
        store = ?body.store.status,
        store_error = body.store.last_error.as_deref().unwrap_or(""),
        venue_a = venue(&body.venues.venue_a).as_deref().unwrap_or("ok"),
        venue_b = venue(&body.venues.venue_b).as_deref().unwrap_or("ok"),
        "not ready"
    );
}

/// Prometheus metrics
///
/// Metrics in the Prometheus text format, among them `http_requests_total` and
/// `http_request_duration_seconds` labelled by `method`, route template (`route`) and `status`.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "service",
    responses((status = 200, description = "Prometheus text exposition format.", body = String, content_type = "text/plain"))
)]
async fn metrics(State(state): State<AppState>) -> Response {
    crate::metrics::set_venue_gauges(&state.health, Timestamp::now());
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        state.metrics.render(),
    )
        .into_response()
}

/// An OpenAPI 3.1 document: an object with at least `openapi`, `info` and `paths`.
pub struct OpenApiDocument;

impl PartialSchema for OpenApiDocument {
    fn schema() -> RefOr<Schema> {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["openapi", "info", "paths"],
            "properties": {
                "openapi": {"type": "string", "pattern": "^3\\.1\\."},
                "info": {"type": "object", "required": ["title", "version"]},
                "paths": {"type": "object"},
                "components": {"type": "object"},
            },
        });
        serde_json::from_value(schema).expect("a valid schema")
    }
}

impl ToSchema for OpenApiDocument {}

/// OpenAPI document
///
/// The OpenAPI 3.1 description of every route of this service, generated from the handlers.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "service",
    responses((
        status = 200,
        description = "The OpenAPI 3.1 document.",
        body = inline(OpenApiDocument),
        content_type = "application/json",
        example = json!({"openapi": "3.1.0", "info": {"title": "crossbook API", "version": "0.1.0"}, "paths": {}})
    ))
)]
async fn openapi_json() -> Response {
    ([(header::CONTENT_TYPE, JSON_CONTENT_TYPE)], crate::api::openapi_json()).into_response()
}

/// API reference
///
/// A self-contained HTML reference of every route, parameter and schema, with a form to try each GET route.
/// It loads nothing from outside the service, so it works offline.
#[utoipa::path(
    get,
    path = "/docs",
    tag = "service",
    responses((status = 200, description = "The API reference page.", body = String, content_type = "text/html"))
)]
async fn docs() -> Html<&'static str> {
    Html(crate::api::docs_html())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `h` as `/readyz` reads it at `now`, first seen then.
    fn seen(h: FeedHealth, now: Timestamp) -> (FeedHealth, Freshness, Timestamp) {
        let freshness = h.freshness(now, FRESHNESS_LIMIT);
        (h, freshness, now)
    }

    #[test]
    fn venue_states() {
        let now = Timestamp::from_millis(100_000);
        let v = |configured: bool, last: Option<i64>| {
            let h = configured.then(|| FeedHealth {
                last_message_at: last.map(Timestamp::from_millis),
                connected: true,
                books: 1,
                ..FeedHealth::default()
            });
            venue_health(h.map(|h| seen(h, now)), now).status
        };
        assert_eq!(v(false, Some(99_000)), VenueStatus::NotConfigured);
        assert_eq!(v(true, None), VenueStatus::Waiting);
        assert_eq!(v(true, Some(40_000)), VenueStatus::Fresh);
        assert_eq!(v(true, Some(39_999)), VenueStatus::Stale);
        // Fresh books with a trade tape that keeps failing: degraded, with the part named.
        let mut h = FeedHealth {
            last_message_at: Some(Timestamp::from_millis(99_000)),
            connected: true,
            books: 1,
            ..FeedHealth::default()
        };
        for _ in 0..crossbook_venues::DEGRADED_AFTER_FAILURES {
            h.part_failed(Part::Trades, "HTTP 500".into(), now);
        }
        let out = venue_health(Some(seen(h, now)), now);
        assert_eq!(out.status, VenueStatus::Degraded);
        assert_eq!(out.parts.trades.status, PartStatus::Failing);
        assert_eq!(out.parts.books.status, PartStatus::Unknown);
        assert_eq!(out.last_error.as_deref(), Some("HTTP 500"));
        assert!(out.reason.is_some_and(|r| r.starts_with("trades failing")));
    }
}
