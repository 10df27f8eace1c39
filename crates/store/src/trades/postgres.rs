//! Trades on PostgreSQL: the batch as arrays (`UNNEST`) in one statement; `RETURNING` names the new ones,
//! whose OHLCV aggregates are then upserted as arrays too, in the same transaction.

use std::collections::HashSet;

use crossbook_core::{Trade, candle};
use sqlx::{Row, postgres::PgPool};

use super::candles;
use crate::{StoreResult, codec};

const INSERT_TRADES: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, \
     taker_side, outcome, price, size, notional) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[], $7::text[], \
     $8::int8[], $9::int8[], $10::int8[]) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING RETURNING exchange, source_trade_id";

// One row per key: `aggregate` folds a batch per market, span and start, as ON CONFLICT DO UPDATE requires.
const UPSERT_CANDLES: &str = candles::upsert_sql!(
    "LEAST",
    "GREATEST",
    "SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::int8[], \
     $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], $13::int8[])"
);

pub(super) async fn insert_trades(pool: &PgPool, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let text = |f: fn(&Trade) -> String| batch.iter().map(f).collect::<Vec<_>>();
    let int = |f: fn(&Trade) -> i64| batch.iter().map(f).collect::<Vec<_>>();
    let mut tx = pool.begin().await?;
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
        .fetch_all(&mut *tx)
        .await?;
    let mut inserted: HashSet<(String, String)> = HashSet::with_capacity(rows.len());
    for r in &rows {
        inserted.insert((r.try_get("exchange")?, r.try_get("source_trade_id")?));
    }
    // Input order, each new trade once (removing the key makes a repeated copy count as old).
    let new: Vec<Trade> = batch
        .iter()
        .filter(|t| inserted.remove(&(t.exchange.as_str().to_string(), t.source_trade_id.clone())))
        .cloned()
        .collect();
    let aggs = candle::aggregate(&new);
    if !aggs.is_empty() {
        let int = |f: fn(&candle::Candle) -> i64| aggs.iter().map(|(_, c)| f(c)).collect::<Vec<_>>();
        sqlx::query(UPSERT_CANDLES)
            .bind(aggs.iter().map(|(k, _)| k.exchange.as_str()).collect::<Vec<_>>())
            .bind(aggs.iter().map(|(k, _)| k.market_id.as_str()).collect::<Vec<_>>())
            .bind(aggs.iter().map(|(k, _)| k.span.millis()).collect::<Vec<_>>())
            .bind(aggs.iter().map(|(k, _)| k.start.millis()).collect::<Vec<_>>())
            .bind(int(|c| c.open.micros()))
            .bind(int(|c| c.open_at.millis()))
            .bind(int(|c| c.high.micros()))
            .bind(int(|c| c.low.micros()))
            .bind(int(|c| c.close.micros()))
            .bind(int(|c| c.close_at.millis()))
            .bind(int(|c| c.volume.micros()))
            .bind(int(|c| c.notional.micros()))
            .bind(int(|c| c.trades))
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(new)
}
