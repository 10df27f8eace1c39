//! A short-lived cache of rendered JSON responses for hot read routes (search; `/v1/arbitrage/current`, with
//! its own shorter TTL `arbitrage_cache_ms`, because the books move continuously).
//!
//! Search answers depend only on the query and the catalog, and the catalog changes at most once per catalog
//! sync (every minute by default). Serving the same query from memory for `search_cache_ms` (1 s by default)
//! makes a popular query cost a hash lookup instead of several index reads, which is what lets the search
//! route sustain tens of thousands of requests per second on two cores. A result is never older than the TTL
//! (plus the time of one recomputation, see below), in this process or across replicas, so no invalidation
//! message is needed. `search_cache_ms = 0` turns it off.
//!
//! When an entry expires, the first request recomputes it while concurrent requests for the same key keep
//! getting the previous body: a popular query expiring under load costs one database read, not one per
//! waiting connection.

use std::{
    collections::HashMap,
    future::Future,
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    http::header,
    response::{IntoResponse, Response},
};
use serde::Serialize;

use crate::error::{ApiError, ApiResult, JSON_CONTENT_TYPE};

/// Entries kept at most; beyond it expired entries are dropped, then everything (a burst of distinct queries
/// should not grow memory without bound).
const MAX_ENTRIES: usize = 8_192;

/// Rendered bodies by key, each valid for the TTL.
#[derive(Debug)]
pub struct ResponseCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    body: Bytes,
    /// A request is recomputing this expired entry; others serve `body` meanwhile.
    refreshing: bool,
}

/// What a lookup tells the caller to do.
enum Lookup {
    Hit(Bytes),
    /// Compute the value (the entry is absent, or expired and this caller now refreshes it).
    Miss,
}

impl ResponseCache {
    pub fn new(ttl: Duration) -> Self {
        ResponseCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn lookup(&self, key: &str) -> Lookup {
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(key) {
            Some(e) if e.at.elapsed() < self.ttl || e.refreshing => Lookup::Hit(e.body.clone()),
            Some(e) => {
                e.refreshing = true;
                Lookup::Miss
            }
            None => Lookup::Miss,
        }
    }

    /// Lets the next request retry after a failed recomputation.
    fn abandon(&self, key: &str) {
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = map.get_mut(key) {
            e.refreshing = false;
        }
    }

    fn insert(&self, key: String, body: Bytes) {
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_ENTRIES {
            let ttl = self.ttl;
            map.retain(|_, e| e.at.elapsed() < ttl);
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
        }
        map.insert(
            key,
            Entry {
                at: Instant::now(),
                body,
                refreshing: false,
            },
        );
    }

    /// The cached body for `key`, or `compute`'s value rendered as JSON (and cached if the TTL is not zero).
    /// `key` must determine the answer completely (the route and every parameter, normalised). Errors are
    /// never cached.
    pub async fn json<T, F>(&self, key: String, compute: F) -> ApiResult<Response>
    where
        T: Serialize,
        F: Future<Output = ApiResult<T>>,
    {
        if self.ttl.is_zero() {
            return Ok(crate::json::Json(compute.await?).into_response());
        }
        let body = match self.lookup(&key) {
            Lookup::Hit(b) => b,
            Lookup::Miss => {
                let rendered = compute.await.and_then(|value| {
                    serde_json::to_vec(&value)
                        .map_err(|e| ApiError::internal(anyhow::Error::new(e).context("serialising a response")))
                });
                match rendered {
                    Ok(bytes) => {
                        let bytes = Bytes::from(bytes);
                        self.insert(key, bytes.clone());
                        bytes
                    }
                    Err(e) => {
                        self.abandon(&key);
                        return Err(e);
                    }
                }
            }
        };
        Ok(([(header::CONTENT_TYPE, JSON_CONTENT_TYPE)], body).into_response())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    impl ResponseCache {
        fn is_fresh(&self, key: &str) -> bool {
            let map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            map.get(key).is_some_and(|e| e.at.elapsed() < self.ttl)
        }
    }

    async fn body(r: Response) -> Bytes {
        axum::body::to_bytes(r.into_body(), 1024).await.unwrap()
    }

    /// Waits (real time: the cache reads `Instant`, which a paused Tokio clock does not move) until `key`
    /// has expired.
    async fn until_expired(cache: &ResponseCache, key: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while cache.is_fresh(key) {
            assert!(Instant::now() < deadline, "entry never expired");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    #[tokio::test]
    async fn serves_the_cached_body_within_the_ttl_only() {
        let cache = ResponseCache::new(Duration::from_millis(50));
        let calls = AtomicUsize::new(0);
        let compute = || async { Ok::<_, ApiError>(vec![calls.fetch_add(1, Ordering::SeqCst)]) };
        assert_eq!(body(cache.json("k".into(), compute()).await.unwrap()).await, "[0]");
        assert_eq!(body(cache.json("k".into(), compute()).await.unwrap()).await, "[0]");
        assert_eq!(body(cache.json("other".into(), compute()).await.unwrap()).await, "[1]");
        until_expired(&cache, "k").await;
        assert_eq!(body(cache.json("k".into(), compute()).await.unwrap()).await, "[2]");
    }

    #[tokio::test]
    async fn errors_are_not_cached_and_zero_ttl_disables() {
        let cache = ResponseCache::new(Duration::from_secs(60));
        let r = cache
            .json::<Vec<u8>, _>("k".into(), async { Err(ApiError::invalid("q", "bad")) })
            .await;
        assert!(r.is_err());
        assert!(!cache.is_fresh("k"));
        assert_eq!(
            body(cache.json("k".into(), async { Ok::<_, ApiError>(7) }).await.unwrap()).await,
            "7"
        );
        let off = ResponseCache::new(Duration::ZERO);
        off.json("k".into(), async { Ok::<_, ApiError>(1) }).await.unwrap();
        assert!(!off.is_fresh("k"));
    }

    #[tokio::test]
    async fn an_expired_entry_is_recomputed_by_one_caller_while_others_get_the_previous_body() {
        let cache = ResponseCache::new(Duration::from_millis(20));
        cache.json("k".into(), async { Ok::<_, ApiError>(1) }).await.unwrap();
        until_expired(&cache, "k").await;
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let (finish_tx, finish_rx) = tokio::sync::oneshot::channel::<()>();
        let refresher = cache.json("k".into(), async move {
            let _ = started_tx.send(());
            let _ = finish_rx.await;
            Ok::<_, ApiError>(2)
        });
        let other = async {
            started_rx.await.unwrap();
            let r = cache.json("k".into(), async { Ok::<_, ApiError>(3) }).await.unwrap();
            let _ = finish_tx.send(());
            r
        };
        let (a, b) = tokio::join!(refresher, other);
        assert_eq!(body(b).await, "1", "a concurrent caller gets the previous body");
        assert_eq!(body(a.unwrap()).await, "2");
        assert_eq!(
            body(cache.json("k".into(), async { Ok::<_, ApiError>(4) }).await.unwrap()).await,
            "2"
        );
    }
}
