//! The shape every venue connector has (barter-rs `Connector` style): a [`Venue`] with REST reads of the
//! catalog, books and trades, a WebSocket request, and a per-connection [`FeedSession`] that turns the
//! venue's frames into venue-neutral updates.
//!
//! The ingest loop in [`crate::ingest`] is written once against these two traits; adding a venue means
//! implementing them, not touching the loop.

use std::{
    collections::{BTreeMap, HashSet},
    future::Future,
    time::Duration,
};

use crossbook_core::{
    BookSnapshot, Event, Exchange, Market, Series, Timestamp, Trade,
    book::{BookChange, GapCause, LevelChange},
};
use tokio_tungstenite::tungstenite::handshake::client::Request;

use crate::error::VenueError;
use crossbook_live::BookKey;

/// Normalised catalog items from one sync or one event lookup.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogBatch {
    pub series: Vec<Series>,
    pub events: Vec<Event>,
    pub markets: Vec<Market>,
}

impl CatalogBatch {
    /// Appends `other`, keeping the first copy of any id seen twice (listings overlap: an event can be both
    /// in a series listing and followed by id).
    pub fn merge(&mut self, other: CatalogBatch) {
        self.series.extend(other.series);
        self.events.extend(other.events);
        self.markets.extend(other.markets);
        self.dedup();
    }

    /// Keeps the first copy of every series, event and market id.
    pub fn dedup(&mut self) {
        let mut seen = HashSet::new();
        self.series.retain(|s| seen.insert(s.series_id.clone()));
        seen.clear();
        self.events.retain(|e| seen.insert(e.event_id.clone()));
        seen.clear();
        self.markets.retain(|m| seen.insert(m.market_id.clone()));
    }
}

/// The markets a venue's feed follows, by market id. Built by the catalog task, read by the feed and the
/// trade poller.
pub type MarketSet = BTreeMap<String, Market>;

/// One change of a book as the feed saw it: the book after the change (for the live map) and what the venue
/// sent (for the event log): a whole book, or the levels a delta set, never a diff of two copies.
#[derive(Debug, Clone, PartialEq)]
pub struct BookUpdate {
    /// The whole book after the change, best first.
    pub book: BookSnapshot,
    /// [`BookChange::Snapshot`] or [`BookChange::Delta`] (new absolute sizes, 0 removing a level).
    pub change: BookChange,
    /// The venue's sequence number of the frame, where the protocol has one.
    pub venue_seq: Option<i64>,
    /// The venue's timestamp of the frame, where it carries one.
    pub venue_ts: Option<Timestamp>,
}

impl BookUpdate {
    /// A whole book (a venue snapshot or a REST read).
    pub fn snapshot(book: BookSnapshot, venue_seq: Option<i64>, venue_ts: Option<Timestamp>) -> Self {
        let change = BookChange::Snapshot {
            bids: book.bids.clone(),
            asks: book.asks.clone(),
            no_bids: book.no_bids.clone(),
        };
        BookUpdate {
            book,
            change,
            venue_seq,
            venue_ts,
        }
    }

    /// Level changes, with the book they left.
    pub fn delta(
        book: BookSnapshot,
        changes: Vec<LevelChange>,
        venue_seq: Option<i64>,
        venue_ts: Option<Timestamp>,
    ) -> Self {
        BookUpdate {
            book,
            change: BookChange::Delta(changes),
            venue_seq,
            venue_ts,
        }
    }
}

/// Reading an update's book reads the book after the change (most consumers only want that).
impl std::ops::Deref for BookUpdate {
    type Target = BookSnapshot;

    fn deref(&self) -> &BookSnapshot {
        &self.book
    }
}

/// What a feed frame (or a subscription change) produced, in venue-neutral terms.
#[derive(Debug, Default)]
pub struct FeedUpdate {
    /// Books that changed, in the order the venue changed them.
    pub books: Vec<BookUpdate>,
    /// Books that can no longer be trusted until the venue sends a fresh snapshot, and why.
    pub stale: Vec<(BookKey, GapCause)>,
    /// Trades seen on the feed.
    pub trades: Vec<Trade>,
    /// Text frames to send to the venue (subscribe, resubscribe).
    pub send: Vec<String>,
    /// The feed may have missed trades (a gap on the trade channel, a fill announced without an id):
    /// fetch them over REST now.
    pub backfill_trades: bool,
    /// Catalog changes the venue announced for followed markets (a market listed or resolved), applied
    /// one by one rather than by a full catalog sync.
    pub catalog: Vec<CatalogNotice>,
    /// Frames or parts of frames that could not be understood; counted and skipped.
    pub malformed: Vec<VenueError>,
    /// Whether the frame carried market data (as opposed to a keepalive or a command reply): the data's
    /// age restarts.
    pub data: bool,
    /// Whether the frame was a keepalive answer (venue_b's `PONG`): the connection is alive, which the
    /// silence watchdog counts like data, but the data's age goes on.
    pub alive: bool,
    /// The venue refused markets past its per-connection limit: the feed moves them to other sockets and
    /// puts fewer markets on each socket from then on.
    pub refused: Option<Refused>,
    /// Books the connection follows that the venue has not sent though asked several times (a venue that
    /// takes fewer subscriptions per connection than the settings put on it says nothing for the extra
    /// ones): the count now, from sessions that keep it.
    pub missing: Option<usize>,
}

/// Markets a venue refused to follow on one connection because of its per-connection limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refused {
    /// Markets the connection follows, which the venue accepted.
    pub held: usize,
    /// The markets refused.
    pub markets: Vec<String>,
}

impl FeedUpdate {
    /// An update that only sends frames.
    pub fn sending(send: Vec<String>) -> Self {
        FeedUpdate {
            send,
            ..Default::default()
        }
    }

    /// Folds `other` into `self`.
    pub fn absorb(&mut self, other: FeedUpdate) {
        self.books.extend(other.books);
        self.stale.extend(other.stale);
        self.trades.extend(other.trades);
        self.send.extend(other.send);
        self.backfill_trades |= other.backfill_trades;
        self.catalog.extend(other.catalog);
        self.malformed.extend(other.malformed);
        self.data |= other.data;
        self.alive |= other.alive;
        if let Some(r) = other.refused {
            let mine = self.refused.get_or_insert_with(Refused::default);
            mine.held = r.held;
            mine.markets.extend(r.markets);
        }
        if other.missing.is_some() {
            self.missing = other.missing;
        }
    }
}

/// The `kind` values of `crossbook_venue_catalog_notices_total`: announcements applied to one listed or
/// resolved market, and announcements of markets outside what is followed.
pub const CATALOG_NOTICE_KINDS: [&str; 3] = ["listed", "resolved", "ignored"];

/// A catalog change the feed announced, for the catalog worker to apply to just the market concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogNotice {
    /// A market was listed in a followed event or series (or anywhere, when everything is followed): read
    /// its event (`event`: id, or slug when the venue gave no id) and follow its new markets.
    Listed { event: String, market_id: String },
    /// A followed market resolved at `at`; `winner` is the winning token where the venue named it.
    Resolved {
        market_id: String,
        winner: Option<String>,
        at: Timestamp,
    },
}

/// The protocol state of one WebSocket connection: subscriptions, sequence numbers and the local books
/// that deltas apply to. A new connection gets a new session (subscription ids do not survive reconnects).
pub trait FeedSession: Send + 'static {
    /// Brings the subscriptions in line with `markets`: subscribes new markets, drops gone ones.
    fn sync_markets(&mut self, markets: &MarketSet) -> FeedUpdate;
    /// Throws away every local book and subscribes again from scratch (the watchdog's remedy for a silent
    /// feed, and the answer to terminal subscription errors); the books become stale for `cause`.
    fn resubscribe(&mut self, cause: GapCause) -> FeedUpdate;
    /// Handles one text frame received at `now`.
    fn on_text(&mut self, text: &str, now: Timestamp) -> FeedUpdate;
    /// Called on every watchdog tick: the place to ask again for snapshots that never came.
    fn on_tick(&mut self, _now: Timestamp) -> FeedUpdate {
        FeedUpdate::default()
    }
    /// A text keepalive to send periodically (venue_b's `PING`); `None` when the venue pings us.
    fn keepalive(&self) -> Option<String> {
        None
    }
}

/// One venue's connector.
pub trait Venue: Send + Sync + 'static {
    /// Which venue this is.
    const EXCHANGE: Exchange;
    /// The per-connection protocol state.
    type Session: FeedSession;

    /// Reads the configured part of the catalog, plus the events in `followed` (ids added at run time).
    fn sync_catalog(&self, followed: &[String]) -> impl Future<Output = Result<CatalogBatch, VenueError>> + Send;

    /// One event with its series and markets; `None` when the venue does not know it.
    fn fetch_event(&self, event_id: &str) -> impl Future<Output = Result<Option<CatalogBatch>, VenueError>> + Send;

    /// The current state of followed markets that dropped out of the listings (closed, settled), so that
    /// their status and settlement time follow the venue. Markets the venue no longer knows are left out.
    fn refresh_markets(&self, markets: &[Market]) -> impl Future<Output = Result<Vec<Market>, VenueError>> + Send;

    /// Full books of `markets` over REST (polling fallback and resync).
    fn fetch_books(&self, markets: &[Market]) -> impl Future<Output = Result<Vec<BookSnapshot>, VenueError>> + Send;

    /// Trades of the followed markets executed at or after `since`, in any order. Venues resend trades;
    /// the store keeps one copy of each.
    fn fetch_trades(
        &self,
        markets: &MarketSet,
        since: Timestamp,
    ) -> impl Future<Output = Result<Vec<Trade>, VenueError>> + Send;

    /// The WebSocket upgrade request (signed when the venue needs it), or `None` when the feed must poll
    /// REST instead (venue_a without credentials).
    fn ws_request(&self) -> Result<Option<Request>, VenueError>;

    /// A fresh protocol state for a new connection.
    fn new_session(&self) -> Self::Session;

    /// How often [`FeedSession::keepalive`] is sent.
    fn keepalive_interval(&self) -> Option<Duration> {
        None
    }

    /// Whether every open market of the venue is followed (no series configured): then any market the feed
    /// announces is followed, whatever its series.
    fn follows_everything(&self) -> bool {
        false
    }

    /// Whether trades are polled over REST even while the WebSocket is up (venue_b: its socket reports fills
    /// without a trade id or trader, so the public tape is the source of record).
    fn polls_trades_with_ws(&self) -> bool {
        false
    }
}
