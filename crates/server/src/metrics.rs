//! Prometheus metrics: the process-wide recorder and the per-request middleware.
//!
//! Requests are counted in `http_requests_total` and timed in `http_request_duration_seconds` (a histogram),
//! both labelled by `method` (a standard method, or `other`), `route` and `status`. `route` is the route template (`/v1/search/events/{event_id}/markets`)
//! from axum's `MatchedPath`, never the raw path, so label cardinality stays bounded; unmatched requests are
//! labelled `unmatched`.

use std::{sync::OnceLock, time::Instant};

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
