//! Webhooks (spec §2.14, §4.5, §5.6; contracts §8): register, read, change and delete the caller's callback
//! URL per type (`whale`, `arbitrage`), read its delivery log and send a test delivery. `/v1` only.
//!
//! Every answer, errors included, is the envelope of spec 2.14 (`success`, `message`, `data`); errors add the
//! usual `detail`/`code`/`param` (see [`Enveloped`]). Registrations belong to the customer behind the key, so
//! every key of a customer sees the same ones.
//!
//! Access (contracts §3): reading, listing, deleting and the delivery log need any valid key; POST, PUT and
//! the test delivery need the plan of the type (whale: Builder, arbitrage: Trader). The type is a path
//! segment, so those handlers admit the caller with a key first and then apply
//! [`RouteGroup::webhook_write`] once the type is known: 401, then 400 for an unknown type, then 403.
//!
//! URLs are checked by [`crate::webhooks::ssrf`] (400 `url_not_allowed`); delivery itself is the dispatcher's
//! (`workers::webhooks`). Changes are signalled to this process's dispatcher at once.

use axum::{extract::State, http::StatusCode};
use crossbook_core::{Plan, Timestamp};
use crossbook_store::{Delivery, Webhook, WebhookKind};
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{RefOr, Schema},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppState,
    access::{Gate, RouteGroup, groups},
    api::common::iso,
    error::{ApiError, ApiResult, Enveloped, ErrorCode},
    json::Json,
    params::Path,
    webhooks::{self, Target, ssrf::MAX_URL_LEN},
};

/// Attempts returned by the delivery log.
pub const DELIVERIES_SHOWN: u32 = 100;

/// The path of the webhook area; it and every path under it answer in the envelope.
pub const PATH_PREFIX: &str = "/v1/webhooks";

/// Whether `path` is a webhook path (`/v1/webhooks` or under `/v1/webhooks/`), whose every answer, errors
/// included, is the envelope of spec 2.14.
pub fn is_webhook_path(path: &str) -> bool {
    path.strip_prefix(PATH_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The webhook routes.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks))
        .routes(routes!(get_webhook, create_webhook, update_webhook, delete_webhook))
        .routes(routes!(list_deliveries))
        .routes(routes!(test_webhook))
}

type Result<T> = std::result::Result<T, Enveloped>;

// ------------------------------------------------------------------------------------------------ outputs

/// A webhook registration.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookOut {
    /// Registration identifier.
    #[schema(examples("wh_12"))]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: WebhookKind,
    /// Registered callback URL.
    pub url: String,
    /// Shared signing secret (64 lowercase hex characters); the HMAC key is its UTF-8 bytes. Returned on every
    /// GET, POST and PUT.
    pub secret: String,
    /// Whether deliveries are active.
    pub enabled: bool,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
}

impl From<&Webhook> for WebhookOut {
    fn from(w: &Webhook) -> Self {
        WebhookOut {
            id: public_id(w.id),
            kind: w.kind,
            url: w.url.clone(),
            secret: w.secret.clone(),
            enabled: w.enabled,
            created_at: iso(w.created_at),
            updated_at: iso(w.updated_at),
        }
    }
}

fn public_id(id: i64) -> String {
    format!("wh_{id}")
}

/// One delivery attempt.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryOut {
    /// The `Service-Webhook-Id` the attempt was sent with.
    #[schema(examples("msg_8f0c2b1e4a5d4c3b9a7e6f5d4c3b2a19"))]
    pub id: String,
    /// `whale.entry`, `arbitrage.opportunity` or `webhook.test`.
    pub event_type: String,
    /// The receiver's HTTP status; null when it did not answer (or was not contacted).
    #[schema(required = true)]
    pub status_code: Option<u16>,
    /// Time to the receiver's response headers (or to the failure).
    pub latency_ms: i64,
    /// Why the attempt failed (no answer, non-2xx status, blocked); null on success.
    #[schema(required = true)]
    pub error: Option<String>,
    /// The target resolved only to forbidden (private, loopback, ...) addresses and was not contacted.
    pub blocked: bool,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<&crossbook_store::NewDelivery> for DeliveryOut {
    fn from(d: &crossbook_store::NewDelivery) -> Self {
        DeliveryOut {
            id: d.message_id.clone(),
            event_type: d.event_type.clone(),
            status_code: d.status_code,
            latency_ms: d.latency_ms,
            error: d.error.clone(),
            blocked: d.blocked,
            created_at: iso(d.created_at),
        }
    }
}

/// The envelope of one registration.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookEnvelope {
    pub success: bool,
    pub message: String,
    pub data: WebhookOut,
}

/// The envelope of the list of the caller's registrations.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookListEnvelope {
    pub success: bool,
    pub message: String,
    pub data: Vec<WebhookOut>,
}

/// The envelope of a deletion: `data` is null.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedEnvelope {
    pub success: bool,
    pub message: String,
    #[schema(value_type = Option<Object>, required = true)]
    pub data: Option<()>,
}

/// The envelope of the delivery log, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveriesEnvelope {
    pub success: bool,
    pub message: String,
    pub data: Vec<DeliveryOut>,
}

/// The envelope of a test delivery: the attempt. The request itself succeeded (the status is 200); `success`
/// says whether the delivery did (the receiver answered 2xx), and `message` says why not when it did not.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryEnvelope {
    /// Whether the receiver accepted the test delivery (answered 2xx); `data.error` says why not.
    pub success: bool,
    pub message: String,
    pub data: DeliveryOut,
}

/// An error of a webhook route: the envelope with `success: false` and `data: null`, plus the fields of the
/// error body every other route answers (`detail`, `code`, `param` and `required_plan` where they apply).
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookErrorBody {
    pub success: bool,
    /// Same text as `detail`.
    pub message: String,
    #[schema(value_type = Option<Object>, required = true)]
    pub data: Option<()>,
    pub detail: String,
    pub code: ErrorCode,
    #[schema(nullable = false)]
    pub param: Option<String>,
    #[schema(nullable = false)]
    pub required_plan: Option<Plan>,
}

/// Body of POST and PUT.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // documentation only: the body is read field by field to name the one at fault
pub struct WebhookIn {
    /// Public `http` or `https` callback URL (no credentials, not port 0; private, loopback, link-local and
    /// similar hosts are refused).
    #[schema(value_type = WebhookUrl)]
    url: String,
    /// Whether deliveries are active. POST: `false` registers without delivering until a PUT turns it on
    /// (default `true`). PUT: turns deliveries on or off (unchanged when absent).
    #[schema(nullable = false)]
    enabled: Option<bool>,
}

/// A callback URL as [`crate::webhooks::ssrf::parse_url`] takes it: an absolute `http` or `https` URL of at most
/// [`MAX_URL_LEN`] characters (surrounding spaces are trimmed). Whether its host is public is checked by
/// resolving it, which no schema keyword can state.
pub struct WebhookUrl;

impl PartialSchema for WebhookUrl {
    fn schema() -> RefOr<Schema> {
        let schema = json!({
            "type": "string",
            "format": "uri",
            "minLength": 1,
            "maxLength": MAX_URL_LEN,
            "pattern": "^\\s*[Hh][Tt][Tt][Pp][Ss]?://",
            "examples": ["https://example.com/hooks/crossbook"],
        });
        serde_json::from_value(schema).expect("a valid schema")
    }
}

impl ToSchema for WebhookUrl {}

fn envelope<T: Serialize>(message: &str, data: T) -> Json<Value> {
    Json(json!({ "success": true, "message": message, "data": data }))
}

// ------------------------------------------------------------------------------------------------ inputs

/// The `{type}` path segment.
fn kind_of(raw: &str) -> ApiResult<WebhookKind> {
    WebhookKind::parse(raw).ok_or_else(|| ApiError::invalid("type", "type must be one of whale or arbitrage"))
}

/// A valid key (401 otherwise); the customer it belongs to.
fn customer(
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
) -> Result<(Gate<groups::WebhooksRead>, i64)> {
    let gate = gate?;
    let customer = gate
        .owner()
        .map(|o| o.customer_id)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("the webhooks gate admitted a caller without a key")))?;
    Ok((gate, customer))
}

/// The fields of a POST/PUT body: `url` (required string) and `enabled` (optional boolean).
fn read_body(body: std::result::Result<Json<Value>, ApiError>) -> ApiResult<(String, Option<bool>)> {
    let Json(body) = body?;
    let Some(obj) = body.as_object() else {
        return Err(ApiError::invalid_request("the body must be a JSON object with a url"));
    };
    let url = match obj.get("url") {
        None | Some(Value::Null) => return Err(ApiError::missing("url")),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(ApiError::invalid("url", "url must be a string")),
    };
    let enabled = match obj.get("enabled") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err(ApiError::invalid("enabled", "enabled must be true or false")),
    };
    Ok((url, enabled))
}

async fn checked_url(state: &AppState, raw: &str) -> ApiResult<String> {
    state
        .webhooks
        .sender
        .check_url(raw)
        .await
        .map(|_| raw.trim().to_string())
        .map_err(|e| ApiError::UrlNotAllowed { detail: e.0 })
}

/// A POST or PUT, checked: the caller's customer, the webhook type (whose write group the caller's plan must
/// reach), and the body's public URL and optional `enabled`.
struct WriteRequest {
    customer: i64,
    kind: WebhookKind,
    url: String,
    enabled: Option<bool>,
}

async fn write_request(
    state: &AppState,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
    body: std::result::Result<Json<Value>, ApiError>,
) -> Result<WriteRequest> {
    let (gate, customer) = customer(gate)?;
    let kind = kind_of(&path?.0)?;
    gate.caller
        .authorize(RouteGroup::webhook_write(kind == WebhookKind::Arbitrage))?;
    let (raw, enabled) = read_body(body)?;
    let url = checked_url(state, &raw).await?;
    Ok(WriteRequest {
        customer,
        kind,
        url,
        enabled,
    })
}

fn not_registered(kind: WebhookKind) -> ApiError {
    ApiError::not_found(format!("no {kind} webhook is registered"))
}

// ------------------------------------------------------------------------------------------------ handlers

/// List the caller's registrations.
#[utoipa::path(
    get,
    path = "/v1/webhooks",
    tag = "webhooks",
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The caller's registrations (at most one per type).", body = WebhookListEnvelope),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
    )
)]
async fn list_webhooks(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
) -> Result<Json<Value>> {
    let (_, customer) = customer(gate)?;
    let hooks = state.store.customer_webhooks(customer).await.map_err(ApiError::from)?;
    let out: Vec<WebhookOut> = hooks.iter().map(WebhookOut::from).collect();
    Ok(envelope("Webhooks retrieved", out))
}

/// Get the caller's registration of one type.
#[utoipa::path(
    get,
    path = "/v1/webhooks/{type}",
    tag = "webhooks",
    params(("type" = WebhookKind, Path, description = "`whale` or `arbitrage`.")),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The registration, with its secret.", body = WebhookEnvelope),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
        (status = 404, description = "No registration of this type.", body = WebhookErrorBody),
    )
)]
async fn get_webhook(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
) -> Result<Json<Value>> {
    let (_, customer) = customer(gate)?;
    let kind = kind_of(&path?.0)?;
    let hook = state.store.webhook(customer, kind).await.map_err(ApiError::from)?;
    let hook = hook.ok_or_else(|| not_registered(kind))?;
    Ok(envelope("Webhook retrieved", WebhookOut::from(&hook)))
}

/// Register a callback URL for one type.
///
/// One registration per type: a second POST answers 409 (use PUT). Whale webhooks need the Builder plan,
/// arbitrage webhooks the Trader plan. The answer carries the signing secret.
#[utoipa::path(
    post,
    path = "/v1/webhooks/{type}",
    tag = "webhooks",
    params(("type" = WebhookKind, Path, description = "`whale` or `arbitrage`.")),
    request_body = WebhookIn,
    security(("api_key" = [])),
    responses(
        (status = 201, description = "Registered; enabled unless the body says `\"enabled\": false`.", body = WebhookEnvelope),
        (status = 400, description = "Unknown type, bad body, or a URL that is not public http(s) (`url_not_allowed`).", body = WebhookErrorBody),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
        (status = 403, description = "The plan is too low; `required_plan` names the plan needed.", body = WebhookErrorBody),
        (status = 409, description = "A registration of this type exists.", body = WebhookErrorBody),
    )
)]
async fn create_webhook(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
    body: std::result::Result<Json<Value>, ApiError>,
) -> Result<(StatusCode, Json<Value>)> {
    let WriteRequest {
        customer,
        kind,
        url,
        enabled,
    } = write_request(&state, gate, path, body).await?;
    // Registered disabled in one write: a registration made enabled and then turned off could take
    // deliveries in between.
    let created = state
        .store
        .create_webhook(
            customer,
            kind,
            &url,
            &webhooks::new_secret(),
            enabled.unwrap_or(true),
            Timestamp::now(),
        )
        .await
        .map_err(ApiError::from)?;
    let Some(hook) = created else {
        return Err(ApiError::Conflict {
            detail: format!("a {kind} webhook is already registered; use PUT to change it"),
        }
        .into());
    };
    state.webhooks.registrations_changed();
    Ok((
        StatusCode::CREATED,
        envelope("Webhook registered", WebhookOut::from(&hook)),
    ))
}

/// Change the callback URL of one type, and optionally turn it on or off.
#[utoipa::path(
    put,
    path = "/v1/webhooks/{type}",
    tag = "webhooks",
    params(("type" = WebhookKind, Path, description = "`whale` or `arbitrage`.")),
    request_body = WebhookIn,
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Updated.", body = WebhookEnvelope),
        (status = 400, description = "Unknown type, bad body, or a URL that is not public http(s) (`url_not_allowed`).", body = WebhookErrorBody),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
        (status = 403, description = "The plan is too low; `required_plan` names the plan needed.", body = WebhookErrorBody),
        (status = 404, description = "No registration of this type.", body = WebhookErrorBody),
    )
)]
async fn update_webhook(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
    body: std::result::Result<Json<Value>, ApiError>,
) -> Result<Json<Value>> {
    let WriteRequest {
        customer,
        kind,
        url,
        enabled,
    } = write_request(&state, gate, path, body).await?;
    let updated = state
        .store
        .update_webhook(customer, kind, &url, enabled, Timestamp::now())
        .await
        .map_err(ApiError::from)?;
    let hook = updated.ok_or_else(|| not_registered(kind))?;
    state.webhooks.registrations_changed();
    Ok(envelope("Webhook updated", WebhookOut::from(&hook)))
}

/// Delete the registration of one type (and its delivery log).
#[utoipa::path(
    delete,
    path = "/v1/webhooks/{type}",
    tag = "webhooks",
    params(("type" = WebhookKind, Path, description = "`whale` or `arbitrage`.")),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Deleted; `data` is null.", body = DeletedEnvelope),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
        (status = 404, description = "No registration of this type.", body = WebhookErrorBody),
    )
)]
async fn delete_webhook(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
) -> Result<Json<Value>> {
    let (_, customer) = customer(gate)?;
    let kind = kind_of(&path?.0)?;
    if !state
        .store
        .delete_webhook(customer, kind)
        .await
        .map_err(ApiError::from)?
    {
        return Err(not_registered(kind).into());
    }
    state.webhooks.registrations_changed();
    Ok(envelope("Webhook deleted", Value::Null))
}

/// The last 100 delivery attempts of one type, newest first.
#[utoipa::path(
    get,
    path = "/v1/webhooks/{type}/deliveries",
    tag = "webhooks",
    params(("type" = WebhookKind, Path, description = "`whale` or `arbitrage`.")),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "Attempts, newest first.", body = DeliveriesEnvelope),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
        (status = 404, description = "No registration of this type.", body = WebhookErrorBody),
    )
)]
async fn list_deliveries(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
) -> Result<Json<Value>> {
    let (_, customer) = customer(gate)?;
    let kind = kind_of(&path?.0)?;
    let hook = state.store.webhook(customer, kind).await.map_err(ApiError::from)?;
    let hook = hook.ok_or_else(|| not_registered(kind))?;
    let log: Vec<Delivery> = state
        .store
        .deliveries(hook.id, DELIVERIES_SHOWN)
        .await
        .map_err(ApiError::from)?;
    let out: Vec<DeliveryOut> = log.iter().map(|d| DeliveryOut::from(&d.attempt)).collect();
    Ok(envelope("Deliveries retrieved", out))
}

/// Send a signed test delivery now and return the attempt.
///
/// The body is `{"type": "webhook.test", "data": {...}}`, signed like every delivery; it is sent even when
/// the registration is disabled, and logged. Needs the plan of the type. The answer is 200 whenever the
/// attempt was made; its `success` is whether the receiver accepted the delivery.
#[utoipa::path(
    post,
    path = "/v1/webhooks/{type}/test",
    tag = "webhooks",
    params(("type" = WebhookKind, Path, description = "`whale` or `arbitrage`.")),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The attempt was made: `success` is whether the receiver accepted it (answered 2xx), and when it did not, `message` and `data.error` say why.", body = DeliveryEnvelope),
        (status = 401, description = "No valid key.", body = WebhookErrorBody),
        (status = 403, description = "The plan is too low; `required_plan` names the plan needed.", body = WebhookErrorBody),
        (status = 404, description = "No registration of this type.", body = WebhookErrorBody),
    )
)]
async fn test_webhook(
    State(state): State<AppState>,
    gate: std::result::Result<Gate<groups::WebhooksRead>, ApiError>,
    path: std::result::Result<Path<String>, ApiError>,
) -> Result<Json<Value>> {
    let (gate, customer) = customer(gate)?;
    let kind = kind_of(&path?.0)?;
    gate.caller
        .authorize(RouteGroup::webhook_write(kind == WebhookKind::Arbitrage))?;
    let hook = state.store.webhook(customer, kind).await.map_err(ApiError::from)?;
    let hook = hook.ok_or_else(|| not_registered(kind))?;
    let target = Target::of(&hook)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("stored webhook URL {} does not parse", hook.url)))?;
    let data = json!({
        "webhook_id": public_id(hook.id),
        "webhook_type": kind.as_str(),
        "message": "This is a test delivery from crossbook.",
        "sent_at": iso(Timestamp::now()),
    });
    let body = webhooks::payload(webhooks::TEST_EVENT_TYPE, &data);
    let attempt = state
        .webhooks
        .sender
        .send(&target, webhooks::TEST_EVENT_TYPE, body)
        .await;
    state
        .store
        .record_deliveries(std::slice::from_ref(&attempt))
        .await
        .map_err(ApiError::from)?;
    // `success` is the delivery's outcome: a client that reads only the envelope must not take a failed
    // delivery for a working receiver.
    let (delivered, message) = match &attempt.error {
        None => (true, "Test delivery accepted by the receiver".to_string()),
        Some(e) => (false, format!("Test delivery failed: {e}")),
    };
    Ok(Json(json!({
        "success": delivered,
        "message": message,
        "data": DeliveryOut::from(&attempt),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_paths() {
        for p in [
            "/v1/webhooks",
            "/v1/webhooks/",
            "/v1/webhooks/whale",
            "/v1/webhooks/x/deliveries",
            "/v1/webhooks/{type}/test",
        ] {
            assert!(is_webhook_path(p), "{p}");
        }
        for p in ["/webhooks", "/webhooks/whale", "/v1/webhooksx", "/v1/search", "/", ""] {
            assert!(!is_webhook_path(p), "{p}");
        }
    }
}
