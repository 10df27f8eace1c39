//! The book writer: every book change into the event log (`BookLogStore`), numbered per book, with keyframes
//! by [`KeyframePolicy`] and a `gap` event wherever continuity was lost. The historical routes, replay and
//! export read that log; `book_snapshots` is no longer written (it is read for times before the log).
//!
//! - **Numbering.** A book's events are numbered at flush time, continuing the last `seq` the store holds, so
//!   the numbering survives restarts. A book met for the first time in this process after earlier events were
//!   stored gets a `restart` gap from its last stored event to its first keyframe.
//! - **Keyframes.** The first event of a book in this process, the first after a gap, and any event once the
//!   policy says a keyframe is due are written as a whole book (taken from the update, which carries the book
//!   after the change); every other change is written as the levels the venue sent.
//! - **Losses.** [`BookInput::Lost`] (a dropped socket, a silent feed, a sequence gap, a failed poll) writes
//!   one gap per book; a second loss before the book's next keyframe adds nothing.
//! - **Failed writes** keep their events buffered and are retried at the next flush. Past
//!   its bound ([`MAX_UNWRITTEN_EVENTS`] unless configured) the buffer is dropped, counted in
//!   `crossbook_book_events_dropped_total` and `crossbook_writes_dropped_total{kind="book_events"}`, and each
//!   book it held gets a `write_failed` gap and a keyframe next.

use std::{collections::HashMap, sync::Arc, time::Duration};

use crossbook_core::{
    BookSnapshot, Exchange, Timestamp,
    book::{BookChange, BookEvent, BookKey, GapCause, KeyframePolicy},
};
use crossbook_store::{LogRun, Store, WriteKind};
use tokio::{sync::mpsc, time::Instant};
use tracing::error;

use crate::{health::VenueHealth, venue::BookUpdate};

/// How often buffered events are written to the log. What a `kill -9` can lose is at most this much.
pub const LOG_FLUSH: Duration = Duration::from_millis(500);

/// The most numbered events kept for a retry after failed writes (about 30 MB); past it they are dropped
/// and gaps recorded.
pub const MAX_UNWRITTEN_EVENTS: usize = 200_000;

/// Messages the writer takes from its queue at once.
const INBOX: usize = 1_024;

/// What the feeds hand the book writer.
// Nearly every message is an `Update`; boxing it would add an allocation per book change to save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum BookInput {
    /// A book changed; `received_at` is when the frame arrived.
    Update { update: BookUpdate, received_at: Timestamp },
    /// The feed lost continuity for these books at `at`.
    Lost {
        keys: Vec<BookKey>,
        cause: GapCause,
        at: Timestamp,
    },
}

/// What one book looks like to the writer.
#[derive(Debug, Default)]
struct Tracked {
    /// The store's id and the last `seq` handed out; `None` until registered.
    head: Option<(i64, u64)>,
    deltas_since_keyframe: u32,
    last_keyframe: Option<Timestamp>,
    /// The next event must be a keyframe (new in this process, or after a gap).
    needs_keyframe: bool,
    /// A gap was written and no keyframe since: a repeated loss adds no second gap.
    in_gap: bool,
    /// The latest receive time given to an event of this book (events never go back in time).
    last_ts: Timestamp,
}

/// The log half of the writer: per-book state, events waiting for the next flush, and numbered runs whose
/// write failed.
pub(crate) struct LogBuffer {
    policy: KeyframePolicy,
    /// Where each venue's gap count shows (`/readyz`).
    health: VenueHealth,
    books: HashMap<BookKey, Tracked>,
    /// Events not yet numbered, per book, in arrival order.
    pending: HashMap<BookKey, Vec<BookEvent>>,
    /// Numbered runs not written yet (their write failed, or the flush is under way), oldest first...
    unwritten: Vec<LogRun>,
    /// ...and the book of each.
    unwritten_keys: Vec<BookKey>,
    /// The most events buffered before they are dropped.
    bound: usize,
}

impl LogBuffer {
    pub(crate) fn new(policy: KeyframePolicy, health: VenueHealth) -> Self {
        LogBuffer {
            policy,
            health,
            books: HashMap::new(),
            pending: HashMap::new(),
            unwritten: Vec::new(),
            unwritten_keys: Vec::new(),
            bound: MAX_UNWRITTEN_EVENTS,
        }
    }

    /// This buffer, dropping what it holds past `bound` events.
    pub(crate) fn with_bound(mut self, bound: usize) -> Self {
        self.bound = bound.max(1);
        self
    }

    /// Events waiting to be written (pending and unwritten).
    pub(crate) fn buffered(&self) -> usize {
        self.pending.values().map(Vec::len).sum::<usize>()
            + self.unwritten.iter().map(|r| r.events.len()).sum::<usize>()
    }

    /// Logs a change.
    pub(crate) fn update(&mut self, u: BookUpdate, received_at: Timestamp) {
        let key = BookKey::of(&u.book);
        let t = self.books.entry(key.clone()).or_insert_with(|| Tracked {
            needs_keyframe: true,
            ..Tracked::default()
        });
        let received_at = received_at.max(t.last_ts);
        t.last_ts = received_at;
        let is_snapshot = matches!(u.change, BookChange::Snapshot { .. });
        let keyframe = is_snapshot
            || t.needs_keyframe
            || t.last_keyframe
                .is_none_or(|k| self.policy.due(t.deltas_since_keyframe, k, received_at));
        let change = match (is_snapshot, keyframe) {
            (true, _) | (false, false) => u.change,
            (false, true) => whole(u.book),
        };
        if keyframe {
            t.deltas_since_keyframe = 0;
            t.last_keyframe = Some(received_at);
            t.needs_keyframe = false;
            t.in_gap = false;
        } else {
            t.deltas_since_keyframe += 1;
        }
        self.pending.entry(key).or_default().push(BookEvent {
            seq: 0,
            venue_seq: u.venue_seq,
            venue_ts: u.venue_ts,
            received_at,
            change,
        });
    }

    /// A loss of continuity: one gap per book the log follows, unless it is already in a gap.
    pub(crate) fn lost(&mut self, keys: &[BookKey], cause: GapCause, at: Timestamp) {
        for key in keys {
            let Some(t) = self.books.get_mut(key) else {
                continue; // never written in this process: nothing to lose continuity with
            };
            if t.in_gap {
                continue;
            }
            count_gap(&self.health, key.exchange, cause);
            t.in_gap = true;
            t.needs_keyframe = true;
            let at = at.max(t.last_ts);
            t.last_ts = at;
            self.pending.entry(key.clone()).or_default().push(gap_event(at, cause));
        }
    }

    /// Numbers the pending events (registering new books first) and writes them with any earlier unwritten
    /// runs, in one append. On failure the runs stay for the next flush, up to the bound.
    pub(crate) async fn flush(&mut self, store: &dyn Store) {
        if !self.pending.is_empty() && self.number(store).await.is_err() {
            // Registration failed: the events stay pending, un-numbered, for the next flush.
            self.enforce_bound(store);
            return;
        }
        if self.unwritten.is_empty() {
            return;
        }
        match store.append_log(&self.unwritten).await {
            Ok(()) => {
                store.write_health().ok(WriteKind::BookEvents);
                for (key, run) in self.unwritten_keys.drain(..).zip(self.unwritten.drain(..)) {
                    metrics::counter!("crossbook_book_events_written_total", "venue" => key.exchange.as_str())
                        .increment(run.events.len() as u64);
                }
            }
            Err(e) => {
                error!(error = %e, events = self.buffered(), "writing the book log failed; keeping the events for the next flush");
                store.write_health().failed(WriteKind::BookEvents, &e);
                self.enforce_bound(store);
            }
        }
    }

    /// Moves the pending events to `unwritten`, numbered.
    async fn number(&mut self, store: &dyn Store) -> Result<(), ()> {
        let new: Vec<BookKey> = self
            .pending
            .keys()
            .filter(|k| self.books.get(*k).is_none_or(|t| t.head.is_none()))
            .cloned()
            .collect();
        if !new.is_empty() {
            let heads = store.register_log_books(&new).await.map_err(|e| {
                error!(error = %e, books = new.len(), "registering books in the book log failed; retrying at the next flush");
                store.write_health().failed(WriteKind::BookEvents, &e);
            })?;
            for h in heads {
                let t = self.books.entry(h.book.clone()).or_default();
                t.head = Some((h.id, h.last_seq));
                // Events stored by an earlier process: the log lost continuity from its last one until now.
                if let (true, Some(since)) = (h.last_seq > 0, h.last_ts) {
                    count_gap(&self.health, h.book.exchange, GapCause::Restart);
                    self.pending
                        .entry(h.book)
                        .or_default()
                        .insert(0, gap_event(since, GapCause::Restart));
                }
            }
        }
        for (key, mut events) in self.pending.drain() {
            let Some(t) = self.books.get_mut(&key) else { continue };
            let Some((id, last)) = t.head.as_mut() else { continue };
            for e in &mut events {
                *last += 1;
                e.seq = *last;
            }
            self.unwritten.push(LogRun { book_id: *id, events });
            self.unwritten_keys.push(key);
        }
        Ok(())
    }

    /// Past the bound, drops what is buffered: each book it held gets its numbering rewound to what is stored,
    /// a `write_failed` gap, and a keyframe next.
    fn enforce_bound(&mut self, store: &dyn Store) {
        let n = self.buffered();
        if n <= self.bound {
            return;
        }
        metrics::counter!("crossbook_book_events_dropped_total").increment(n as u64);
        store.write_health().dropped(WriteKind::BookEvents, n as u64);
        error!(
            events = n,
            "the book log could not be written for too long; dropping the buffered events and recording gaps"
        );
        let now = Timestamp::now();
        let mut keys: Vec<BookKey> = self.pending.drain().map(|(k, _)| k).collect();
        for (key, run) in self.unwritten_keys.drain(..).zip(self.unwritten.drain(..)) {
            if let (Some(t), Some(first)) = (self.books.get_mut(&key), run.events.first()) {
                // Runs of a book are in seq order: the first dropped one rewinds the numbering.
                if let Some((_, last)) = t.head.as_mut() {
                    *last = (*last).min(first.seq - 1);
                }
            }
            keys.push(key);
        }
        keys.sort();
        keys.dedup();
        for k in &keys {
            if let Some(t) = self.books.get_mut(k) {
                t.in_gap = false;
            }
        }
        self.lost(&keys, GapCause::WriteFailed, now);
    }
}

/// A keyframe of `book`'s whole ladders.
fn whole(book: BookSnapshot) -> BookChange {
    BookChange::Snapshot {
        bids: book.bids,
        asks: book.asks,
        no_bids: book.no_bids,
    }
}

fn gap_event(at: Timestamp, cause: GapCause) -> BookEvent {
    BookEvent {
        seq: 0,
        venue_seq: None,
        venue_ts: None,
        received_at: at,
        change: BookChange::Gap(cause),
    }
}

/// Counts a gap in `/metrics` (per venue and cause) and `/readyz` (per venue).
fn count_gap(health: &VenueHealth, exchange: Exchange, cause: GapCause) {
    metrics::counter!("crossbook_capture_gaps_total", "venue" => exchange.as_str(), "cause" => cause.as_str())
        .increment(1);
    health.update(exchange, |h| h.capture_gaps += 1);
}

/// Runs the book writer until every sender is gone, then writes what it holds and returns.
pub async fn book_writer(
    store: Arc<dyn Store>,
    mut rx: mpsc::Receiver<BookInput>,
    policy: KeyframePolicy,
    health: VenueHealth,
    bound: usize,
) {
    let mut log = LogBuffer::new(policy, health).with_bound(bound);
    let mut flush = tokio::time::interval_at(Instant::now() + LOG_FLUSH, LOG_FLUSH);
    flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Messages are taken in batches: one wake-up of the feeds' side per batch rather than per change.
    let mut inbox = Vec::with_capacity(INBOX);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut inbox, INBOX) => {
                if n == 0 {
                    log.flush(store.as_ref()).await;
                    return;
                }
                for input in inbox.drain(..) {
                    match input {
                        BookInput::Update { update, received_at } => log.update(update, received_at),
                        BookInput::Lost { keys, cause, at } => log.lost(&keys, cause, at),
                    }
                }
            },
            _ = flush.tick() => log.flush(store.as_ref()).await,
        }
    }
}
