//! The latest order book of every followed market, in memory, for the scanner and
//! `/v1/arbitrage/current` (DESIGN §1: the hot path never touches disk).
//!
//! Ingestion is the only writer; readers take copies. A book is *stale* when its feed can no longer vouch
//! for it (a sequence gap, a dropped socket, a silent feed): it stays in the map so health and debugging can
//! see it, but [`LiveBooks::get`] and [`LiveBooks::fresh_books`] no longer return it until a fresh snapshot
//! replaces it.

use std::{
    collections::HashMap,
    sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

pub use crossbook_core::book::BookKey;
use crossbook_core::{BookSnapshot, Exchange, Timestamp};

/// The live books by key. The scanner looks up three books per pair on every pass, and venue_b keys are
/// long (a 66-character condition id and a 78-digit token id), so the hasher is foldhash rather than SipHash:
/// the keys come from our catalog, not from callers, so hash flooding is not a concern here.
pub type BookMap = HashMap<BookKey, LiveBook, foldhash::fast::RandomState>;

/// One book as held in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBook {
    pub book: BookSnapshot,
    /// Set when the feed lost track of this book; cleared by the next full snapshot.
    pub stale: bool,
    /// When ingestion last replaced this book (local clock).
    pub updated_at: Timestamp,
}

/// Shared map of the latest books.
///
/// A `std::sync::RwLock` rather than Tokio's: every critical section is a map lookup or insert with no
/// `.await` inside, so a blocking lock is cheaper and cannot be held across a suspension point; many
/// readers (scanner, API) proceed in parallel while the single writer waits briefly.
#[derive(Debug, Clone, Default)]
pub struct LiveBooks {
    inner: Arc<RwLock<BookMap>>,
}

impl LiveBooks {
    pub fn new() -> Self {
        Self::default()
    }

    // A panic while holding the lock cannot leave a half-written entry behind (inserts and removals are
    // single map operations), so a poisoned lock is still safe to use.
    fn read(&self) -> RwLockReadGuard<'_, BookMap> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, BookMap> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces a book with a fresh copy (clears its stale mark). Returns whether anything a reader can
    /// see changed: the ladders, or the book was new or stale (a poll returning the same book again only
    /// refreshes `updated_at`).
    pub fn upsert(&self, book: BookSnapshot) -> bool {
        let key = BookKey::of(&book);
        let mut map = self.write();
        let changed = map.get(&key).is_none_or(|old| {
            old.stale || old.book.bids != book.bids || old.book.asks != book.asks || old.book.no_bids != book.no_bids
        });
        map.insert(
            key,
            LiveBook {
                book,
                stale: false,
                updated_at: Timestamp::now(),
            },
        );
        changed
    }

    /// The book, if it is known and fresh.
    pub fn get(&self, key: &BookKey) -> Option<BookSnapshot> {
        self.read().get(key).filter(|e| !e.stale).map(|e| e.book.clone())
    }

    /// The book with its stale mark, fresh or not.
    pub fn entry(&self, key: &BookKey) -> Option<LiveBook> {
        self.read().get(key).cloned()
    }

    /// Marks books stale; unknown keys are ignored. Returns how many were marked.
    pub fn mark_stale<'a>(&self, keys: impl IntoIterator<Item = &'a BookKey>) -> usize {
        let mut map = self.write();
        let mut n = 0;
        for k in keys {
            if let Some(e) = map.get_mut(k) {
                e.stale = true;
                n += 1;
            }
        }
        n
    }

    /// Marks every fresh book of a venue stale (its feed went away); returns their keys.
    pub fn mark_exchange_stale(&self, exchange: Exchange) -> Vec<BookKey> {
        let mut marked = Vec::new();
        for (k, e) in self.write().iter_mut() {
            if k.exchange == exchange && !e.stale {
                e.stale = true;
                marked.push(k.clone());
            }
        }
        marked
    }

    /// Keeps only the books of `exchange` whose market satisfies `keep` (books of markets no longer
    /// followed, e.g. closed windows, are dropped). Other venues' books are untouched.
    pub fn retain_markets(&self, exchange: Exchange, mut keep: impl FnMut(&str) -> bool) {
        self.write().retain(|k, _| k.exchange != exchange || keep(&k.market_id));
    }

    /// Runs `f` over every book held (fresh and stale, see [`LiveBook::stale`]) under the read lock, without
    /// copying them: the scanner reads thousands of books per pass. Keep `f` short and synchronous; the
    /// ingestion writer waits for it.
    pub fn with_books<R>(&self, f: impl FnOnce(&BookMap) -> R) -> R {
        f(&self.read())
    }

    /// Copies of every fresh book, optionally of one venue.
    pub fn fresh_books(&self, exchange: Option<Exchange>) -> Vec<BookSnapshot> {
        self.read()
            .iter()
            .filter(|(k, e)| !e.stale && exchange.is_none_or(|x| k.exchange == x))
            .map(|(_, e)| e.book.clone())
            .collect()
    }

    /// `(fresh, stale)` book counts of a venue.
    pub fn counts(&self, exchange: Exchange) -> (usize, usize) {
        self.read()
            .iter()
            .filter(|(k, _)| k.exchange == exchange)
            .fold((0, 0), |(f, s), (_, e)| if e.stale { (f, s + 1) } else { (f + 1, s) })
    }

    /// Number of books held (fresh and stale).
    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::{Amount, Level, Price};

    use super::*;

    fn book(market: &str) -> BookSnapshot {
        BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: market.into(),
            asset_id: None,
            timestamp: Timestamp::from_millis(1),
            bids: vec![Level {
                price: Price::from_cents(47),
                size: Amount::from_units(1),
            }],
            asks: vec![],
            no_bids: vec![],
        }
    }

    #[test]
    fn stale_books_are_hidden_until_replaced() {
        let live = LiveBooks::new();
        assert!(live.upsert(book("A")));
        assert!(!live.upsert(book("A")), "same ladders again is no change");
        live.upsert(book("B"));
        let a = BookKey::venue_a("A");
        assert!(live.get(&a).is_some());
        assert_eq!(live.mark_stale([&a]), 1);
        assert!(live.get(&a).is_none());
        assert!(live.entry(&a).is_some_and(|e| e.stale));
        assert_eq!(live.counts(Exchange::VenueA), (1, 1));
        assert_eq!(live.fresh_books(None).len(), 1);
        assert!(live.upsert(book("A")), "a stale book replaced is a change");
        assert!(live.get(&a).is_some());
        live.retain_markets(Exchange::VenueA, |m| m == "A");
        assert_eq!(live.len(), 1);
        assert_eq!(live.mark_exchange_stale(Exchange::VenueA).len(), 1);
        assert!(live.fresh_books(Some(Exchange::VenueA)).is_empty());
    }
}
