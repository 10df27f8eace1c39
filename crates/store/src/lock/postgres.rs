//! [`LeaderLock`](super::LeaderLock) on PostgreSQL: a session advisory lock on a dedicated connection (not from the pool, so the
//! pool can never hand the locked session to a query or close it).

use std::{future::Future, pin::Pin, time::Duration};

use sqlx::{
    Connection,
    postgres::{PgConnection, PgPool},
};

use super::{GuardImpl, LEADER_LOCK_KEY, LeaderGuard, PING_INTERVAL};
use crate::{StoreError, StoreResult, postgres::CONNECT_TIMEOUT};

/// A ping that takes longer than this counts as a dead connection. With [`PING_INTERVAL`] it bounds how late
/// a leader notices that its database is gone (2 s), after which it stops ingesting.
const PING_TIMEOUT: Duration = Duration::from_secs(1);

struct PgGuard {
    conn: Option<PgConnection>,
}

impl GuardImpl for PgGuard {
    fn lost(&mut self) -> Pin<Box<dyn Future<Output = String> + Send + '_>> {
        Box::pin(async move {
            let Some(conn) = self.conn.as_mut() else {
                return "the lock connection is closed".to_string();
            };
            loop {
                tokio::time::sleep(PING_INTERVAL).await;
                match tokio::time::timeout(PING_TIMEOUT, conn.ping()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        self.conn = None;
                        return format!("the lock connection failed: {e}");
                    }
                    Err(_) => {
                        self.conn = None;
                        return format!("the lock connection did not answer within {PING_TIMEOUT:?}");
                    }
                }
            }
        })
    }

    fn release(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async move {
            if let Some(mut conn) = self.conn {
                // Closing the session releases the lock; unlock first so the release is immediate even if the
                // close handshake is slow.
                let _ = sqlx::query("SELECT pg_advisory_unlock($1)")
                    .bind(LEADER_LOCK_KEY)
                    .execute(&mut conn)
                    .await;
                let _ = conn.close().await;
            }
        })
    }
}

pub(super) async fn try_leader_lock(pool: &PgPool) -> StoreResult<Option<LeaderGuard>> {
    let opts = pool.connect_options();
    let mut conn = tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&opts))
        .await
        .map_err(|_| StoreError::Unavailable("no answer while opening the lock connection".into()))??;
    let got: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(LEADER_LOCK_KEY)
        .fetch_one(&mut conn)
        .await?;
    if got {
        Ok(Some(LeaderGuard::new(PgGuard { conn: Some(conn) })))
    } else {
        let _ = conn.close().await;
        Ok(None)
    }
}
