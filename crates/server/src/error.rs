//! The one error type of the HTTP API, mapped to a status code and the body of contracts §2 in one place.
//!
//! Every error on every route answers with the same flat body:
//!
//! ```text
//! {"detail": "limit must be an integer from 1 to 100", "code": "invalid_parameter", "param": "limit"}
//! ```
//!
//! `param` is present when one parameter is at fault, `required_plan` on 403. Webhook routes wrap the same body
//! in the envelope of spec 2.14 by returning [`Enveloped`] instead of [`ApiError`] (`?` converts); errors made
//! before a webhook handler runs (body limit, method router, authentication, rate limit, fallback 404) are
//! put into the envelope by [`into_envelope`], which the error layer of the app ([`crate::app`]) applies on
//! every webhook path.
//!
//! Internal failures ([`ApiError::Internal`]) are logged in full with the place they were raised and answered
//! with a generic message; nothing internal reaches the client. Store outages become 503 `unavailable`.

use std::{fmt, panic::Location};

use axum::{
    body::Body,
    http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use crossbook_core::Plan;
use crossbook_store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// Response header with the caller's per-minute rate.
pub const X_RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
/// Response header with the requests left in the caller's current bucket.
pub const X_RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");

/// `Content-Type` of every JSON body we send.
pub const JSON_CONTENT_TYPE: HeaderValue = HeaderValue::from_static("application/json; charset=utf-8");

/// Result of a handler or a parser.
pub type ApiResult<T> = Result<T, ApiError>;

/// An error answered to the client. Variants are named for their HTTP meaning; [`ApiError::status`] and
/// [`ApiError::code`] are the single mapping.
#[derive(Debug)]
pub enum ApiError {
    /// 400 `invalid_parameter`: a value out of range, of the wrong type or enum, or a malformed JSON body.
    InvalidParameter { param: Option<String>, detail: String },
    /// 400 `missing_parameter`: a required parameter is absent.
    MissingParameter { param: Option<String>, detail: String },
    /// 400 `url_not_allowed`: a webhook URL that is not public http(s).
    UrlNotAllowed { detail: String },
    /// 401 `unauthorized`: the route needs a key and got none, or one that is unknown or revoked.
    Unauthorized { detail: String },
    /// 403 `entitlement_required`: the caller's plan is below `required`.
    EntitlementRequired { required: Plan },
    /// 404 `not_found`.
    NotFound { detail: String },
    /// 405 `method_not_allowed`; `allow` is the value of the `Allow` header.
    MethodNotAllowed { allow: String },
    /// 408 `request_timeout`: the request body was still arriving `request_body_timeout_seconds` after the
    /// headers (answered by the HTTP listener, [`crate::http`]).
    RequestTimeout,
    /// 409 `conflict`.
    Conflict { detail: String },
    /// 413 `payload_too_large`.
    PayloadTooLarge,
    /// 415 `unsupported_media_type`.
    UnsupportedMediaType,
    /// 429 `rate_limited`, with `Retry-After` and the caller's per-minute rate.
    RateLimited {
        retry_after_secs: u64,
        limit_per_minute: u32,
    },
    /// 429 `rate_limited`: the caller already holds open as many of something as it may at once (replays and
    /// exports per customer, streams without a key per address); `detail` says what. `Retry-After` 1 s.
    TooManyOpen { detail: String },
    /// 503 `unavailable`: the store cannot be reached. `cause` is logged, not sent.
    Unavailable {
        cause: String,
        location: &'static Location<'static>,
    },
    /// 503 `unavailable`: this process holds no live data (it does not ingest), so a route that answers from
    /// live books cannot answer here rather than answer empty; `detail` says where live data is served.
    LiveUnavailable { detail: String },
    /// 500 `internal`: a bug. Logged with its chain and origin; the client sees a generic message.
    Internal {
        error: anyhow::Error,
        location: &'static Location<'static>,
    },
}

/// The machine-readable `code` of an error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidParameter,
    MissingParameter,
    UrlNotAllowed,
    Unauthorized,
    EntitlementRequired,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    Conflict,
    PayloadTooLarge,
    UnsupportedMediaType,
    RateLimited,
    Internal,
    Unavailable,
}

/// The body of every error response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Human-readable explanation, safe to show to a user.
    #[schema(examples("limit must be an integer from 1 to 100"))]
    pub detail: String,
    /// Stable machine-readable error code.
    pub code: ErrorCode,
    /// The query parameter at fault, when exactly one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(examples("limit"), nullable = false)]
    pub param: Option<String>,
    /// On 403 only: the lowest plan that may call the route.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub required_plan: Option<Plan>,
}

/// Marks a response whose error body was rendered by [`ApiError`], so the normalising layer of the app
/// ([`crate::app`]) leaves it alone (it rewrites framework-made 404/405/413/415 bodies into ours). It keeps the
/// body, so that [`into_envelope`] can render the same error in the webhook envelope.
#[derive(Debug, Clone)]
pub struct ErrorRendered {
    body: ErrorBody,
    enveloped: bool,
}

impl ErrorRendered {
    /// Whether the body is already in the webhook envelope.
    pub fn enveloped(&self) -> bool {
        self.enveloped
    }
}

/// The webhook envelope of spec 2.14 around an error body:
/// `{"success": false, "message": <detail>, "data": null, "detail", "code", "param"?, "required_plan"?}`.
fn envelope_value(body: &ErrorBody) -> serde_json::Value {
    let mut v = serde_json::json!({ "success": false, "message": body.detail, "data": null });
    if let (Some(obj), Ok(serde_json::Value::Object(rest))) = (v.as_object_mut(), serde_json::to_value(body)) {
        obj.extend(rest);
    }
    v
}

/// Puts an error response that [`ApiError`] rendered flat into the webhook envelope, keeping its status and
/// headers (`Allow`, `Retry-After`, `X-RateLimit-*`, ...). Any other response is returned as it is.
pub fn into_envelope(resp: Response) -> Response {
    let Some(rendered) = resp
        .extensions()
        .get::<ErrorRendered>()
        .filter(|r| !r.enveloped)
        .cloned()
    else {
        return resp;
    };
    let bytes = match serde_json::to_vec(&envelope_value(&rendered.body)) {
        Ok(b) => b,
        Err(_) => return resp,
    };
    let (mut parts, _) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, JSON_CONTENT_TYPE);
    parts.extensions.insert(ErrorRendered {
        enveloped: true,
        ..rendered
    });
    Response::from_parts(parts, Body::from(bytes))
}

impl ApiError {
    /// 400 `invalid_parameter` naming `param`.
    pub fn invalid(param: &str, detail: impl Into<String>) -> Self {
        ApiError::InvalidParameter {
            param: Some(param.to_string()),
            detail: detail.into(),
        }
    }

    /// 400 `invalid_parameter` about the request as a whole (e.g. a malformed JSON body).
    pub fn invalid_request(detail: impl Into<String>) -> Self {
        ApiError::InvalidParameter {
            param: None,
            detail: detail.into(),
        }
    }

    /// 400 `missing_parameter` for one required parameter: "`param` is required".
    pub fn missing(param: &str) -> Self {
        ApiError::MissingParameter {
            param: Some(param.to_string()),
            detail: format!("{param} is required"),
        }
    }

    /// 400 `missing_parameter` when one of several parameters is required ("q or series_id is required").
    /// `param` is omitted: no single parameter is at fault.
    pub fn missing_one_of(params: &[&str]) -> Self {
        let names = match params {
            [] => String::new(),
            [one] => (*one).to_string(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        };
        ApiError::MissingParameter {
            param: None,
            detail: format!("{names} is required"),
        }
    }

    /// 404 `not_found`.
    pub fn not_found(detail: impl Into<String>) -> Self {
        ApiError::NotFound { detail: detail.into() }
    }

    /// 500 `internal`, remembering where it was raised.
    #[track_caller]
    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        ApiError::Internal {
            error: error.into(),
            location: Location::caller(),
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidParameter { .. } | ApiError::MissingParameter { .. } | ApiError::UrlNotAllowed { .. } => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            ApiError::EntitlementRequired { .. } => StatusCode::FORBIDDEN,
            ApiError::NotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::RateLimited { .. } | ApiError::TooManyOpen { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable { .. } | ApiError::LiveUnavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The `code` of the body.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::InvalidParameter { .. } => ErrorCode::InvalidParameter,
            ApiError::MissingParameter { .. } => ErrorCode::MissingParameter,
            ApiError::UrlNotAllowed { .. } => ErrorCode::UrlNotAllowed,
            ApiError::Unauthorized { .. } => ErrorCode::Unauthorized,
            ApiError::EntitlementRequired { .. } => ErrorCode::EntitlementRequired,
            ApiError::NotFound { .. } => ErrorCode::NotFound,
            ApiError::MethodNotAllowed { .. } => ErrorCode::MethodNotAllowed,
            ApiError::RequestTimeout => ErrorCode::RequestTimeout,
            ApiError::Conflict { .. } => ErrorCode::Conflict,
            ApiError::PayloadTooLarge => ErrorCode::PayloadTooLarge,
            ApiError::UnsupportedMediaType => ErrorCode::UnsupportedMediaType,
            ApiError::RateLimited { .. } | ApiError::TooManyOpen { .. } => ErrorCode::RateLimited,
            ApiError::Unavailable { .. } | ApiError::LiveUnavailable { .. } => ErrorCode::Unavailable,
            ApiError::Internal { .. } => ErrorCode::Internal,
        }
    }

    /// The client-facing message. Never contains internal detail.
    pub fn detail(&self) -> String {
        match self {
            ApiError::InvalidParameter { detail, .. }
            | ApiError::MissingParameter { detail, .. }
            | ApiError::UrlNotAllowed { detail }
            | ApiError::Unauthorized { detail }
            | ApiError::NotFound { detail }
            | ApiError::Conflict { detail }
            | ApiError::TooManyOpen { detail }
            | ApiError::LiveUnavailable { detail } => detail.clone(),
            ApiError::EntitlementRequired { required } => {
                format!("this route requires the {} plan", required.display_name())
            }
            ApiError::MethodNotAllowed { allow } => {
                if allow.is_empty() {
                    "method not allowed on this route; the Allow header lists the allowed methods".to_string()
                } else {
                    format!(
                        "method not allowed on this route; allowed: {}",
                        allow.replace(',', ", ")
                    )
                }
            }
            ApiError::RequestTimeout => "the request body took too long to arrive".to_string(),
            ApiError::PayloadTooLarge => format!("request body is larger than {} KiB", crate::BODY_LIMIT / 1024),
            ApiError::UnsupportedMediaType => "request body must be JSON (Content-Type: application/json)".to_string(),
            ApiError::RateLimited { retry_after_secs, .. } => {
                format!("rate limit exceeded; retry in {retry_after_secs} s")
            }
            ApiError::Unavailable { .. } => "the service is temporarily unavailable; retry shortly".to_string(),
            ApiError::Internal { .. } => "internal error".to_string(),
        }
    }

    /// The body of this error.
    pub fn body(&self) -> ErrorBody {
        let param = match self {
            ApiError::InvalidParameter { param, .. } | ApiError::MissingParameter { param, .. } => param.clone(),
            _ => None,
        };
        let required_plan = match self {
            ApiError::EntitlementRequired { required } => Some(*required),
            _ => None,
        };
        ErrorBody {
            detail: self.detail(),
            code: self.code(),
            param,
            required_plan,
        }
    }

    /// Headers that belong to this error (`Allow`, `Retry-After`, rate-limit headers).
    fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        match self {
            // When the allowed methods are unknown here (the error is rendered inside axum's method router),
            // axum adds the `Allow` header itself afterwards; it only does so if the header is absent.
            ApiError::MethodNotAllowed { allow } if !allow.is_empty() => {
                if let Ok(v) = HeaderValue::from_str(allow) {
                    h.insert(header::ALLOW, v);
                }
            }
            ApiError::RateLimited {
                retry_after_secs,
                limit_per_minute,
            } => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
                h.insert(X_RATELIMIT_LIMIT, HeaderValue::from(*limit_per_minute));
                h.insert(X_RATELIMIT_REMAINING, HeaderValue::from(0u32));
            }
            ApiError::TooManyOpen { .. } => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(1u32));
            }
            _ => {}
        }
        h
    }

    /// Logs what the client will not see.
    fn log(&self) {
        match self {
            ApiError::Internal { error, location } => {
                tracing::error!(error = format!("{error:#}"), at = %location, "internal error");
            }
            ApiError::Unavailable { cause, location } => {
                tracing::warn!(cause = %cause, at = %location, "store unavailable");
            }
            _ => {}
        }
    }

    fn render(self, envelope: bool) -> Response {
        self.log();
        let body = self.body();
        let value = if envelope {
            envelope_value(&body)
        } else {
            serde_json::to_value(&body).unwrap_or_default()
        };
        // Written here rather than through `crate::json::Json`, whose rejections are errors of this layer.
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        let mut resp = (
            self.status(),
            self.headers(),
            [(header::CONTENT_TYPE, JSON_CONTENT_TYPE)],
            bytes,
        )
            .into_response();
        resp.extensions_mut().insert(ErrorRendered {
            body,
            enveloped: envelope,
        });
        resp
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Internal { error, .. } => write!(f, "internal: {error:#}"),
            ApiError::Unavailable { cause, .. } => write!(f, "unavailable: {cause}"),
            other => write!(f, "{}", other.detail()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.render(false)
    }
}

/// An [`ApiError`] answered inside the webhook envelope of spec 2.14:
/// `{"success": false, "message": <detail>, "data": null, "detail", "code", "param"?}`.
/// Webhook handlers return `Result<_, Enveloped>`; `?` converts any `ApiError`.
#[derive(Debug)]
pub struct Enveloped(pub ApiError);

impl From<ApiError> for Enveloped {
    fn from(e: ApiError) -> Self {
        Enveloped(e)
    }
}

impl IntoResponse for Enveloped {
    fn into_response(self) -> Response {
        self.0.render(true)
    }
}

impl From<StoreError> for ApiError {
    /// Outages become 503, a missing row 404, a unique violation 409, anything else a logged 500.
    /// `#[track_caller]` makes `?` record the handler line that hit the error.
    #[track_caller]
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(cause) => ApiError::Unavailable {
                cause,
                location: Location::caller(),
            },
            StoreError::NotFound => ApiError::not_found("not found"),
            StoreError::Conflict(_) => ApiError::Conflict {
                detail: "the resource already exists".to_string(),
            },
            other => ApiError::Internal {
                error: anyhow::Error::new(other),
                location: Location::caller(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_maps_to_the_contract_table() {
        let loc = Location::caller();
        let cases: Vec<(ApiError, u16, &str)> = vec![
            (ApiError::invalid("limit", "x"), 400, "invalid_parameter"),
            (ApiError::missing("q"), 400, "missing_parameter"),
            (ApiError::UrlNotAllowed { detail: "x".into() }, 400, "url_not_allowed"),
            (ApiError::Unauthorized { detail: "x".into() }, 401, "unauthorized"),
            (
                ApiError::EntitlementRequired { required: Plan::Trader },
                403,
                "entitlement_required",
            ),
            (ApiError::not_found("x"), 404, "not_found"),
            (
                ApiError::MethodNotAllowed {
                    allow: "GET,HEAD".into(),
                },
                405,
                "method_not_allowed",
            ),
            (ApiError::RequestTimeout, 408, "request_timeout"),
            (ApiError::Conflict { detail: "x".into() }, 409, "conflict"),
            (ApiError::PayloadTooLarge, 413, "payload_too_large"),
            (ApiError::UnsupportedMediaType, 415, "unsupported_media_type"),
            (
                ApiError::RateLimited {
                    retry_after_secs: 3,
                    limit_per_minute: 60,
                },
                429,
                "rate_limited",
            ),
            (ApiError::internal(anyhow::anyhow!("boom")), 500, "internal"),
            (
                ApiError::Unavailable {
                    cause: "down".into(),
                    location: loc,
                },
                503,
                "unavailable",
            ),
        ];
        for (e, status, code) in cases {
            assert_eq!(e.status().as_u16(), status, "{e:?}");
            assert_eq!(serde_json::to_value(e.code()).unwrap(), code, "{e:?}");
        }
    }

    #[test]
    fn internal_details_never_reach_the_body() {
        let e = ApiError::internal(anyhow::anyhow!("password=hunter2 at db.example"));
        let body = serde_json::to_string(&e.body()).unwrap();
        assert!(!body.contains("hunter2"), "{body}");
        let e: ApiError = StoreError::Unavailable("connection refused to 10.0.0.1".into()).into();
        assert!(!serde_json::to_string(&e.body()).unwrap().contains("10.0.0.1"));
    }

    #[test]
    fn entitlement_names_the_plan() {
        let b = ApiError::EntitlementRequired { required: Plan::Trader }.body();
        assert_eq!(b.detail, "this route requires the Trader plan");
        assert_eq!(serde_json::to_value(&b).unwrap()["required_plan"], "trader");
    }

    #[tokio::test]
    async fn enveloped_errors_carry_the_webhook_envelope() {
        let resp = Enveloped::from(ApiError::invalid("type", "type must be one of whale or arbitrage")).into_response();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(
            resp.extensions()
                .get::<ErrorRendered>()
                .is_some_and(ErrorRendered::enveloped)
        );
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "success": false, "message": "type must be one of whale or arbitrage", "data": null,
                "detail": "type must be one of whale or arbitrage", "code": "invalid_parameter", "param": "type"
            })
        );
    }

    #[tokio::test]
    async fn flat_errors_are_put_into_the_envelope_with_status_and_headers() {
        let flat = ApiError::RateLimited {
            retry_after_secs: 7,
            limit_per_minute: 60,
        }
        .into_response();
        assert!(!flat.extensions().get::<ErrorRendered>().unwrap().enveloped());
        let resp = into_envelope(flat);
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "7");
        assert_eq!(resp.headers()[X_RATELIMIT_LIMIT], "60");
        assert_eq!(resp.headers()[header::CONTENT_TYPE], JSON_CONTENT_TYPE);
        assert!(resp.extensions().get::<ErrorRendered>().unwrap().enveloped());
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "success": false, "message": "rate limit exceeded; retry in 7 s", "data": null,
                "detail": "rate limit exceeded; retry in 7 s", "code": "rate_limited"
            })
        );
        // Enveloped errors and other responses pass as they are.
        let enveloped = Enveloped(ApiError::not_found("x")).into_response();
        let again = into_envelope(enveloped);
        let bytes = axum::body::to_bytes(again.into_body(), usize::MAX).await.unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()["message"],
            "x"
        );
        let ok = into_envelope(StatusCode::NO_CONTENT.into_response());
        assert_eq!(ok.status(), StatusCode::NO_CONTENT);
    }

    #[test]
    fn missing_one_of_joins_names() {
        assert_eq!(
            ApiError::missing_one_of(&["q", "series_id"]).detail(),
            "q or series_id is required"
        );
        assert_eq!(
            ApiError::missing_one_of(&["a", "b", "c"]).detail(),
            "a, b or c is required"
        );
    }
}
