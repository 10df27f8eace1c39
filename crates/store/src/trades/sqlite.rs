//! Trades on SQLite: one insert per row in one `BEGIN IMMEDIATE` transaction, then the OHLCV aggregates the new
//! trades touch (a live batch mostly falls in one minute: three per market) as multi-row upserts.

use crossbook_core::{Trade, candle};
use sqlx::sqlite::SqlitePool;

use super::candles;
use crate::{StoreResult, backend::sqlite_query, codec, sql::Sql};

const INSERT_TRADE: &str = "INSERT INTO trades (exchange, source_trade_id, market_id, event_id, executed_at, taker_side, \
     outcome, price, size, notional) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
     ON CONFLICT (exchange, source_trade_id) DO NOTHING";

/// The aggregate upsert with its `VALUES` rows left out: they are written per batch ([`upsert_candles`]).
const UPSERT_CANDLES: &str = candles::upsert_sql!("MIN", "MAX", "VALUES");

/// Rows per upsert statement: 13 parameters each, far below SQLite's 32,766.
const CANDLE_ROWS: usize = 1_000;

pub(super) async fn insert_trades(write: &SqlitePool, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
    let mut tx = crate::backend::sqlite_begin(write).await?;
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
    upsert_candles(&mut tx, &candle::aggregate(&new)).await?;
    tx.commit().await?;
    Ok(new)
}

/// The aggregates as multi-row upserts: one statement per [`CANDLE_ROWS`] rows rather than one per row, since a
/// bulk insert of scattered trades (a backfill) touches about three aggregates per trade.
async fn upsert_candles(
    tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>,
    aggs: &[(candle::CandleKey, candle::Candle)],
) -> StoreResult<()> {
    let (head, tail) = UPSERT_CANDLES
        .split_once(" ON CONFLICT")
        .expect("the upsert has an ON CONFLICT clause");
    for chunk in aggs.chunks(CANDLE_ROWS) {
        let mut s = Sql::new(head);
        for (i, (k, c)) in chunk.iter().enumerate() {
            s.push(if i == 0 { " (" } else { ", (" })
                .text(k.exchange.as_str())
                .push(", ")
                .text(&k.market_id);
            for v in [
                k.span.millis(),
                k.start.millis(),
                c.open.micros(),
                c.open_at.millis(),
                c.high.micros(),
                c.low.micros(),
                c.close.micros(),
                c.close_at.millis(),
                c.volume.micros(),
                c.notional.micros(),
                c.trades,
            ] {
                s.push(", ").int(v);
            }
            s.push(")");
        }
        s.push(" ON CONFLICT").push(tail);
        sqlite_query(&s).execute(&mut **tx).await?;
    }
    Ok(())
}
