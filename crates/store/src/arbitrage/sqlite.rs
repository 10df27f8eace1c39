//! Arbitrage episodes on SQLite: the batch is one `BEGIN IMMEDIATE` transaction of per-row upserts on the
//! writer connection.

use crossbook_core::arb::Episode;
use sqlx::sqlite::SqlitePool;

use super::{EPISODE_COLS, episode_args, on_conflict};
use crate::StoreResult;

fn upsert_sql() -> String {
    format!(
        "INSERT INTO arb_episodes ({EPISODE_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) {}",
        on_conflict("max")
    )
}

pub(super) async fn record_episodes(write: &SqlitePool, episodes: &[Episode]) -> StoreResult<()> {
    let sql = upsert_sql();
    let mut tx = crate::backend::sqlite_begin(write).await?;
    for e in episodes {
        let a = episode_args(e)?;
        sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(a.event_id)
            .bind(a.outcome_key)
            .bind(a.buy_yes_market)
            .bind(a.buy_no_market)
            .bind(a.first_seen_at)
            .bind(a.last_seen_at)
            .bind(a.interval_code)
            .bind(a.category)
            .bind(a.net_micros)
            .bind(a.peak_micros)
            .bind(a.opportunity)
            .bind(a.fee_model)
            .execute(&mut *tx)
            .await?;
    }
    Ok(tx.commit().await?)
}
