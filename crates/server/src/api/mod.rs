//! The HTTP API: one module per area of the spec, each with its own router; this module merges them, adds the
//! layers every response goes through, and builds the OpenAPI document from the same routers.
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
pub mod common;
pub mod docs;
mod examples;
pub mod export;
pub mod historical;
pub mod ohlcv;
mod param_docs;
pub mod replay;
pub mod search;
pub mod service;
pub mod stream;
pub mod webhooks;
pub mod whales;

use std::{any::Any, sync::LazyLock};

use axum::{
    Router,
    extract::{DefaultBodyLimit, FromRef, Request},
    http::{StatusCode, Uri, header},
    middleware::{Next, from_fn, from_fn_with_state},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use tower_http::{
    catch_panic::CatchPanicLayer,
    limit::RequestBodyLimitLayer,
    request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer},
    sensitive_headers::SetSensitiveRequestHeadersLayer,
    trace::{DefaultOnResponse, TraceLayer},
};
use utoipa::{
    OpenApi,
    openapi::{extensions::ExtensionsBuilder, path::Operation},
};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

use crate::{
    AppState,
    access::{self, Gatekeeper, RouteGroup, X_API_KEY},
    config::Role,
    error::{self, ApiError, Enveloped, ErrorBody, ErrorRendered},
};

pub use crate::BODY_LIMIT;

/// The API routes of the spec: behind [`access::authenticate`] (rate limited), documented with the common
/// error responses. Later areas (historical, arbitrage, whales, webhooks) are merged here.
fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(search::router())
        .merge(historical::router())
        .merge(ohlcv::router())
        .merge(replay::router())
        .merge(export::router())
        .merge(whales::router())
        .merge(arbitrage::router())
        .merge(webhooks::router())
        .merge(stream::router())
}

/// The service routes: no key, no rate limit, not versioned.
fn service_routes() -> OpenApiRouter<AppState> {
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
/// handler. Its operation is marked `x-alias-of` (naming the `/v1` path) only until [`build_openapi`] folds it
/// into the original ([`fold_aliases`]): utoipa-axum routes every path of the document it is given, so the
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

/// The parts of the document that no handler owns: schemas of the error body and the key scheme.
#[derive(OpenApi)]
#[openapi(components(schemas(ErrorBody)))]
struct BaseDoc;

/// The OpenAPI 3.1 document of every route, generated from the handlers' annotations and types.
pub fn openapi() -> &'static Value {
    static DOC: LazyLock<Value> = LazyLock::new(build_openapi);
    &DOC
}

/// [`openapi`] serialised, as served at `/openapi.json`.
pub fn openapi_json() -> &'static str {
    static JSON: LazyLock<String> =
        LazyLock::new(|| serde_json::to_string_pretty(openapi()).expect("a JSON value serialises"));
    &JSON
}

/// The reference page served at `/docs`, rendered once from [`openapi`].
pub fn docs_html() -> &'static str {
    static HTML: LazyLock<String> = LazyLock::new(|| docs::render(openapi()));
    &HTML
}

fn build_openapi() -> Value {
    let api = api_routes().into_openapi();
    let api_paths: Vec<String> = api.paths.paths.keys().cloned().collect();
    let mut doc = BaseDoc::openapi();
    doc.merge(api);
    doc.merge(service_routes().into_openapi());
    let mut v = serde_json::to_value(&doc).expect("the OpenAPI document serialises");
    v["info"] = json!({
        "title": "crossbook API",
        "version": env!("CARGO_PKG_VERSION"),
        "description": description(),
        "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
    });
    // The service is self-hosted, so no address is canonical: the default listen address is what a client
    // generated from this document calls unless told otherwise.
    v["servers"] = json!([
        {"url": "http://127.0.0.1:8080", "description": "A local crossbook at the default listen address (`crossbook serve --listen` changes it)."}
    ]);
    v["tags"] = json!([
        {"name": "search", "description": "Text search over series, events and markets, and the recently ingested ones. Public; a key is optional."},
        {"name": "historical", "description": "Order-book snapshots from storage: the latest, or a range downsampled to 1m/5m buckets, with cursor pages. Any valid key."},
        {"name": "whales", "description": "Whale trades: the personal watchlist, feed and stats (any valid key, no /v1 prefix) and the public preview feed and catalog over the daily pool (/v1 only; a key is optional, Builder and Trader unlock the whole pool)."},
        {"name": "arbitrage", "description": "Fee-adjusted cross-venue arbitrage from the live books (any valid key), price spreads (Trader) and the recorded episode history (preview below Trader)."},
        {"name": "webhooks", "description": "Signed outbound webhooks (`whale.entry`, `arbitrage.opportunity`): one callback URL per type per customer, its delivery log and a test delivery. Any valid key reads; writing needs Builder (whale) or Trader (arbitrage). Every answer is the envelope `{success, message, data}`, errors included (`success: false`, `data: null`, plus the usual `detail` and `code`): also 401, 404 for unknown paths under `/v1/webhooks/`, 405 with `Allow`, 413, 415 and 429 with `Retry-After`. The test delivery answers 200 whenever the attempt was made; its `success` is whether the receiver accepted it. `/v1` only."},
        {"name": "stream", "description": "The live stream: a WebSocket of order-book changes, trades, opportunities, whale trades and the venues' status as they happen. Books, trades and status need any key, whales the Builder plan, arbitrage the Trader plan; the live stream guide of the documentation (docs/live-stream.md) describes every message."},
        {"name": "service", "description": "Health, readiness, metrics and this documentation. No key, no rate limit."},
    ]);
    add_components(&mut v);
    let Some(paths) = v["paths"].as_object_mut() else {
        return v;
    };
    for (path, item) in paths.iter_mut() {
        let is_api = api_paths.contains(path);
        let envelope = webhooks::is_webhook_path(path);
        let Some(item) = item.as_object_mut() else { continue };
        for op in item.values_mut().filter(|op| op.is_object()) {
            add_common_responses(op, is_api, envelope);
        }
    }
    fold_aliases(&mut v);
    param_docs::apply(&mut v);
    examples::apply(&mut v);
    v
}

/// Removes the unversioned aliases from the document and says on each `/v1` operation where else it answers
/// (in its description, and as `x-also-at` for tools).
fn fold_aliases(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    let aliases: Vec<(String, String)> = paths
        .iter()
        .filter_map(|(path, item)| {
            let original = item.as_object()?.values().find_map(|op| op["x-alias-of"].as_str())?;
            Some((path.clone(), original.to_string()))
        })
        .collect();
    for (alias, original) in aliases {
        paths.remove(&alias);
        let Some(item) = paths.get_mut(&original).and_then(Value::as_object_mut) else {
            continue;
        };
        for op in item.values_mut().filter(|op| op.is_object()) {
            let note = format!("Also answers at `{alias}`, without the `/v1` prefix.");
            op["description"] = match op["description"].as_str() {
                Some(d) => Value::from(format!("{d}\n\n{note}")),
                None => Value::from(note),
            };
            op["x-also-at"] = Value::from(alias.as_str());
        }
    }
}

/// The introduction of the document: authentication, access per route group (from the gating table),
/// errors, limits and versioning.
fn description() -> String {
    let mut access = String::from("| Route group | Access |\n|---|---|\n");
    for g in RouteGroup::ALL {
        let a = match g.access() {
            access::Access::Public => "public; a key is optional, an invalid key counts as none".to_string(),
            access::Access::Preview { full_from } => {
                format!(
                    "public in preview mode; full with a {} plan or higher",
                    full_from.display_name()
                )
            }
            access::Access::Plan(crossbook_core::Plan::Free) => "any valid key (401 without one)".to_string(),
            access::Access::Plan(p) => format!("the {} plan (401 without a key, 403 below the plan)", p.display_name()),
        };
        access.push_str(&format!("| {} | {a} |\n", g.label()));
    }
    format!(
        "Search, historical order books, cross-venue arbitrage, whale tracking and webhooks over two \
prediction-market venues, `venue_a` and `venue_b`.\n\n\
## Authentication\n\nSend your API key in the `X-API-Key` header.\n\n{access}\n\
## Rate limits\n\nA token bucket per key, or per client IP without a key: by default 60 requests per minute \
anonymous, 120 free, 600 builder, 3000 trader. Responses carry `X-RateLimit-Limit` (the per-minute rate) and \
`X-RateLimit-Remaining`; over the limit the answer is 429 with `Retry-After` in seconds.\n\n\
## Errors\n\nEvery error has the body `{{\"detail\", \"code\", \"param\"?}}` (`required_plan` on 403). Unknown \
routes answer 404 `not_found`; a known path with another method 405 `method_not_allowed` with `Allow`; bodies \
over 64 KiB 413 `payload_too_large`; non-JSON bodies 415 `unsupported_media_type`; a body still arriving 30 s (by default) after the headers 408 \
`request_timeout`. On the webhook routes \
(`/v1/webhooks` and every path under it) every error, these included, is the same body inside the envelope \
`{{\"success\": false, \"message\": <detail>, \"data\": null, ...}}` (schema `WebhookErrorBody`).\n\n\
## Conventions\n\nTimes in bodies are ISO 8601 UTC with milliseconds (`2026-11-21T19:15:00.000Z`); query \
times accept RFC 3339, ISO 8601 without offset (UTC) or a bare date. Unknown query parameters are ignored; \
invalid or empty values are errors, never clamped. Every response carries `X-Request-Id`.\n\n\
## Versioning\n\nRoutes are documented under `/v1`; search, historical and arbitrage routes also answer \
without the prefix."
    )
}

fn error_response(description: &str, example: Value) -> Value {
    json!({
        "description": description,
        "headers": {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}, "example": example}}
    })
}

fn add_components(v: &mut Value) {
    let components = &mut v["components"];
    components["securitySchemes"] = json!({
        "api_key": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                    "description": "An API key: `cbk_` followed by 32 letters and digits."}
    });
    components["headers"] = json!({
        "X-Request-Id": {"description": "The request id: echoed from the request, or generated.", "schema": {"type": "string"}},
        "X-RateLimit-Limit": {"description": "The caller's rate, requests per minute.", "schema": {"type": "integer"}},
        "X-RateLimit-Remaining": {"description": "Requests left in the caller's bucket.", "schema": {"type": "integer"}},
        "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}},
    });
    let mut rate_limited = error_response(
        "Over the caller's rate limit.",
        json!({"detail": "rate limit exceeded; retry in 12 s", "code": "rate_limited"}),
    );
    rate_limited["headers"]["Retry-After"] = json!({"$ref": "#/components/headers/Retry-After"});
    rate_limited["headers"]["X-RateLimit-Limit"] = json!({"$ref": "#/components/headers/X-RateLimit-Limit"});
    rate_limited["headers"]["X-RateLimit-Remaining"] = json!({"$ref": "#/components/headers/X-RateLimit-Remaining"});
    let responses = json!({
        "BadRequest": error_response(
            "A parameter is invalid (`invalid_parameter`) or missing (`missing_parameter`); `param` names it.",
            json!({"detail": "limit must be an integer from 1 to 100", "code": "invalid_parameter", "param": "limit"}),
        ),
        "Unauthorized": error_response(
            "No API key in `X-API-Key`, or a key that is unknown or revoked.",
            json!({"detail": "this route requires an API key in the X-API-Key header", "code": "unauthorized"}),
        ),
        "RateLimited": rate_limited,
        "Internal": error_response("A bug; the message never carries internals.", json!({"detail": "internal error", "code": "internal"})),
        "Unavailable": error_response(
            "The database cannot take the request now: it is unreachable (the answer comes within \
             `database_acquire_timeout_ms`, 500 ms by default), out of space, or locked for too long. Nothing \
             was changed; retry shortly. `/readyz` says which.",
            json!({"detail": "the service is temporarily unavailable; retry shortly", "code": "unavailable"}),
        ),
    });
    // The webhook routes answer the same errors in the envelope (`WebhookErrorBody`).
    let body_errors = json!({
        "PayloadTooLarge": error_response(
            "The request body is over 64 KiB.",
            json!({"detail": "request body is larger than 64 KiB", "code": "payload_too_large"}),
        ),
        "UnsupportedMediaType": error_response(
            "The request body is not JSON (`Content-Type: application/json`).",
            json!({"detail": "request body must be JSON (Content-Type: application/json)", "code": "unsupported_media_type"}),
        ),
    });
    let mut all = responses.as_object().cloned().unwrap_or_default();
    all.extend(body_errors.as_object().cloned().unwrap_or_default());
    for (name, resp) in responses
        .as_object()
        .into_iter()
        .chain(body_errors.as_object())
        .flatten()
    {
        all.insert(format!("Webhook{name}"), enveloped_response(resp));
    }
    components["responses"] = Value::Object(all);
}

/// The webhook form of a reusable error response: the `WebhookErrorBody` schema and the example in the envelope.
fn enveloped_response(flat: &Value) -> Value {
    let mut resp = flat.clone();
    let media = &mut resp["content"]["application/json"];
    media["schema"] = json!({"$ref": "#/components/schemas/WebhookErrorBody"});
    let mut example = json!({"success": false, "message": media["example"]["detail"], "data": null});
    if let (Some(e), Some(rest)) = (example.as_object_mut(), media["example"].as_object()) {
        e.extend(rest.clone());
    }
    media["example"] = example;
    resp
}

/// Adds the responses every operation can give, and the headers every response carries: 401 where a key is
/// required, 413 and 415 where a body is read. On webhook routes (`envelope`) the errors are the enveloped
/// ones, and the body limit (413) is listed on every operation, as the envelope covers every request there.
fn add_common_responses(op: &mut Value, is_api: bool, envelope: bool) {
    let has_params = op["parameters"].as_array().is_some_and(|p| !p.is_empty());
    let has_body = op.get("requestBody").is_some();
    // `security: [{"api_key": []}]` requires a key; an empty alternative (`{}`) makes it optional.
    let needs_key = op["security"]
        .as_array()
        .is_some_and(|alts| !alts.is_empty() && alts.iter().all(|a| a.as_object().is_some_and(|o| !o.is_empty())));
    let Some(responses) = op["responses"].as_object_mut() else {
        return;
    };
    for (status, resp) in responses.iter_mut() {
        if resp.get("$ref").is_some() {
            continue;
        }
        let headers = &mut resp["headers"];
        headers["X-Request-Id"] = json!({"$ref": "#/components/headers/X-Request-Id"});
        if is_api && status.starts_with('2') {
            headers["X-RateLimit-Limit"] = json!({"$ref": "#/components/headers/X-RateLimit-Limit"});
            headers["X-RateLimit-Remaining"] = json!({"$ref": "#/components/headers/X-RateLimit-Remaining"});
        }
    }
    let prefix = if envelope { "Webhook" } else { "" };
    let mut add = |status: &str, name: &str| {
        responses
            .entry(status)
            .or_insert_with(|| json!({"$ref": format!("#/components/responses/{prefix}{name}")}));
    };
    if is_api {
        if has_params {
            add("400", "BadRequest");
        }
        if needs_key {
            add("401", "Unauthorized");
        }
        add("429", "RateLimited");
        add("503", "Unavailable");
    }
    add("500", "Internal");
    if envelope || has_body {
        add("413", "PayloadTooLarge");
    }
    if has_body {
        add("415", "UnsupportedMediaType");
    }
}
