//! The two shared writers: snapshots batched and throttled per book, trades stored in batches with only
//! the new ones published on the bus.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

use crossbook_core::{BookSnapshot, Trade};
use crossbook_store::Store;
use tokio::{sync::mpsc, time::Instant};
use tracing::{error, warn};

use crate::{
    backoff::{Backoff, BackoffPolicy},
    bus::{Bus, DomainEvent},
    live::BookKey,
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

/// Writes book snapshots: at most one per book per `interval`, the latest state of each book, in one
/// batch per tick. Ends (after writing everything it holds) when every sender is gone.
pub(super) async fn snapshot_writer(store: Arc<dyn Store>, mut rx: mpsc::Receiver<BookSnapshot>, interval: Duration) {
    let mut pending: HashMap<BookKey, BookSnapshot> = HashMap::new();
    let mut written: HashMap<BookKey, Instant> = HashMap::new();
    let period = (interval / 4).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut tick = tokio::time::interval_at(Instant::now() + period, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks: u64 = 0;
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(book) => {
                    pending.insert(BookKey::of(&book), book);
                }
                None => {
                    let batch: Vec<BookSnapshot> = pending.into_values().collect();
                    write_snapshots(store.as_ref(), &batch).await;
                    return;
                }
            },
            _ = tick.tick() => {
                ticks += 1;
                let now = Instant::now();
                let due: Vec<BookKey> = pending
                    .keys()
                    .filter(|k| written.get(*k).is_none_or(|t| now.duration_since(*t) >= interval))
                    .cloned()
                    .collect();
                let mut batch = Vec::with_capacity(due.len());
                for k in due {
                    if let Some(b) = pending.remove(&k) {
                        batch.push(b);
                    }
                    written.insert(k, now);
                }
                write_snapshots(store.as_ref(), &batch).await;
                // Forget books not written for a while (closed markets).
                if ticks.is_multiple_of(1000) {
                    written.retain(|_, t| now.duration_since(*t) < interval * 60);
                }
            }
        }
    }
}

async fn write_snapshots(store: &dyn Store, batch: &[BookSnapshot]) {
    if batch.is_empty() {
        return;
    }
    match store.insert_snapshots(batch).await {
        Ok(()) => metrics::counter!("crossbook_snapshots_written_total").increment(batch.len() as u64),
        Err(e) => {
            metrics::counter!("crossbook_snapshots_dropped_total", "venue" => "all").increment(batch.len() as u64);
            error!(error = %e, snapshots = batch.len(), "storing book snapshots failed; dropping the batch");
        }
    }
}
