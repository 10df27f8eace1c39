//! The bus's payloads: one JSON object per message, the same for every kind of event.
//!
//! ```json
//! {"v":1,"term":1764210000123,"seq":1764210000123042,"sent_at":1764210000456,"kind":"book","data":{...}}
//! ```
//!
//! - `v`: the payload version; a mirror skips (and counts) a version it does not know.
//! - `term`: the publishing leader's term, unique per leadership term (the time it started publishing, in
//!   Unix milliseconds). A new term means a new leader or a restart.
//! - `seq`: on the event subjects, the leader's number of the message, one more each time from
//!   [`first_seq`]`(term)`, so numbers grow from term to term (the position stream clients resume from); the
//!   keyframe subjects have a count of their own, 1, 2, 3, ... A hole within a term means messages were lost
//!   between the leader and this reader.
//! - `sent_at`: when the leader published it (Unix milliseconds); a reader's lag is its age.
//! - `kind` and `data`: the event. `data` holds crossbook's domain types as they serialise (prices and sizes
//!   as integer micro-units, times as Unix milliseconds).
//!
//! This module is the only place that knows the mapping between [`DomainEvent`] and the wire: a field added to
//! an event is one line here.

use std::sync::Arc;

use crossbook_core::{
    BookSnapshot, Exchange, Timestamp, Trade,
    arb::{Opportunity, OpportunityChange},
    book::{BookChange, BookKey, GapCause},
    whale::WhaleEntry,
};
use serde::{Deserialize, Serialize};

use crate::bus::{BookChanged, DomainEvent};

/// The payload version this build writes and reads.
pub const VERSION: u32 = 1;

/// How far apart the numbering of two terms starts, per millisecond between them: a term numbers its event
/// messages on from [`first_seq`], so a later term's numbers stay above an earlier one's unless the earlier
/// one published more than this many messages per millisecond over its whole life.
pub const SEQ_PER_TERM_MS: u64 = 1_000;

/// The number before a term's first event message. Every api process sees the same number on the same
/// message, and numbers only grow from term to term: the position stream clients resume from. (Below 2^53 for
/// centuries, so JavaScript clients read it exactly.)
pub const fn first_seq(term: u64) -> u64 {
    term.saturating_mul(SEQ_PER_TERM_MS)
}

/// One message on the bus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub v: u32,
    /// The publishing leader's term: when it started publishing (Unix ms).
    pub term: u64,
    /// On the event subjects, one more than the term's previous event message, from [`first_seq`]`(term) + 1`;
    /// keyframes and removals (the keyframe subjects) have a count of their own, from 1.
    pub seq: u64,
    pub sent_at: Timestamp,
    #[serde(flatten)]
    pub body: Body,
}

/// What a message carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum Body {
    /// A book changed ([`DomainEvent::BookUpdated`]); `book_seq` is the book's sequence after the change.
    Book(BookChanged),
    /// The whole book as the leader holds it, with its sequence: where a reader starts a book, and how it
    /// recovers one after a hole. Published on the keyframe subjects, never on the event subjects.
    Keyframe(Keyframe),
    /// The leader no longer holds the book (its market closed, resolved or is no longer followed): readers
    /// drop it. Published on the book's keyframe subject, where it takes the place of the last keyframe, so a
    /// reader starting later does not load the book either.
    Removed { key: BookKey },
    /// Books that lost continuity ([`DomainEvent::BooksStale`]).
    Stale {
        exchange: Exchange,
        keys: Vec<BookKey>,
        /// The number of each book's gap, in the order of `keys`.
        book_seqs: Vec<u64>,
        cause: GapCause,
        at: Timestamp,
    },
    /// A stored trade ([`DomainEvent::TradeIngested`]).
    Trade(Trade),
    /// A catalog sync finished ([`DomainEvent::CatalogSynced`]).
    Catalog { exchange: Exchange, markets: usize },
    /// A whale trade ([`DomainEvent::WhaleEntry`]).
    Whale(WhaleEntry),
    /// An opportunity above the webhook threshold ([`DomainEvent::ArbitrageOpportunity`]).
    Opportunity(Opportunity),
    /// An opportunity opened, changed or closed ([`DomainEvent::ArbitrageChanged`]).
    ArbitrageChanged(OpportunityChange),
}

/// A book with its sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Keyframe {
    pub key: BookKey,
    pub book_seq: u64,
    /// The leader's own copy is stale: a reader holds the book stale too until a fresh keyframe or snapshot.
    pub stale: bool,
    pub book: BookSnapshot,
}

// `BookChanged` travels as it is: its fields are the wire fields.
impl Serialize for BookChanged {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        BookWire {
            key: self.key.clone(),
            book_seq: self.book_seq,
            timestamp: self.timestamp,
            change: self.change.clone(),
            venue_ts: self.venue_ts,
            received_at: self.received_at,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for BookChanged {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = BookWire::deserialize(d)?;
        Ok(BookChanged {
            key: w.key,
            book_seq: w.book_seq,
            timestamp: w.timestamp,
            change: w.change,
            venue_ts: w.venue_ts,
            received_at: w.received_at,
        })
    }
}

#[derive(Serialize, Deserialize)]
struct BookWire {
    key: BookKey,
    book_seq: u64,
    timestamp: Timestamp,
    change: BookChange,
    #[serde(default)]
    venue_ts: Option<Timestamp>,
    received_at: Timestamp,
}

impl Body {
    /// The wire form of a bus event; `None` for a kind the bus does not carry (a mirror's [`DomainEvent::Position`]).
    pub fn of(ev: &DomainEvent) -> Option<Body> {
        Some(match ev {
            DomainEvent::BookUpdated(c) => Body::Book((**c).clone()),
            DomainEvent::BooksStale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            } => Body::Stale {
                exchange: *exchange,
                keys: keys.clone(),
                book_seqs: book_seqs.clone(),
                cause: *cause,
                at: *at,
            },
            DomainEvent::TradeIngested(t) => Body::Trade(t.clone()),
            DomainEvent::CatalogSynced { exchange, markets } => Body::Catalog {
                exchange: *exchange,
                markets: *markets,
            },
            DomainEvent::WhaleEntry(w) => Body::Whale((**w).clone()),
            DomainEvent::ArbitrageOpportunity(o) => Body::Opportunity((**o).clone()),
            DomainEvent::ArbitrageChanged(c) => Body::ArbitrageChanged((**c).clone()),
            // A mirror's own bookkeeping, not an event of the leader.
            DomainEvent::Position { .. } => return None,
        })
    }

    /// The bus event this message carries; `None` for a keyframe or a removal (not events: a reader applies
    /// them to its books).
    pub fn into_event(self) -> Option<DomainEvent> {
        Some(match self {
            Body::Book(c) => DomainEvent::BookUpdated(Arc::new(c)),
            Body::Keyframe(_) | Body::Removed { .. } => return None,
            Body::Stale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            } => DomainEvent::BooksStale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            },
            Body::Trade(t) => DomainEvent::TradeIngested(t),
            Body::Catalog { exchange, markets } => DomainEvent::CatalogSynced { exchange, markets },
            Body::Whale(w) => DomainEvent::WhaleEntry(Arc::new(w)),
            Body::Opportunity(o) => DomainEvent::ArbitrageOpportunity(Arc::new(o)),
            Body::ArbitrageChanged(c) => DomainEvent::ArbitrageChanged(Arc::new(c)),
        })
    }
}

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("not a bus message: {0}")]
    Json(#[from] serde_json::Error),
    #[error("payload version {0} is not known to this build (it reads version {VERSION})")]
    Version(u32),
}

impl Envelope {
    /// The JSON bytes of this message.
    pub fn encode(&self) -> Vec<u8> {
        // Serialising our own types into a `Vec` cannot fail (no maps with non-string keys, no I/O).
        serde_json::to_vec(self).expect("bus payloads serialise")
    }

    /// Reads one message.
    pub fn decode(bytes: &[u8]) -> Result<Envelope, DecodeError> {
        #[derive(Deserialize)]
        struct Version {
            v: u32,
        }
        // One parse on the hot path; the version is looked at alone only to explain a failure.
        match serde_json::from_slice::<Envelope>(bytes) {
            Ok(env) if env.v == VERSION => Ok(env),
            Ok(env) => Err(DecodeError::Version(env.v)),
            Err(e) => match serde_json::from_slice::<Version>(bytes) {
                Ok(Version { v }) if v != VERSION => Err(DecodeError::Version(v)),
                _ => Err(e.into()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::{
        Amount, Price,
        book::{Level, LevelChange, Side},
    };

    use super::*;

    fn key() -> BookKey {
        BookKey::venue_b("0xabc.def", "123 456")
    }

    fn round_trip(body: Body) {
        let env = Envelope {
            v: VERSION,
            term: 7,
            seq: 9,
            sent_at: Timestamp(1_700_000_000_000),
            body,
        };
        let bytes = env.encode();
        let back = Envelope::decode(&bytes).unwrap();
        assert_eq!(back, env, "{}", String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn every_kind_round_trips() {
        let lv = |c, s| Level {
            price: Price::from_cents(c),
            size: Amount::from_units(s),
        };
        let changed = BookChanged {
            key: key(),
            book_seq: 3,
            timestamp: Timestamp(5),
            change: BookChange::Delta(vec![LevelChange {
                side: Side::Ask,
                price: Price::from_cents(41),
                size: Amount::from_units(0),
            }]),
            venue_ts: Some(Timestamp(4)),
            received_at: Timestamp(6),
        };
        round_trip(Body::Book(changed.clone()));
        let ev = Body::Book(changed).into_event().unwrap();
        assert_eq!(Body::of(&ev).and_then(Body::into_event), Some(ev));
        round_trip(Body::Keyframe(Keyframe {
            key: BookKey::venue_a("KX-1"),
            book_seq: 12,
            stale: false,
            book: BookSnapshot {
                exchange: Exchange::VenueA,
                market_id: "KX-1".into(),
                asset_id: None,
                timestamp: Timestamp(8),
                bids: vec![lv(40, 10)],
                asks: vec![],
                no_bids: vec![lv(55, 3)],
            },
        }));
        round_trip(Body::Removed {
            key: BookKey::venue_a("KX-1"),
        });
        round_trip(Body::Stale {
            exchange: Exchange::VenueB,
            keys: vec![key()],
            book_seqs: vec![12],
            cause: GapCause::Disconnect,
            at: Timestamp(9),
        });
        round_trip(Body::Catalog {
            exchange: Exchange::VenueA,
            markets: 4,
        });
    }

    #[test]
    fn the_wire_is_readable_json() {
        let env = Envelope {
            v: VERSION,
            term: 1,
            seq: 2,
            sent_at: Timestamp(3),
            body: Body::Catalog {
                exchange: Exchange::VenueB,
                markets: 5,
            },
        };
        let v: serde_json::Value = serde_json::from_slice(&env.encode()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"v": 1, "term": 1, "seq": 2, "sent_at": 3, "kind": "catalog",
                "data": {"exchange": "venue_b", "markets": 5}})
        );
    }

    #[test]
    fn garbage_and_unknown_versions_are_errors() {
        assert!(matches!(Envelope::decode(b"not json"), Err(DecodeError::Json(_))));
        assert!(matches!(
            Envelope::decode(br#"{"v":2,"term":1,"seq":1,"sent_at":1,"kind":"catalog","data":{}}"#),
            Err(DecodeError::Version(2))
        ));
        assert!(matches!(
            Envelope::decode(br#"{"v":1,"term":1,"seq":1,"sent_at":1,"kind":"nonsense","data":{}}"#),
            Err(DecodeError::Json(_))
        ));
    }
}
