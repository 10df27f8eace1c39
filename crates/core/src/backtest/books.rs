//! The recorded books a backtest holds while it replays them: one slot per book its pairs read, kept as the
//! log's events leave it, with the time of the book's last capture gap.
//!
//! A recorded book is current until its next event: the log holds every change, and a lost stretch is a gap
//! event, after which the book is unknown until its next keyframe. So the backtest never ages books out
//! the way the live scanner does with books that stopped arriving; it only ever trusts continuity the log
//! vouches for.

use std::collections::HashMap;

use crate::{
    BookSnapshot, Exchange, Level, Outcome, Timestamp,
    arb::{AskLadders, BookSource, BookView, MarketPair},
    book::{BookChange, BookKey, BookState, Ladders, LevelChange},
};

/// One change of one book, as the replay reader hands it over.
#[derive(Debug, Clone, Copy)]
pub enum Update<'a> {
    /// The whole book as it stands after the event, best first and checked, as a [`BookState`] holds it (a
    /// reader that keeps each book hands it over whole, which costs a copy and no re-application).
    Snapshot(&'a Ladders),
    /// Levels with their new sizes (0 removes one).
    Change(&'a [LevelChange]),
    /// The book lost continuity; it is unknown until its next snapshot.
    Gap,
}

/// One book.
#[derive(Debug)]
struct Slot {
    /// The book as the scanner reads it; `None` while it is unknown.
    snapshot: Option<BookSnapshot>,
    /// When the book last lost continuity.
    last_gap: Option<Timestamp>,
}

/// The books of a run, by slot.
#[derive(Debug)]
pub(crate) struct Books {
    slots: Vec<Slot>,
    /// Slot by venue_a ticker and by venue_b token id.
    by_id: [HashMap<String, usize>; 2],
    /// The slots of each pair: venue_a market, venue_b YES token, venue_b NO token.
    pair_slots: Vec<[Option<usize>; 3]>,
}

/// 0 for venue_a, 1 for venue_b: an index into per-venue pairs of things.
pub(crate) fn venue_index(exchange: Exchange) -> usize {
    match exchange {
        Exchange::VenueA => 0,
        Exchange::VenueB => 1,
    }
}

impl Books {
    /// A slot for every book the pairs read.
    pub(crate) fn new(pairs: &[MarketPair<'_>]) -> Self {
        let mut books = Books {
            slots: Vec::new(),
            by_id: [HashMap::new(), HashMap::new()],
            pair_slots: Vec::with_capacity(pairs.len()),
        };
        for p in pairs {
            let b = &p.venue_b.market;
            let slots = [
                Some(books.slot_for(Exchange::VenueA, &p.venue_a.market.market_id)),
                b.yes_token_id.as_deref().map(|t| books.slot_for(Exchange::VenueB, t)),
                b.no_token_id.as_deref().map(|t| books.slot_for(Exchange::VenueB, t)),
            ];
            books.pair_slots.push(slots);
        }
        books
    }

    fn slot_for(&mut self, exchange: Exchange, id: &str) -> usize {
        let map = &mut self.by_id[venue_index(exchange)];
        if let Some(&i) = map.get(id) {
            return i;
        }
        let i = self.slots.len();
        map.insert(id.to_string(), i);
        self.slots.push(Slot {
            snapshot: None,
            last_gap: None,
        });
        i
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The slot of a book of the log; `None` for a book no pair reads.
    pub(crate) fn slot_of(&self, key: &BookKey) -> Option<usize> {
        let id = match key.exchange {
            Exchange::VenueA => key.market_id.as_str(),
            Exchange::VenueB => key.asset_id.as_deref()?,
        };
        self.by_id[venue_index(key.exchange)].get(id).copied()
    }

    /// The slots of pair `i`.
    pub(crate) fn pair_slots(&self, i: usize) -> [Option<usize>; 3] {
        self.pair_slots[i]
    }

    /// Applies one update to `slot`. A change that cannot apply leaves the book unknown, as a gap does.
    pub(crate) fn apply(&mut self, slot: usize, key: &BookKey, at: Timestamp, update: Update<'_>) {
        let s = &mut self.slots[slot];
        let after = match update {
            Update::Snapshot(l) => Some(std::borrow::Cow::Borrowed(l)),
            Update::Change(changes) => {
                // Applied to a copy of the book held: callers with only the changes are rare (tests, tools).
                let held = s.snapshot.as_ref().map(|b| Ladders {
                    bids: b.bids.clone(),
                    asks: b.asks.clone(),
                    no_bids: b.no_bids.clone(),
                });
                let mut state = BookState::from_ladders(held);
                state
                    .apply(&BookChange::Delta(changes.to_vec()))
                    .ok()
                    .and_then(|()| state.ladders().cloned())
                    .map(std::borrow::Cow::Owned)
            }
            Update::Gap => None,
        };
        let Some(l) = after else {
            s.snapshot = None;
            s.last_gap = Some(at);
            return;
        };
        let snap = s.snapshot.get_or_insert_with(|| BookSnapshot {
            exchange: key.exchange,
            market_id: key.market_id.clone(),
            asset_id: key.asset_id.clone(),
            timestamp: at,
            bids: Vec::new(),
            asks: Vec::new(),
            no_bids: Vec::new(),
        });
        snap.timestamp = at;
        // The vectors are reused from one event to the next.
        for (dst, src) in [
            (&mut snap.bids, &l.bids),
            (&mut snap.asks, &l.asks),
            (&mut snap.no_bids, &l.no_bids),
        ] {
            dst.clear();
            dst.extend_from_slice(src);
        }
    }

    /// The book in `slot`, `None` while it is unknown.
    pub(crate) fn book(&self, slot: usize) -> Option<&BookSnapshot> {
        self.slots[slot].snapshot.as_ref()
    }

    /// Whether `slot` has lost continuity after `since` (or is unknown now).
    pub(crate) fn broken_since(&self, slot: usize, since: Timestamp) -> bool {
        let s = &self.slots[slot];
        s.snapshot.is_none() || s.last_gap.is_some_and(|g| g > since)
    }

    /// The asks a taker buying `outcome` meets in `slot` (venue_a: derived from the opposite bids; venue_b:
    /// the token's own asks), best first.
    pub(crate) fn asks(&self, slot: usize, exchange: Exchange, outcome: Outcome) -> Vec<Level> {
        let Some(b) = self.book(slot) else { return Vec::new() };
        match exchange {
            Exchange::VenueA => AskLadders::from_venue_a(b).side(outcome).to_vec(),
            Exchange::VenueB => AskLadders::new(b.asks.iter().copied(), []).side(Outcome::Yes).to_vec(),
        }
    }

    /// What a held contract of `outcome` in `slot` is marked at, in micro-dollars times two: its best bid plus
    /// its best ask (the mid, doubled so it stays exact), twice its best bid when it has no ask, nothing when
    /// it has no bid or the book is unknown.
    pub(crate) fn mark(&self, slot: usize, exchange: Exchange, outcome: Outcome) -> i64 {
        let Some(bid) = self.bids(slot, exchange, outcome).first().map(|l| l.price.micros()) else {
            return 0;
        };
        let ask = self
            .asks(slot, exchange, outcome)
            .first()
            .map_or(bid, |l| l.price.micros());
        bid + ask
    }

    /// The bids a taker selling `outcome` meets in `slot` (venue_a: YES bids or NO bids; venue_b: the
    /// token's bids), best first.
    pub(crate) fn bids(&self, slot: usize, exchange: Exchange, outcome: Outcome) -> &[Level] {
        let Some(b) = self.book(slot) else { return &[] };
        match (exchange, outcome) {
            (Exchange::VenueA, Outcome::No) => &b.no_bids,
            _ => &b.bids,
        }
    }
}

impl BookSource for Books {
    fn book(&self, exchange: Exchange, key: &str) -> Option<&BookSnapshot> {
        let slot = *self.by_id[venue_index(exchange)].get(key)?;
        Books::book(self, slot)
    }

    fn pair_books(&self, index: usize, _pair: &MarketPair<'_>) -> [Option<BookView<'_>>; 3] {
        self.pair_slots[index].map(|s| s.and_then(|s| Books::book(self, s)).map(BookView::of))
    }
}
