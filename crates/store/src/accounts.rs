//! Customers and API keys (contracts §3).
//!
//! A key is `cbk_` + 32 base62 characters, shown once and stored only as its SHA-256 hash, with a short
//! public prefix for listing and revoking. Keys created with the same `--name` belong to the same customer.

use crossbook_core::{Plan, Timestamp};
use rand::{Rng, distr::Alphanumeric};
use sha2::{Digest, Sha256};

use crate::StoreResult;

/// Characters of the key kept in clear as its prefix (`cbk_` + 8).
pub const PREFIX_LEN: usize = 12;

/// A freshly created key: the only time its secret exists in clear.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub key: String,
    pub info: ApiKeyInfo,
}

/// What `keys list` shows of a key.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKeyInfo {
    pub id: i64,
    pub prefix: String,
    pub customer_id: i64,
    pub customer_name: String,
    pub plan: Plan,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

/// Who a valid, unrevoked key belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOwner {
    pub key_id: i64,
    pub customer_id: i64,
    pub plan: Plan,
}

/// Generates a new key string: `cbk_` + 32 base62 characters.
pub fn generate_key() -> String {
    let body: String = rand::rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect();
    format!("cbk_{body}")
}

/// SHA-256 of the key string, as stored. A slow KDF buys nothing for 190-bit random keys.
pub fn hash_key(key: &str) -> Vec<u8> {
    Sha256::digest(key.as_bytes()).to_vec()
}

/// The accounts concern.
#[async_trait::async_trait]
pub trait AccountStore: Send + Sync {
    /// Creates a key for the customer called `name` (created if new) on `plan`.
    async fn create_key(&self, name: &str, plan: Plan) -> StoreResult<NewKey>;
    /// Every key, newest first.
    async fn list_keys(&self) -> StoreResult<Vec<ApiKeyInfo>>;
    /// Revokes the keys whose prefix starts with `prefix`; returns how many were revoked.
    /// The caller refuses prefixes that match several keys (see [`AccountStore::list_keys`]).
    async fn revoke_key(&self, prefix: &str) -> StoreResult<u64>;
    /// The owner of an unrevoked key with this hash.
    async fn find_key(&self, key_hash: &[u8]) -> StoreResult<Option<KeyOwner>>;
}
