//! The trade writer: trades stored in batches, only the new ones published on the bus.

use std::{collections::HashSet, sync::Arc};

use crossbook_core::Trade;
use crossbook_store::Store;
use tokio::sync::mpsc;
use tracing::{error, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    bus::{Bus, DomainEvent},
};

/// Trades stored per insert.
const TRADE_BATCH: usize = 5_000;

/// Stores trades in batches and publishes [`DomainEvent::TradeIngested`] for the new ones only, so a trade
/// resent after a reconnect (or read twice from the tape) is published once.
pub(super) async fn trade_writer(store: Arc<dyn Store>, bus: Bus, mut rx: mpsc::Receiver<Vec<Trade>>) {
    while let Some(mut batch) = rx.recv().await {
        while batch.len() < TRADE_BATCH {
            match rx.try_recv() {
                Ok(more) => batch.extend(more),
                Err(_) => break,
            }
        }
        let mut seen = HashSet::new();
        batch.retain(|t| seen.insert((t.exchange, t.source_trade_id.clone())));
        let mut backoff = Backoff::new(BackoffPolicy::REST);
        loop {
            match store.insert_trades(&batch).await {
                Ok(new) => {
                    for t in new {
                        metrics::counter!("crossbook_trades_ingested_total", "venue" => t.exchange.as_str())
                            .increment(1);
                        bus.publish(DomainEvent::TradeIngested(t));
                    }
                    break;
                }
                Err(e) if backoff.failures() < 3 => {
                    let delay = backoff.next_delay();
                    warn!(attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, trades = batch.len(), "storing trades failed; retrying");
                    tokio::time::sleep(delay).await;
                }
                Err(e) => {
                    error!(error = %e, trades = batch.len(), "storing trades failed; dropping the batch");
                    break;
                }
            }
        }
    }
}
