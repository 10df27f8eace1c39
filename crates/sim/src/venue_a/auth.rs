//! venue_a's signed WebSocket handshake (PROTOCOLS A.1/A.6).
//!
//! The client sends `KALSHI-ACCESS-KEY` (key id), `KALSHI-ACCESS-TIMESTAMP` (Unix ms) and
//! `KALSHI-ACCESS-SIGNATURE`: base64 of RSA-PSS/SHA-256 (salt length = digest length) over
//! `timestamp + "GET" + "/trade-api/ws/v2"`. The simulator knows one demo key pair, kept in
//! `crates/sim/fixtures/` and compiled in; the connector signs with the private half in simulate mode.
//!
//! The timestamp is checked to be a Unix-millisecond integer but not for freshness: tests may sign with a
//! clock of their own, and the freshness rule of the real venue is not documented.

use axum::http::HeaderMap;
use base64::{Engine, engine::general_purpose::STANDARD};
use rsa::{
    PrivateKey, PublicKey,
    pkcs8::{DecodePrivateKey, DecodePublicKey},
    pss::{Signature, SigningKey, VerifyingKey},
    signature::{SignatureEncoding, Signer as _, Verifier as _},
};
use sha2::Sha256;

/// Key id of the demo key the simulator accepts.
pub const DEMO_KEY_ID: &str = "5f0c3a1e-8b2d-4c6f-9a7e-2d1b0c9e8f7a";
/// PEM (PKCS#8) of the demo private key, the same bytes as `fixtures/venue_a_demo_key.pem`.
pub const DEMO_PRIVATE_KEY_PEM: &str = include_str!("../../fixtures/venue_a_demo_key.pem");
/// PEM (SPKI) of the demo public key the handshake is verified against.
pub const DEMO_PUBLIC_KEY_PEM: &str = include_str!("../../fixtures/venue_a_demo_key.pub.pem");
/// The path every venue_a WebSocket signature covers.
pub const WS_PATH: &str = "/trade-api/ws/v2";

/// Checks handshake headers against one key id and public key.
#[derive(Debug, Clone)]
pub(crate) struct Verifier {
    key_id: String,
    key: VerifyingKey<Sha256>,
}

impl Verifier {
    /// The verifier of the compiled-in demo key.
    pub fn demo() -> anyhow::Result<Self> {
        let public = PublicKey::from_public_key_pem(DEMO_PUBLIC_KEY_PEM)?;
        Ok(Verifier {
            key_id: DEMO_KEY_ID.to_string(),
            key: VerifyingKey::new(public),
        })
    }

    /// `Ok` when the three headers are present and sign `timestamp + method + path`; otherwise the reason.
    pub fn check(&self, headers: &HeaderMap, method: &str, path: &str) -> Result<(), &'static str> {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let key = header("KALSHI-ACCESS-KEY").ok_or("missing KALSHI-ACCESS-KEY")?;
        let ts = header("KALSHI-ACCESS-TIMESTAMP").ok_or("missing KALSHI-ACCESS-TIMESTAMP")?;
        let sig = header("KALSHI-ACCESS-SIGNATURE").ok_or("missing KALSHI-ACCESS-SIGNATURE")?;
        if key != self.key_id {
            return Err("unknown API key");
        }
        if ts.is_empty() || !ts.bytes().all(|b| b.is_ascii_digit()) {
            return Err("invalid KALSHI-ACCESS-TIMESTAMP");
        }
        let raw = STANDARD.decode(sig).map_err(|_| "invalid signature encoding")?;
        let sig = Signature::try_from(raw.as_slice()).map_err(|_| "invalid signature")?;
        let message = format!("{ts}{method}{path}");
        self.key
            .verify(message.as_bytes(), &sig)
            .map_err(|_| "invalid signature")
    }
}

/// Signs `timestamp_ms + method + path` with a PKCS#8 PEM private key, as a venue_a client does. Provided
/// for tests and demos; the connector has its own implementation.
pub fn sign(private_key_pem: &str, timestamp_ms: i64, method: &str, path: &str) -> anyhow::Result<String> {
    let key = PrivateKey::from_pkcs8_pem(private_key_pem)?;
    let signer = SigningKey::<Sha256>::new(key);
    let message = format!("{timestamp_ms}{method}{path}");
    let sig = signer.sign(message.as_bytes());
    Ok(STANDARD.encode(sig.to_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(key: &str, ts: &str, sig: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("KALSHI-ACCESS-KEY", key.parse().unwrap());
        h.insert("KALSHI-ACCESS-TIMESTAMP", ts.parse().unwrap());
        h.insert("KALSHI-ACCESS-SIGNATURE", sig.parse().unwrap());
        h
    }

    #[test]
    fn accepts_the_demo_signature_and_rejects_others() {
        let v = Verifier::demo().unwrap();
        let ts = 1_778_584_051_412;
        let sig = sign(DEMO_PRIVATE_KEY_PEM, ts, "GET", WS_PATH).unwrap();
        assert_eq!(
            v.check(&headers(DEMO_KEY_ID, &ts.to_string(), &sig), "GET", WS_PATH),
            Ok(())
        );
        // Signed over another timestamp, path or key id.
        assert!(
            v.check(&headers(DEMO_KEY_ID, &(ts + 1).to_string(), &sig), "GET", WS_PATH)
                .is_err()
        );
        assert!(
            v.check(&headers(DEMO_KEY_ID, &ts.to_string(), &sig), "GET", "/trade-api/v2")
                .is_err()
        );
        assert!(
            v.check(&headers("other", &ts.to_string(), &sig), "GET", WS_PATH)
                .is_err()
        );
        assert!(
            v.check(&headers(DEMO_KEY_ID, &ts.to_string(), "bm90IGEgc2ln"), "GET", WS_PATH)
                .is_err()
        );
        assert!(v.check(&HeaderMap::new(), "GET", WS_PATH).is_err());
    }
}
