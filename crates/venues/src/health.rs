//! Per-venue freshness, read by the server's `/readyz` (contracts §10: each venue's data fresher than
//! 60 s, with a per-venue breakdown).
//!
//! Ingestion writes it (message received, connected or not, books held, last catalog sync, last error);
//! the server reads a copy. It is a plain `std::sync::RwLock` map for the same reason as
//! [`crate::LiveBooks`]: tiny critical sections with no `.await` inside.

use std::{
    collections::BTreeMap,
    sync::{Arc, RwLock},
    time::Duration,
};

use crossbook_core::{Exchange, Timestamp};

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

/// The state of one venue's feed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeedHealth {
    pub mode: FeedMode,
    /// The socket is open and subscribed (WebSocket), or the last poll succeeded (polling).
    pub connected: bool,
    /// When the last valid data message (or successful poll) arrived.
    pub last_message_at: Option<Timestamp>,
    /// Fresh books held in memory.
    pub books: usize,
    /// Books marked stale (waiting for a resnapshot).
    pub stale_books: usize,
    /// When the last catalog sync finished successfully.
    pub last_catalog_sync_at: Option<Timestamp>,
    /// Reconnects since start.
    pub reconnects: u64,
    /// Malformed messages skipped since start.
    pub malformed: u64,
    /// Capture gaps written to the book log since start (one per book that lost continuity).
    pub capture_gaps: u64,
    /// The last error, for the `/readyz` breakdown.
    pub last_error: Option<String>,
}

impl FeedHealth {
    /// Whether the venue's data is fresher than `max_age` at `now`.
    pub fn is_fresh(&self, now: Timestamp, max_age: Duration) -> bool {
        self.last_message_at
            .is_some_and(|t| now.millis() - t.millis() <= max_age.as_millis() as i64)
    }
}

/// Shared per-venue health; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct VenueHealth {
    inner: Arc<RwLock<BTreeMap<Exchange, FeedHealth>>>,
}

impl VenueHealth {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies `f` to a venue's entry (created on first use).
    pub fn update(&self, exchange: Exchange, f: impl FnOnce(&mut FeedHealth)) {
        let mut map = self.inner.write().unwrap_or_else(|e| e.into_inner());
        f(map.entry(exchange).or_default());
    }

    /// A copy of one venue's entry.
    pub fn get(&self, exchange: Exchange) -> Option<FeedHealth> {
        self.inner
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&exchange)
            .cloned()
    }

    /// A copy of every venue's entry.
    pub fn snapshot(&self) -> BTreeMap<Exchange, FeedHealth> {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether every venue that has an entry is fresher than `max_age` (and at least one has one).
    pub fn all_fresh(&self, now: Timestamp, max_age: Duration) -> bool {
        let map = self.snapshot();
        !map.is_empty() && map.values().all(|h| h.is_fresh(now, max_age))
    }

    pub(crate) fn touch(&self, exchange: Exchange, now: Timestamp) {
        self.update(exchange, |h| {
            h.last_message_at = Some(now);
            h.connected = true;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freshness_follows_the_last_message() {
        let h = VenueHealth::new();
        let t0 = Timestamp::from_millis(1_000_000);
        assert!(!h.all_fresh(t0, Duration::from_secs(60)));
        h.touch(Exchange::VenueA, t0);
        assert!(h.all_fresh(Timestamp::from_millis(1_060_000), Duration::from_secs(60)));
        assert!(!h.all_fresh(Timestamp::from_millis(1_060_001), Duration::from_secs(60)));
        h.update(Exchange::VenueB, |e| e.mode = FeedMode::WebSocket);
        assert!(!h.all_fresh(t0, Duration::from_secs(60)));
        assert_eq!(h.get(Exchange::VenueB).map(|e| e.mode), Some(FeedMode::WebSocket));
    }
}
