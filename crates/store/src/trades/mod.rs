//! Trades, stored once per `(exchange, source_trade_id)` even when a venue resends them. Only writes, per
//! dialect: one statement per row on SQLite, arrays (`UNNEST`) in one statement on PostgreSQL.

use crossbook_core::Trade;

use crate::{
    StoreResult,
    backend::{Backend, Pools},
};

mod postgres;
mod sqlite;

/// The trade concern.
#[async_trait::async_trait]
pub trait TradeStore: Send + Sync {
    /// Inserts the trades not stored yet; returns the ones that were new (in input order), so only they are
    /// published on the bus.
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>>;
}

#[async_trait::async_trait]
impl<B: Backend> TradeStore for B {
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>> {
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::insert_trades(write, batch).await,
            Pools::Postgres(pool) => postgres::insert_trades(pool, batch).await,
        }
    }
}
