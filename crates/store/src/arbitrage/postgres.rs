//! Arbitrage episodes on PostgreSQL: the batch is one `INSERT … SELECT FROM UNNEST(…) ON CONFLICT DO UPDATE`
//! statement (one round trip per scanner pass).

use std::collections::HashMap;

use crossbook_core::arb::Episode;
use sqlx::postgres::PgPool;

use super::{EPISODE_COLS, EpisodeArgs, episode_args, on_conflict};
use crate::StoreResult;

fn upsert_sql() -> String {
    format!(
        "INSERT INTO arb_episodes ({EPISODE_COLS}) \
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], \
                              $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::text[], \
                              $12::text[]) {}",
        on_conflict("GREATEST")
    )
}

pub(super) async fn record_episodes(pool: &PgPool, episodes: &[Episode]) -> StoreResult<()> {
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
    let text = |f: fn(&EpisodeArgs) -> String| rows.iter().map(f).collect::<Vec<_>>();
    let int = |f: fn(&EpisodeArgs) -> i64| rows.iter().map(f).collect::<Vec<_>>();
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
        .bind(text(|a| a.fee_model.clone()))
        .execute(pool)
        .await?;
    Ok(())
}
