//! JSON in and out, with the content type and the rejections of contracts §1–§2.
//!
//! axum's own `Json` answers with `application/json` (no charset) and rejects with plain-text bodies; this one
//! answers `application/json; charset=utf-8` and rejects with [`ApiError`]: a body that is not JSON → 415
//! `unsupported_media_type`, over the body limit → 413 `payload_too_large`, malformed or of the wrong shape →
//! 400 `invalid_parameter`.

use axum::{
    body::Bytes,
    extract::{FromRequest, Request},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::{Serialize, de::DeserializeOwned};

use crate::error::{ApiError, JSON_CONTENT_TYPE};

/// A JSON request body (extractor) or response body.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(bytes) => ([(header::CONTENT_TYPE, JSON_CONTENT_TYPE)], bytes).into_response(),
            Err(e) => ApiError::internal(anyhow::Error::new(e).context("serialising a response")).into_response(),
        }
    }
}

/// `application/json` or any `application/*+json`, parameters (charset) allowed.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(ct) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(req.headers()) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge
            } else {
                ApiError::invalid_request("could not read the request body")
            }
        })?;
        serde_json::from_slice(&bytes)
            .map(Json)
            .map_err(|e| ApiError::invalid_request(format!("malformed JSON body: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn recognises_json_content_types() {
        let cases = [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON", true),
            ("application/merge-patch+json", true),
            ("text/plain", false),
            ("application/x-www-form-urlencoded", false),
            ("", false),
        ];
        for (ct, want) in cases {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
            assert_eq!(is_json(&h), want, "{ct:?}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }
}
