//! Book events: what the event log records for one book, and how a book is rebuilt from them (DESIGN §1, §3).
//!
//! Every book is an ordered run of events, each with a per-book sequence number that grows by one:
//! - a **snapshot** is the whole book, a keyframe: reading can start at any snapshot;
//! - a **delta** is one or more level changes `(side, price, new size)`, a size of 0 removing the level, as the
//!   venues send them (`orderbook_delta`, `price_change`), so nothing is diffed or sampled away;
//! - a **gap** says the feed lost continuity for the book (and why). The book's next event is a snapshot, and
//!   the book is unknown from the last event before the gap to that snapshot.
//!
//! Keyframes are written by [`KeyframePolicy`], so that any instant is one keyframe plus a bounded run of deltas.

use serde::{Deserialize, Serialize};

use crate::{Amount, Price, Timestamp};

use super::Level;

/// The ladder a level change is on. venue_a books have YES bids ([`Side::Bid`]) and NO bids ([`Side::NoBid`]);
/// venue_b books have bids and asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Side {
    Bid,
    Ask,
    NoBid,
}

impl Side {
    pub const ALL: [Side; 3] = [Side::Bid, Side::Ask, Side::NoBid];

    /// The compact code of the side (one byte at rest).
    pub const fn code(self) -> u8 {
        match self {
            Side::Bid => 0,
            Side::Ask => 1,
            Side::NoBid => 2,
        }
    }

    /// The side of a [`Side::code`].
    pub fn from_code(code: u8) -> Option<Side> {
        Side::ALL.into_iter().find(|s| s.code() == code)
    }
}

/// One level change: the level at `price` on `side` now holds `size` (0 removes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelChange {
    pub side: Side,
    pub price: Price,
    pub size: Amount,
}

/// Why a book lost continuity. The names are the `cause` values of the gaps route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = GapCauseName, description = "Why a book lost continuity: `sequence_gap` (the venue's sequence number skipped), `disconnect` (the socket dropped), `silence` (the feed went silent), `restart` (the service was not running), `rate_limited` (the venue answered 429), `bad_message` (a venue change could not apply to the book) or `write_failed` (the database refused writes for too long)."))]
pub enum GapCause {
    /// The venue's sequence number skipped.
    SequenceGap,
    /// The socket dropped or the session ended.
    Disconnect,
    /// The feed went silent although the socket was open; the watchdog reset it.
    Silence,
    /// The process stopped and started again: nothing was captured in between.
    Restart,
    /// The venue answered 429 and ingestion backed off.
    RateLimited,
    /// A venue message could not be applied to the book (an unknown level, a price off the grid).
    BadMessage,
    /// The database refused writes for so long that the buffered events were dropped.
    WriteFailed,
}

impl GapCause {
    pub const ALL: [GapCause; 7] = [
        GapCause::SequenceGap,
        GapCause::Disconnect,
        GapCause::Silence,
        GapCause::Restart,
        GapCause::RateLimited,
        GapCause::BadMessage,
        GapCause::WriteFailed,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            GapCause::SequenceGap => "sequence_gap",
            GapCause::Disconnect => "disconnect",
            GapCause::Silence => "silence",
            GapCause::Restart => "restart",
            GapCause::RateLimited => "rate_limited",
            GapCause::BadMessage => "bad_message",
            GapCause::WriteFailed => "write_failed",
        }
    }

    pub fn parse(s: &str) -> Option<GapCause> {
        GapCause::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The compact code of the cause at rest. Written down per variant, never derived from the order of
    /// [`GapCause::ALL`], so that stored logs keep their meaning when a cause is added.
    pub const fn code(self) -> u8 {
        match self {
            GapCause::SequenceGap => 0,
            GapCause::Disconnect => 1,
            GapCause::Silence => 2,
            GapCause::Restart => 3,
            GapCause::RateLimited => 4,
            GapCause::BadMessage => 5,
            GapCause::WriteFailed => 6,
        }
    }

    /// The cause of a [`GapCause::code`].
    pub fn from_code(code: u8) -> Option<GapCause> {
        GapCause::ALL.into_iter().find(|c| c.code() == code)
    }
}

/// What one event of a book records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BookChange {
    /// The whole book (a keyframe); ladders best first, as in [`super::BookSnapshot`].
    Snapshot {
        bids: Vec<Level>,
        asks: Vec<Level>,
        no_bids: Vec<Level>,
    },
    /// Level changes, applied in order.
    Delta(Vec<LevelChange>),
    /// The feed lost continuity; the book is unknown until the next snapshot.
    Gap(GapCause),
}

/// One event of a book's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BookEvent {
    /// Per-book sequence number: the previous event's plus one.
    pub seq: u64,
    /// The venue's own sequence number, where the protocol has one (venue_a's per-subscription `seq`).
    pub venue_seq: Option<i64>,
    /// The venue's timestamp, where the message carries one.
    pub venue_ts: Option<Timestamp>,
    /// When we received it (the time history is ordered and bucketed by).
    pub received_at: Timestamp,
    pub change: BookChange,
}

/// Why an event cannot be applied to a book. The event is never merged: the book is marked for a new
/// snapshot and a gap is recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("a delta arrived for a book with no snapshot")]
    NoKeyframe,
    #[error("price {0} is outside the book's range (0 to 1 dollar, exclusive)")]
    PriceOutOfRange(i64),
    #[error("negative size {0}")]
    NegativeSize(i64),
}

/// The state of one book while its events are applied in order: the ladders, or nothing while the book is in a
/// gap (before its first snapshot, or after a gap until the next).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BookState {
    ladders: Option<Ladders>,
}

/// The three ladders of a book, best first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ladders {
    pub bids: Vec<Level>,
    pub asks: Vec<Level>,
    pub no_bids: Vec<Level>,
}

impl Ladders {
    fn ladder_mut(&mut self, side: Side) -> &mut Vec<Level> {
        match side {
            Side::Bid => &mut self.bids,
            Side::Ask => &mut self.asks,
            Side::NoBid => &mut self.no_bids,
        }
    }

    /// Sets the level at `price` on `side` to `size` (0 removes it), keeping the ladder best first. Ladders hold
    /// tens of levels, so a binary search and a `Vec` insert beat any tree.
    fn set(&mut self, c: LevelChange) {
        let descending = c.side != Side::Ask;
        let ladder = self.ladder_mut(c.side);
        let found = ladder.binary_search_by(|l| {
            if descending {
                c.price.cmp(&l.price)
            } else {
                l.price.cmp(&c.price)
            }
        });
        match (found, c.size.micros() > 0) {
            (Ok(i), true) => ladder[i].size = c.size,
            (Ok(i), false) => {
                ladder.remove(i);
            }
            (Err(i), true) => ladder.insert(
                i,
                Level {
                    price: c.price,
                    size: c.size,
                },
            ),
            // Removing a level the book does not hold changes nothing: venues send removals of levels that a
            // previous change already emptied.
            (Err(_), false) => {}
        }
    }
}

/// Whether a level can be part of a binary-outcome book: a price strictly between 0 and 1 dollar and a size
/// that is not negative. The connectors check venue changes with it before applying them to their books.
pub fn check_level(price: Price, size: Amount) -> Result<(), ApplyError> {
    if price.micros() <= 0 || price.micros() >= Price::from_cents(100).micros() {
        return Err(ApplyError::PriceOutOfRange(price.micros()));
    }
    if size.micros() < 0 {
        return Err(ApplyError::NegativeSize(size.micros()));
    }
    Ok(())
}

impl BookState {
    /// A state holding `ladders` (`None`: in a gap).
    pub fn from_ladders(ladders: Option<Ladders>) -> Self {
        BookState { ladders }
    }

    /// The ladders, or `None` while the book is in a gap.
    pub fn ladders(&self) -> Option<&Ladders> {
        self.ladders.as_ref()
    }

    /// Applies one change. On an error the state is left in a gap (the event is not merged), and the caller
    /// records why.
    pub fn apply(&mut self, change: &BookChange) -> Result<(), ApplyError> {
        match change {
            BookChange::Snapshot { bids, asks, no_bids } => {
                for l in bids.iter().chain(asks).chain(no_bids) {
                    if let Err(e) = check_level(l.price, l.size) {
                        self.ladders = None;
                        return Err(e);
                    }
                }
                let mut ladders = Ladders::default();
                for (side, ladder) in [(Side::Bid, bids), (Side::Ask, asks), (Side::NoBid, no_bids)] {
                    for l in ladder {
                        ladders.set(LevelChange {
                            side,
                            price: l.price,
                            size: l.size,
                        });
                    }
                }
                self.ladders = Some(ladders);
                Ok(())
            }
            BookChange::Delta(changes) => {
                let Some(ladders) = self.ladders.as_mut() else {
                    return Err(ApplyError::NoKeyframe);
                };
                if let Some(e) = changes.iter().find_map(|c| check_level(c.price, c.size).err()) {
                    self.ladders = None;
                    return Err(e);
                }
                for c in changes {
                    ladders.set(*c);
                }
                Ok(())
            }
            BookChange::Gap(_) => {
                self.ladders = None;
                Ok(())
            }
        }
    }
}

/// When a writer turns the current book into a keyframe: after `max_deltas` deltas or `max_age_ms` since the
/// last keyframe, whichever comes first. Rebuilding any instant then reads one keyframe and at most
/// `max_deltas` deltas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyframePolicy {
    pub max_deltas: u32,
    pub max_age_ms: i64,
}

impl KeyframePolicy {
    /// A keyframe every 1,000 deltas or 60 s: a book changing 10 times a second gets one a minute, so a read
    /// of an instant applies at most 600 deltas, and keyframes cost a few percent of the log.
    pub const DEFAULT: KeyframePolicy = KeyframePolicy {
        max_deltas: 1_000,
        max_age_ms: 60_000,
    };

    /// Whether the next event should be a keyframe, given the deltas and the time since the last one.
    pub fn due(&self, deltas_since: u32, last_keyframe: Timestamp, now: Timestamp) -> bool {
        deltas_since >= self.max_deltas || now.millis() - last_keyframe.millis() >= self.max_age_ms
    }
}

impl Default for KeyframePolicy {
    fn default() -> Self {
        KeyframePolicy::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lvl(cents: i64, size: i64) -> Level {
        Level {
            price: Price::from_cents(cents),
            size: Amount::from_units(size),
        }
    }

    fn ch(side: Side, cents: i64, size: i64) -> LevelChange {
        LevelChange {
            side,
            price: Price::from_cents(cents),
            size: Amount::from_units(size),
        }
    }

    fn snapshot() -> BookChange {
        // Out of order on purpose: a snapshot is sorted best first when applied.
        BookChange::Snapshot {
            bids: vec![lvl(40, 5), lvl(42, 1)],
            asks: vec![lvl(47, 3), lvl(45, 2)],
            no_bids: vec![],
        }
    }

    #[test]
    fn deltas_set_insert_and_remove_levels_keeping_ladders_best_first() {
        let mut s = BookState::default();
        s.apply(&snapshot()).unwrap();
        s.apply(&BookChange::Delta(vec![
            ch(Side::Bid, 41, 7),
            ch(Side::Bid, 42, 0),
            ch(Side::Ask, 45, 9),
            ch(Side::Ask, 44, 1),
            ch(Side::Ask, 50, 0),
        ]))
        .unwrap();
        let l = s.ladders().unwrap();
        assert_eq!(l.bids, [lvl(41, 7), lvl(40, 5)]);
        assert_eq!(l.asks, [lvl(44, 1), lvl(45, 9), lvl(47, 3)]);
        assert!(l.no_bids.is_empty());
    }

    #[test]
    fn a_delta_without_a_keyframe_or_off_the_book_is_refused_and_leaves_a_gap() {
        let mut s = BookState::default();
        assert_eq!(
            s.apply(&BookChange::Delta(vec![ch(Side::Bid, 40, 1)])),
            Err(ApplyError::NoKeyframe)
        );
        s.apply(&snapshot()).unwrap();
        assert_eq!(
            s.apply(&BookChange::Delta(vec![ch(Side::Bid, 41, 1), ch(Side::Ask, 100, 1)])),
            Err(ApplyError::PriceOutOfRange(1_000_000))
        );
        assert_eq!(s.ladders(), None, "a refused delta is never half merged");
        s.apply(&snapshot()).unwrap();
        s.apply(&BookChange::Gap(GapCause::Disconnect)).unwrap();
        assert_eq!(s.ladders(), None);
    }

    #[test]
    fn keyframes_are_due_by_count_or_age() {
        let p = KeyframePolicy::DEFAULT;
        let t0 = Timestamp::from_millis(1_000_000);
        assert!(!p.due(999, t0, Timestamp::from_millis(1_059_999)));
        assert!(p.due(1_000, t0, t0));
        assert!(p.due(0, t0, Timestamp::from_millis(1_060_000)));
    }

    #[test]
    fn codes_and_names_round_trip() {
        for s in Side::ALL {
            assert_eq!(Side::from_code(s.code()), Some(s));
        }
        for c in GapCause::ALL {
            assert_eq!(GapCause::parse(c.as_str()), Some(c));
            assert_eq!(GapCause::from_code(c.code()), Some(c));
        }
        assert_eq!(GapCause::parse("resnapshot"), None);
    }
}
