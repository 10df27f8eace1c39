//! The in-process bus of domain events (DESIGN §1).
//!
//! A `tokio::sync::broadcast` channel: every subscriber sees every event published after it subscribed,
//! and a subscriber that falls more than the capacity behind gets `RecvError::Lagged` and skips ahead
//! instead of slowing ingestion down. Publishing never blocks and never fails, with or without subscribers.

use std::sync::Arc;

use crossbook_core::{
    Exchange, Timestamp, Trade,
    arb::{Opportunity, OpportunityChange},
    book::{BookChange, GapCause},
    whale::WhaleEntry,
};
use tokio::sync::broadcast;

use crate::books::BookKey;

/// Default number of events a subscriber may fall behind before it starts losing them.
pub const DEFAULT_CAPACITY: usize = 16_384;

/// Something that happened, in venue-neutral domain types.
///
/// Events carry data, not a wire format: each consumer (webhooks, the live stream) renders them at its own
/// edge, so adding a consumer never changes a producer. Large payloads are behind an `Arc`, because every
/// subscriber receives its own clone of every event.
/// `#[non_exhaustive]`: subscribers match with a wildcard arm, so a new kind breaks none of them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DomainEvent {
    /// A live book changed; the whole book is in [`crate::LiveBooks`], what changed is in the event.
    BookUpdated(Arc<BookChanged>),
    /// Books that can no longer be trusted until a fresh snapshot arrives (gap, dropped or silent feed), or
    /// whose changes could not be written to the log (`write_failed`: the live book itself is still right).
    /// Each gap took the book's next number (see [`crate::books`], Numbering).
    BooksStale {
        exchange: Exchange,
        keys: Vec<BookKey>,
        /// The gap's number of each key, in the order of `keys`: the log's `gap` event has the same `seq`.
        book_seqs: Vec<u64>,
        cause: GapCause,
        at: Timestamp,
    },
    /// A trade stored for the first time. Published once per trade, never again after a reconnect.
    TradeIngested(Trade),
    /// A catalog sync of a venue finished: markets may have opened, closed or settled.
    CatalogSynced { exchange: Exchange, markets: usize },
    /// A stored trade at or above the platform whale threshold (`whale.entry`), published once per trade by
    /// the whale tracker.
    WhaleEntry(Arc<WhaleEntry>),
    /// An opportunity the scanner found above `webhook_min_net_cents` outside its cooldown
    /// (`arbitrage.opportunity`).
    ArbitrageOpportunity(Arc<Opportunity>),
    /// An opportunity opened, changed (net or executable size) or closed, with its episode (the live
    /// stream's `arbitrage` channel). Published by the scanner on every such change, with no threshold and
    /// no cooldown, unlike [`DomainEvent::ArbitrageOpportunity`].
    ArbitrageChanged(Arc<OpportunityChange>),
    /// Where an api process's mirror stands among the leader's bus messages, whose numbers are the same in
    /// every process that mirrors the leader and grow from term to term: so the live stream can say where a
    /// client is, and another process can resume the client there. Never published by the process that
    /// ingests.
    Position {
        /// The number (`seq`) of a bus message on the event subjects.
        seq: u64,
        /// `true`: the next event on this bus is the one of message `seq`, published right after this one;
        /// `false`: every message up to `seq` has been put on the bus (the mirror starts reading after it).
        event_follows: bool,
    },
}

/// One change of a live book, as the venue sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct BookChanged {
    pub key: BookKey,
    /// The book's event number ([`crate::LiveBook::seq`]), the log's `seq` of the same event: the previous
    /// event's plus one, where a gap event may lie between two changes.
    pub book_seq: u64,
    /// The book's timestamp after the change.
    pub timestamp: Timestamp,
    /// What the venue sent: a whole book or the levels that changed.
    pub change: BookChange,
    /// The venue's timestamp of the frame, where it carries one.
    pub venue_ts: Option<Timestamp>,
    /// When crossbook received the frame.
    pub received_at: Timestamp,
}

impl DomainEvent {
    /// A `BookUpdated` that says only which book changed and when (no levels): enough for the scanner, which
    /// reads the book from the live map. Used where a book is put in the live map by hand (tests, benches).
    pub fn book_touched(key: BookKey, timestamp: Timestamp) -> Self {
        DomainEvent::BookUpdated(Arc::new(BookChanged {
            key,
            book_seq: 0,
            timestamp,
            change: BookChange::Delta(Vec::new()),
            venue_ts: None,
            received_at: timestamp,
        }))
    }
}

/// Handle to the bus; cheap to clone.
#[derive(Debug, Clone)]
pub struct Bus {
    tx: broadcast::Sender<DomainEvent>,
    /// Every event but book changes and positions. A whole venue sends tens of thousands of book changes a second, and ten
    /// times that in a burst: a consumer of the rare events (trades, whales, opportunities) that waits on the
    /// store for a moment would fall the whole capacity behind on book changes it never reads, and lose the
    /// events it does read.
    rare: broadcast::Sender<DomainEvent>,
}

impl Default for Bus {
    fn default() -> Self {
        Bus::new(DEFAULT_CAPACITY)
    }
}

impl Bus {
    /// A bus whose subscribers may fall `capacity` events behind.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        let (rare, _) = broadcast::channel(capacity.max(1));
        Bus { tx, rare }
    }

    /// Publishes an event to the current subscribers (none is fine).
    pub fn publish(&self, event: DomainEvent) {
        // `send` only fails when nobody listens, which is not an error for a bus.
        if !matches!(event, DomainEvent::BookUpdated(_) | DomainEvent::Position { .. })
            && self.rare.receiver_count() > 0
        {
            let _ = self.rare.send(event.clone());
        }
        let _ = self.tx.send(event);
    }

    /// A receiver of every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<DomainEvent> {
        self.tx.subscribe()
    }

    /// A receiver of every event published from now on except book changes ([`DomainEvent::BookUpdated`]) and
    /// the mirror's positions (one per event), in publication order: for consumers that read none, so that a flood of book changes cannot make them
    /// fall behind and skip the events they do read.
    pub fn subscribe_except_books(&self) -> broadcast::Receiver<DomainEvent> {
        self.rare.subscribe()
    }

    /// Number of live subscribers.
    pub fn receiver_count(&self) -> usize {
        self.tx.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn subscribers_see_events_published_after_they_subscribed() {
        let bus = Bus::new(4);
        bus.publish(DomainEvent::CatalogSynced {
            exchange: Exchange::VenueA,
            markets: 0,
        });
        let mut rx = bus.subscribe();
        let ev = DomainEvent::CatalogSynced {
            exchange: Exchange::VenueB,
            markets: 3,
        };
        bus.publish(ev.clone());
        assert_eq!(rx.recv().await.ok(), Some(ev));
    }

    /// Book changes many times the capacity make a subscriber of everything lag; a subscriber of the rest
    /// still receives every other event, in order.
    #[tokio::test]
    async fn a_flood_of_book_changes_does_not_cost_the_rare_events() {
        let bus = Bus::new(8);
        let mut all = bus.subscribe();
        let mut rare = bus.subscribe_except_books();
        let synced = |markets| DomainEvent::CatalogSynced {
            exchange: Exchange::VenueA,
            markets,
        };
        bus.publish(synced(1));
        for i in 0..100 {
            bus.publish(DomainEvent::book_touched(BookKey::venue_a("M"), Timestamp(i)));
        }
        bus.publish(synced(2));
        assert!(matches!(all.recv().await, Err(broadcast::error::RecvError::Lagged(_))));
        assert_eq!(rare.recv().await.ok(), Some(synced(1)));
        assert_eq!(rare.recv().await.ok(), Some(synced(2)));
        assert!(rare.try_recv().is_err(), "no book change on the rare channel");
    }
}
