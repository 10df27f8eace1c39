//! Arbitrage episodes on SQLite: the batch is one `BEGIN IMMEDIATE` transaction of per-row upserts on the
//! writer connection.

use crossbook_core::arb::Episode;
use sqlx::sqlite::SqlitePool;

use super::{EPISODE_COLS, episode_args};
use crate::StoreResult;

fn upsert_sql() -> String {
    format!(
        "INSERT INTO arb_episodes ({EPISODE_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (event_id, outcome_key, buy_yes_market, buy_no_market, first_seen_at) DO UPDATE SET \
         last_seen_at = max(arb_episodes.last_seen_at, excluded.last_seen_at), \
         interval_code = excluded.interval_code, category = excluded.category, \
         net_micros = excluded.net_micros, peak_micros = max(arb_episodes.peak_micros, excluded.peak_micros), \
         opportunity = excluded.opportunity"
    )
}

pub(super) async fn record_episodes(write: &SqlitePool, episodes: &[Episode]) -> StoreResult<()> {
    let sql = upsert_sql();
    let mut tx = crate::sqlite::begin(write).await?;
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
            .execute(&mut *tx)
            .await?;
    }
    Ok(tx.commit().await?)
}
