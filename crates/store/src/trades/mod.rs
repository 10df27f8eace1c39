//! Trades, stored once per `(exchange, source_trade_id)` even when a venue resends them. Writes per dialect:
//! one statement per row on SQLite, arrays (`UNNEST`) in one statement on PostgreSQL. Reads of one market in
//! time order (replay) are one statement for both.

use crossbook_core::{Amount, Exchange, Price, Timestamp, Trade};

use crate::{
    StoreResult,
    backend::{Backend, Exec, Pools},
    codec::{self, Cols},
    sql::Sql,
};

/// A stored trade and its row id, which orders trades of the same millisecond.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTrade {
    pub id: i64,
    pub trade: Trade,
}

/// Where a read of one market's trades goes on from: after this execution time and row id.
pub type TradeCursor = (Timestamp, i64);

mod postgres;
mod sqlite;

/// The trade concern.
#[async_trait::async_trait]
pub trait TradeStore: Send + Sync {
    /// Inserts the trades not stored yet; returns the ones that were new (in input order), so only they are
    /// published on the bus.
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>>;

    /// Up to `limit` trades of one market executed in `[from, to]` and after `after`, oldest first (ties by row
    /// id), so a long range is read in pages with the last trade of each as the next `after`.
    async fn market_trades(
        &self,
        exchange: Exchange,
        market_id: &str,
        from: Timestamp,
        to: Timestamp,
        after: Option<TradeCursor>,
        limit: u32,
    ) -> StoreResult<Vec<StoredTrade>>;
}

#[async_trait::async_trait]
impl<B: Backend> TradeStore for B {
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::insert_trades(write, batch).await,
            Pools::Postgres(pool) => postgres::insert_trades(pool, batch).await,
        }
    }

    async fn market_trades(
        &self,
        exchange: Exchange,
        market_id: &str,
        from: Timestamp,
        to: Timestamp,
        after: Option<TradeCursor>,
        limit: u32,
    ) -> StoreResult<Vec<StoredTrade>> {
        market_trades(self.reader(), exchange, market_id, from, to, after, limit).await
    }
}

async fn market_trades<E: Exec>(
    ex: &E,
    exchange: Exchange,
    market_id: &str,
    from: Timestamp,
    to: Timestamp,
    after: Option<TradeCursor>,
    limit: u32,
) -> StoreResult<Vec<StoredTrade>> {
    let mut sql = Sql::new(
        "SELECT id, exchange, source_trade_id, market_id, event_id, executed_at, taker_side, outcome, price, size \
         FROM trades WHERE exchange = ",
    );
    sql.text(exchange.as_str())
        .push(" AND market_id = ")
        .text(market_id)
        .push(" AND executed_at >= ")
        .int(from.millis())
        .push(" AND executed_at <= ")
        .int(to.millis());
    if let Some((ts, id)) = after {
        // Row-value comparison spelled out: both backends use the (exchange, market_id, executed_at, id) index.
        sql.push(" AND (executed_at > ")
            .int(ts.millis())
            .push(" OR (executed_at = ")
            .int(ts.millis())
            .push(" AND id > ")
            .int(id)
            .push("))");
    }
    sql.push(" ORDER BY executed_at, id LIMIT ").int(i64::from(limit));
    ex.rows(&sql).await?.iter().map(stored_trade).collect()
}

fn stored_trade(r: &impl Cols) -> StoreResult<StoredTrade> {
    Ok(StoredTrade {
        id: r.int("id")?,
        trade: Trade {
            exchange: codec::exchange(&r.text("exchange")?)?,
            source_trade_id: r.text("source_trade_id")?,
            market_id: r.text("market_id")?,
            event_id: r.text("event_id")?,
            executed_at: Timestamp::from_millis(r.int("executed_at")?),
            taker_side: codec::taker_side(&r.text("taker_side")?)?,
            outcome: codec::outcome(&r.text("outcome")?)?,
            price: Price::from_micros(r.int("price")?),
            size: Amount::from_micros(r.int("size")?),
        },
    })
}
