//! Trades on PostgreSQL: the batch as arrays (`UNNEST`) in one statement; `RETURNING` names the new ones.

use std::collections::HashSet;

use crossbook_core::Trade;
use sqlx::{Row, postgres::PgPool};

use crate::{StoreResult, codec};

const INSERT_TRADES: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, \
     taker_side, outcome, price, size, notional) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[], $7::text[], \
     $8::int8[], $9::int8[], $10::int8[]) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING RETURNING exchange, source_trade_id";

pub(super) async fn insert_trades(pool: &PgPool, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let text = |f: fn(&Trade) -> String| batch.iter().map(f).collect::<Vec<_>>();
    let int = |f: fn(&Trade) -> i64| batch.iter().map(f).collect::<Vec<_>>();
    // A trade repeated inside the batch conflicts with its own first copy and is skipped by DO NOTHING.
    let rows = sqlx::query(INSERT_TRADES)
        .bind(text(|t| t.exchange.as_str().to_string()))
        .bind(text(|t| t.source_trade_id.clone()))
        .bind(text(|t| t.market_id.clone()))
        .bind(text(|t| t.event_id.clone()))
        .bind(int(|t| t.executed_at.millis()))
        .bind(text(|t| codec::side_str(t.taker_side).to_string()))
        .bind(text(|t| codec::outcome_str(t.outcome).to_string()))
        .bind(int(|t| t.price.micros()))
        .bind(int(|t| t.size.micros()))
        .bind(int(codec::trade_notional))
        .fetch_all(pool)
        .await?;
    let mut inserted: HashSet<(String, String)> = HashSet::with_capacity(rows.len());
    for r in &rows {
        inserted.insert((r.try_get("exchange")?, r.try_get("source_trade_id")?));
    }
    // Input order, each new trade once (removing the key makes a repeated copy count as old).
    Ok(batch
        .iter()
        .filter(|t| inserted.remove(&(t.exchange.as_str().to_string(), t.source_trade_id.clone())))
        .cloned()
        .collect())
}
