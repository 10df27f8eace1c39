//! Trades on SQLite: one insert per row in one `BEGIN IMMEDIATE` transaction, then one upsert per OHLCV
//! aggregate the new trades touch (a batch mostly falls in one minute: three upserts per market).

use crossbook_core::{Trade, candle};
use sqlx::sqlite::SqlitePool;

use super::candles;
use crate::{StoreResult, codec};

const INSERT_TRADE: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, taker_side, \
     outcome, price, size, notional) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING";

const UPSERT_CANDLE: &str = candles::upsert_sql!(
    "MIN",
    "MAX",
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
);

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
    for (k, c) in candle::aggregate(&new) {
        sqlx::query(UPSERT_CANDLE)
            .bind(k.exchange.as_str())
            .bind(&k.market_id)
            .bind(k.span.millis())
            .bind(k.start.millis())
            .bind(c.open.micros())
            .bind(c.open_at.millis())
            .bind(c.high.micros())
            .bind(c.low.micros())
            .bind(c.close.micros())
            .bind(c.close_at.millis())
            .bind(c.volume.micros())
            .bind(c.notional.micros())
            .bind(c.trades)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(new)
}
