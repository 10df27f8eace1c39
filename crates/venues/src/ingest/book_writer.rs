//! The book writer: every book change into the event log (`BookLogStore`), with keyframes by
//! [`KeyframePolicy`] and a `gap` event wherever continuity was lost. The historical routes, replay and
//! export read that log; `book_snapshots` is no longer written (it is read for times before the log).
//!
//! - **Numbering.** The writer writes the numbers it is given: every event was numbered once, at ingest, by
//!   the live books (see `crossbook_live::books`, Numbering), so the log's `seq` is the live stream's
//!   `book_seq`. The feed numbers a book's first change in this process after earlier events were stored two
//!   numbers on: the writer records the first as a `restart` gap from the last stored event to that change.
//!   Events reach the log in number order; one whose number is not above the last the log was given for its
//!   book (only possible around a dropped buffer, see below) is dropped with the buffer.
//! - **Keyframes.** The first event of a book in this process, the first after a gap, and any event once the
//!   policy says a keyframe is due are written as a whole book (taken from the update, which carries the book
//!   after the change); every other change is written as the levels the venue sent.
//! - **Losses.** [`BookInput::Lost`] (a dropped socket, a silent feed, a sequence gap, a failed poll) writes
//!   one gap per book, with the number the live books gave it (a second loss before the book's next
//!   snapshot took none and is not sent).
//! - **Slow writes** never hold up the feeds: a write runs on its own task while the writer goes on taking
//!   changes, and a flush that falls due meanwhile starts as soon as it ends (so a backlog is written in
//!   bigger batches). Past the bound below, what is buffered is dropped with gaps, as for failed writes.
//! - **Failed writes** keep their events buffered and are retried at the next flush. Past
//!   its bound ([`MAX_UNWRITTEN_EVENTS`] unless configured) the buffer is dropped, counted in
//!   `crossbook_book_events_dropped_total` and `crossbook_writes_dropped_total{kind="book_events"}`, and each
//!   book it held gets a `write_failed` gap, numbered by the live books (the book's next number, published on
//!   the bus like any gap), and a keyframe next. The dropped events' numbers are gone from the log: a book's
//!   `seq` in the log grows strictly, with a hole only right before a gap event.

use std::{collections::HashMap, sync::Arc, time::Duration};

use crossbook_core::{
    BookSnapshot, Exchange, Timestamp,
    book::{BookChange, BookEvent, BookKey, GapCause, KeyframePolicy},
};
use crossbook_live::{Bus, DomainEvent, LiveBooks};
use crossbook_store::{LogRun, Store, StoreError, WriteKind};
use tokio::{sync::mpsc, time::Instant};
use tracing::{error, warn};

use crate::{health::VenueHealth, venue::BookUpdate};

/// How often buffered events are written to the log. What a `kill -9` can lose is at most this much.
pub const LOG_FLUSH: Duration = Duration::from_millis(500);

/// The most numbered events kept for a retry after failed writes, or while a slow write is under way (at most
/// about 300 MB: a 10-second burst of both whole venues at ten times their average rate); past it they are dropped
/// and gaps recorded.
pub const MAX_UNWRITTEN_EVENTS: usize = 2_000_000;

/// Messages the writer takes from its queue at once.
const INBOX: usize = 1_024;

/// What the feeds hand the book writer.
// Nearly every message is an `Update`; boxing it would add an allocation per book change to save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum BookInput {
    /// A book changed; `received_at` is when the frame arrived. `seq` is the change's number, `restart_gap`
    /// the number of the `restart` gap to record before it (the book's first change in this process while
    /// the log holds earlier events).
    Update {
        update: BookUpdate,
        received_at: Timestamp,
        seq: u64,
        restart_gap: Option<u64>,
    },
    /// The feed lost continuity for these books (each with its gap's number) at `at`.
    Lost {
        books: Vec<(BookKey, u64)>,
        cause: GapCause,
        at: Timestamp,
    },
}

/// What one book looks like to the writer.
#[derive(Debug, Default)]
struct Tracked {
    /// The store's id; `None` until registered.
    id: Option<i64>,
    /// The last number given to the log for this book: events come in number order, one not above it is
    /// dropped.
    last_seq: u64,
    /// A `restart` gap is pending whose start (the last stored event) the registration tells.
    restart_unplaced: bool,
    deltas_since_keyframe: u32,
    last_keyframe: Option<Timestamp>,
    /// The next event must be a keyframe (new in this process, or after a gap).
    needs_keyframe: bool,
    /// The latest receive time given to an event of this book (events never go back in time).
    last_ts: Timestamp,
}

/// The log half of the writer: per-book state, events waiting for the next flush, and numbered runs whose
/// write failed.
pub(crate) struct LogBuffer {
    policy: KeyframePolicy,
    /// Where each venue's gap count shows (`/readyz`).
    health: VenueHealth,
    /// Numbers `write_failed` gaps (the book's next number)...
    live: LiveBooks,
    /// ...and tells the live stream about them.
    bus: Bus,
    books: HashMap<BookKey, Tracked>,
    /// Events of books not registered yet, or not moved to `unwritten` yet, per book, in number order.
    pending: HashMap<BookKey, Vec<BookEvent>>,
    /// Runs not written yet (their write failed, or the flush is under way), oldest first...
    unwritten: Vec<LogRun>,
    /// ...and the book of each.
    unwritten_keys: Vec<BookKey>,
    /// The most events buffered before they are dropped.
    bound: usize,
}

impl LogBuffer {
    pub(crate) fn new(policy: KeyframePolicy, health: VenueHealth, live: LiveBooks, bus: Bus) -> Self {
        LogBuffer {
            policy,
            health,
            live,
            bus,
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

    /// Logs a change numbered `seq`, after a `restart` gap numbered `restart_gap` if given.
    pub(crate) fn update(&mut self, u: BookUpdate, received_at: Timestamp, seq: u64, restart_gap: Option<u64>) {
        let key = BookKey::of(&u.book);
        let t = self.books.entry(key.clone()).or_insert_with(|| Tracked {
            needs_keyframe: true,
            ..Tracked::default()
        });
        if seq <= t.last_seq {
            dropped_late(&key, 1);
            return;
        }
        if let Some(g) = restart_gap.filter(|&g| g > t.last_seq && g < seq) {
            count_gap(&self.health, key.exchange, GapCause::Restart);
            // Placed at the last event this process wrote, or (once registered) at the last stored one.
            let since = if t.id.is_none() { received_at } else { t.last_ts };
            t.restart_unplaced = t.id.is_none();
            t.needs_keyframe = true;
            self.pending
                .entry(key.clone())
                .or_default()
                .push(gap_event(g, since, GapCause::Restart));
        }
        t.last_seq = seq;
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
        } else {
            t.deltas_since_keyframe += 1;
        }
        self.pending.entry(key).or_default().push(BookEvent {
            seq,
            venue_seq: u.venue_seq,
            venue_ts: u.venue_ts,
            received_at,
            change,
        });
    }

    /// A loss of continuity: one gap per book, with its number.
    pub(crate) fn lost(&mut self, books: &[(BookKey, u64)], cause: GapCause, at: Timestamp) {
        for (key, seq) in books {
            let t = self.books.entry(key.clone()).or_insert_with(|| Tracked {
                needs_keyframe: true,
                ..Tracked::default()
            });
            if *seq <= t.last_seq {
                dropped_late(key, 1);
                continue;
            }
            t.last_seq = *seq;
            count_gap(&self.health, key.exchange, cause);
            t.needs_keyframe = true;
            let at = at.max(t.last_ts);
            t.last_ts = at;
            self.pending
                .entry(key.clone())
                .or_default()
                .push(gap_event(*seq, at, cause));
        }
    }

    /// Moves the pending events to `unwritten` (registering new books first) and writes them with any earlier
    /// unwritten runs, in one append. On failure the runs stay for the next flush, up to the bound.
    pub(crate) async fn flush(&mut self, store: &dyn Store) {
        if let Some(batch) = self.take_batch(store).await {
            let result = store.append_log(&batch.runs).await;
            self.written(store, batch, result);
        }
    }

    /// The runs to write next: the pending events (new books registered first) with any earlier unwritten
    /// runs, taken out of the buffer so that it goes on taking changes while they are written. `None` when
    /// there is nothing to write, or registration failed (the events stay pending for the next flush).
    pub(crate) async fn take_batch(&mut self, store: &dyn Store) -> Option<Batch> {
        if !self.pending.is_empty() && self.register(store).await.is_err() {
            self.enforce_bound(store);
            return None;
        }
        if self.unwritten.is_empty() {
            return None;
        }
        Some(Batch {
            runs: std::mem::take(&mut self.unwritten),
            keys: std::mem::take(&mut self.unwritten_keys),
        })
    }

    /// The outcome of writing `batch`: counted when written; on failure put back ahead of what came since
    /// (runs stay oldest first), up to the bound.
    pub(crate) fn written(&mut self, store: &dyn Store, batch: Batch, result: Result<(), StoreError>) {
        match result {
            Ok(()) => {
                store.write_health().ok(WriteKind::BookEvents);
                for (key, run) in batch.keys.iter().zip(&batch.runs) {
                    metrics::counter!("crossbook_book_events_written_total", "venue" => key.exchange.as_str())
                        .increment(run.events.len() as u64);
                }
            }
            Err(e) => {
                let mut runs = batch.runs;
                let mut keys = batch.keys;
                runs.append(&mut self.unwritten);
                keys.append(&mut self.unwritten_keys);
                self.unwritten = runs;
                self.unwritten_keys = keys;
                error!(error = %e, events = self.buffered(), "writing the book log failed; keeping the events for the next flush");
                store.write_health().failed(WriteKind::BookEvents, &e);
                self.enforce_bound(store);
            }
        }
    }

    /// Past the bound while a write is under way (the store is slower than the feeds), drops what is
    /// buffered and records gaps, as after failed writes: memory stays bounded and the feeds are never held
    /// up by the store.
    pub(crate) fn overflowed(&mut self, store: &dyn Store) {
        if self.buffered() > self.bound {
            warn!(
                events = self.buffered(),
                "the book log's store is slower than the feeds"
            );
            self.enforce_bound(store);
        }
    }

    /// Registers the books new to the log, then moves the pending events to `unwritten`.
    async fn register(&mut self, store: &dyn Store) -> Result<(), ()> {
        let new: Vec<BookKey> = self
            .pending
            .keys()
            .filter(|k| self.books.get(*k).is_none_or(|t| t.id.is_none()))
            .cloned()
            .collect();
        if !new.is_empty() {
            let heads = store.register_log_books(&new).await.map_err(|e| {
                error!(error = %e, books = new.len(), "registering books in the book log failed; retrying at the next flush");
                store.write_health().failed(WriteKind::BookEvents, &e);
            })?;
            for h in heads {
                let t = self.books.entry(h.book.clone()).or_default();
                t.id = Some(h.id);
                let Some(events) = self.pending.get_mut(&h.book) else {
                    continue;
                };
                // Numbers the log already holds are never written twice. The live numbering is seeded with the
                // stored heads before ingesting, so this only happens when another process wrote meanwhile.
                let before = events.len();
                events.retain(|e| e.seq > h.last_seq);
                if events.len() < before {
                    warn!(book = ?h.book, stored = h.last_seq, "book events numbered at or below the stored head dropped");
                    dropped_late(&h.book, (before - events.len()) as u64);
                }
                // The restart gap starts at the last stored event.
                if std::mem::take(&mut t.restart_unplaced)
                    && let (Some(since), Some(first)) = (h.last_ts, events.first_mut())
                    && first.change == BookChange::Gap(GapCause::Restart)
                {
                    first.received_at = since.min(first.received_at);
                }
            }
        }
        for (key, events) in self.pending.drain() {
            let Some(id) = self.books.get(&key).and_then(|t| t.id) else {
                continue;
            };
            if events.is_empty() {
                continue;
            }
            self.unwritten.push(LogRun { book_id: id, events });
            self.unwritten_keys.push(key);
        }
        Ok(())
    }

    /// Past the bound, drops what is buffered: each book it held gets a `write_failed` gap with its next
    /// number (published on the bus like any gap) and a keyframe next.
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
        keys.append(&mut self.unwritten_keys);
        self.unwritten.clear();
        keys.sort();
        keys.dedup();
        let numbered = self.live.take_gap_seqs(keys.iter());
        let mut by_venue: HashMap<Exchange, (Vec<BookKey>, Vec<u64>)> = HashMap::new();
        for (k, seq) in &numbered {
            let (ks, seqs) = by_venue.entry(k.exchange).or_default();
            ks.push(k.clone());
            seqs.push(*seq);
        }
        for (exchange, (keys, book_seqs)) in by_venue {
            self.bus.publish(DomainEvent::BooksStale {
                exchange,
                keys,
                book_seqs,
                cause: GapCause::WriteFailed,
                at: now,
            });
        }
        self.lost(&numbered, GapCause::WriteFailed, now);
    }
}

/// A write of a [`Batch`] under way on its own task; it gives the batch back with the outcome.
type Writing = tokio::task::JoinHandle<(Batch, Result<(), StoreError>)>;

/// Runs taken out of the buffer to be written, with the book of each.
pub(crate) struct Batch {
    runs: Vec<LogRun>,
    keys: Vec<BookKey>,
}

/// A keyframe of `book`'s whole ladders.
fn whole(book: BookSnapshot) -> BookChange {
    BookChange::Snapshot {
        bids: book.bids,
        asks: book.asks,
        no_bids: book.no_bids,
    }
}

fn gap_event(seq: u64, at: Timestamp, cause: GapCause) -> BookEvent {
    BookEvent {
        seq,
        venue_seq: None,
        venue_ts: None,
        received_at: at,
        change: BookChange::Gap(cause),
    }
}

/// Counts events that arrived numbered below what the log was already given for their book (see the module
/// docs, Numbering): they fall inside a dropped buffer's hole.
fn dropped_late(key: &BookKey, n: u64) {
    metrics::counter!("crossbook_book_events_dropped_total").increment(n);
    tracing::debug!(book = ?key, events = n, "book events numbered before a gap already logged dropped");
}

/// Counts a gap in `/metrics` (per venue and cause) and `/readyz` (per venue).
fn count_gap(health: &VenueHealth, exchange: Exchange, cause: GapCause) {
    metrics::counter!("crossbook_capture_gaps_total", "venue" => exchange.as_str(), "cause" => cause.as_str())
        .increment(1);
    health.update(exchange, |h| h.capture_gaps += 1);
}

/// Runs the book writer until every sender is gone, then writes what it holds and returns. `live` numbers
/// the `write_failed` gaps and `bus` carries them to the live stream.
#[allow(clippy::too_many_arguments)]
pub async fn book_writer(
    store: Arc<dyn Store>,
    mut rx: mpsc::Receiver<BookInput>,
    policy: KeyframePolicy,
    health: VenueHealth,
    live: LiveBooks,
    bus: Bus,
    bound: usize,
) {
    let mut log = LogBuffer::new(policy, health, live, bus).with_bound(bound);
    let mut flush = tokio::time::interval_at(Instant::now() + LOG_FLUSH, LOG_FLUSH);
    flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Messages are taken in batches: one wake-up of the feeds' side per batch rather than per change.
    let mut inbox = Vec::with_capacity(INBOX);
    // The write under way, if any. The writer goes on taking changes while the store writes, so a slow store
    // (a database on the same cores, in a burst) never holds up the feeds' reading of their sockets; what
    // arrives meanwhile is bounded by `bound`, past which gaps are recorded.
    let mut writing: Option<Writing> = None;
    // A flush fell due during a write: the next one starts as soon as that write ends.
    let mut due = false;
    loop {
        tokio::select! {
            n = rx.recv_many(&mut inbox, INBOX) => {
                if n == 0 {
                    if let Some(w) = writing.take() {
                        finish(&mut log, store.as_ref(), w).await;
                    }
                    log.flush(store.as_ref()).await;
                    return;
                }
                for input in inbox.drain(..) {
                    match input {
                        BookInput::Update { update, received_at, seq, restart_gap } => {
                            log.update(update, received_at, seq, restart_gap)
                        }
                        BookInput::Lost { books, cause, at } => log.lost(&books, cause, at),
                    }
                }
                if writing.is_some() {
                    log.overflowed(store.as_ref());
                }
            },
            _ = flush.tick() => {
                if writing.is_some() {
                    due = true;
                } else {
                    writing = start(&mut log, &store).await;
                }
            },
            done = async {
                match writing.as_mut() {
                    Some(w) => w.await,
                    None => std::future::pending().await,
                }
            }, if writing.is_some() => {
                writing = None;
                ended(&mut log, store.as_ref(), done);
                if std::mem::take(&mut due) {
                    writing = start(&mut log, &store).await;
                }
            },
        }
    }
}

/// Takes the next batch and writes it on its own task.
async fn start(log: &mut LogBuffer, store: &Arc<dyn Store>) -> Option<Writing> {
    let batch = log.take_batch(store.as_ref()).await?;
    let store = store.clone();
    Some(tokio::spawn(async move {
        let result = store.append_log(&batch.runs).await;
        (batch, result)
    }))
}

/// Waits for the write under way and records its outcome.
async fn finish(log: &mut LogBuffer, store: &dyn Store, w: Writing) {
    ended(log, store, w.await);
}

/// Records how a write task ended.
fn ended(
    log: &mut LogBuffer,
    store: &dyn Store,
    joined: Result<(Batch, Result<(), StoreError>), tokio::task::JoinError>,
) {
    match joined {
        Ok((batch, result)) => log.written(store, batch, result),
        Err(e) => error!(error = %e, "the book log's write task failed"),
    }
}
