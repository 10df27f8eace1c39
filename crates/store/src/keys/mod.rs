//! Customers and API keys (contracts §3): the same statements on both backends.
//!
//! A key is `cbk_` + 32 base62 characters, shown once and stored only as its SHA-256 hash, with a short
//! public prefix for listing and revoking. Keys created with the same `--name` belong to the same customer.

use crossbook_core::{Plan, Timestamp};
use rand::{Rng, distr::Alphanumeric};
use sha2::{Digest, Sha256};

use crate::{
    StoreError, StoreResult,
    backend::{Backend, Exec},
    codec::{self, Cols},
    sql::{Arg, Sql},
};

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

// ------------------------------------------------------------------------------------------------ shared SQL

async fn list_keys<E: Exec>(ex: &E) -> StoreResult<Vec<ApiKeyInfo>> {
    let mut q = Sql::new("SELECT ");
    q.push(KEY_COLS)
        .push(" FROM api_keys k JOIN customers c ON c.id = k.customer_id ORDER BY k.created_at DESC, k.id DESC");
    ex.rows(&q).await?.iter().map(key_row).collect()
}

async fn revoke_key<E: Exec>(ex: &E, prefix: &str) -> StoreResult<u64> {
    // An empty prefix would match every key; revoking everything is never what `keys revoke ""` means.
    if prefix.is_empty() {
        return Ok(0);
    }
    // substr() rather than LIKE: prefixes are case-sensitive base62 and SQLite's LIKE is not.
    let mut q = Sql::new("UPDATE api_keys SET revoked_at = ");
    q.int(Timestamp::now().millis())
        .push(" WHERE revoked_at IS NULL AND substr(prefix, 1, length(")
        .text(prefix)
        .push(")) = ")
        .text(prefix);
    ex.exec(&q).await
}

async fn find_key<E: Exec>(ex: &E, key_hash: &[u8]) -> StoreResult<Option<KeyOwner>> {
    let mut q = Sql::new("SELECT id, customer_id, plan FROM api_keys WHERE key_hash = ");
    q.bytes(key_hash).push(" AND revoked_at IS NULL");
    ex.rows(&q).await?.first().map(key_owner).transpose()
}

fn key_owner(r: &impl Cols) -> StoreResult<KeyOwner> {
    Ok(KeyOwner {
        key_id: r.int("id")?,
        customer_id: r.int("customer_id")?,
        plan: plan(&r.text("plan")?)?,
    })
}

const INSERT_CUSTOMER: &str = "INSERT INTO customers (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";
/// The key of the customer named `$1` (created just before when new).
const INSERT_KEY: &str = "INSERT INTO api_keys (customer_id, key_hash, prefix, plan, created_at) \
     SELECT id, $2, $3, $4, $5 FROM customers WHERE name = $1 RETURNING id, customer_id";

#[async_trait::async_trait]
impl<B: Backend> AccountStore for B {
    async fn create_key(&self, name: &str, plan: Plan) -> StoreResult<NewKey> {
        let key = generate_key();
        let prefix: String = key.chars().take(PREFIX_LEN).collect();
        let now = Timestamp::now();
        let customer = Sql::with_args(
            INSERT_CUSTOMER,
            vec![Arg::Text(name.to_string()), Arg::Int(now.millis())],
        );
        let key_row = Sql::with_args(
            INSERT_KEY,
            vec![
                Arg::Text(name.to_string()),
                Arg::Bytes(hash_key(&key)),
                Arg::Text(prefix.clone()),
                Arg::Text(plan.as_str().to_string()),
                Arg::Int(now.millis()),
            ],
        );
        let rows = self.writer().transaction(&[customer, key_row]).await?;
        let row = rows.last().and_then(|r| r.first()).ok_or(StoreError::NotFound)?;
        let (id, customer_id) = (row.int("id")?, row.int("customer_id")?);
        let info = ApiKeyInfo {
            id,
            prefix,
            customer_id,
            customer_name: name.to_string(),
            plan,
            created_at: now,
            revoked_at: None,
        };
        Ok(NewKey { key, info })
    }

    async fn list_keys(&self) -> StoreResult<Vec<ApiKeyInfo>> {
        list_keys(self.reader()).await
    }

    async fn revoke_key(&self, prefix: &str) -> StoreResult<u64> {
        revoke_key(self.writer(), prefix).await
    }

    async fn find_key(&self, key_hash: &[u8]) -> StoreResult<Option<KeyOwner>> {
        find_key(self.reader(), key_hash).await
    }
}

/// Columns of `api_keys` joined with `customers` read by [`key_row`].
pub(crate) const KEY_COLS: &str =
    "k.id, k.prefix, k.customer_id, c.name AS customer_name, k.plan, k.created_at, k.revoked_at";

pub(crate) fn key_row(r: &impl Cols) -> StoreResult<ApiKeyInfo> {
    Ok(ApiKeyInfo {
        id: r.int("id")?,
        prefix: r.text("prefix")?,
        customer_id: r.int("customer_id")?,
        customer_name: r.text("customer_name")?,
        plan: plan(&r.text("plan")?)?,
        created_at: Timestamp::from_millis(r.int("created_at")?),
        revoked_at: r.opt_int("revoked_at")?.map(Timestamp::from_millis),
    })
}

pub(crate) fn plan(s: &str) -> StoreResult<Plan> {
    s.parse::<Plan>().map_err(codec::decode_error)
}
