//! [`ArbitrageStore`] on PostgreSQL: reads through the shared SQL of [`crate::arbitrage`]; the episode batch
//! is one `INSERT … SELECT FROM UNNEST(…) ON CONFLICT DO UPDATE` statement (one round trip per scanner pass).

use std::collections::HashMap;

use crossbook_core::{
    Timestamp,
    arb::{Episode, Listing, PairOverride},
};

use super::PgStore;
use crate::{
    StoreResult,
    arbitrage::{self, ArbitrageStore, EPISODE_COLS, HistoryPage, HistoryQuery, StoredOverride, episode_args},
};

fn upsert_sql() -> String {
    format!(
        "INSERT INTO arb_episodes ({EPISODE_COLS}) \
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], \
                              $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::text[]) \
         ON CONFLICT (event_id, outcome_key, buy_yes_market, buy_no_market, first_seen_at) DO UPDATE SET \
         last_seen_at = GREATEST(arb_episodes.last_seen_at, excluded.last_seen_at), \
         interval_code = excluded.interval_code, category = excluded.category, \
         net_micros = excluded.net_micros, peak_micros = GREATEST(arb_episodes.peak_micros, excluded.peak_micros), \
         opportunity = excluded.opportunity"
    )
}

#[async_trait::async_trait]
impl ArbitrageStore for PgStore {
    async fn record_episodes(&self, episodes: &[Episode]) -> StoreResult<()> {
        // One row per episode identity: a statement may not update the same row twice, so a repeated
        // episode in the batch keeps its last copy.
        let mut index: HashMap<(&str, &str, &str, &str, i64), usize> = HashMap::new();
        let mut rows = Vec::with_capacity(episodes.len());
        for e in episodes {
            let id = (
                e.key.event_id.as_str(),
                e.key.outcome_key.as_str(),
                e.key.buy_yes_market.as_str(),
                e.key.buy_no_market.as_str(),
                e.first_seen_at.millis(),
            );
            let a = episode_args(e)?;
            match index.get(&id) {
                Some(&i) => rows[i] = a,
                None => {
                    index.insert(id, rows.len());
                    rows.push(a);
                }
            }
        }
        if rows.is_empty() {
            return Ok(());
        }
        let text = |f: fn(&arbitrage::EpisodeArgs) -> String| rows.iter().map(f).collect::<Vec<_>>();
        let int = |f: fn(&arbitrage::EpisodeArgs) -> i64| rows.iter().map(f).collect::<Vec<_>>();
        sqlx::query(sqlx::AssertSqlSafe(upsert_sql()))
            .bind(text(|a| a.event_id.clone()))
            .bind(text(|a| a.outcome_key.clone()))
            .bind(text(|a| a.buy_yes_market.to_string()))
            .bind(text(|a| a.buy_no_market.to_string()))
            .bind(int(|a| a.first_seen_at))
            .bind(int(|a| a.last_seen_at))
            .bind(
                rows.iter()
                    .map(|a| a.interval_code.map(str::to_string))
                    .collect::<Vec<_>>(),
            )
            .bind(text(|a| a.category.to_string()))
            .bind(int(|a| a.net_micros))
            .bind(int(|a| a.peak_micros))
            .bind(text(|a| a.opportunity.clone()))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn recent_episodes(&self, since: Timestamp) -> StoreResult<Vec<Episode>> {
        arbitrage::recent_episodes(&self.pool, since).await
    }

    async fn episode_history(&self, q: &HistoryQuery) -> StoreResult<HistoryPage> {
        arbitrage::episode_history(&self.pool, q).await
    }

    async fn add_pair_override(&self, pair: &PairOverride, at: Timestamp) -> StoreResult<bool> {
        arbitrage::add_pair_override(&self.pool, pair, at).await
    }

    async fn pair_overrides(&self) -> StoreResult<Vec<StoredOverride>> {
        arbitrage::pair_overrides(&self.pool).await
    }

    async fn remove_pair_override(&self, market_id: &str) -> StoreResult<u64> {
        arbitrage::remove_pair_override(&self.pool, market_id).await
    }

    async fn arbitrage_listings(&self) -> StoreResult<Vec<Listing>> {
        arbitrage::arbitrage_listings(&self.pool).await
    }
}
