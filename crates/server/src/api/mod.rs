//! The HTTP API: one module per area of the spec, each with its own router; this module merges them and adds
//! the layers every response goes through. [`openapi`] builds the OpenAPI document and the `/docs` page from
//! the same routers.
//!
//! # Adding a route area
//!
//! 1. Write `api/<area>.rs` with its `*Out` DTOs (`utoipa::ToSchema`), its parameter structs (`FromQuery` +
//!    `utoipa::IntoParams`), handlers annotated with `#[utoipa::path]` at their `/v1/...` path, and
//!    `pub fn router() -> OpenApiRouter<AppState>`. Wrap a route in [`also_unversioned`] when contracts §9 says
//!    it also answers without `/v1` (search, historical, arbitrage).
//!    A parameter's range, default, spellings and text rules go in its field's type (`Limit<30, 100>`,
//!    `Defaulted<Status>`, `Text`, ...; see [`crate::params`]), which both reads it and documents it, not in
//!    `#[param(maximum = .., default = ..)]` literals.
//! 2. Gate each handler with [`crate::access::Gate`] for its [`crate::access::RouteGroup`]; what a plan may do
//!    beyond the gate (a window, a count) is asked of [`crate::access::plans`].
//! 3. Merge the router in `api_routes()` below. It is then served behind [`crate::access::authenticate`] (caller
//!    resolution and rate limits), documented in `/openapi.json` and `/docs` with the common error responses,
//!    and measured in `/metrics`.

pub mod arbitrage;
pub mod backtests;
pub mod common;
pub mod export;
pub mod historical;
pub mod ohlcv;
pub mod openapi;
pub mod replay;
pub mod search;
pub mod service;
pub mod stream;
pub mod webhooks;
pub mod whales;

use std::any::Any;

use axum::{
    Router,
    extract::{DefaultBodyLimit, FromRef, Request},
    http::{StatusCode, Uri, header},
    middleware::{Next, from_fn, from_fn_with_state},
    response::{IntoResponse, Response},
};
use tower_http::{
    catch_panic::CatchPanicLayer,
    limit::RequestBodyLimitLayer,
    request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer},
    sensitive_headers::SetSensitiveRequestHeadersLayer,
    trace::{DefaultOnResponse, TraceLayer},
};
use utoipa::openapi::{extensions::ExtensionsBuilder, path::Operation};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

use crate::{
    AppState,
    access::{self, Gatekeeper, X_API_KEY},
    config::Role,
    error::{self, ApiError, Enveloped, ErrorRendered},
};

pub use self::openapi::{docs_html, openapi, openapi_json};
pub use crate::BODY_LIMIT;

/// The API routes of the spec: behind [`access::authenticate`] (rate limited), documented with the common
/// error responses. Later areas (historical, arbitrage, whales, webhooks) are merged here.
pub(crate) fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(search::router())
        .merge(historical::router())
        .merge(ohlcv::router())
        .merge(replay::router())
        .merge(export::router())
        .merge(whales::router())
        .merge(arbitrage::router())
        .merge(webhooks::router())
        .merge(backtests::router())
        .merge(stream::router())
}

/// The service routes: no key, no rate limit, not versioned.
pub(crate) fn service_routes() -> OpenApiRouter<AppState> {
    service::router()
}

/// The whole application: the service routes, the API routes and the dashboard (unless this process only
/// ingests), the fallback 404 and the common layers.
pub fn app(state: AppState) -> Router {
    let (service, _) = service_routes().split_for_parts();
    let mut router = service;
    if state.config.role != Role::Ingest {
        let (api, _) = api_routes().split_for_parts();
        router = router.merge(with_auth(api, &state));
        // The dashboard is a client of these routes, so it is served where they are.
        router = router.merge(crate::dashboard::router());
    }
    with_common_layers(router, state)
}

/// Puts routes behind [`access::authenticate`]: the caller is resolved once and rate limited, and responses
/// carry `X-RateLimit-*`. Only requests that match a route go through it.
pub fn with_auth(router: Router<AppState>, state: &AppState) -> Router<AppState> {
    router.route_layer(from_fn_with_state(Gatekeeper::from_ref(state), access::authenticate))
}

/// Adds the fallback 404 and the layers every response goes through, outermost first:
///
/// 1. `X-Request-Id`: taken from the request or generated (UUID v4), and set on every response, errors included.
/// 2. `X-API-Key` marked sensitive, so traces never print it.
/// 3. Tracing: one span per request with its id.
/// 4. Metrics by route template and status.
/// 5. Error bodies made by the framework (404, 405 with `Allow`, 413, 415, 400/422) rewritten into ours, and
///    on webhook paths every error body put into the envelope (see [`normalize_errors`]).
/// 6. 404 and 405 answers charged to the caller's rate limit ([`access::limit_unrouted`]).
/// 7. A request body cut by the listener's body timeout answered 408 `request_timeout`
///    ([`crate::http::answer_body_timeout`]).
/// 8. Panics caught and answered as 500 `internal`.
/// 9. The 64 KiB body limit.
pub fn with_common_layers(router: Router<AppState>, state: AppState) -> Router {
    // `Router::layer` wraps what is already there, so the innermost layer comes first. Each call re-boxes the
    // service, which keeps the layers' body types independent of each other.
    router
        .fallback(unknown_route)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(from_fn(crate::http::answer_body_timeout))
        .layer(from_fn_with_state(Gatekeeper::from_ref(&state), access::limit_unrouted))
        .layer(from_fn(normalize_errors))
        .layer(from_fn(crate::metrics::track))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    let id = req
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-");
                    tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
                })
                // Requests at DEBUG: at INFO the log is about the data (opportunities, whales, venues), not
                // every call.
                .on_response(DefaultOnResponse::new().level(tracing::Level::DEBUG))
                // No log per 5xx here: each is logged where it is made (an internal error at ERROR, the store
                // unavailable at WARN), and `/readyz` answers 503 by design, logging only its changes.
                .on_failure(()),
        )
        .layer(SetSensitiveRequestHeadersLayer::new([X_API_KEY]))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .with_state(state)
}

/// 404 for any path no route matches.
async fn unknown_route(uri: Uri) -> ApiError {
    ApiError::not_found(format!("no route for {}", uri.path()))
}

/// Answers a panic with the generic 500 body; the panic message goes to the log only.
fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let msg = if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    };
    ApiError::internal(anyhow::anyhow!("handler panicked: {msg}")).into_response()
}

/// Rewrites error responses made by axum or tower-http (plain-text or empty bodies) into our error body,
/// keeping their status. Responses rendered by [`ApiError`] and JSON responses pass untouched, except on the
/// webhook paths ([`webhooks::is_webhook_path`]): there every error, whoever made it (body limit, method
/// router, fallback, authentication and rate limit, a caught panic), is answered in the envelope of spec 2.14
/// with its status and headers. This is the one place that decides which paths get the envelope.
///
/// This layer runs inside axum's method router (every `Router::layer` does), so on a 405 the `Allow` header
/// is not set yet: the body says to look at it, and axum adds it on the way out.
async fn normalize_errors(req: Request, next: Next) -> Response {
    let envelope = webhooks::is_webhook_path(req.uri().path());
    let resp = normalize_error(next.run(req).await, envelope).await;
    if envelope { error::into_envelope(resp) } else { resp }
}

/// The body of one response for [`normalize_errors`]: a framework-made error becomes an [`ApiError`],
/// rendered in the envelope when `envelope` is set.
async fn normalize_error(resp: Response, envelope: bool) -> Response {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"));
    // Ours (marked), or a handler's deliberate JSON answer (e.g. `/readyz` 503): leave it.
    if resp.extensions().get::<ErrorRendered>().is_some()
        || is_json
        || !(status.is_client_error() || status.is_server_error())
    {
        return resp;
    }
    let err = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = resp
                .headers()
                .get(header::ALLOW)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            ApiError::MethodNotAllowed { allow }
        }
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType,
        StatusCode::NOT_FOUND => ApiError::not_found("not found"),
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => {
            let text = axum::body::to_bytes(resp.into_body(), 4096)
                .await
                .ok()
                .and_then(|b| String::from_utf8(b.to_vec()).ok())
                .filter(|t| !t.trim().is_empty())
                .unwrap_or_else(|| "invalid request".to_string());
            ApiError::invalid_request(text)
        }
        s if s.is_server_error() => ApiError::internal(anyhow::anyhow!("a layer answered {s} without a body")),
        _ => return resp,
    };
    if envelope {
        Enveloped(err).into_response()
    } else {
        err.into_response()
    }
}

/// Registers routes at their documented `/v1/...` paths and also without the prefix. The alias shares the
/// handler. Its operation is marked `x-alias-of` (naming the `/v1` path) only until the document is built,
/// which folds it into the original ([`openapi`]): utoipa-axum routes every path of the document it is given, so the
/// alias must be there while routing, but documented as an operation of its own it would make client
/// generators emit every method and enum twice.
pub fn also_unversioned(routes: UtoipaMethodRouter<AppState>) -> UtoipaMethodRouter<AppState> {
    let (schemas, mut paths, method_router) = routes;
    let aliases: Vec<_> = paths
        .paths
        .iter()
        .filter_map(|(path, item)| {
            let bare = path.strip_prefix("/v1")?;
            let mut item = item.clone();
            for op in operations_mut(&mut item) {
                op.extensions
                    .get_or_insert_with(Default::default)
                    .merge(ExtensionsBuilder::new().add("x-alias-of", path.as_str()).build());
            }
            Some((bare.to_string(), item))
        })
        .collect();
    paths.paths.extend(aliases);
    (schemas, paths, method_router)
}

fn operations_mut(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}
