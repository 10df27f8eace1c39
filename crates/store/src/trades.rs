//! Trades, stored once per `(exchange, source_trade_id)` even when a venue resends them.

use crossbook_core::Trade;

use crate::StoreResult;

/// The trade concern.
#[async_trait::async_trait]
pub trait TradeStore: Send + Sync {
    /// Inserts the trades not stored yet; returns the ones that were new (in input order), so only they are
    /// published on the bus.
    async fn insert_trades(&self, batch: &[Trade]) -> StoreResult<Vec<Trade>>;
}
