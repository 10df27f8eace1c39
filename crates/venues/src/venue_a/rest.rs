//! venue_a REST endpoints (PROTOCOLS A.3–A.5), one struct per endpoint, and the RSA-PSS request signer
//! (A.1).

use std::{path::Path, time::SystemTime};

use base64::Engine as _;
use crossbook_core::Exchange;
use rsa::{
    PrivateKey,
    pkcs1::DecodeRsaPrivateKey,
    pkcs8::DecodePrivateKey,
    pss::SigningKey,
    signature::{SignatureEncoding, Signer},
};
use sha2::Sha256;

use super::model;
use crate::{error::VenueError, rest::RequestSigner, rest::RestRequest};

const EX: Exchange = Exchange::VenueA;

/// Signs requests with a venue_a API key: headers `KALSHI-ACCESS-KEY` (key id), `KALSHI-ACCESS-TIMESTAMP`
/// (Unix ms) and `KALSHI-ACCESS-SIGNATURE`, the base64 RSA-PSS/SHA-256 signature (salt length = digest
/// length) of `timestamp + METHOD + path`, the path without query string or host.
pub struct KalshiSigner {
    key_id: String,
    // Blinded, with a salt from the operating system's generator on every signature.
    key: SigningKey<Sha256>,
}

impl std::fmt::Debug for KalshiSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("KalshiSigner")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl KalshiSigner {
    /// A signer from a PEM private key (PKCS#8 `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA PRIVATE KEY`, the
    /// form the venue hands out).
    pub fn from_pem(key_id: &str, pem: &str) -> Result<Self, VenueError> {
        let key = PrivateKey::from_pkcs8_pem(pem)
            .or_else(|_| PrivateKey::from_pkcs1_pem(pem))
            .map_err(|e| VenueError::Credentials {
                exchange: EX,
                reason: format!("private key is not an RSA PEM key: {e}"),
            })?;
        Ok(KalshiSigner {
            key_id: key_id.to_string(),
            key: SigningKey::new(key),
        })
    }

    /// A signer from a PEM key file.
    pub fn from_file(key_id: &str, path: &Path) -> Result<Self, VenueError> {
        let pem = std::fs::read_to_string(path).map_err(|e| VenueError::Credentials {
            exchange: EX,
            reason: format!("cannot read private key file {}: {e}", path.display()),
        })?;
        Self::from_pem(key_id, &pem)
    }

    /// The signature of `message`, base64.
    pub fn sign(&self, message: &str) -> String {
        let sig = self.key.sign(message.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(sig.to_bytes())
    }

    /// The three headers for a request at Unix-ms `timestamp_ms`.
    pub fn headers_at(&self, timestamp_ms: i64, method: &str, path: &str) -> Vec<(&'static str, String)> {
        let ts = timestamp_ms.to_string();
        let signature = self.sign(&format!("{ts}{method}{path}"));
        vec![
            ("KALSHI-ACCESS-KEY", self.key_id.clone()),
            ("KALSHI-ACCESS-TIMESTAMP", ts),
            ("KALSHI-ACCESS-SIGNATURE", signature),
        ]
    }
}

impl RequestSigner for KalshiSigner {
    fn headers(&self, method: &str, path: &str) -> Result<Vec<(&'static str, String)>, VenueError> {
        let now_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default();
        Ok(self.headers_at(now_ms, method, path))
    }
}

fn push_cursor(q: &mut Vec<(&'static str, String)>, cursor: &Option<String>) {
    if let Some(c) = cursor.as_ref().filter(|c| !c.is_empty()) {
        q.push(("cursor", c.clone()));
    }
}

/// `GET /series` (every series).
#[derive(Debug, Clone, Default)]
pub struct ListSeries {
    pub cursor: Option<String>,
}

impl RestRequest for ListSeries {
    type Response = model::SeriesList;
    fn name(&self) -> &'static str {
        "GET /series"
    }
    fn path(&self) -> String {
        "/series".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        push_cursor(&mut q, &self.cursor);
        q
    }
}

/// `GET /series/{series_ticker}`.
#[derive(Debug, Clone)]
pub struct GetSeries {
    pub ticker: String,
}

impl RestRequest for GetSeries {
    type Response = model::SeriesOne;
    fn name(&self) -> &'static str {
        "GET /series/{ticker}"
    }
    fn path(&self) -> String {
        format!("/series/{}", self.ticker)
    }
}

/// `GET /events?with_nested_markets=true` filtered by series and status, 200 per page.
#[derive(Debug, Clone, Default)]
pub struct ListEvents {
    pub series_ticker: Option<String>,
    /// Filter value: `unopened`, `open`, `closed`, `settled`.
    pub status: Option<&'static str>,
    pub cursor: Option<String>,
}

impl RestRequest for ListEvents {
    type Response = model::EventsPage;
    fn name(&self) -> &'static str {
        "GET /events"
    }
    fn path(&self) -> String {
        "/events".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = vec![
            ("limit", "200".to_string()),
            ("with_nested_markets", "true".to_string()),
        ];
        if let Some(s) = &self.series_ticker {
            q.push(("series_ticker", s.clone()));
        }
        if let Some(s) = self.status {
            q.push(("status", s.to_string()));
        }
        push_cursor(&mut q, &self.cursor);
        q
    }
}

/// `GET /events/{event_ticker}?with_nested_markets=true`.
#[derive(Debug, Clone)]
pub struct GetEvent {
    pub event_ticker: String,
}

impl RestRequest for GetEvent {
    type Response = model::EventOne;
    fn name(&self) -> &'static str {
        "GET /events/{ticker}"
    }
    fn path(&self) -> String {
        format!("/events/{}", self.event_ticker)
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        vec![("with_nested_markets", "true".to_string())]
    }
}

/// `GET /markets?tickers=A,B,…` (comma-separated).
#[derive(Debug, Clone, Default)]
pub struct ListMarkets {
    pub tickers: Vec<String>,
    pub cursor: Option<String>,
}

impl RestRequest for ListMarkets {
    type Response = model::MarketsPage;
    fn name(&self) -> &'static str {
        "GET /markets"
    }
    fn path(&self) -> String {
        "/markets".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = vec![("limit", "1000".to_string())];
        if !self.tickers.is_empty() {
            q.push(("tickers", self.tickers.join(",")));
        }
        push_cursor(&mut q, &self.cursor);
        q
    }
}

/// `GET /markets/{ticker}/orderbook` (all levels).
#[derive(Debug, Clone)]
pub struct GetOrderbook {
    pub ticker: String,
}

impl RestRequest for GetOrderbook {
    type Response = model::OrderbookResponse;
    fn name(&self) -> &'static str {
        "GET /markets/{ticker}/orderbook"
    }
    fn path(&self) -> String {
        format!("/markets/{}/orderbook", self.ticker)
    }
}

/// `GET /markets/trades`, newest first, 1000 per page.
#[derive(Debug, Clone, Default)]
pub struct ListTrades {
    pub ticker: Option<String>,
    /// Unix seconds.
    pub min_ts: Option<i64>,
    pub cursor: Option<String>,
}

impl RestRequest for ListTrades {
    type Response = model::TradesPage;
    fn name(&self) -> &'static str {
        "GET /markets/trades"
    }
    fn path(&self) -> String {
        "/markets/trades".into()
    }
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = vec![("limit", "1000".to_string())];
        if let Some(t) = &self.ticker {
            q.push(("ticker", t.clone()));
        }
        if let Some(ts) = self.min_ts {
            q.push(("min_ts", ts.to_string()));
        }
        push_cursor(&mut q, &self.cursor);
        q
    }
}

#[cfg(test)]
mod tests {
    use rsa::{
        PublicKey,
        pkcs8::DecodePublicKey,
        pss::{Signature, VerifyingKey},
        signature::Verifier,
    };

    use super::*;

    const PRIVATE: &str = include_str!("../../../sim/fixtures/venue_a_demo_key.pem");
    const PUBLIC: &str = include_str!("../../../sim/fixtures/venue_a_demo_key.pub.pem");

    #[test]
    fn signature_verifies_with_the_public_key() {
        let signer = KalshiSigner::from_pem("demo-key", PRIVATE).unwrap();
        let headers = signer.headers_at(1_778_584_051_412, "GET", "/trade-api/ws/v2");
        assert_eq!(headers[0], ("KALSHI-ACCESS-KEY", "demo-key".to_string()));
        assert_eq!(headers[1], ("KALSHI-ACCESS-TIMESTAMP", "1778584051412".to_string()));
        let sig = base64::engine::general_purpose::STANDARD.decode(&headers[2].1).unwrap();
        let public = PublicKey::from_public_key_pem(PUBLIC).unwrap();
        let verifier = VerifyingKey::<Sha256>::new(public);
        let sig = Signature::try_from(sig.as_slice()).unwrap();
        verifier.verify(b"1778584051412GET/trade-api/ws/v2", &sig).unwrap();
        assert!(verifier.verify(b"1778584051412GET/other", &sig).is_err());
    }

    #[test]
    fn bad_keys_are_credential_errors() {
        let e = KalshiSigner::from_pem("k", "not a key").unwrap_err();
        assert!(matches!(e, VenueError::Credentials { .. }));
        let e = KalshiSigner::from_file("k", Path::new("/nonexistent/key.pem")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/key.pem"));
        assert!(!format!("{:?}", KalshiSigner::from_pem("k", PRIVATE).unwrap()).contains("BEGIN"));
    }
}
