//! Snapshots on SQLite: many rows per statement, in key order, in one `BEGIN IMMEDIATE` transaction.

use crossbook_core::BookSnapshot;
use sqlx::{AssertSqlSafe, sqlite::SqlitePool};

use crate::{StoreResult, codec};

/// Snapshot rows per `INSERT` (7 parameters each, far below SQLite's 32,766-parameter limit).
const SNAPSHOT_ROWS_PER_STATEMENT: usize = 256;

/// The upsert of a full chunk of [`SNAPSHOT_ROWS_PER_STATEMENT`] rows.
static FULL_SNAPSHOT_UPSERT: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| upsert_snapshots_sql(SNAPSHOT_ROWS_PER_STATEMENT));

/// The snapshot upsert for `rows` rows.
fn upsert_snapshots_sql(rows: usize) -> String {
    let mut sql =
        String::from("INSERT INTO book_snapshots (exchange, market_id, asset_id, ts, bids, asks, no_bids) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str("(?,?,?,?,?,?,?)");
    }
    sql.push_str(
        " ON CONFLICT (exchange, market_id, asset_id, ts) DO UPDATE SET \
         bids = excluded.bids, asks = excluded.asks, no_bids = excluded.no_bids",
    );
    sql
}

pub(super) async fn insert_snapshots(write: &SqlitePool, batch: &[BookSnapshot]) -> StoreResult<()> {
    if batch.is_empty() {
        return Ok(());
    }
    // Rows go in in key order, many per statement: each statement is one round trip to sqlx's SQLite
    // thread, and ordered inserts touch each B-tree page once. A key repeated in the batch keeps its last
    // state (the upsert applies rows in order).
    let mut rows: Vec<&BookSnapshot> = batch.iter().collect();
    rows.sort_by(|a, b| {
        (a.exchange.as_str(), &a.market_id, &a.asset_id, a.timestamp).cmp(&(
            b.exchange.as_str(),
            &b.market_id,
            &b.asset_id,
            b.timestamp,
        ))
    });
    let mut tx = crate::backend::sqlite_begin(write).await?;
    for chunk in rows.chunks(SNAPSHOT_ROWS_PER_STATEMENT) {
        // Every chunk but the last has the full size: its statement text is built once per process.
        let text = if chunk.len() == SNAPSHOT_ROWS_PER_STATEMENT {
            FULL_SNAPSHOT_UPSERT.clone()
        } else {
            upsert_snapshots_sql(chunk.len())
        };
        let mut q = sqlx::query(AssertSqlSafe(text));
        for s in chunk {
            q = q
                .bind(s.exchange.as_str())
                .bind(s.market_id.as_str())
                .bind(codec::asset_key(s.asset_id.as_deref()))
                .bind(s.timestamp.millis())
                .bind(codec::encode_ladder(&s.bids))
                .bind(codec::encode_ladder(&s.asks))
                .bind(codec::encode_ladder(&s.no_bids));
        }
        q.execute(&mut *tx).await?;
    }
    Ok(tx.commit().await?)
}
