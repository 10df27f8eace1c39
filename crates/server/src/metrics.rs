//! Prometheus metrics: the process-wide recorder and the per-request middleware.
//!
//! Requests are counted in `http_requests_total` and timed in `http_request_duration_seconds` (a histogram),
//! both labelled by `method` (a standard method, or `other`), `route` and `status`. `route` is the route template (`/v1/search/events/{event_id}/markets`)
//! from axum's `MatchedPath`, never the raw path, so label cardinality stays bounded; unmatched requests are
//! labelled `unmatched`.

use std::{sync::OnceLock, time::Instant};

use crossbook_core::{Exchange, Timestamp, book::GapCause};
use crossbook_store::WriteKind;
use crossbook_venues::VenueHealth;

use axum::{
    extract::{MatchedPath, Request},
    middleware::Next,
    response::Response,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Counter of answered requests.
pub const REQUESTS_TOTAL: &str = "http_requests_total";
/// Histogram of request latency in seconds.
pub const REQUEST_DURATION: &str = "http_request_duration_seconds";

const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The process-wide Prometheus handle, installing the recorder on first use.
///
/// A process has one global `metrics` recorder; every [`crate::AppState`] (tests build many) shares it. If
/// something else installed a recorder first, our handle still renders, just without the values recorded
/// through the other recorder; that is logged.
pub fn prometheus() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new();
            let builder =
                match builder.set_buckets_for_metric(Matcher::Full(REQUEST_DURATION.to_string()), LATENCY_BUCKETS) {
                    Ok(b) => b,
                    Err(e) => {
                        tracing::warn!(error = %e, "latency buckets rejected; using summaries");
                        PrometheusBuilder::new()
                    }
                };
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            if let Err(e) = metrics::set_global_recorder(recorder) {
                tracing::warn!(error = %e, "a metrics recorder was already installed; /metrics will miss its values");
            }
            describe();
            handle
        })
        .clone()
}

/// Middleware: counts and times each request by route template and status.
pub async fn track(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = method_label(req.method());
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |m| m.as_str().to_owned());
    let resp = next.run(req).await;
    let status = resp.status().as_u16().to_string();
    let labels = [("method", method.to_owned()), ("route", route), ("status", status)];
    metrics::counter!(REQUESTS_TOTAL, &labels).increment(1);
    metrics::histogram!(REQUEST_DURATION, &labels).record(start.elapsed().as_secs_f64());
    resp
}

/// The values a counter's label takes: every one is a fixed set, never a value a caller chooses.
#[derive(Clone, Copy)]
enum Labels {
    None,
    Venue,
    VenueAndGapCause,
    /// Per venue, and one more label with fixed values.
    VenueAnd(&'static str, &'static [&'static str]),
    WriteKind,
    Of(&'static str, &'static [&'static str]),
}

const ENDED: [&str; 3] = {
    let [a, b, c] = crate::export::Ended::ALL;
    [a.as_str(), b.as_str(), c.as_str()]
};

/// Every counter the service records, with its HELP text and its labels. Each starts at zero for every label
/// value, so an alert on `increase()` sees the first event too.
const COUNTERS: &[(&str, &str, Labels)] = &[
    (
        "crossbook_venue_reconnects_total",
        "Reconnections of a venue's feed.",
        Labels::Venue,
    ),
    (
        "crossbook_venue_seq_gaps_total",
        "Sequence gaps in a venue's feed (each one resnapshots the book).",
        Labels::Venue,
    ),
    (
        "crossbook_venue_market_limit_refusals_total",
        "Commands a venue refused for its per-connection market limit (the markets move to other sockets).",
        Labels::Venue,
    ),
    (
        "crossbook_venue_bad_deltas_total",
        "Book changes that did not apply to the book held (the book waits for a fresh snapshot).",
        Labels::Venue,
    ),
    (
        "crossbook_venue_malformed_total",
        "Venue payloads that could not be read, skipped.",
        Labels::Venue,
    ),
    (
        "crossbook_venue_watchdog_resubscribes_total",
        "Resubscriptions after a venue's feed went silent on an open connection.",
        Labels::Venue,
    ),
    (
        "crossbook_venue_data_silence_resubscribes_total",
        "Resubscriptions of a venue socket that kept answering keepalives but sent no market data for \
         feed_data_silence_seconds.",
        Labels::Venue,
    ),
    (
        "crossbook_venue_catalog_notices_total",
        "A venue's announcements of listed and resolved markets: applied to the catalog one market at a time \
         (listed, resolved), or ignored as outside what is followed.",
        Labels::VenueAnd("kind", &crossbook_venues::CATALOG_NOTICE_KINDS),
    ),
    (
        "crossbook_venue_prices_rounded_total",
        "Venue trade prices with digits below a millionth of a dollar, stored rounded half-up to a millionth.",
        Labels::VenueAnd("field", &["trade_price"]),
    ),
    (
        "crossbook_book_events_written_total",
        "Book events written to the event log.",
        Labels::Venue,
    ),
    (
        "crossbook_bus_published_total",
        "Messages the ingesting process published on the bus (bus_url).",
        Labels::None,
    ),
    (
        "crossbook_bus_dropped_total",
        "Bus events the ingesting process dropped because NATS was slow or away; readers repair from keyframes.",
        Labels::None,
    ),
    (
        "crossbook_bus_malformed_total",
        "Bus messages this process could not read and skipped.",
        Labels::None,
    ),
    (
        "crossbook_bus_holes_total",
        "Holes this process saw in the bus's book sequences or message count (books stale until their keyframe).",
        Labels::None,
    ),
    (
        "crossbook_bus_slow_consumer_total",
        "Times the NATS client dropped bus messages because this process read them too slowly.",
        Labels::None,
    ),
    (
        "crossbook_book_events_dropped_total",
        "Book events dropped because the store refused writes for longer than the write buffer holds.",
        Labels::None,
    ),
    (
        "crossbook_capture_gaps_total",
        "Capture gaps recorded in the event log, by venue and cause.",
        Labels::VenueAndGapCause,
    ),
    ("crossbook_trades_ingested_total", "New trades stored.", Labels::Venue),
    (
        "crossbook_whale_entries_total",
        "Whale trades found on tracked events.",
        Labels::Venue,
    ),
    (
        "crossbook_write_failures_total",
        "Failed writes to the store, by what was written.",
        Labels::WriteKind,
    ),
    (
        "crossbook_writes_dropped_total",
        "Items given up on after the store refused them for too long, by what was written.",
        Labels::WriteKind,
    ),
    (
        "crossbook_book_log_chunks_compacted_total",
        "Event-log chunks compacted into compressed per-book chunks.",
        Labels::None,
    ),
    (
        "crossbook_book_log_chunks_corrupt_total",
        "Event-log chunks found unreadable during compaction.",
        Labels::None,
    ),
    (
        "crossbook_replays_total",
        "Replays and exports ended, by how they ended.",
        Labels::Of("ended", &ENDED),
    ),
    (
        "crossbook_backtests_total",
        "Backtests ended, by status: done, failed, or deleted while they ran.",
        Labels::Of("status", &["done", "failed", "deleted"]),
    ),
    (
        "crossbook_replay_messages_total",
        "Messages sent by replays and exports.",
        Labels::None,
    ),
    (
        "crossbook_replay_corrupt_chunks_total",
        "Stored chunks a replay could not read (sent as `unreadable` gaps).",
        Labels::None,
    ),
    (
        "crossbook_arbitrage_scanner_lagged_total",
        "Times the arbitrage scanner fell behind the bus and rescanned every pair.",
        Labels::None,
    ),
    (
        "crossbook_whale_tracker_lagged_total",
        "Trades the whale tracker missed because it fell behind the bus.",
        Labels::None,
    ),
    (
        "crossbook_webhook_deliveries_total",
        "Webhook delivery attempts, by outcome.",
        Labels::Of("outcome", &crate::workers::webhooks::DELIVERY_OUTCOMES),
    ),
    (
        "crossbook_stream_messages_total",
        "Messages written to live-stream clients.",
        Labels::None,
    ),
    (
        "crossbook_stream_slow_consumers_total",
        "Live-stream connections cut because the client read too slowly.",
        Labels::None,
    ),
    (
        "crossbook_stream_lagged_total",
        "Times the live stream fell behind the bus (its sessions got fresh snapshots).",
        Labels::None,
    ),
    (
        "crossbook_stream_resumes_total",
        "Live-stream resumptions, by whether the missed messages were replayed or the session reset.",
        Labels::Of("result", &crate::stream::hub::RESUME_RESULTS),
    ),
    (
        "crossbook_stream_resumes_elsewhere_total",
        "Live-stream resumptions of a session opened on another api process, by whether the missed messages were replayed from the bus, the session reset (its messages past the bus's window), or no such session was shared (unknown, expired, or another customer's).",
        Labels::Of("result", &crate::stream::shared::ELSEWHERE_RESULTS),
    ),
    (
        "crossbook_stream_sessions_evicted_total",
        "Disconnected live-stream sessions dropped before their resume window ended, because their customer held more sessions than its plan allows.",
        Labels::None,
    ),
];

/// Gauges and histograms: HELP text only (they have a value from their first use).
const GAUGES: &[(&str, &str)] = &[
    (
        "crossbook_ingest_leader",
        "1 while this process holds the ingest role, else 0.",
    ),
    ("crossbook_arbitrage_opportunities", "Arbitrage opportunities open now."),
    ("crossbook_replay_streams", "Replays and exports being sent now."),
    ("crossbook_stream_connections", "Open live-stream connections."),
    (
        "crossbook_stream_sessions",
        "Live-stream sessions held (connected, or kept for resumption).",
    ),
    (
        VENUE_CONNECTED,
        "1 while the venue's feed is connected (or its last poll succeeded), else 0.",
    ),
    (
        VENUE_CONNECTIONS,
        "WebSocket connections the venue's markets are spread over, by state: connected or disconnected.",
    ),
    (
        VENUE_DATA_AGE,
        "Seconds since the venue's last message (absent before the first).",
    ),
    (VENUE_BOOKS, "Books of the venue held in memory."),
    (
        VENUE_STALE_BOOKS,
        "Books of the venue held but waiting for a fresh snapshot.",
    ),
    (
        VENUE_BOOKS_MISSING,
        "Books of the venue followed that the venue has not sent though asked several times (nothing of them is captured; a connection may follow more than the venue allows).",
    ),
];

const HISTOGRAMS: &[(&str, &str)] = &[
    (
        REQUEST_DURATION,
        "HTTP request latency in seconds, by method, route template and status.",
    ),
    (
        "crossbook_arbitrage_scan_seconds",
        "Duration of a full arbitrage scan pass.",
    ),
    (
        "crossbook_arbitrage_reprice_seconds",
        "Duration of re-pricing the pairs of one changed book.",
    ),
];

const VENUE_CONNECTED: &str = "crossbook_venue_connected";
const VENUE_CONNECTIONS: &str = "crossbook_venue_connections";
const VENUE_DATA_AGE: &str = "crossbook_venue_data_age_seconds";
const VENUE_BOOKS: &str = "crossbook_venue_books";
const VENUE_STALE_BOOKS: &str = "crossbook_venue_stale_books";
const VENUE_BOOKS_MISSING: &str = "crossbook_venue_books_missing";

/// Gives every metric its HELP text and starts every counter at zero (once per process).
fn describe() {
    metrics::describe_counter!(
        REQUESTS_TOTAL,
        "HTTP requests answered, by method, route template and status."
    );
    for &(name, help) in GAUGES {
        metrics::describe_gauge!(name, help);
    }
    for &(name, help) in HISTOGRAMS {
        metrics::describe_histogram!(name, help);
    }
    for &(name, help, labels) in COUNTERS {
        metrics::describe_counter!(name, help);
        let venues = Exchange::ALL.map(Exchange::as_str);
        match labels {
            Labels::None => metrics::counter!(name).increment(0),
            Labels::Venue => {
                for v in venues {
                    metrics::counter!(name, "venue" => v).increment(0);
                }
            }
            Labels::VenueAndGapCause => {
                for v in venues {
                    for c in GapCause::ALL {
                        metrics::counter!(name, "venue" => v, "cause" => c.as_str()).increment(0);
                    }
                }
            }
            Labels::VenueAnd(label, values) => {
                for v in venues {
                    for &value in values {
                        metrics::counter!(name, "venue" => v, label => value).increment(0);
                    }
                }
            }
            Labels::WriteKind => {
                for k in WriteKind::ALL {
                    metrics::counter!(name, "kind" => k.as_str()).increment(0);
                }
            }
            Labels::Of(label, values) => {
                for &v in values {
                    metrics::counter!(name, label => v).increment(0);
                }
            }
        }
    }
}

/// Sets the per-venue gauges from the feed health as it is now, so alerts need not read `/readyz`. A venue
/// this process does not ingest from has none.
pub fn set_venue_gauges(health: &VenueHealth, now: Timestamp) {
    for (ex, h) in health.snapshot() {
        let v = ex.as_str();
        metrics::gauge!(VENUE_CONNECTED, "venue" => v).set(if h.connected { 1.0 } else { 0.0 });
        let c = &h.connections;
        metrics::gauge!(VENUE_CONNECTIONS, "venue" => v, "state" => "connected").set(c.connected as f64);
        metrics::gauge!(VENUE_CONNECTIONS, "venue" => v, "state" => "disconnected")
            .set(c.total.saturating_sub(c.connected) as f64);
        if let Some(at) = h.last_message_at {
            let age_ms = (now.millis() - at.millis()).max(0);
            metrics::gauge!(VENUE_DATA_AGE, "venue" => v).set(age_ms as f64 / 1000.0);
        }
        metrics::gauge!(VENUE_BOOKS, "venue" => v).set(h.books as f64);
        metrics::gauge!(VENUE_STALE_BOOKS, "venue" => v).set(h.stale_books as f64);
        metrics::gauge!(VENUE_BOOKS_MISSING, "venue" => v).set(h.books_missing() as f64);
    }
}

/// The `method` label: a standard method by name, anything else `other`. Clients choose the method freely, and
/// each distinct label value is a new series (counter and histogram buckets) held for the process's life.
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}
