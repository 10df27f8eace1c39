//! [`ArbitrageStore`] on SQLite: reads through the shared SQL of [`crate::arbitrage`], the episode batch as
//! one `BEGIN IMMEDIATE` transaction of upserts on the writer connection.

use crossbook_core::{
    Timestamp,
    arb::{Episode, Listing, PairOverride},
};

use super::SqliteStore;
use crate::{
    StoreResult,
    arbitrage::{self, ArbitrageStore, EPISODE_COLS, HistoryPage, HistoryQuery, StoredOverride, episode_args},
};

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

#[async_trait::async_trait]
impl ArbitrageStore for SqliteStore {
    async fn record_episodes(&self, episodes: &[Episode]) -> StoreResult<()> {
        if episodes.is_empty() {
            return Ok(());
        }
        let sql = upsert_sql();
        let mut tx = self.begin().await?;
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

    async fn recent_episodes(&self, since: Timestamp) -> StoreResult<Vec<Episode>> {
        arbitrage::recent_episodes(&self.read, since).await
    }

    async fn episode_history(&self, q: &HistoryQuery) -> StoreResult<HistoryPage> {
        arbitrage::episode_history(&self.read, q).await
    }

    async fn add_pair_override(&self, pair: &PairOverride, at: Timestamp) -> StoreResult<bool> {
        arbitrage::add_pair_override(&self.write, pair, at).await
    }

    async fn pair_overrides(&self) -> StoreResult<Vec<StoredOverride>> {
        arbitrage::pair_overrides(&self.read).await
    }

    async fn remove_pair_override(&self, market_id: &str) -> StoreResult<u64> {
        arbitrage::remove_pair_override(&self.write, market_id).await
    }

    async fn arbitrage_listings(&self) -> StoreResult<Vec<Listing>> {
        arbitrage::arbitrage_listings(&self.read).await
    }
}
