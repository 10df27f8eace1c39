//! Snapshot retention on SQLite: deletes in small batches, book by book.
//!
//! SQLite has one writer. A single `DELETE … WHERE ts < cutoff` over a month of snapshots would hold it for
//! seconds and stall ingestion, so retention deletes at most `max_rows` rows per call, each statement a short
//! write of its own, and the worker calls again until nothing is left.
//!
//! There is no index on `ts` alone (it would repeat every row's book key and double the table's size, see
//! migration 0006): a call walks the books in primary-key order, one index seek per book, and deletes each
//! book's oldest rows through the primary key, whose last column is `ts`.

use crossbook_core::Timestamp;
use sqlx::{Row, sqlite::SqlitePool};

use crate::{StoreResult, retention::Pruned};

/// The first book after `after` in key order (the first book when `after` is `None`).
async fn next_book(
    read: &SqlitePool,
    after: Option<&(String, String, String)>,
) -> StoreResult<Option<(String, String, String)>> {
    let row = match after {
        None => {
            sqlx::query("SELECT exchange, market_id, asset_id FROM book_snapshots ORDER BY exchange, market_id, asset_id LIMIT 1")
                .fetch_optional(read)
                .await?
        }
        Some((e, m, a)) => {
            sqlx::query(
                "SELECT exchange, market_id, asset_id FROM book_snapshots WHERE (exchange, market_id, asset_id) > ($1, $2, $3) \
                 ORDER BY exchange, market_id, asset_id LIMIT 1",
            )
            .bind(e)
            .bind(m)
            .bind(a)
            .fetch_optional(read)
            .await?
        }
    };
    Ok(match row {
        Some(r) => Some((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)),
        None => None,
    })
}

/// Deletes up to `max_rows` snapshots older than `cutoff` (each book's oldest first), one short write per book.
pub(crate) async fn prune(
    read: &SqlitePool,
    write: &SqlitePool,
    cutoff: Timestamp,
    max_rows: u32,
) -> StoreResult<Pruned> {
    let mut budget = i64::from(max_rows.max(1));
    let mut rows = 0u64;
    let mut book = next_book(read, None).await?;
    while let Some(b) = book {
        let old: Option<i64> = sqlx::query_scalar(
            "SELECT ts FROM book_snapshots WHERE exchange = $1 AND market_id = $2 AND asset_id = $3 AND ts < $4 \
             ORDER BY ts LIMIT 1",
        )
        .bind(&b.0)
        .bind(&b.1)
        .bind(&b.2)
        .bind(cutoff.millis())
        .fetch_optional(read)
        .await?;
        if old.is_some() {
            let done = sqlx::query(
                "DELETE FROM book_snapshots WHERE exchange = $1 AND market_id = $2 AND asset_id = $3 AND ts IN \
                 (SELECT ts FROM book_snapshots WHERE exchange = $1 AND market_id = $2 AND asset_id = $3 AND ts < $4 \
                  ORDER BY ts LIMIT $5)",
            )
            .bind(&b.0)
            .bind(&b.1)
            .bind(&b.2)
            .bind(cutoff.millis())
            .bind(budget)
            .execute(write)
            .await?;
            let n = done.rows_affected();
            rows += n;
            budget -= n as i64;
            if budget <= 0 {
                // The budget is spent: more may remain, here or in later books.
                return Ok(Pruned {
                    rows,
                    partitions: 0,
                    done: false,
                });
            }
        }
        book = next_book(read, Some(&b)).await?;
    }
    Ok(Pruned {
        rows,
        partitions: 0,
        done: true,
    })
}
