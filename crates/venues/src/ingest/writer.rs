//! The trade writer: trades stored in batches, only the new ones published on the bus.
//!
//! A failed insert keeps its trades for another try, with new ones joining them, so a full disk or a database
//! outage loses nothing while it lasts less than the buffer holds (`write_buffer` trades). Past that the
//! oldest are dropped and counted in `crossbook_writes_dropped_total{kind="trades"}`; the book log records
//! the same outage as `write_failed` gaps on the books it could not write.

use std::{collections::HashSet, sync::Arc, time::Duration};

use crossbook_core::Trade;
use crossbook_store::{Store, WriteHealth, WriteKind};
use tokio::sync::mpsc;
use tracing::{error, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    bus::{Bus, DomainEvent},
};

/// Trades stored per insert.
const TRADE_BATCH: usize = 5_000;

/// The longest wait between two tries while inserts fail, so writes resume within seconds of the cause going
/// away.
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Stores trades in batches and publishes [`DomainEvent::TradeIngested`] for the new ones only, so a trade
/// resent after a reconnect (or read twice from the tape) is published once. Holds at most `bound` trades
/// while inserts fail.
pub(super) async fn trade_writer(store: Arc<dyn Store>, bus: Bus, mut rx: mpsc::Receiver<Vec<Trade>>, bound: usize) {
    let health = store.write_health();
    let mut held: Vec<Trade> = Vec::new();
    let mut backoff = Backoff::new(BackoffPolicy::REST);
    loop {
        if held.is_empty() {
            match rx.recv().await {
                Some(batch) => held = batch,
                None => return,
            }
        }
        while held.len() < TRADE_BATCH {
            match rx.try_recv() {
                Ok(more) => held.extend(more),
                Err(_) => break,
            }
        }
        let mut seen = HashSet::new();
        held.retain(|t| seen.insert((t.exchange, t.source_trade_id.clone())));
        let take = held.len().min(TRADE_BATCH);
        match store.insert_trades(&held[..take]).await {
            Ok(new) => {
                health.ok(WriteKind::Trades);
                backoff.reset();
                held.drain(..take);
                for t in new {
                    metrics::counter!("crossbook_trades_ingested_total", "venue" => t.exchange.as_str()).increment(1);
                    bus.publish(DomainEvent::TradeIngested(t));
                }
            }
            Err(e) => {
                health.failed(WriteKind::Trades, &e);
                let n = drop_oldest(&mut held, bound, health);
                if n > 0 {
                    error!(dropped = n, held = held.len(), error = %e, "storing trades failed for too long; dropped the oldest");
                }
                let delay = backoff.next_delay().min(RETRY_MAX);
                warn!(attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, error = %e, trades = held.len(), "storing trades failed; retrying");
                // New trades keep arriving meanwhile: take them into the buffer so the feeds never wait on a
                // store that is down.
                let wait = tokio::time::sleep(delay);
                tokio::pin!(wait);
                loop {
                    tokio::select! {
                        () = &mut wait => break,
                        more = rx.recv() => match more {
                            Some(more) => {
                                held.extend(more);
                                drop_oldest(&mut held, bound, health);
                            }
                            // Shutting down: the last try is below.
                            None => break,
                        },
                    }
                }
                if rx.is_closed() && rx.is_empty() {
                    // One last try, then give up on what is still held.
                    if let Err(e) = store.insert_trades(&held).await {
                        health.dropped(WriteKind::Trades, held.len() as u64);
                        error!(error = %e, trades = held.len(), "storing trades failed at shutdown; dropped them");
                    }
                    return;
                }
            }
        }
    }
}

/// Drops the oldest of `held` past `bound`, counted; returns how many.
fn drop_oldest(held: &mut Vec<Trade>, bound: usize, health: &WriteHealth) -> usize {
    let n = held.len().saturating_sub(bound);
    if n > 0 {
        held.drain(..n);
        health.dropped(WriteKind::Trades, n as u64);
    }
    n
}
