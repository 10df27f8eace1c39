//! The key cache: `X-API-Key` → its owner and plan, through a small in-memory cache in front of
//! [`AccountStore::find_key`](crossbook_store::AccountStore::find_key).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use crossbook_store::{KeyOwner, Store, StoreResult, accounts::hash_key};

/// In-memory cache of key lookups, valid and invalid, in front of the store.
///
/// Entries live for `ttl` (config `key_cache_seconds`, default 5 s), so a revoked key stops working within
/// that time on every process, with no invalidation protocol; a key that failed is also remembered for `ttl`,
/// so floods of bad keys do not reach the database. Keys that cannot be ours (not `cbk_` + 32 base62
/// characters) never reach it either. The map is keyed by the key's SHA-256 and bounded: when full it is
/// purged of expired entries, then cleared.
pub struct KeyCache {
    ttl: Duration,
    // A std mutex: the critical sections are a map lookup or insert and never hold it across an `.await`.
    entries: Mutex<HashMap<Vec<u8>, CachedKey>>,
}

struct CachedKey {
    owner: Option<KeyOwner>,
    expires: Instant,
}

/// Most entries the cache holds before it is purged.
const KEY_CACHE_MAX: usize = 100_000;

/// Whether `key` has the shape of our keys: `cbk_` followed by 32 ASCII letters and digits.
pub fn looks_like_key(key: &str) -> bool {
    key.strip_prefix("cbk_")
        .is_some_and(|body| body.len() == 32 && body.bytes().all(|b| b.is_ascii_alphanumeric()))
}

impl KeyCache {
    pub fn new(ttl: Duration) -> Self {
        KeyCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The owner of `key` if it is valid and unrevoked (as of at most `ttl` ago).
    pub async fn lookup(&self, store: &dyn Store, key: &str) -> StoreResult<Option<KeyOwner>> {
        if !looks_like_key(key) {
            return Ok(None);
        }
        let hash = hash_key(key);
        let now = Instant::now();
        if let Some(hit) = self.lock().get(&hash).filter(|e| e.expires > now) {
            return Ok(hit.owner.clone());
        }
        let owner = store.find_key(&hash).await?;
        if !self.ttl.is_zero() {
            let mut map = self.lock();
            if map.len() >= KEY_CACHE_MAX {
                map.retain(|_, e| e.expires > now);
                if map.len() >= KEY_CACHE_MAX {
                    map.clear();
                }
            }
            map.insert(
                hash,
                CachedKey {
                    owner: owner.clone(),
                    expires: Instant::now() + self.ttl,
                },
            );
        }
        Ok(owner)
    }

    /// Drops expired entries (called periodically).
    pub fn purge_expired(&self) {
        let now = Instant::now();
        self.lock().retain(|_, e| e.expires > now);
    }

    /// Entries currently held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, CachedKey>> {
        // A panic while holding the lock cannot leave the map inconsistent (single insert/remove calls).
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_shape() {
        assert!(looks_like_key("cbk_0123456789abcdefghijABCDEFGHIJkl"));
        for bad in [
            "",
            "cbk_",
            "cbk_short",
            "xbk_0123456789abcdefghijABCDEFGHIJkl",
            "cbk_0123456789abcdefghijABCDEFGHIJk!",
        ] {
            assert!(!looks_like_key(bad), "{bad}");
        }
    }
}
