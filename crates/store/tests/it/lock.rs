//! The ingest leader lock on both backends: one holder at a time, released on drop, and on PostgreSQL a guard
//! that notices when its session is terminated.

use std::{sync::Arc, time::Duration};

use crate::testing::{self, for_each_backend};
use crossbook_store::{LeaderLock, Store, postgres::PgStore, sqlite::SqliteStore};
use sqlx::Connection as _;

/// A second, independent store on the same database (what a second process would open).
async fn second_store(url: &str) -> Arc<dyn Store> {
    if url.starts_with("sqlite:") {
        Arc::new(SqliteStore::open(url).await.unwrap())
    } else {
        Arc::new(PgStore::open(url).await.unwrap())
    }
}

#[tokio::test]
async fn one_holder_at_a_time_and_released_on_drop() {
    for_each_backend(async |db| {
        let other = second_store(&db.url).await;
        let first = db
            .store
            .try_leader_lock()
            .await
            .unwrap()
            .expect("the first attempt takes the lock");
        assert!(
            other.try_leader_lock().await.unwrap().is_none(),
            "a second holder while the first lives"
        );
        assert!(
            db.store.try_leader_lock().await.unwrap().is_none(),
            "the lock is per holder, not re-entrant per store"
        );
        first.release().await;
        let second = other.try_leader_lock().await.unwrap().expect("free after release");
        // Dropping (a process dying) releases it too.
        drop(second);
        let third = testing::eventually(
            "the dropped guard releasing the lock",
            Duration::from_secs(10),
            async || db.store.try_leader_lock().await.unwrap(),
        )
        .await;
        third.release().await;
        other.close().await;
    })
    .await;
}

#[tokio::test]
async fn in_memory_sqlite_always_leads() {
    let store = SqliteStore::open("sqlite::memory:").await.unwrap();
    let g = store.try_leader_lock().await.unwrap();
    assert!(g.is_some());
}

#[tokio::test]
async fn postgres_guard_notices_a_terminated_session() {
    let Some(db) = testing::postgres_database().await else {
        return;
    };
    db.store.migrate().await.unwrap();
    let mut guard = db.store.try_leader_lock().await.unwrap().expect("lock");
    // Another session kills the one holding the advisory lock (what a failover or an admin would do).
    let mut admin = sqlx::postgres::PgConnection::connect(&db.url).await.unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_database d ON d.oid = l.database \
         WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert_eq!(killed, vec![true]);
    let reason = tokio::time::timeout(Duration::from_secs(15), guard.lost())
        .await
        .expect("the guard notices the dead session within a few pings");
    assert!(reason.contains("lock connection"), "{reason}");
    // The lock is free for the next holder.
    let next = db.store.try_leader_lock().await.unwrap();
    assert!(next.is_some());
    drop(next);
    let _ = admin.close().await;
    db.cleanup().await;
}
