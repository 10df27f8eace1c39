//! The latest order book of every followed market, in memory, for the scanner and
//! `/v1/arbitrage/current` (DESIGN §1: the hot path never touches disk).
//!
//! Ingestion is the only writer; readers take copies. A book is *stale* when its feed can no longer vouch
//! for it (a sequence gap, a dropped socket, a silent feed): it stays in the map so health and debugging can
//! see it, but [`LiveBooks::get`] and [`LiveBooks::fresh_books`] no longer return it until a fresh snapshot
//! replaces it.
//!
//! # Slots
//! Every key lives in a numbered slot ([`BookSlot`]). A reader that reads the same books again and again (the
//! scanner reads three books per pair on every pass) resolves its keys to slots once with
//! [`LiveBooks::resolve`] and then reads by slot ([`LiveView::at`]): an index into a vector instead of
//! hashing two long strings per book. Resolving reserves a slot for a key not seen yet, so a book that
//! arrives later lands in the slot the reader already holds.
//!
//! A slot keeps its key for as long as the [`LiveBooks::epoch`] stays the same: dropping a book
//! ([`LiveBooks::retain_markets`]) only empties its slot. When many slots are empty they are compacted,
//! which renumbers the slots and moves to a new epoch; a reader holding slots of an older epoch resolves
//! again (and, until it does, reads by key).
//!
//! Each book carries its top-of-book summary ([`BookTop`]), computed when it is written, so a pair whose
//! top of book cannot cross is rejected without touching a ladder.
//!
//! # Numbering
//! Every event of a book is numbered here, once, at ingest: a change a reader can see
//! ([`LiveBooks::upsert`]), a loss of continuity ([`LiveBooks::mark_stale`], [`LiveBooks::mark_exchange_stale`])
//! and a failed write of the log ([`LiveBooks::take_gap_seqs`]) each take the book's next number. The same
//! number is the bus event's `book_seq`, the live stream's `book_seq` and the book event log's `seq`, so a
//! client can read the log up to a number and follow the stream from the next one. A loss of a book already
//! stale takes no number (its earlier gap still stands).
//!
//! Numbers continue across restarts: before a venue's feed starts, the ingest seeds the numbering with the
//! log's heads ([`LiveBooks::seed`]). A book with stored events first met in this process takes two numbers at
//! its first change: the `restart` gap the log records, and the change itself.

use std::{
    collections::HashMap,
    sync::{
        Arc, RwLock, RwLockReadGuard, RwLockWriteGuard,
        atomic::{AtomicU64, Ordering},
    },
};

pub use crossbook_core::book::BookKey;
use crossbook_core::{BookSnapshot, Exchange, Timestamp, arb::BookTop};

/// Key → slot. The hasher is foldhash rather than SipHash: venue_b keys are long (a 66-character condition
/// id and a 78-digit token id), and the keys come from our catalog and feeds, not from callers, so hash
/// flooding is not a concern here.
type SlotIndex = HashMap<BookKey, u32, foldhash::fast::RandomState>;

/// Empty slots tolerated before a compaction (and at least as many as the books held), so that markets
/// coming and going (a 5-minute window every 5 minutes) do not grow the slots without bound, while a
/// compaction, which makes every reader resolve again, stays rare.
const COMPACT_MIN_EMPTY: usize = 4_096;

/// The position of a key in the live books, valid within one [`LiveBooks::epoch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BookSlot(u32);

/// One book as held in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBook {
    pub book: BookSnapshot,
    /// Set when the feed lost track of this book; cleared by the next full snapshot.
    pub stale: bool,
    /// When ingestion last replaced this book (local clock).
    pub updated_at: Timestamp,
    /// The top of the book, computed when it was written.
    pub top: BookTop,
    /// The book's latest event number (see the module docs, Numbering): its latest change, or the gap
    /// that made it stale. Keeps counting when a book is dropped and comes back.
    pub seq: u64,
}

/// A key's numbering.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Numbering {
    /// The last number handed out (or stored by an earlier process).
    last: u64,
    /// The log holds events from an earlier process and none was numbered in this one yet: the next change
    /// first takes a number for the `restart` gap.
    restart: bool,
}

impl Numbering {
    fn next(&mut self) -> u64 {
        self.last += 1;
        self.last
    }
}

/// What [`LiveBooks::upsert_numbered`] numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbered {
    /// The change's number.
    pub seq: u64,
    /// The number of the `restart` gap before it, for a book whose log holds events of an earlier process
    /// (always `seq - 1`).
    pub restart_gap: Option<u64>,
}

/// The slots and their index.
#[derive(Debug, Default)]
struct Slots {
    index: SlotIndex,
    /// `None`: a key reserved by [`LiveBooks::resolve`] whose book has not arrived, or a dropped book.
    books: Vec<Option<LiveBook>>,
    /// The numbering of each slot, kept while a slot is empty so a book that comes back goes on counting.
    seqs: Vec<Numbering>,
    /// The numbering of keys without a slot: seeded before their book arrived, or whose empty slot was
    /// compacted away. Taken back when the key gets a slot, so a number is never handed out twice.
    unslotted: HashMap<BookKey, Numbering, foldhash::fast::RandomState>,
    /// Market id → its slots (one on venue_a, one per token on venue_b), for readers that follow markets.
    markets: HashMap<String, Vec<u32>, foldhash::fast::RandomState>,
    /// Number of `Some` in `books`.
    held: usize,
    epoch: u64,
}

impl Slots {
    fn slot_of(&mut self, key: &BookKey) -> usize {
        if let Some(&i) = self.index.get(key) {
            return i as usize;
        }
        let i = self.books.len();
        let slot = u32::try_from(i).expect("fewer than 2^32 live books");
        self.books.push(None);
        let numbering = self.unslotted.remove(key).unwrap_or_default();
        self.seqs.push(numbering);
        self.index.insert(key.clone(), slot);
        self.markets.entry(key.market_id.clone()).or_default().push(slot);
        i
    }

    fn entries(&self) -> impl Iterator<Item = (&BookKey, &LiveBook)> {
        self.index
            .iter()
            .filter_map(|(k, &i)| self.books[i as usize].as_ref().map(|e| (k, e)))
    }

    /// Drops the empty slots when there are many, renumbering the others (a new epoch).
    fn compact_if_sparse(&mut self) {
        let empty = self.books.len() - self.held;
        if empty < COMPACT_MIN_EMPTY || empty < self.held {
            return;
        }
        let mut old = std::mem::take(&mut self.books);
        let old_seqs = std::mem::take(&mut self.seqs);
        let mut books = Vec::with_capacity(self.held);
        let mut seqs = Vec::with_capacity(self.held);
        self.markets.clear();
        let markets = &mut self.markets;
        let unslotted = &mut self.unslotted;
        self.index.retain(|k, i| match old[*i as usize].take() {
            Some(e) => {
                seqs.push(old_seqs[*i as usize]);
                *i = books.len() as u32;
                books.push(Some(e));
                markets.entry(k.market_id.clone()).or_default().push(*i);
                true
            }
            None => {
                let n = old_seqs[*i as usize];
                if n != Numbering::default() {
                    unslotted.insert(k.clone(), n);
                }
                false
            }
        });
        self.books = books;
        self.seqs = seqs;
        self.epoch += 1;
    }
}

/// A numbering of [`LiveBooks`] instances, so a reader's resolved slots are never read from another map.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Shared map of the latest books.
///
/// A `std::sync::RwLock` rather than Tokio's: every critical section is a map lookup or insert with no
/// `.await` inside, so a blocking lock is cheaper and cannot be held across a suspension point; many
/// readers (scanner, API) proceed in parallel while the single writer waits briefly.
#[derive(Debug, Clone)]
pub struct LiveBooks {
    inner: Arc<RwLock<Slots>>,
    id: u64,
}

impl Default for LiveBooks {
    fn default() -> Self {
        LiveBooks {
            inner: Arc::default(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// Slots resolved by [`LiveBooks::resolve`], in the order of the keys asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Which live books and which epoch the slots belong to.
    pub live_id: u64,
    pub epoch: u64,
    pub slots: Vec<BookSlot>,
}

/// The live books under the read lock (see [`LiveBooks::with_books`]).
pub struct LiveView<'a> {
    slots: &'a Slots,
    id: u64,
}

impl LiveView<'_> {
    /// The book of a key, fresh or stale.
    pub fn get(&self, key: &BookKey) -> Option<&LiveBook> {
        let &i = self.slots.index.get(key)?;
        self.slots.books[i as usize].as_ref()
    }

    /// The book in a slot, fresh or stale. Only meaningful for slots resolved in this epoch (see
    /// [`LiveView::holds`]); a slot out of range reads as empty.
    pub fn at(&self, slot: BookSlot) -> Option<&LiveBook> {
        self.slots.books.get(slot.0 as usize)?.as_ref()
    }

    /// Whether slots resolved as `resolved` may be read here: same map, same epoch.
    pub fn holds(&self, live_id: u64, epoch: u64) -> bool {
        self.id == live_id && self.slots.epoch == epoch
    }

    /// Every book held (fresh and stale), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&BookKey, &LiveBook)> {
        self.slots.entries()
    }

    /// Number of books held.
    pub fn len(&self) -> usize {
        self.slots.held
    }

    pub fn is_empty(&self) -> bool {
        self.slots.held == 0
    }
}

impl LiveBooks {
    pub fn new() -> Self {
        Self::default()
    }

    /// This map's identity (shared by its clones).
    pub fn id(&self) -> u64 {
        self.id
    }

    // A panic while holding the lock cannot leave a half-written entry behind (inserts and removals are
    // single slot operations), so a poisoned lock is still safe to use.
    fn read(&self) -> RwLockReadGuard<'_, Slots> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Slots> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces a book with a fresh copy (clears its stale mark). When anything a reader can see changed
    /// (the ladders, or the book was new or stale), returns the book's new [`LiveBook::seq`]; `None` when a
    /// poll returned the same book again, which only refreshes `updated_at`.
    pub fn upsert(&self, book: BookSnapshot) -> Option<u64> {
        self.upsert_numbered(book).map(|n| n.seq)
    }

    /// [`LiveBooks::upsert`], also saying which number the `restart` gap before the change took, if any.
    pub fn upsert_numbered(&self, book: BookSnapshot) -> Option<Numbered> {
        let key = BookKey::of(&book);
        // The summary is computed before taking the lock, so readers wait only for the slot write.
        let top = BookTop::of(&book);
        let mut slots = self.write();
        let i = slots.slot_of(&key);
        let old = &slots.books[i];
        let changed = old.as_ref().is_none_or(|old| {
            old.stale || old.book.bids != book.bids || old.book.asks != book.asks || old.book.no_bids != book.no_bids
        });
        if old.is_none() {
            slots.held += 1;
        }
        let mut numbered = None;
        if changed {
            let n = &mut slots.seqs[i];
            let restart_gap = std::mem::take(&mut n.restart).then(|| n.next());
            numbered = Some(Numbered {
                seq: n.next(),
                restart_gap,
            });
        }
        let seq = slots.seqs[i].last;
        slots.books[i] = Some(LiveBook {
            book,
            stale: false,
            updated_at: Timestamp::now(),
            top,
            seq,
        });
        numbered
    }

    /// Seeds the numbering with the last numbers the log holds (a key and its head): a key whose head is
    /// above what was handed out here continues from it, with a `restart` gap at its next change. Keys
    /// already numbered past their head are left alone.
    pub fn seed(&self, heads: impl IntoIterator<Item = (BookKey, u64)>) {
        let mut slots = self.write();
        let Slots {
            index, seqs, unslotted, ..
        } = &mut *slots;
        for (key, head) in heads {
            let n = match index.get(&key) {
                Some(&i) => &mut seqs[i as usize],
                None => unslotted.entry(key).or_default(),
            };
            if head > n.last {
                *n = Numbering {
                    last: head,
                    restart: true,
                };
            }
        }
    }

    /// The last number handed out to a key (0 for a key never numbered).
    pub fn last_seq(&self, key: &BookKey) -> u64 {
        let slots = self.read();
        match slots.index.get(key) {
            Some(&i) => slots.seqs[i as usize].last,
            None => slots.unslotted.get(key).map_or(0, |n| n.last),
        }
    }

    /// Gives each key its next number for a gap the log records although the book itself is still right
    /// (its events could not be written): the stale mark is not set. Returns the keys with their numbers.
    pub fn take_gap_seqs<'a>(&self, keys: impl IntoIterator<Item = &'a BookKey>) -> Vec<(BookKey, u64)> {
        let mut slots = self.write();
        keys.into_iter()
            .map(|k| {
                let i = slots.slot_of(k);
                let seq = slots.seqs[i].next();
                if let Some(e) = slots.books[i].as_mut() {
                    e.seq = seq;
                }
                (k.clone(), seq)
            })
            .collect()
    }

    /// Puts a book in the map with the sequence number another process gave it (a mirror of the leader's
    /// books follows the leader's numbering, so stream clients see the same `book_seq` everywhere).
    pub fn install(&self, book: BookSnapshot, seq: u64, stale: bool) {
        let key = BookKey::of(&book);
        let top = BookTop::of(&book);
        let mut slots = self.write();
        let i = slots.slot_of(&key);
        if slots.books[i].is_none() {
            slots.held += 1;
        }
        slots.seqs[i] = Numbering {
            last: seq,
            restart: false,
        };
        slots.books[i] = Some(LiveBook {
            book,
            stale,
            updated_at: Timestamp::now(),
            top,
            seq,
        });
    }

    /// The book, if it is known and fresh.
    pub fn get(&self, key: &BookKey) -> Option<BookSnapshot> {
        self.with_books(|v| v.get(key).filter(|e| !e.stale).map(|e| e.book.clone()))
    }

    /// The books of a market held now (fresh and stale): one on venue_a, one per token on venue_b.
    pub fn market_books(&self, market_id: &str) -> Vec<(BookKey, LiveBook)> {
        let slots = self.read();
        let Some(found) = slots.markets.get(market_id) else {
            return Vec::new();
        };
        found
            .iter()
            .filter_map(|&i| slots.books[i as usize].clone())
            .map(|e| (BookKey::of(&e.book), e))
            .collect()
    }

    /// Whether any book of a market is held now.
    pub fn has_market(&self, market_id: &str) -> bool {
        let slots = self.read();
        slots
            .markets
            .get(market_id)
            .is_some_and(|found| found.iter().any(|&i| slots.books[i as usize].is_some()))
    }

    /// The book with its stale mark, fresh or not.
    pub fn entry(&self, key: &BookKey) -> Option<LiveBook> {
        self.with_books(|v| v.get(key).cloned())
    }

    /// Marks books stale with the numbers another process gave their gaps (a mirror follows the leader's
    /// numbering); a book not held, or already stale, is left as it is. Returns the books marked.
    pub fn mark_stale_numbered<'a>(&self, books: impl IntoIterator<Item = (&'a BookKey, u64)>) -> Vec<(BookKey, u64)> {
        let mut slots = self.write();
        let Slots {
            index,
            books: held,
            seqs,
            ..
        } = &mut *slots;
        let mut marked = Vec::new();
        for (k, seq) in books {
            if let Some(&i) = index.get(k)
                && let Some(e) = held[i as usize].as_mut()
                && !e.stale
            {
                e.stale = true;
                e.seq = seq;
                seqs[i as usize] = Numbering {
                    last: seq,
                    restart: false,
                };
                marked.push((k.clone(), seq));
            }
        }
        marked
    }

    /// Marks books stale, each with its gap's number. Unknown keys and books already stale are left out
    /// (a second loss before the next snapshot is no new gap). Returns the books marked with their numbers.
    pub fn mark_stale<'a>(&self, keys: impl IntoIterator<Item = &'a BookKey>) -> Vec<(BookKey, u64)> {
        let mut slots = self.write();
        let Slots { index, books, seqs, .. } = &mut *slots;
        let mut marked = Vec::new();
        for k in keys {
            if let Some(&i) = index.get(k)
                && let Some(e) = books[i as usize].as_mut()
                && !e.stale
            {
                e.stale = true;
                e.seq = seqs[i as usize].next();
                marked.push((k.clone(), e.seq));
            }
        }
        marked
    }

    /// Marks every fresh book of a venue stale (its feed went away), each with its gap's number; returns
    /// them with their numbers.
    pub fn mark_exchange_stale(&self, exchange: Exchange) -> Vec<(BookKey, u64)> {
        let mut slots = self.write();
        let Slots { index, books, seqs, .. } = &mut *slots;
        let mut marked = Vec::new();
        for (k, &i) in index.iter() {
            if let Some(e) = books[i as usize].as_mut()
                && k.exchange == exchange
                && !e.stale
            {
                e.stale = true;
                e.seq = seqs[i as usize].next();
                marked.push((k.clone(), e.seq));
            }
        }
        marked.sort();
        marked
    }

    /// Keeps only the books of `exchange` whose market satisfies `keep` (books of markets no longer
    /// followed, e.g. closed windows, are dropped). Other venues' books are untouched.
    pub fn retain_markets(&self, exchange: Exchange, mut keep: impl FnMut(&str) -> bool) {
        let mut slots = self.write();
        let Slots { index, books, held, .. } = &mut *slots;
        for (k, &i) in index.iter() {
            let b = &mut books[i as usize];
            if b.is_some() && k.exchange == exchange && !keep(&k.market_id) {
                *b = None;
                *held -= 1;
            }
        }
        slots.compact_if_sparse();
    }

    /// Drops the books of `keys` (a mirror follows the leader, which dropped them); returns those it held.
    pub fn remove<'a>(&self, keys: impl IntoIterator<Item = &'a BookKey>) -> usize {
        let mut slots = self.write();
        let Slots { index, books, held, .. } = &mut *slots;
        let mut n = 0;
        for k in keys {
            if let Some(&i) = index.get(k)
                && books[i as usize].take().is_some()
            {
                *held -= 1;
                n += 1;
            }
        }
        slots.compact_if_sparse();
        n
    }

    /// The slots of `keys`, in order, reserving one for each key not seen yet (so its book, when it
    /// arrives, is found there). Takes the write lock once; callers resolve once per catalog, not per read.
    pub fn resolve<'a>(&self, keys: impl IntoIterator<Item = &'a BookKey> + Clone) -> Resolved {
        // Usually every key already has its slot (the books arrived before the catalog was reloaded): the
        // read lock then suffices and ingestion is not held up.
        {
            let slots = self.read();
            let found: Option<Vec<BookSlot>> = keys
                .clone()
                .into_iter()
                .map(|k| slots.index.get(k).map(|&i| BookSlot(i)))
                .collect();
            if let Some(found) = found {
                return Resolved {
                    live_id: self.id,
                    epoch: slots.epoch,
                    slots: found,
                };
            }
        }
        let mut slots = self.write();
        let resolved: Vec<BookSlot> = keys.into_iter().map(|k| BookSlot(slots.slot_of(k) as u32)).collect();
        Resolved {
            live_id: self.id,
            epoch: slots.epoch,
            slots: resolved,
        }
    }

    /// The current slot numbering (see the module docs).
    pub fn epoch(&self) -> u64 {
        self.read().epoch
    }

    /// Runs `f` over every book held (fresh and stale, see [`LiveBook::stale`]) under the read lock, without
    /// copying them: the scanner reads thousands of books per pass. Keep `f` short and synchronous; the
    /// ingestion writer waits for it.
    pub fn with_books<R>(&self, f: impl FnOnce(&LiveView<'_>) -> R) -> R {
        let slots = self.read();
        f(&LiveView {
            slots: &slots,
            id: self.id,
        })
    }

    /// Copies of every fresh book, optionally of one venue.
    pub fn fresh_books(&self, exchange: Option<Exchange>) -> Vec<BookSnapshot> {
        self.read()
            .entries()
            .filter(|(k, e)| !e.stale && exchange.is_none_or(|x| k.exchange == x))
            .map(|(_, e)| e.book.clone())
            .collect()
    }

    /// `(fresh, stale)` book counts of a venue.
    pub fn counts(&self, exchange: Exchange) -> (usize, usize) {
        self.read()
            .entries()
            .filter(|(k, _)| k.exchange == exchange)
            .fold((0, 0), |(f, s), (_, e)| if e.stale { (f, s + 1) } else { (f + 1, s) })
    }

    /// Number of books held (fresh and stale).
    pub fn len(&self) -> usize {
        self.read().held
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        assert_eq!(live.upsert(book("A")), Some(1));
        assert_eq!(live.upsert(book("A")), None, "same ladders again is no change");
        live.upsert(book("B"));
        let a = BookKey::venue_a("A");
        assert!(live.get(&a).is_some());
        assert_eq!(live.mark_stale([&a]), [(a.clone(), 2)], "the gap takes a number");
        assert!(live.mark_stale([&a]).is_empty(), "a second loss takes none");
        assert!(live.get(&a).is_none());
        assert!(live.entry(&a).is_some_and(|e| e.stale));
        assert_eq!(live.counts(Exchange::VenueA), (1, 1));
        assert_eq!(live.fresh_books(None).len(), 1);
        assert_eq!(live.upsert(book("A")), Some(3), "a stale book replaced is a change");
        assert!(live.get(&a).is_some());
        live.retain_markets(Exchange::VenueA, |m| m == "A");
        assert!(live.market_books("B").is_empty(), "a dropped book is not held");
        assert!(!live.has_market("B") && live.has_market("A"));
        assert_eq!(
            live.upsert(book("B")),
            Some(2),
            "a book that comes back goes on counting"
        );
        assert_eq!(live.market_books("B").len(), 1);
        live.retain_markets(Exchange::VenueA, |m| m == "A");
        assert_eq!(live.len(), 1);
        assert_eq!(live.mark_exchange_stale(Exchange::VenueA).len(), 1);
        assert!(live.fresh_books(Some(Exchange::VenueA)).is_empty());
    }

    #[test]
    fn numbering_continues_from_the_seeded_heads_with_a_restart_gap() {
        let live = LiveBooks::new();
        let (a, b, c) = (BookKey::venue_a("A"), BookKey::venue_a("B"), BookKey::venue_a("C"));
        // B's slot exists (resolved by a reader) before the seed; A has none yet.
        live.resolve([&b]);
        live.seed([(a.clone(), 40), (b.clone(), 7)]);
        assert_eq!(live.last_seq(&a), 40);
        assert_eq!(
            live.upsert_numbered(book("A")),
            Some(Numbered {
                seq: 42,
                restart_gap: Some(41)
            })
        );
        assert_eq!(
            live.upsert_numbered(book("B")).map(|n| (n.seq, n.restart_gap)),
            Some((9, Some(8)))
        );
        assert_eq!(
            live.upsert_numbered(book("C")),
            Some(Numbered {
                seq: 1,
                restart_gap: None
            }),
            "nothing stored: from 1"
        );
        let mut next = book("A");
        next.bids[0].size = Amount::from_units(2);
        assert_eq!(
            live.upsert_numbered(next).map(|n| (n.seq, n.restart_gap)),
            Some((43, None))
        );
        // A seed below what was handed out changes nothing.
        live.seed([(a.clone(), 41)]);
        assert_eq!(live.last_seq(&a), 43);
        // Gaps: a stale mark per book, once; a failed write without marking.
        assert_eq!(
            live.mark_exchange_stale(Exchange::VenueA),
            [(a.clone(), 44), (b.clone(), 10), (c.clone(), 2)]
        );
        assert!(live.mark_exchange_stale(Exchange::VenueA).is_empty());
        assert_eq!(live.take_gap_seqs([&c]), [(c.clone(), 3)]);
        assert_eq!(live.entry(&c).map(|e| (e.seq, e.stale)), Some((3, true)));
        assert_eq!(live.upsert(book("C")), Some(4));
        assert_eq!(live.take_gap_seqs([&c]), [(c.clone(), 5)]);
        assert_eq!(live.entry(&c).map(|e| (e.seq, e.stale)), Some((5, false)));
    }

    #[test]
    fn slots_resolved_before_a_book_arrives_read_it_and_carry_its_top() {
        let live = LiveBooks::new();
        let (a, b) = (BookKey::venue_a("A"), BookKey::venue_a("B"));
        let r = live.resolve([&a, &b]);
        assert_eq!(r.live_id, live.id());
        assert_eq!(live.len(), 0, "a reserved slot holds no book");
        live.upsert(book("B"));
        live.with_books(|v| {
            assert!(v.holds(r.live_id, r.epoch));
            assert!(v.at(r.slots[0]).is_none());
            let e = v.at(r.slots[1]).expect("the book landed in the reserved slot");
            assert_eq!(e.book.market_id, "B");
            // YES bid 0.47 → NO ask 0.53, computed at write time.
            assert_eq!(e.top.ask_from_bids, Some(Price::from_cents(53)));
            assert_eq!((e.top.ask, e.top.ask_from_no_bids), (None, None));
        });
        // Resolving again gives the same slots.
        assert_eq!(live.resolve([&a, &b]), r);
    }

    #[test]
    fn many_dropped_books_compact_the_slots_into_a_new_epoch() {
        let live = LiveBooks::new();
        let n = COMPACT_MIN_EMPTY + 10;
        for i in 0..n {
            live.upsert(book(&format!("M{i}")));
        }
        let keep = BookKey::venue_a("M7");
        let before = live.resolve([&keep]);
        live.retain_markets(Exchange::VenueA, |m| m == "M7");
        assert_eq!(live.len(), 1);
        assert_ne!(live.epoch(), before.epoch, "the empty slots were dropped");
        live.with_books(|v| {
            assert!(!v.holds(before.live_id, before.epoch));
            assert_eq!(v.iter().count(), 1);
        });
        let after = live.resolve([&keep]);
        live.with_books(|v| assert_eq!(v.at(after.slots[0]).unwrap().book.market_id, "M7"));
        assert_eq!(
            live.market_books("M7").len(),
            1,
            "the market index follows the renumbering"
        );
        assert!(live.market_books("M8").is_empty());
        // A few drops do not renumber.
        live.upsert(book("X"));
        live.retain_markets(Exchange::VenueA, |m| m == "M7");
        assert_eq!(live.epoch(), after.epoch);
        assert_eq!(live.counts(Exchange::VenueA), (1, 0));
        // A compacted book that comes back goes on counting.
        assert_eq!(live.upsert(book("M8")), Some(2));
    }
}
