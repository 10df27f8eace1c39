//! Venue-agnostic REST plumbing: typed requests, a per-venue throttle, retries with backoff on 429 and
//! 5xx, and optional request signing.
//!
//! Each endpoint is a struct implementing [`RestRequest`] (barter-rs style), so a venue's `rest.rs` reads
//! as a list of endpoints with their parameters and response types, and this module is the only place
//! that talks HTTP.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use crossbook_core::Exchange;
use reqwest::Method;
use serde::de::DeserializeOwned;
use tokio::time::Instant;
use tracing::{debug, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    error::{VenueError, truncate_payload},
};

/// Installs the process-wide rustls crypto provider (ring) if none is installed yet.
///
/// reqwest is built with `rustls-no-provider` and tokio-tungstenite's `wss://` connector asks rustls for the
/// process default, so both panic without one. Installing twice is harmless: the second call returns an
/// error that is ignored.
pub fn ensure_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// One REST endpoint: its path, parameters and response type.
pub trait RestRequest {
    /// The decoded response body.
    type Response: DeserializeOwned;
    /// A short name for logs and errors, e.g. `"GET /events"`.
    fn name(&self) -> &'static str;
    fn method(&self) -> Method {
        Method::GET
    }
    /// Path below the venue's base URL, starting with `/`.
    fn path(&self) -> String;
    /// Query parameters; a name may repeat (`tickers=A&tickers=B`).
    fn query(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// JSON body (POST).
    fn body(&self) -> Option<serde_json::Value> {
        None
    }
}

/// Adds authentication headers to a request (venue_a's RSA-PSS signature).
pub trait RequestSigner: Send + Sync {
    /// Headers for a request of `method` to the absolute URL path `path` (no query string).
    fn headers(&self, method: &str, path: &str) -> Result<Vec<(&'static str, String)>, VenueError>;
}

/// Spaces a venue's requests so that all of its tasks together stay under its rate limit, and holds every
/// task back after a 429 (the venues send no `Retry-After`).
#[derive(Debug)]
pub struct Throttle {
    spacing: Duration,
    next: Mutex<Instant>,
}

impl Throttle {
    /// At most `per_second` requests per second (0 = unthrottled).
    pub fn per_second(per_second: u32) -> Self {
        let spacing = if per_second == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs(1) / per_second
        };
        Throttle {
            spacing,
            next: Mutex::new(Instant::now()),
        }
    }

    /// Waits for the next free slot.
    pub async fn acquire(&self) {
        let slot = {
            // No `.await` while locked; a poisoned lock still holds a valid instant.
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let slot = (*next).max(Instant::now());
            *next = slot + self.spacing;
            slot
        };
        tokio::time::sleep_until(slot).await;
    }

    /// Holds every request back for `pause`.
    pub fn pause(&self, pause: Duration) {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        *next = (*next).max(Instant::now() + pause);
    }
}

/// An HTTP client bound to one venue base URL.
#[derive(Clone)]
pub struct RestClient {
    exchange: Exchange,
    http: reqwest::Client,
    base: String,
    signer: Option<Arc<dyn RequestSigner>>,
    throttle: Arc<Throttle>,
    policy: BackoffPolicy,
    max_attempts: u32,
}

impl std::fmt::Debug for RestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestClient")
            .field("exchange", &self.exchange)
            .field("base", &self.base)
            .field("signed", &self.signer.is_some())
            .finish()
    }
}

/// Builds the HTTP client shared by a venue's REST clients.
pub fn http_client(exchange: Exchange) -> Result<reqwest::Client, VenueError> {
    ensure_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("crossbook/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(20))
        .build()
        .map_err(|e| VenueError::Config {
            exchange,
            reason: format!("cannot build HTTP client: {e}"),
        })
}

impl RestClient {
    /// A client for `base` (e.g. `https://external-api.kalshi.com/trade-api/v2`), sharing `throttle` with the
    /// venue's other clients.
    pub fn new(
        exchange: Exchange,
        http: reqwest::Client,
        base: &str,
        throttle: Arc<Throttle>,
    ) -> Result<Self, VenueError> {
        url::Url::parse(base).map_err(|e| VenueError::Config {
            exchange,
            reason: format!("invalid base URL {base:?}: {e}"),
        })?;
        Ok(RestClient {
            exchange,
            http,
            base: base.trim_end_matches('/').to_string(),
            signer: None,
            throttle,
            policy: BackoffPolicy::REST,
            max_attempts: 4,
        })
    }

    /// Signs every request with `signer`.
    pub fn with_signer(mut self, signer: Arc<dyn RequestSigner>) -> Self {
        self.signer = Some(signer);
        self
    }

    /// Sends `req`, retrying 429, 5xx and transport failures with jittered backoff, and decodes the answer.
    pub async fn send<R: RestRequest>(&self, req: &R) -> Result<R::Response, VenueError> {
        let mut backoff = Backoff::new(self.policy);
        loop {
            self.throttle.acquire().await;
            match self.send_once(req).await {
                Ok(v) => return Ok(v),
                Err(e) if e.is_retryable() && backoff.failures() + 1 < self.max_attempts => {
                    let delay = backoff.next_delay();
                    if e.is_rate_limited() {
                        self.throttle.pause(delay);
                    }
                    warn!(
                        venue = %self.exchange,
                        request = req.name(),
                        attempt = backoff.failures(),
                        delay_ms = delay.as_millis() as u64,
                        error = %e,
                        "venue request failed; retrying"
                    );
                    tokio::time::sleep(delay).await;
                }
                Err(e) => {
                    if e.is_malformed() {
                        crate::error::report_malformed(&e);
                    }
                    return Err(e);
                }
            }
        }
    }

    async fn send_once<R: RestRequest>(&self, req: &R) -> Result<R::Response, VenueError> {
        let url_text = format!("{}{}", self.base, req.path());
        let mut url = url::Url::parse(&url_text).map_err(|e| VenueError::Config {
            exchange: self.exchange,
            reason: format!("invalid URL {url_text:?}: {e}"),
        })?;
        let query = req.query();
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &query {
                pairs.append_pair(k, v);
            }
        }
        let method = req.method();
        let mut builder = self.http.request(method.clone(), url.clone());
        if let Some(signer) = &self.signer {
            for (name, value) in signer.headers(method.as_str(), url.path())? {
                builder = builder.header(name, value);
            }
        }
        if let Some(body) = req.body() {
            builder = builder.json(&body);
        }
        debug!(venue = %self.exchange, request = req.name(), %url, "venue request");
        let transport = |source| VenueError::Transport {
            exchange: self.exchange,
            url: url.to_string(),
            source,
        };
        let resp = builder.send().await.map_err(transport)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(transport)?;
        if !status.is_success() {
            return Err(VenueError::Http {
                exchange: self.exchange,
                status: status.as_u16(),
                url: url.to_string(),
                body: truncate_payload(&String::from_utf8_lossy(&bytes)),
            });
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| VenueError::malformed(self.exchange, req.name(), e, &String::from_utf8_lossy(&bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn throttle_spaces_requests_and_pauses_after_a_rate_limit() {
        let t = Throttle::per_second(10);
        let start = Instant::now();
        for _ in 0..3 {
            t.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::from_millis(200));
        t.pause(Duration::from_secs(2));
        t.acquire().await;
        assert!(start.elapsed() >= Duration::from_millis(2200));
    }
}
