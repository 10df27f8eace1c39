//! The trade writer: trades stored in batches, only the new ones published on the bus.
//!
//! A failed insert keeps its trades for another try, with new ones joining them, so a full disk or a database
//! outage loses nothing while it lasts less than the buffer holds (`write_buffer` trades). Past that the
//! oldest are dropped and counted in `crossbook_writes_dropped_total{kind="trades"}`; the book log records
//! the same outage as `write_failed` gaps on the books it could not write.

use std::{
    collections::{HashSet, VecDeque},
    sync::Arc,
    time::Duration,
};

use crossbook_core::{Exchange, Trade};
use crossbook_store::{Store, WriteHealth, WriteKind};
use tokio::sync::mpsc;
use tracing::{error, warn};

use crate::backoff::{Backoff, BackoffPolicy};
use crossbook_live::{Bus, DomainEvent};

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
    let mut held = Held::new(bound);
    let mut backoff = Backoff::new(BackoffPolicy::REST);
    loop {
        if held.is_empty() {
            match rx.recv().await {
                Some(batch) => held.take(batch),
                None => return,
            }
        }
        while held.len() < TRADE_BATCH {
            match rx.try_recv() {
                Ok(more) => held.take(more),
                Err(_) => break,
            }
        }
        let take = held.len().min(TRADE_BATCH);
        match store.insert_trades(held.first(take)).await {
            Ok(new) => {
                health.ok(WriteKind::Trades);
                backoff.reset();
                held.stored(take);
                for t in new {
                    metrics::counter!("crossbook_trades_ingested_total", "venue" => t.exchange.as_str()).increment(1);
                    bus.publish(DomainEvent::TradeIngested(t));
                }
            }
            Err(e) => {
                health.failed(WriteKind::Trades, &e);
                let n = held.trim(health);
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
                                held.take(more);
                                held.trim(health);
                            }
                            // Shutting down: the last try is below.
                            None => break,
                        },
                    }
                }
                if rx.is_closed() && rx.is_empty() {
                    // One last try, then give up on what is still held.
                    let all = held.len();
                    if let Err(e) = store.insert_trades(held.first(all)).await {
                        health.dropped(WriteKind::Trades, all as u64);
                        error!(error = %e, trades = all, "storing trades failed at shutdown; dropped them");
                    }
                    return;
                }
            }
        }
    }
}

/// A trade's identity: the same trade read twice (the tape is re-read with an overlap, and resent after a
/// reconnect) has the same key.
type TradeKey = (Exchange, String);

fn key(t: &Trade) -> TradeKey {
    (t.exchange, t.source_trade_id.clone())
}

/// The trades waiting to be stored, each once.
///
/// While the store refuses writes the tape is still read every few seconds, each read repeating the last
/// minute of trades. Counting those repeats as held (and then as dropped) would overstate a loss many times
/// over, so a trade already held, or stored a moment ago, is not taken again: the buffer's bound and the drop
/// count are in distinct trades.
struct Held {
    trades: Vec<Trade>,
    keys: HashSet<TradeKey>,
    /// Keys of the trades stored most recently, oldest first, at most `bound` of them: enough to cover a
    /// re-read of the tape's overlap.
    recent: VecDeque<TradeKey>,
    recent_keys: HashSet<TradeKey>,
    bound: usize,
}

impl Held {
    fn new(bound: usize) -> Self {
        Held {
            trades: Vec::new(),
            keys: HashSet::new(),
            recent: VecDeque::new(),
            recent_keys: HashSet::new(),
            bound,
        }
    }

    fn len(&self) -> usize {
        self.trades.len()
    }

    fn is_empty(&self) -> bool {
        self.trades.is_empty()
    }

    fn first(&self, n: usize) -> &[Trade] {
        &self.trades[..n]
    }

    /// Takes the trades of `batch` that are neither held nor stored a moment ago.
    fn take(&mut self, batch: Vec<Trade>) {
        for t in batch {
            let k = key(&t);
            if !self.recent_keys.contains(&k) && self.keys.insert(k) {
                self.trades.push(t);
            }
        }
    }

    /// The first `n` trades were stored: they leave the buffer and are remembered as stored.
    fn stored(&mut self, n: usize) {
        for t in self.trades.drain(..n) {
            let k = key(&t);
            self.keys.remove(&k);
            if self.recent_keys.insert(k.clone()) {
                self.recent.push_back(k);
            }
        }
        while self.recent.len() > self.bound.max(1) {
            if let Some(old) = self.recent.pop_front() {
                self.recent_keys.remove(&old);
            }
        }
    }

    /// Drops the oldest held trades past the bound, counted; returns how many.
    fn trim(&mut self, health: &WriteHealth) -> usize {
        let n = self.trades.len().saturating_sub(self.bound);
        if n > 0 {
            for t in self.trades.drain(..n) {
                self.keys.remove(&key(&t));
            }
            health.dropped(WriteKind::Trades, n as u64);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::{Amount, Outcome, Price, TakerSide, Timestamp};

    use super::*;

    fn trade(id: &str) -> Trade {
        Trade {
            exchange: Exchange::VenueB,
            source_trade_id: id.into(),
            market_id: "0xcond".into(),
            event_id: "E1".into(),
            executed_at: Timestamp::from_millis(1_000),
            taker_side: TakerSide::Buy,
            outcome: Outcome::Yes,
            price: Price::from_cents(52),
            size: Amount::from_units(3),
        }
    }

    fn ids(held: &Held) -> Vec<&str> {
        held.trades.iter().map(|t| t.source_trade_id.as_str()).collect()
    }

    /// A tape re-read over and over while the store is down holds (and drops) each trade once, and trades
    /// stored just before the outage are not held again.
    #[test]
    fn repeated_reads_of_the_tape_are_held_once_and_drops_count_distinct_trades() {
        let health = WriteHealth::default();
        let mut held = Held::new(3);
        held.take(vec![trade("a"), trade("b")]);
        held.stored(2);
        assert!(held.is_empty());
        // The store is down; every read repeats the last minute: a and b (stored), then c.
        for _ in 0..50 {
            held.take(vec![trade("a"), trade("b"), trade("c")]);
            assert_eq!(held.trim(&health), 0);
        }
        assert_eq!(ids(&held), ["c"]);
        // Five new trades: with room for three, exactly the three oldest distinct ones are dropped.
        for _ in 0..10 {
            held.take(vec![trade("c"), trade("d"), trade("e"), trade("f"), trade("g")]);
        }
        assert_eq!(held.trim(&health), 2);
        assert_eq!(ids(&held), ["e", "f", "g"]);
        // A dropped trade read again is taken again: it was never stored.
        held.take(vec![trade("c")]);
        assert_eq!(ids(&held), ["e", "f", "g", "c"]);
    }

    #[test]
    fn the_memory_of_stored_trades_is_bounded() {
        let mut held = Held::new(2);
        held.take(vec![trade("a"), trade("b"), trade("c")]);
        held.stored(3);
        assert_eq!(held.recent.len(), 2);
        // a is forgotten: read again, it is held (the store's insert knows it and publishes nothing).
        held.take(vec![trade("a"), trade("b"), trade("c")]);
        assert_eq!(ids(&held), ["a"]);
    }
}
