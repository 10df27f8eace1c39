//! Trades, stored once per `(exchange, source_trade_id)` even when a venue resends them. Writes per dialect:
//! one statement per row on SQLite, arrays (`UNNEST`) in one statement on PostgreSQL. Reads of one market in
//! time order (replay) are one statement for both. Each insert also adds the new trades to their OHLCV
//! aggregates ([`candles`]) in the same transaction, so candles never disagree with the trades stored.

use crossbook_core::{
    Amount, Exchange, Outcome, Price, Timestamp, Trade,
    candle::{Candle, Span},
};

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

/// A page of one market's trades (the trade tape).
#[derive(Debug, Clone)]
pub struct TradeQuery<'a> {
    pub exchange: Exchange,
    pub market_id: &'a str,
    /// Only trades of this outcome (a venue_b token).
    pub outcome: Option<Outcome>,
    /// Only trades executed in this range (inclusive).
    pub range: Option<(Timestamp, Timestamp)>,
    /// Where the page starts: strictly past this trade in the read's order.
    pub after: Option<TradeCursor>,
    /// Newest first (by execution time, then row id, both descending); else oldest first.
    pub newest_first: bool,
    pub limit: u32,
}

mod candles;
mod postgres;
mod sqlite;

/// The trade concern.
#[async_trait::async_trait]
pub trait TradeStore: Send + Sync {
    /// Inserts the trades not stored yet; returns the ones that were new (in input order), so only they are
    /// published on the bus.
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>>;

    /// A page of one market's trades in either order ([`TradeQuery`]).
    async fn trade_page(&self, q: &TradeQuery<'_>) -> StoreResult<Vec<StoredTrade>>;

    /// The stored OHLCV aggregates of one market and span starting in `[from, to)`, oldest first.
    async fn candles(
        &self,
        exchange: Exchange,
        market_id: &str,
        span: Span,
        from: Timestamp,
        to: Timestamp,
    ) -> StoreResult<Vec<Candle>>;

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
    ) -> StoreResult<Vec<StoredTrade>> {
        let q = TradeQuery {
            exchange,
            market_id,
            outcome: None,
            range: Some((from, to)),
            after,
            newest_first: false,
            limit,
        };
        self.trade_page(&q).await
    }
}

#[async_trait::async_trait]
impl<B: Backend> TradeStore for B {
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::insert_trades(write, batch).await,
            Pools::Postgres(pool) => postgres::insert_trades(pool, batch).await,
        }
    }

    async fn trade_page(&self, q: &TradeQuery<'_>) -> StoreResult<Vec<StoredTrade>> {
        read_trades(self.reader(), q).await
    }

    async fn candles(
        &self,
        exchange: Exchange,
        market_id: &str,
        span: Span,
        from: Timestamp,
        to: Timestamp,
    ) -> StoreResult<Vec<Candle>> {
        candles::read(self.reader(), exchange, market_id, span, from, to).await
    }
}

async fn read_trades<E: Exec>(ex: &E, q: &TradeQuery<'_>) -> StoreResult<Vec<StoredTrade>> {
    let mut sql = Sql::new(
        "SELECT id, exchange, source_trade_id, market_id, event_id, executed_at, taker_side, outcome, price, size \
         FROM trades WHERE exchange = ",
    );
    sql.text(q.exchange.as_str())
        .push(" AND market_id = ")
        .text(q.market_id);
    if let Some(o) = q.outcome {
        sql.push(" AND outcome = ").text(codec::outcome_str(o));
    }
    if let Some((from, to)) = q.range {
        sql.push(" AND executed_at >= ")
            .int(from.millis())
            .push(" AND executed_at <= ")
            .int(to.millis());
    }
    let (past, order) = if q.newest_first {
        ("<", " ORDER BY executed_at DESC, id DESC LIMIT ")
    } else {
        (">", " ORDER BY executed_at, id LIMIT ")
    };
    if let Some((ts, id)) = q.after {
        // Row-value comparison spelled out: both backends use the (exchange, market_id, executed_at, id) index.
        sql.push(&format!(" AND (executed_at {past} "))
            .int(ts.millis())
            .push(" OR (executed_at = ")
            .int(ts.millis())
            .push(&format!(" AND id {past} "))
            .int(id)
            .push("))");
    }
    sql.push(order).int(i64::from(q.limit));
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
