//! Outbound webhooks, the part that knows no HTTP framework: where a webhook may go ([`ssrf`]), secrets and
//! signatures (spec 6.3), one signed delivery attempt ([`Sender::send`]) and the registrations the dispatcher
//! delivers to ([`Webhooks::targets`]).
//!
//! The API (`api::webhooks`) registers URLs and sends test deliveries; the dispatcher
//! (`workers::webhooks`) fans bus events out to every enabled registration. Both go through the one
//! [`Webhooks`] of the process, held in [`crate::AppState::webhooks`].
//!
//! # Delivery (contracts §8)
//! One POST per registration and event, `Content-Type: application/json`, the body `{type, data}` signed with
//! the registration's secret; connect timeout 2 s, total 5 s; no redirects followed, no proxy; names resolved
//! through [`ssrf::GuardedResolver`], IP literals checked before sending. One attempt, never retried; every
//! attempt becomes a [`NewDelivery`] for the log.

pub mod ssrf;

use std::{
    collections::HashMap,
    sync::{Arc, OnceLock, RwLock},
    time::{Duration, Instant},
};

use base64::{Engine as _, engine::general_purpose::STANDARD};
use crossbook_core::Timestamp;
use crossbook_store::{NewDelivery, Webhook, WebhookKind};
use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore;
use reqwest::dns::Resolve;
use sha2::Sha256;
use tokio::sync::Notify;
use url::Url;

use crate::config::Config;

/// Header: unique id of the delivery.
pub const HEADER_ID: &str = "service-webhook-id";
/// Header: Unix seconds at send time.
pub const HEADER_TIMESTAMP: &str = "service-webhook-timestamp";
/// Header: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
pub const HEADER_SIGNATURE: &str = "service-webhook-signature";

/// Connect timeout of a delivery.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Total timeout of a delivery, from sending to the end of the response headers.
pub const TOTAL_TIMEOUT: Duration = Duration::from_secs(5);

/// Event type of `POST /v1/webhooks/{type}/test`.
pub const TEST_EVENT_TYPE: &str = "webhook.test";

/// A new signing secret: 32 random bytes as 64 lowercase hex characters.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new delivery id (`Service-Webhook-Id`): `msg_` + 32 hex characters, unique per attempt.
pub fn new_message_id() -> String {
    format!("msg_{}", uuid::Uuid::new_v4().simple())
}

/// The `Service-Webhook-Signature` value: `v1,` + base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed
/// with the secret string's UTF-8 bytes.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The body of a delivery: `{"type": …, "data": …}` as the exact bytes that are signed and sent.
pub fn payload(event_type: &str, data: &serde_json::Value) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Payload<'a> {
        r#type: &'a str,
        data: &'a serde_json::Value,
    }
    serde_json::to_vec(&Payload {
        r#type: event_type,
        data,
    })
    .expect("JSON values serialise")
}

/// Where one registration's deliveries go.
#[derive(Debug, Clone)]
pub struct Target {
    pub webhook_id: i64,
    pub url: Url,
    pub secret: Arc<str>,
}

impl Target {
    /// The target of a stored registration; `None` when its URL no longer parses (it was checked when
    /// registered, so only a hand-edited database gets here).
    pub fn of(w: &Webhook) -> Option<Target> {
        Some(Target {
            webhook_id: w.id,
            url: Url::parse(&w.url).ok()?,
            secret: Arc::from(w.secret.as_str()),
        })
    }
}

/// Sends signed deliveries: the HTTP client with the SSRF guard.
pub struct Sender {
    /// The resolver names are looked up with (before the guard), also used by the registration check.
    resolver: Arc<dyn Resolve>,
    allow_private: bool,
    /// Built on first use: building needs the process's TLS provider, and most processes never deliver.
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl Sender {
    /// A sender resolving through `resolver` (the system's in production; one the test controls in tests).
    pub fn new(resolver: Arc<dyn Resolve>, allow_private: bool) -> Self {
        Sender {
            resolver,
            allow_private,
            client: OnceLock::new(),
        }
    }

    /// Whether the address checks are lifted (`allow_private_webhook_targets`).
    pub fn allow_private(&self) -> bool {
        self.allow_private
    }

    /// The registration check of a URL (see [`ssrf::check_target`]).
    pub async fn check_url(&self, raw: &str) -> Result<Url, ssrf::Rejected> {
        ssrf::check_target(raw, self.resolver.as_ref(), self.allow_private).await
    }

    fn client(&self) -> Result<&reqwest::Client, String> {
        self.client
            .get_or_init(|| {
                crossbook_venues::rest::ensure_crypto_provider();
                reqwest::Client::builder()
                    .user_agent(concat!("crossbook-webhooks/", env!("CARGO_PKG_VERSION")))
                    .dns_resolver(ssrf::GuardedResolver::new(self.resolver.clone(), self.allow_private))
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .connect_timeout(CONNECT_TIMEOUT)
                    .timeout(TOTAL_TIMEOUT)
                    .pool_idle_timeout(Duration::from_secs(30))
                    .build()
                    .map_err(|e| format!("cannot build the webhook HTTP client: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// One signed delivery of `body` (already `{type, data}`) to `target`: never retried, never fails; the
    /// outcome is the returned attempt.
    pub async fn send(&self, target: &Target, event_type: &str, body: Vec<u8>) -> NewDelivery {
        let message_id = new_message_id();
        let created_at = Timestamp::now();
        let mut attempt = NewDelivery {
            webhook_id: target.webhook_id,
            message_id: message_id.clone(),
            event_type: event_type.to_string(),
            status_code: None,
            latency_ms: 0,
            error: None,
            blocked: false,
            created_at,
        };
        if let Err(b) = ssrf::literal_target(&target.url, self.allow_private) {
            attempt.error = Some(b.to_string());
            attempt.blocked = true;
            return attempt;
        }
        let client = match self.client() {
            Ok(c) => c,
            Err(e) => {
                attempt.error = Some(e);
                return attempt;
            }
        };
        let timestamp = created_at.secs();
        let signature = sign(&target.secret, &message_id, timestamp, &body);
        let started = Instant::now();
        let result = client
            .post(target.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(HEADER_ID, &message_id)
            .header(HEADER_TIMESTAMP, timestamp.to_string())
            .header(HEADER_SIGNATURE, signature)
            .body(body)
            .send()
            .await;
        attempt.latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        match result {
            Ok(resp) => {
                let status = resp.status();
                attempt.status_code = Some(status.as_u16());
                if !status.is_success() {
                    attempt.error = Some(format!("the receiver answered {status}"));
                }
            }
            Err(e) => {
                if let Some(b) = ssrf::is_blocked(&e) {
                    attempt.blocked = true;
                    attempt.error = Some(b.to_string());
                } else {
                    attempt.error = Some(describe(&e));
                }
            }
        }
        attempt
    }
}

/// A short reason for a failed request, without the URL (it is in the registration).
fn describe(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_redirect() {
        "redirect not followed"
    } else {
        "request failed"
    };
    let mut detail = String::new();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        detail = s.to_string();
        src = s.source();
    }
    if detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}

/// The process's webhooks: the sender, and the dispatcher's view of the enabled registrations.
pub struct Webhooks {
    pub sender: Sender,
    /// Deliveries in flight at most (`webhook_concurrency`).
    pub concurrency: usize,
    /// Enabled registrations by kind, as the dispatcher last loaded them.
    targets: RwLock<HashMap<WebhookKind, Arc<[Target]>>>,
    /// Set when this process changed a registration, so the dispatcher reloads at once.
    changed: Notify,
}

impl Webhooks {
    /// Webhooks of a process with `config`, resolving names through `resolver`.
    pub fn new(config: &Config, resolver: Arc<dyn Resolve>) -> Self {
        Webhooks {
            sender: Sender::new(resolver, config.allow_private_webhook_targets),
            concurrency: config.webhook_concurrency.max(1),
            targets: RwLock::new(HashMap::new()),
            changed: Notify::new(),
        }
    }

    /// Webhooks resolving through the operating system.
    pub fn system(config: &Config) -> Self {
        Webhooks::new(config, Arc::new(ssrf::SystemResolver))
    }

    /// Tells the dispatcher of this process that registrations changed (others notice within the refresh
    /// period).
    pub fn registrations_changed(&self) {
        self.changed.notify_one();
    }

    /// Resolves when [`Webhooks::registrations_changed`] was called since the last time.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Replaces the dispatcher's view with `hooks` (the enabled registrations).
    pub fn set_registrations(&self, hooks: &[Webhook]) {
        let mut by_kind: HashMap<WebhookKind, Vec<Target>> = HashMap::new();
        for w in hooks.iter().filter(|w| w.enabled) {
            match Target::of(w) {
                Some(t) => by_kind.entry(w.kind).or_default().push(t),
                None => tracing::warn!(webhook_id = w.id, "stored webhook URL does not parse; skipped"),
            }
        }
        let map = by_kind.into_iter().map(|(k, v)| (k, Arc::from(v))).collect();
        *self.targets.write().unwrap_or_else(|p| p.into_inner()) = map;
    }

    /// The enabled registrations of `kind` the dispatcher delivers to.
    pub fn targets(&self, kind: WebhookKind) -> Arc<[Target]> {
        self.targets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&kind)
            .cloned()
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_64_lowercase_hex_and_fresh() {
        let a = new_secret();
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{a}"
        );
        assert_ne!(a, new_secret());
        assert_ne!(new_message_id(), new_message_id());
    }

    /// The Standard Webhooks test vector (same scheme: `{id}.{timestamp}.{body}`, `v1,` + base64), with the
    /// secret used as UTF-8 bytes as contracts §8 says.
    #[test]
    fn signature_format() {
        let sig = sign("secret", "msg_1", 1_700_000_000, br#"{"type":"x","data":{}}"#);
        assert!(sig.starts_with("v1,"), "{sig}");
        let raw = STANDARD.decode(&sig[3..]).unwrap();
        assert_eq!(raw.len(), 32);
        // Any change of id, timestamp, body or secret changes the signature.
        assert_ne!(
            sig,
            sign("secret", "msg_2", 1_700_000_000, br#"{"type":"x","data":{}}"#)
        );
        assert_ne!(
            sig,
            sign("secret", "msg_1", 1_700_000_001, br#"{"type":"x","data":{}}"#)
        );
        assert_ne!(
            sig,
            sign("secret", "msg_1", 1_700_000_000, br#"{"type":"x","data":{} }"#)
        );
        assert_ne!(
            sig,
            sign("secreT", "msg_1", 1_700_000_000, br#"{"type":"x","data":{}}"#)
        );
        // RFC 4231 test case 2 through the same code path: key "Jefe", message "what do ya want for nothing?".
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn payload_is_type_and_data() {
        let body = payload("whale.entry", &serde_json::json!({"a": 1}));
        assert_eq!(body, br#"{"type":"whale.entry","data":{"a":1}}"#.to_vec());
    }
}
