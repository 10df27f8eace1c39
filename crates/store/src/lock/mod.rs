//! The ingest leader lock: exactly one process ingests (and runs the workers fed by ingestion) at a time
//! (contracts §11, `serve --role ingest|api` on a shared PostgreSQL).
//!
//! - PostgreSQL: a session advisory lock (`pg_try_advisory_lock`) taken on a dedicated connection, outside
//!   the pool, held for as long as the [`LeaderGuard`] lives. When the holder process dies its session ends
//!   and the lock is free for the next [`LeaderLock::try_leader_lock`]. The guard pings its connection every
//!   [`PING_INTERVAL`]; [`LeaderGuard::lost`] resolves when the connection fails, so the holder stops
//!   leading (the server may already have released the lock).
//! - SQLite: an exclusive OS file lock on `<database file>-leader.lock` (`flock` semantics, released by the
//!   OS when the process dies), so two processes on one SQLite file never both ingest. An in-memory database
//!   is private to its process: its guard always succeeds. The guard is never lost.

use std::{future::Future, pin::Pin, time::Duration};

use crate::{
    StoreResult,
    backend::{Backend, Pools},
};

mod postgres;
mod sqlite;

/// The advisory-lock key of the ingest leader (an arbitrary constant: "crossbook" + "ingest").
pub const LEADER_LOCK_KEY: i64 = 0x63_62_69_6e_67_73_74_01;

/// How often a PostgreSQL guard checks that its connection (and so its lock) is still alive.
pub const PING_INTERVAL: Duration = Duration::from_secs(1);

/// Backend side of a held lock.
pub(crate) trait GuardImpl: Send {
    /// Resolves when the lock is no longer held, with the reason.
    fn lost(&mut self) -> Pin<Box<dyn Future<Output = String> + Send + '_>>;
    /// Releases the lock (closes the dedicated connection or unlocks the file).
    fn release(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// The leader lock, held until dropped or [`released`](LeaderGuard::release).
pub struct LeaderGuard {
    inner: Box<dyn GuardImpl>,
}

impl std::fmt::Debug for LeaderGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LeaderGuard")
    }
}

impl LeaderGuard {
    pub(crate) fn new(inner: impl GuardImpl + 'static) -> Self {
        LeaderGuard { inner: Box::new(inner) }
    }

    /// Resolves (with the reason) when the lock is lost: its PostgreSQL connection failed or was terminated.
    /// Never resolves for SQLite. Cancel-safe.
    pub async fn lost(&mut self) -> String {
        self.inner.lost().await
    }

    /// Releases the lock now (dropping the guard releases it too, without waiting).
    pub async fn release(self) {
        self.inner.release().await
    }
}

/// Takes the ingest leader lock.
#[async_trait::async_trait]
pub trait LeaderLock: Send + Sync {
    /// One attempt: `Ok(Some(guard))` when this process now holds the lock, `Ok(None)` when another process
    /// does. Errors when the database cannot be reached.
    async fn try_leader_lock(&self) -> StoreResult<Option<LeaderGuard>>;
}

/// Each backend locks in its own way (an OS file lock, an advisory lock); nothing is shared but the guard.
#[async_trait::async_trait]
impl<B: Backend> LeaderLock for B {
    async fn try_leader_lock(&self) -> StoreResult<Option<LeaderGuard>> {
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::try_leader_lock(write).await,
            Pools::Postgres(pool) => postgres::try_leader_lock(pool).await,
        }
    }
}
