//! Snapshot retention on SQLite: deletes in small batches.
//!
//! SQLite has one writer. A single `DELETE … WHERE ts < cutoff` over a month of snapshots would hold it for
//! seconds and stall ingestion, so retention deletes at most `max_rows` of the oldest rows per transaction
//! (through the `book_snapshots_ts` index) and the worker calls again until nothing is left.

use crossbook_core::Timestamp;
use sqlx::sqlite::SqlitePool;

use crate::{StoreResult, books::Pruned};

/// Deletes up to `max_rows` snapshots older than `cutoff`, oldest first, in one short write transaction.
pub(super) async fn prune(write: &SqlitePool, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned> {
    let max_rows = max_rows.max(1);
    let done = sqlx::query(
        "DELETE FROM book_snapshots WHERE (exchange, market_id, asset_id, ts) IN \
         (SELECT exchange, market_id, asset_id, ts FROM book_snapshots WHERE ts < $1 ORDER BY ts LIMIT $2)",
    )
    .bind(cutoff.millis())
    .bind(i64::from(max_rows))
    .execute(write)
    .await?;
    let rows = done.rows_affected();
    Ok(Pruned {
        rows,
        partitions: 0,
        done: rows < u64::from(max_rows),
    })
}
