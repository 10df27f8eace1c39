//! Fault injection, switchable from tests while the venues run.
//!
//! Each switch models a failure the connectors must survive (DESIGN §4): dropped sockets, a sequence gap,
//! a feed that goes silent while the socket stays open, 429/500 answers, malformed messages. Switches are
//! per venue except the sequence gap, which only venue_a has (venue_b has no sequence numbers).

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
};

use crossbook_core::Exchange;
use tokio::sync::watch;

#[derive(Debug)]
struct VenueFaults {
    /// Bumped to make every open socket of the venue drop at once.
    drop_gen: watch::Sender<u64>,
    /// `(generation, id)`: bumped to drop the open sockets subscribed to `id`.
    drop_one: watch::Sender<(u64, String)>,
    /// What one connection may subscribe: venue_a markets, venue_b assets (tokens).
    ws_limit: AtomicUsize,
    silent: AtomicBool,
    malformed: AtomicBool,
    /// `(status, remaining)`: the next `remaining` REST requests answer `status`.
    rest: Mutex<Option<(u16, u32)>>,
    /// The status every trade-tape request answers while set.
    trades: Mutex<Option<u16>>,
    /// WebSocket sessions accepted so far (tests wait on it to see a reconnect).
    accepted: AtomicU64,
    /// WebSocket sessions open now.
    open: AtomicU64,
}

/// The venues' per-connection subscription limits (PROTOCOLS A.6, B.5): about 1,000 markets per venue_a
/// connection, about 500 assets per venue_b connection.
pub const VENUE_A_WS_MARKETS: usize = 1_000;
pub const VENUE_B_WS_ASSETS: usize = 500;

impl VenueFaults {
    fn new(ws_limit: usize) -> Self {
        VenueFaults {
            drop_gen: watch::Sender::new(0),
            drop_one: watch::Sender::new((0, String::new())),
            ws_limit: AtomicUsize::new(ws_limit),
            silent: AtomicBool::new(false),
            malformed: AtomicBool::new(false),
            rest: Mutex::new(None),
            trades: Mutex::new(None),
            accepted: AtomicU64::new(0),
            open: AtomicU64::new(0),
        }
    }
}

#[derive(Debug)]
struct Inner {
    a: VenueFaults,
    b: VenueFaults,
    skip_seq: AtomicBool,
}

impl Default for Inner {
    fn default() -> Self {
        Inner {
            a: VenueFaults::new(VENUE_A_WS_MARKETS),
            b: VenueFaults::new(VENUE_B_WS_ASSETS),
            skip_seq: AtomicBool::new(false),
        }
    }
}

/// Handle on the fault switches of both venues. Cheap to clone; all clones control the same venues.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    inner: Arc<Inner>,
}

impl Faults {
    fn venue(&self, ex: Exchange) -> &VenueFaults {
        match ex {
            Exchange::VenueA => &self.inner.a,
            Exchange::VenueB => &self.inner.b,
        }
    }

    /// Drops every open WebSocket of both venues now, without a close frame (as a network failure would).
    pub fn drop_sockets(&self) {
        for ex in Exchange::ALL {
            self.drop_sockets_of(ex);
        }
    }

    /// Drops every open WebSocket of one venue now.
    pub fn drop_sockets_of(&self, ex: Exchange) {
        self.venue(ex).drop_gen.send_modify(|g| *g += 1);
    }

    /// Drops, without a close frame, the venue's open sockets subscribed to `id` (a venue_a market ticker,
    /// a venue_b token id); the venue's other sockets stay up.
    pub fn drop_socket_carrying(&self, ex: Exchange, id: &str) {
        self.venue(ex)
            .drop_one
            .send_modify(|(generation, target)| (*generation, *target) = (*generation + 1, id.to_string()));
    }

    /// Sets how much one WebSocket connection of the venue may subscribe: venue_a markets (past it a
    /// `subscribe` or `add_markets` is refused with error 26), venue_b assets (assets past it are ignored:
    /// no `book`, no changes). Defaults: [`VENUE_A_WS_MARKETS`], [`VENUE_B_WS_ASSETS`]. Applies to
    /// subscriptions made after the call.
    pub fn set_ws_limit(&self, ex: Exchange, limit: usize) {
        self.venue(ex).ws_limit.store(limit, Ordering::SeqCst);
    }

    /// The next venue_a `orderbook_delta` (on any socket) skips one `seq` value, so a client sees a gap.
    pub fn skip_next_seq(&self) {
        self.inner.skip_seq.store(true, Ordering::SeqCst);
    }

    /// While on, the venue's sockets stay open and keep answering heartbeats (`PING`/ping frames) but send no
    /// messages at all; updates in that time are lost (venue_a still counts their `seq`, so a gap shows
    /// when the feed resumes).
    pub fn set_silent(&self, ex: Exchange, on: bool) {
        self.venue(ex).silent.store(on, Ordering::SeqCst);
    }

    /// The next `n` REST requests to the venue answer `status` (429 with the venue's rate-limit body, any
    /// other code with an error body) instead of being served.
    pub fn fail_rest(&self, ex: Exchange, status: u16, n: u32) {
        *self.venue(ex).rest.lock().expect("fault lock") = (n > 0).then_some((status, n));
    }

    /// While `Some(status)`, every request to the venue's trade tape (venue_a `/markets/trades`, venue_b
    /// Data API `/trades` and `/v2/trades`) answers `status` with an error body; the rest of the venue works.
    pub fn fail_trades(&self, ex: Exchange, status: Option<u16>) {
        *self.venue(ex).trades.lock().expect("fault lock") = status;
    }

    /// The next WebSocket message of the venue (on any socket) is preceded by one malformed text frame
    /// (truncated JSON). The real message still follows.
    pub fn malform_next(&self, ex: Exchange) {
        self.venue(ex).malformed.store(true, Ordering::SeqCst);
    }

    /// Turns every switch off.
    pub fn clear(&self) {
        for ex in Exchange::ALL {
            self.set_silent(ex, false);
            self.fail_rest(ex, 0, 0);
            self.fail_trades(ex, None);
            self.venue(ex).malformed.store(false, Ordering::SeqCst);
        }
        self.inner.skip_seq.store(false, Ordering::SeqCst);
    }

    /// WebSocket sessions the venue accepted since start.
    pub fn sessions_accepted(&self, ex: Exchange) -> u64 {
        self.venue(ex).accepted.load(Ordering::SeqCst)
    }

    /// WebSocket sessions of the venue open now.
    pub fn sessions_open(&self, ex: Exchange) -> u64 {
        self.venue(ex).open.load(Ordering::SeqCst)
    }

    // ---------------------------------------------------------------- used by the servers

    pub(crate) fn drop_watch(&self, ex: Exchange) -> watch::Receiver<u64> {
        self.venue(ex).drop_gen.subscribe()
    }
    pub(crate) fn drop_one_watch(&self, ex: Exchange) -> watch::Receiver<(u64, String)> {
        self.venue(ex).drop_one.subscribe()
    }
    pub(crate) fn ws_limit(&self, ex: Exchange) -> usize {
        self.venue(ex).ws_limit.load(Ordering::SeqCst)
    }
    pub(crate) fn is_silent(&self, ex: Exchange) -> bool {
        self.venue(ex).silent.load(Ordering::SeqCst)
    }
    pub(crate) fn take_malformed(&self, ex: Exchange) -> bool {
        self.venue(ex).malformed.swap(false, Ordering::SeqCst)
    }
    pub(crate) fn take_skip_seq(&self) -> bool {
        self.inner.skip_seq.swap(false, Ordering::SeqCst)
    }
    /// The status to answer instead of serving this REST request, if a failure is armed.
    pub(crate) fn take_rest_failure(&self, ex: Exchange) -> Option<u16> {
        let mut slot = self.venue(ex).rest.lock().expect("fault lock");
        let (status, left) = (*slot)?;
        *slot = (left > 1).then_some((status, left - 1));
        Some(status)
    }
    /// The status to answer instead of serving a trade-tape request, while that failure is set.
    pub(crate) fn trades_failure(&self, ex: Exchange) -> Option<u16> {
        *self.venue(ex).trades.lock().expect("fault lock")
    }
    /// Counts a session as open until the guard drops.
    pub(crate) fn session(&self, ex: Exchange) -> SessionGuard {
        let v = self.venue(ex);
        v.accepted.fetch_add(1, Ordering::SeqCst);
        v.open.fetch_add(1, Ordering::SeqCst);
        SessionGuard {
            faults: self.clone(),
            ex,
        }
    }
}

/// Keeps a session counted as open.
pub(crate) struct SessionGuard {
    faults: Faults,
    ex: Exchange,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.faults.venue(self.ex).open.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_failures_count_down() {
        let f = Faults::default();
        f.fail_rest(Exchange::VenueA, 429, 2);
        assert_eq!(f.take_rest_failure(Exchange::VenueB), None);
        assert_eq!(f.take_rest_failure(Exchange::VenueA), Some(429));
        assert_eq!(f.take_rest_failure(Exchange::VenueA), Some(429));
        assert_eq!(f.take_rest_failure(Exchange::VenueA), None);
        f.skip_next_seq();
        assert!(f.take_skip_seq());
        assert!(!f.take_skip_seq());
        let g = f.session(Exchange::VenueB);
        assert_eq!(
            (f.sessions_open(Exchange::VenueB), f.sessions_accepted(Exchange::VenueB)),
            (1, 1)
        );
        drop(g);
        assert_eq!(f.sessions_open(Exchange::VenueB), 0);
    }
}
