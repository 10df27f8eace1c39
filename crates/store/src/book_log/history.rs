//! Order-book history derived from the log: the rows of the historical routes (the same two windows as
//! [`SnapshotWindow`]), each the book as left by an event, with whether a gap lies between it and the row
//! before it.
//!
//! - **Latest** (`before`): one row per millisecond that has events, the book after the last of them, newest
//!   first.
//! - **Range** (`start`, `end`, `bucket_ms`, `after`): one row per epoch-aligned bucket that has events, the
//!   book after the bucket's last event (at or before `end`) with that event's time, oldest first; `after` is
//!   the previous page's last row, whose bucket the page starts after.
//!
//! Rows are never invented: an instant at which the book was in a gap has no row. `continuous` is false when
//! a gap event lies after the row before (in time) and at or before this one.
//!
//! This reads every event of the window from the keyframe before it. It is the reference the faster read
//! paths are checked against; the historical routes still read the sampled snapshots.

use crossbook_core::{
    Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, Ladders},
    history::next_bucket_start,
};

use super::{BookLogStore, CorruptChunk};
use crate::{StoreResult, books::SnapshotWindow};

/// One row of history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRow {
    /// The time (receive time) of the event that left the book so.
    pub at: Timestamp,
    pub ladders: Ladders,
    /// No gap between the row before this one (in time) and this one.
    pub continuous: bool,
}

/// Rows and the chunks skipped while reading them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogHistory {
    pub rows: Vec<LogRow>,
    pub corrupt: Vec<CorruptChunk>,
}

/// The first window a latest read looks back over; it grows fourfold until it holds `limit` rows.
const FIRST_LOOKBACK_MS: i64 = 60_000;

/// Reads up to `limit` rows of `book` in `window`.
pub async fn log_history<S: BookLogStore + ?Sized>(
    store: &S,
    book: &BookKey,
    window: SnapshotWindow,
    limit: u32,
) -> StoreResult<LogHistory> {
    let limit = limit as usize;
    let mut out = LogHistory::default();
    if limit == 0 {
        return Ok(out);
    }
    match window {
        SnapshotWindow::Latest { before } => {
            let to = before.map_or(i64::MAX / 2, |b| b.millis() - 1);
            let mut lookback = FIRST_LOOKBACK_MS;
            loop {
                let from = to.saturating_sub(lookback);
                let read = store
                    .log_events(book, Timestamp::from_millis(from), Timestamp::from_millis(to))
                    .await?;
                // Every event from the book's start is in hand when no keyframe lay at or before `from`.
                let whole = read.events.first().is_none_or(|e| e.received_at.millis() > from);
                let gap = gap_before(store, book, &read.events).await?;
                let mut rows = rows_of(&read.events, gap, i64::MIN, |_| true);
                if rows.len() >= limit || whole || from <= 0 {
                    rows.reverse();
                    rows.truncate(limit);
                    out.rows = rows;
                    out.corrupt = read.corrupt;
                    return Ok(out);
                }
                lookback = lookback.saturating_mul(4);
            }
        }
        SnapshotWindow::Range {
            start,
            end,
            bucket_ms,
            after,
        } => {
            let size = bucket_ms.max(1);
            let mut from = match after {
                Some(a) => next_bucket_start(a.millis(), size).max(start.millis()),
                None => start.millis(),
            };
            let end = end.millis();
            // Pages of `limit` buckets at a time, as long as the range lasts and rows are missing.
            while from <= end && out.rows.len() < limit {
                let to = from
                    .saturating_add((limit - out.rows.len()) as i64 * size)
                    .saturating_sub(1)
                    .min(end);
                let read = store
                    .log_events(book, Timestamp::from_millis(from), Timestamp::from_millis(to))
                    .await?;
                out.corrupt.extend(read.corrupt);
                // Keep the last event of each bucket; earlier ones only carry the state forward.
                let events = &read.events;
                let last_of_bucket = |i: usize| {
                    let t = events[i].received_at.millis();
                    t >= from
                        && events
                            .get(i + 1)
                            .is_none_or(|n| n.received_at.millis().div_euclid(size) != t.div_euclid(size))
                };
                let gap = gap_before(store, book, events).await?;
                out.rows.extend(rows_of(events, gap, from, last_of_bucket));
                from = to.saturating_add(1);
            }
            out.rows.truncate(limit);
            Ok(out)
        }
    }
}

/// Whether a gap ended at the first of `events` (a read starts at a keyframe; a gap just before it is in
/// the chunk before, which the read did not see).
async fn gap_before<S: BookLogStore + ?Sized>(store: &S, book: &BookKey, events: &[BookEvent]) -> StoreResult<bool> {
    let Some(first) = events.first() else {
        return Ok(false);
    };
    if first.seq <= 1 || !matches!(first.change, BookChange::Snapshot { .. }) {
        return Ok(false);
    }
    let gaps = store.log_gaps(book, first.received_at, first.received_at).await?;
    Ok(gaps
        .iter()
        .any(|g| g.seq < first.seq && g.end == Some(first.received_at)))
}

/// Applies `events` in order and keeps a row after each event `keep` selects among those that leave a book
/// and are the last of their millisecond. `gap` says whether a gap came just before the first event. A gap
/// since the last kept row makes the next row not continuous; events before `window_from` stand for rows of
/// earlier pages, so a book left by one of them clears it too.
fn rows_of(events: &[BookEvent], mut gap: bool, window_from: i64, keep: impl Fn(usize) -> bool) -> Vec<LogRow> {
    let mut state = BookState::default();
    let mut rows = Vec::new();
    for (i, e) in events.iter().enumerate() {
        // A gap, or an event that cannot apply (which leaves the book in a gap), breaks continuity.
        if state.apply(&e.change).is_err() || matches!(e.change, BookChange::Gap(_)) {
            gap = true;
            continue;
        }
        let Some(ladders) = state.ladders() else { continue };
        let last_of_ms = events
            .get(i + 1)
            .is_none_or(|n| n.received_at.millis() != e.received_at.millis());
        if last_of_ms && keep(i) {
            rows.push(LogRow {
                at: e.received_at,
                ladders: ladders.clone(),
                continuous: !gap,
            });
            gap = false;
        } else if e.received_at.millis() < window_from {
            gap = false;
        }
    }
    rows
}
