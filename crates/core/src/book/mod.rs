//! Order books in venue-neutral form, and the rules read off them.
//!
//! The types ([`Level`], [`BookSnapshot`]) live here; the rules every consumer must agree on live beside
//! them, once: the top of book with mid and spread and their rounding ([`top`](mod@top)), asks derived from the
//! opposite side's bids ([`derive`](mod@derive)), depth over the first levels ([`depth`](mod@depth)), and the events
//! of the book log with the rule that rebuilds a book from them ([`event`](mod@event)). The venue normaliser, the
//! historical routes and the arbitrage pricing all call these, so a rule cannot drift between them.

use serde::{Deserialize, Serialize};

pub mod depth;
pub mod derive;
pub mod event;
pub mod key;
pub mod top;

pub use depth::depth;
pub use derive::{ask_from_opposite_bid, asks_from_opposite_bids};
pub use event::{
    ApplyError, BookChange, BookEvent, BookState, GapCause, KeyframePolicy, Ladders, LevelChange, Side, check_level,
};
pub use key::BookKey;
pub use top::{QUOTE_TICK, TopOfBook, best, mid, spread};

use crate::{Amount, Exchange, Price, Timestamp};

/// One price level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    pub price: Price,
    pub size: Amount,
}

/// A point-in-time copy of one book.
///
/// venue_a: one book per market with two bid ladders, `bids` = YES bids and `asks` empty while
/// `no_bids` holds the NO bids (asks are derived: YES ask = 1 − NO bid). venue_b: one book per token
/// (`asset_id`), with real bids and asks and `no_bids` empty.
/// Ladders are kept best first: bids descending, asks ascending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BookSnapshot {
    pub exchange: Exchange,
    pub market_id: String,
    /// venue_b token id; `None` on venue_a.
    pub asset_id: Option<String>,
    pub timestamp: Timestamp,
    pub bids: Vec<Level>,
    pub asks: Vec<Level>,
    /// venue_a NO bids (empty on venue_b).
    pub no_bids: Vec<Level>,
}

impl BookSnapshot {
    /// Sorts every ladder best first and drops empty levels. Venues send ladders in varying orders
    /// (venue_a ascending with best last), so this runs once at the edge.
    pub fn normalise(&mut self) {
        self.bids.retain(|l| l.size.micros() > 0);
        self.asks.retain(|l| l.size.micros() > 0);
        self.no_bids.retain(|l| l.size.micros() > 0);
        self.bids.sort_by_key(|l| std::cmp::Reverse(l.price));
        self.no_bids.sort_by_key(|l| std::cmp::Reverse(l.price));
        self.asks.sort_by_key(|l| l.price);
    }
}
