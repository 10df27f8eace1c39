//! Per-venue freshness, read by the server's `/readyz` (contracts §10: each venue's data fresher than
//! 60 s, with a per-venue breakdown).
//!
//! Ingestion writes it (message received, connected or not, last catalog sync, last error); the server reads
//! a copy. The book counts are not written: they are counted from [`LiveBooks`] whenever the health is read,
//! so they are true at that moment even while no feed loop runs (a venue that cannot be reached). It is a
//! plain `std::sync::RwLock` map for the same reason as [`LiveBooks`]: tiny critical sections with no
//! `.await` inside.

use std::{
    collections::BTreeMap,
    mem::Discriminant,
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use crossbook_core::{Exchange, Timestamp};

use crossbook_live::LiveBooks;

/// How a venue's books are being fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedMode {
    /// Not started yet.
    #[default]
    Idle,
    /// Live over the venue's WebSocket.
    WebSocket,
    /// Polling REST (venue_a without credentials).
    Polling,
}

impl FeedMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FeedMode::Idle => "idle",
            FeedMode::WebSocket => "websocket",
            FeedMode::Polling => "polling",
        }
    }
}

/// The parts of a venue's ingestion that can fail on their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// The books: the WebSocket (or REST book polling).
    Books,
    /// The trade tape (REST reads).
    Trades,
    /// The catalog sync.
    Catalog,
}

impl Part {
    pub const ALL: [Part; 3] = [Part::Books, Part::Trades, Part::Catalog];

    pub fn as_str(self) -> &'static str {
        match self {
            Part::Books => "books",
            Part::Trades => "trades",
            Part::Catalog => "catalog",
        }
    }
}

/// Consecutive failures after which a failing trades or catalog part makes a venue whose books are fresh
/// `Degraded`: one failed read is retried soon and loses nothing, repeated ones lose data.
pub const DEGRADED_AFTER_FAILURES: u32 = 3;

/// How one part of a venue's ingestion is doing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartHealth {
    /// When it last succeeded (a sync, a tape read, a connection that delivered data or a book poll).
    pub last_ok_at: Option<Timestamp>,
    /// Its latest error, kept after it succeeds again (for the record); `failures` says whether it still fails.
    pub last_error: Option<String>,
    pub last_error_at: Option<Timestamp>,
    /// Failures since it last succeeded (0 while it works).
    pub failures: u32,
}

impl PartHealth {
    /// Whether its latest attempt failed.
    pub fn failing(&self) -> bool {
        self.failures > 0
    }
}

/// A venue's WebSocket connections: its followed markets are spread over as many sockets as the venue's
/// per-connection limit needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Connections {
    /// Sockets the venue's markets are spread over now.
    pub total: usize,
    /// Of those, the ones open and subscribed.
    pub connected: usize,
    /// Reconnects of all of them since start.
    pub reconnects: u64,
}

/// The state of one venue's feed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeedHealth {
    pub mode: FeedMode,
    /// WebSocket: every socket of the venue is open and subscribed (one down is enough for `false`: its
    /// books are stale). Polling: the last poll succeeded.
    pub connected: bool,
    /// The venue's sockets (WebSocket mode; zero while polling).
    pub connections: Connections,
    /// Each socket's state, by socket id: open and subscribed or not. Written through the
    /// `VenueHealth::socket_*` methods, which keep `connections` and `connected` in step with it.
    pub sockets: BTreeMap<u64, bool>,
    /// When the last valid data message (or successful poll) arrived. Keepalives do not count: this is the
    /// age of the data.
    pub last_message_at: Option<Timestamp>,
    /// When the connection last showed it is alive: data, or a keepalive (venue_b's `PONG`, venue_a's
    /// heartbeat ping). A quiet market sends keepalives only; its books stay valid.
    pub last_alive_at: Option<Timestamp>,
    /// Fresh books held in memory (counted when read).
    pub books: usize,
    /// Books marked stale, waiting for a resnapshot (counted when read).
    pub stale_books: usize,
    /// Books followed that the venue has not sent though asked several times, by socket: nothing of them
    /// is captured. Written through [`VenueHealth::books_missing`]; read with [`FeedHealth::books_missing`].
    pub missing: BTreeMap<u64, usize>,
    /// When the last catalog sync finished successfully.
    pub last_catalog_sync_at: Option<Timestamp>,
    /// Reconnects since start.
    pub reconnects: u64,
    /// Malformed messages skipped since start.
    pub malformed: u64,
    /// Capture gaps written to the book log since start (one per book that lost continuity).
    pub capture_gaps: u64,
    /// The last error of any part, for the `/readyz` breakdown.
    pub last_error: Option<String>,
    /// Books, trades and catalog (in [`Part::ALL`] order), each with its own last success and last error;
    /// read with [`FeedHealth::part`].
    pub parts: [PartHealth; 3],
}

/// Whether a venue's data can be vouched for now. Readiness and the stream's `venue` messages both
/// follow it, so they cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// Connected, data within the limit, and books to serve.
    Fresh,
    /// Not fresh yet: never got data, or connected with no books yet. The reason says which.
    Waiting(String),
    /// Was fresh and no longer is: disconnected, silent past the limit, or every book waiting for a
    /// snapshot. The reason says which.
    Stale(String),
    /// The books are fresh, but another part keeps failing (the trade tape or the catalog sync, at least
    /// [`DEGRADED_AFTER_FAILURES`] times in a row): data is being lost. The reason names the part and its
    /// error.
    Degraded(String),
}

impl FeedHealth {
    /// One part's health.
    pub fn part(&self, part: Part) -> &PartHealth {
        &self.parts[part as usize]
    }

    /// Books followed that the venue has not sent though asked several times, over every socket.
    pub fn books_missing(&self) -> usize {
        self.missing.values().sum()
    }

    fn part_mut(&mut self, part: Part) -> &mut PartHealth {
        &mut self.parts[part as usize]
    }

    /// Records a failure of `part` (also the venue's `last_error`).
    pub fn part_failed(&mut self, part: Part, error: String, now: Timestamp) {
        let p = self.part_mut(part);
        p.failures = p.failures.saturating_add(1);
        p.last_error = Some(error.clone());
        p.last_error_at = Some(now);
        self.last_error = Some(error);
    }

    /// Sets socket `id` up or down (opening it if new), and the venue's connection counts with it.
    fn set_socket(&mut self, id: u64, up: bool) {
        self.sockets.insert(id, up);
        self.count_sockets();
    }

    fn count_sockets(&mut self) {
        self.connections.total = self.sockets.len();
        self.connections.connected = self.sockets.values().filter(|up| **up).count();
        self.connected = self.connections.total > 0 && self.connections.connected == self.connections.total;
    }

    /// Records a success of `part`.
    pub fn part_ok(&mut self, part: Part, now: Timestamp) {
        let p = self.part_mut(part);
        p.failures = 0;
        p.last_ok_at = Some(now);
    }

    /// Whether the venue's data is fresh at `now` (see [`FeedHealth::freshness`]).
    pub fn is_fresh(&self, now: Timestamp, max_age: Duration) -> bool {
        self.freshness(now, max_age) == Freshness::Fresh
    }

    /// The venue's freshness at `now`. A venue is fresh only while its feed is connected (for polling: the
    /// last poll succeeded), it showed it is alive (data or a keepalive) at most `max_age` ago, and it holds
    /// at least one book that is not stale: a dropped connection makes it stale at once, not `max_age`
    /// later, and a venue that has connected but holds no books yet serves nothing. A quiet market whose
    /// connection answers its keepalives stays fresh: no change is what its books say. A venue whose books
    /// are fresh but whose trade tape or catalog sync keeps failing is degraded.
    pub fn freshness(&self, now: Timestamp, max_age: Duration) -> Freshness {
        let error = || self.last_error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
        let Some(last) = self.last_message_at else {
            return Freshness::Waiting(if self.connected {
                "connected, no data yet".into()
            } else {
                format!("connecting{}", error())
            });
        };
        if !self.connected {
            return Freshness::Stale(format!("disconnected{}", error()));
        }
        let alive = self.last_alive_at.map_or(last, |a| a.max(last));
        let age_ms = now.millis() - alive.millis();
        if age_ms > max_age.as_millis() as i64 {
            return Freshness::Stale(format!("no data or keepalive for {} s", age_ms / 1000));
        }
        match (self.books, self.stale_books) {
            (0, 0) => return Freshness::Waiting("no books yet".into()),
            (0, _) => return Freshness::Stale("every book is waiting for a fresh snapshot".into()),
            _ => {}
        }
        for part in [Part::Trades, Part::Catalog] {
            let p = self.part(part);
            if p.failures >= DEGRADED_AFTER_FAILURES {
                return Freshness::Degraded(format!(
                    "{} failing ({} times in a row): {}",
                    part.as_str(),
                    p.failures,
                    p.last_error.as_deref().unwrap_or("unknown error")
                ));
            }
        }
        Freshness::Fresh
    }
}

/// A venue's state (which [`Freshness`], whatever its reason) and when it began.
type StateSince = (Discriminant<Freshness>, Timestamp);

/// Shared per-venue health; cheap to clone.
#[derive(Debug, Clone)]
pub struct VenueHealth {
    inner: Arc<RwLock<BTreeMap<Exchange, FeedHealth>>>,
    /// The books ingestion holds, counted into every copy read.
    live: LiveBooks,
    /// Each venue's state (fresh, waiting, stale, degraded) when a reader last looked, and since when it held.
    since: Arc<Mutex<BTreeMap<Exchange, StateSince>>>,
}

impl VenueHealth {
    /// Health over the books ingestion keeps in `live`.
    pub fn new(live: &LiveBooks) -> Self {
        VenueHealth {
            inner: Arc::default(),
            live: live.clone(),
            since: Arc::default(),
        }
    }

    /// `h`'s freshness at `now` and since when that state (fresh, waiting, stale or degraded) has held. A
    /// change is dated when a reader in this process first sees it: the live stream checks every second,
    /// `/readyz` on each call, so the date is at most a second late while the stream runs.
    pub fn freshness_since(
        &self,
        exchange: Exchange,
        h: &FeedHealth,
        now: Timestamp,
        max_age: Duration,
    ) -> (Freshness, Timestamp) {
        let freshness = h.freshness(now, max_age);
        let state = std::mem::discriminant(&freshness);
        let mut since = self.since.lock().unwrap_or_else(|e| e.into_inner());
        let entry = since.entry(exchange).or_insert((state, now));
        if entry.0 != state {
            *entry = (state, now);
        }
        (freshness, entry.1)
    }

    /// `h` with the book counts of `exchange` as they are now.
    fn counted(&self, exchange: Exchange, mut h: FeedHealth) -> FeedHealth {
        (h.books, h.stale_books) = self.live.counts(exchange);
        h
    }

    /// Applies `f` to a venue's entry (created on first use).
    pub fn update(&self, exchange: Exchange, f: impl FnOnce(&mut FeedHealth)) {
        let mut map = self.inner.write().unwrap_or_else(|e| e.into_inner());
        f(map.entry(exchange).or_default());
    }

    /// A copy of one venue's entry.
    pub fn get(&self, exchange: Exchange) -> Option<FeedHealth> {
        let h = self
            .inner
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&exchange)
            .cloned()?;
        Some(self.counted(exchange, h))
    }

    /// A copy of every venue's entry.
    pub fn snapshot(&self) -> BTreeMap<Exchange, FeedHealth> {
        let map = self.inner.read().unwrap_or_else(|e| e.into_inner()).clone();
        map.into_iter().map(|(ex, h)| (ex, self.counted(ex, h))).collect()
    }

    /// Whether every venue that has an entry is fresher than `max_age` (and at least one has one).
    pub fn all_fresh(&self, now: Timestamp, max_age: Duration) -> bool {
        let map = self.snapshot();
        !map.is_empty() && map.values().all(|h| h.is_fresh(now, max_age))
    }

    /// Data arrived (or a book poll succeeded): the data's age restarts, the connection is alive and the
    /// books part works.
    pub(crate) fn touch(&self, exchange: Exchange, now: Timestamp) {
        self.update(exchange, |h| {
            h.last_message_at = Some(now);
            h.last_alive_at = Some(now);
            // With sockets, each reports its own state; data on one says nothing of the others.
            if h.sockets.is_empty() {
                h.connected = true;
            }
            h.part_ok(Part::Books, now);
        });
    }

    /// Socket `id` of the venue exists and is connecting.
    pub fn socket_opening(&self, exchange: Exchange, id: u64) {
        self.update(exchange, |h| {
            h.mode = FeedMode::WebSocket;
            h.set_socket(id, false);
        });
    }

    /// Socket `id` of the venue is open and subscribed.
    pub fn socket_up(&self, exchange: Exchange, id: u64) {
        self.update(exchange, |h| {
            h.mode = FeedMode::WebSocket;
            h.set_socket(id, true);
        });
    }

    /// Socket `id` of the venue dropped (and will reconnect) for `reason`.
    pub fn socket_down(&self, exchange: Exchange, id: u64, reason: String, now: Timestamp) {
        self.update(exchange, |h| {
            h.set_socket(id, false);
            h.reconnects += 1;
            h.connections.reconnects += 1;
            h.part_failed(Part::Books, reason, now);
        });
    }

    /// Socket `id` of the venue closed for good (its markets left, or ingestion stops).
    pub fn socket_closed(&self, exchange: Exchange, id: u64) {
        self.update(exchange, |h| {
            h.sockets.remove(&id);
            h.missing.remove(&id);
            h.count_sockets();
        });
    }

    /// Socket `id` follows `n` books the venue has not sent though asked several times. Returns the count
    /// the socket had before.
    pub fn books_missing(&self, exchange: Exchange, id: u64, n: usize) -> usize {
        let mut before = 0;
        self.update(exchange, |h| {
            let held = if n == 0 {
                h.missing.remove(&id)
            } else {
                h.missing.insert(id, n)
            };
            before = held.unwrap_or(0);
        });
        before
    }

    /// A keepalive arrived: the connection is alive; the data's age goes on.
    pub(crate) fn alive(&self, exchange: Exchange, now: Timestamp) {
        self.update(exchange, |h| h.last_alive_at = Some(now));
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::BookSnapshot;

    use super::*;

    const LIMIT: Duration = Duration::from_secs(60);

    fn book(ex: Exchange, id: &str) -> BookSnapshot {
        BookSnapshot {
            exchange: ex,
            market_id: id.into(),
            asset_id: (ex == Exchange::VenueB).then(|| format!("{id}-yes")),
            timestamp: Timestamp::from_millis(1),
            bids: vec![],
            asks: vec![],
            no_bids: vec![],
        }
    }

    #[test]
    fn freshness_follows_the_last_message() {
        let live = LiveBooks::new();
        let h = VenueHealth::new(&live);
        let t0 = Timestamp::from_millis(1_000_000);
        assert!(!h.all_fresh(t0, LIMIT));
        live.upsert(book(Exchange::VenueA, "a1"));
        h.touch(Exchange::VenueA, t0);
        assert!(h.all_fresh(Timestamp::from_millis(1_060_000), LIMIT));
        assert!(!h.all_fresh(Timestamp::from_millis(1_060_001), LIMIT));
        h.update(Exchange::VenueB, |e| e.mode = FeedMode::WebSocket);
        assert!(!h.all_fresh(t0, LIMIT));
        assert_eq!(h.get(Exchange::VenueB).map(|e| e.mode), Some(FeedMode::WebSocket));
    }

    /// A state is dated from when it was first seen, and keeps that date while it holds.
    #[test]
    fn a_state_holds_since_it_was_first_seen() {
        let live = LiveBooks::new();
        let h = VenueHealth::new(&live);
        let ex = Exchange::VenueA;
        let at = Timestamp::from_millis;
        live.upsert(book(ex, "a1"));
        h.update(ex, |e| e.connected = true);
        h.touch(ex, at(1_000_000));
        let seen = |now: i64| {
            let f = h.get(ex).unwrap();
            let (freshness, since) = h.freshness_since(ex, &f, at(now), LIMIT);
            (freshness == Freshness::Fresh, since.millis())
        };
        assert_eq!(seen(1_000_500), (true, 1_000_500));
        assert_eq!(seen(1_030_000), (true, 1_000_500), "still fresh: the same since");
        assert_eq!(
            seen(1_070_000),
            (false, 1_070_000),
            "silent past the limit: stale from now"
        );
        assert_eq!(seen(1_080_000), (false, 1_070_000));
        h.touch(ex, at(1_090_000));
        assert_eq!(seen(1_090_000), (true, 1_090_000), "fresh again");
    }

    /// The counts and the freshness are those of the moment of reading, whatever the feed loop last wrote:
    /// no books yet is waiting, a dropped connection is stale at once, with its error.
    #[test]
    fn read_health_is_true_at_the_moment_of_reading() {
        let live = LiveBooks::new();
        let h = VenueHealth::new(&live);
        let ex = Exchange::VenueA;
        let now = Timestamp::from_millis(1_000_000);
        let state = || h.get(ex).unwrap().freshness(now, LIMIT);

        h.update(ex, |e| e.mode = FeedMode::WebSocket);
        assert_eq!(state(), Freshness::Waiting("connecting".into()));
        h.touch(ex, now);
        assert_eq!(state(), Freshness::Waiting("no books yet".into()));

        live.upsert(book(ex, "a1"));
        live.upsert(book(ex, "a2"));
        assert_eq!(state(), Freshness::Fresh);
        assert_eq!(h.get(ex).map(|e| (e.books, e.stale_books)), Some((2, 0)));

        // The socket drops: the books are stale and the venue too, though its last data is a moment old.
        live.mark_exchange_stale(ex);
        h.update(ex, |e| {
            e.connected = false;
            e.last_error = Some("connection reset".into());
        });
        assert_eq!(h.get(ex).map(|e| (e.books, e.stale_books)), Some((0, 2)));
        assert_eq!(state(), Freshness::Stale("disconnected: connection reset".into()));
        assert_eq!(h.snapshot()[&ex].stale_books, 2);

        // Reconnected, books not yet resnapshotted: still stale; one snapshot back: fresh.
        h.touch(ex, now);
        assert_eq!(
            state(),
            Freshness::Stale("every book is waiting for a fresh snapshot".into())
        );
        live.upsert(book(ex, "a1"));
        assert_eq!(state(), Freshness::Fresh);
        assert_eq!(h.get(ex).map(|e| (e.books, e.stale_books)), Some((1, 1)));
        let late = Timestamp::from_millis(now.millis() + 61_000);
        assert_eq!(
            h.get(ex).unwrap().freshness(late, LIMIT),
            Freshness::Stale("no data or keepalive for 61 s".into())
        );
    }

    /// With several sockets the venue counts as connected only while every one is: one down leaves its
    /// books stale, which the venue's state says; data on the others does not hide it.
    #[test]
    fn a_venue_is_connected_while_every_socket_is() {
        let live = LiveBooks::new();
        let h = VenueHealth::new(&live);
        let ex = Exchange::VenueA;
        let now = Timestamp::from_millis(1_000_000);
        live.upsert(book(ex, "a1"));
        let conn = || h.get(ex).map(|e| (e.connected, e.connections)).unwrap();
        let c = |total, connected, reconnects| Connections {
            total,
            connected,
            reconnects,
        };
        h.socket_opening(ex, 0);
        h.socket_opening(ex, 1);
        assert_eq!(conn(), (false, c(2, 0, 0)));
        h.socket_up(ex, 0);
        h.touch(ex, now);
        assert_eq!(conn(), (false, c(2, 1, 0)), "data on socket 0 says nothing of socket 1");
        h.socket_up(ex, 1);
        assert_eq!(conn(), (true, c(2, 2, 0)));
        assert_eq!(h.get(ex).unwrap().freshness(now, LIMIT), Freshness::Fresh);
        h.socket_down(ex, 1, "connection reset".into(), now);
        assert_eq!(conn(), (false, c(2, 1, 1)));
        assert_eq!(h.get(ex).unwrap().reconnects, 1);
        assert_eq!(
            h.get(ex).unwrap().freshness(now, LIMIT),
            Freshness::Stale("disconnected: connection reset".into())
        );
        h.socket_closed(ex, 1);
        assert_eq!(conn(), (true, c(1, 1, 1)), "a closed socket no longer counts");
    }

    /// Keepalives keep a quiet venue fresh without making its data look newer; with them stopped too it
    /// turns stale.
    #[test]
    fn keepalives_are_liveness_not_data() {
        let live = LiveBooks::new();
        let h = VenueHealth::new(&live);
        let ex = Exchange::VenueB;
        let t0 = Timestamp::from_millis(1_000_000);
        let at = |s: i64| Timestamp::from_millis(t0.millis() + s * 1000);
        live.upsert(book(ex, "b1"));
        h.touch(ex, t0);
        h.alive(ex, at(50));
        let e = h.get(ex).unwrap();
        assert_eq!(e.last_message_at, Some(t0), "the data's age goes on");
        assert_eq!(e.freshness(at(100), LIMIT), Freshness::Fresh, "alive 50 s ago");
        assert_eq!(
            e.freshness(at(111), LIMIT),
            Freshness::Stale("no data or keepalive for 61 s".into())
        );
    }

    /// A failing trade tape or catalog is named with its error, and once it keeps failing the venue is
    /// degraded (not fresh); one success clears it.
    #[test]
    fn failing_parts_degrade_a_venue_with_fresh_books() {
        let live = LiveBooks::new();
        let h = VenueHealth::new(&live);
        let ex = Exchange::VenueB;
        let now = Timestamp::from_millis(1_000_000);
        live.upsert(book(ex, "b1"));
        h.touch(ex, now);
        let state = || h.get(ex).unwrap().freshness(now, LIMIT);
        for n in 1..DEGRADED_AFTER_FAILURES {
            h.update(ex, |e| e.part_failed(Part::Trades, "HTTP 500".into(), now));
            assert_eq!(state(), Freshness::Fresh, "{n} failure(s) are retried");
        }
        h.update(ex, |e| {
            e.part_failed(Part::Trades, "decode: expected an array".into(), now)
        });
        assert_eq!(
            state(),
            Freshness::Degraded("trades failing (3 times in a row): decode: expected an array".into())
        );
        let e = h.get(ex).unwrap();
        assert_eq!(e.last_error.as_deref(), Some("decode: expected an array"));
        assert!(e.part(Part::Trades).failing() && !e.part(Part::Books).failing());
        h.update(ex, |e| e.part_ok(Part::Trades, now));
        assert_eq!(state(), Freshness::Fresh);
        assert_eq!(
            h.get(ex).unwrap().part(Part::Trades).last_error.as_deref(),
            Some("decode: expected an array"),
            "kept for the record"
        );
        // A stale venue is stale first: the books say more than the tape.
        for _ in 0..DEGRADED_AFTER_FAILURES {
            h.update(ex, |e| e.part_failed(Part::Catalog, "timeout".into(), now));
        }
        assert!(matches!(state(), Freshness::Degraded(r) if r.starts_with("catalog failing")));
        h.update(ex, |e| e.connected = false);
        assert!(matches!(state(), Freshness::Stale(_)));
    }
}
