//! Trades on SQLite: one insert per row in one `BEGIN IMMEDIATE` transaction.

use crossbook_core::Trade;
use sqlx::sqlite::SqlitePool;

use crate::{StoreResult, codec};

const INSERT_TRADE: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, taker_side, \
     outcome, price, size, notional) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING";

pub(super) async fn insert_trades(write: &SqlitePool, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
    let mut tx = crate::sqlite::begin(write).await?;
    let mut new = Vec::new();
    for t in batch {
        let done = sqlx::query(INSERT_TRADE)
            .bind(t.exchange.as_str())
            .bind(&t.source_trade_id)
            .bind(&t.market_id)
            .bind(&t.event_id)
            .bind(t.executed_at.millis())
            .bind(codec::side_str(t.taker_side))
            .bind(codec::outcome_str(t.outcome))
            .bind(t.price.micros())
            .bind(t.size.micros())
            .bind(codec::trade_notional(t))
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 1 {
            new.push(t.clone());
        }
    }
    tx.commit().await?;
    Ok(new)
}
