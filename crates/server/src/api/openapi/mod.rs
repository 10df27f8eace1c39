//! The OpenAPI 3.1 document of every route, generated from the routers the server serves, and what is built
//! from it:
//!
//! - this module merges the routers' documents, adds the introduction (access per route group from the gating
//!   table), the common error responses and headers, and folds the unversioned aliases into their `/v1` routes;
//! - [`param_docs`]: an example of every parameter, and the bounds of body fields documented apart from their
//!   parser;
//! - [`examples`]: the recorded example of every successful JSON response (`examples.json`);
//! - [`docs`]: the `/docs` reference page rendered from the document.

mod docs;
mod examples;
mod param_docs;

use std::sync::LazyLock;

use serde_json::{Value, json};
use utoipa::OpenApi;

use super::{api_routes, service_routes, webhooks};
use crossbook_core::Plan;

use crate::{
    access::{self, PlanTable, RouteGroup},
    config::Config,
    error::ErrorBody,
};

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
            access::Access::Plan(Plan::Free) => "any valid key (401 without one)".to_string(),
            access::Access::Plan(p) => format!("the {} plan (401 without a key, 403 below the plan)", p.display_name()),
        };
        access.push_str(&format!("| {} | {a} |\n", g.label()));
    }
    // The rates of the default configuration, from the plans table.
    let defaults = PlanTable::from_config(&Config::default());
    let anonymous = defaults.anonymous_rate_per_minute;
    let [free, builder, trader] = Plan::ALL.map(|p| defaults.of(p).rate_per_minute);
    format!(
        "Search, historical order books, cross-venue arbitrage, whale tracking and webhooks over two \
prediction-market venues, `venue_a` and `venue_b`.\n\n\
## Authentication\n\nSend your API key in the `X-API-Key` header.\n\n{access}\n\
## Rate limits\n\nA token bucket per key, or per client IP without a key: by default {anonymous} requests per \
minute anonymous, {free} free, {builder} builder, {trader} trader. Responses carry `X-RateLimit-Limit` (the per-minute rate) and \
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
