//! Order-book history derived from the log: the rows of the historical routes (the same two windows as
//! [`HistoryWindow`]), each the book as left by an event, with whether a gap lies between it and the row
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
//! Latest rows and buckets shorter than a minute replay every event of the window from the keyframe before it.
//! Buckets of whole minutes read the stored chunk ends instead, and replay only where those are missing.

use crossbook_core::{
    BookSnapshot, Exchange, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, Ladders},
    history::next_bucket_start,
};

use std::collections::HashMap;

use super::{BookLogStore, CHUNK_ALIGN_MS, CorruptChunk, EndState};
use crate::{Store, StoreResult};

/// Which history of one book to read (the historical routes, contracts §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookHistoryQuery {
    pub exchange: Exchange,
    pub market_id: String,
    /// The venue_b token; `None` for venue_a books. A venue_b market has one book per token, so a caller
    /// wanting both tokens reads each one.
    pub asset_id: Option<String>,
    pub window: HistoryWindow,
    /// Page size.
    pub limit: u32,
}

/// The two read shapes of the historical routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryWindow {
    /// The most recent snapshots, newest first. `before` (exclusive) is the page cursor: the timestamp of
    /// the last row of the previous page.
    Latest { before: Option<Timestamp> },
    /// Snapshots with `start <= timestamp <= end`, oldest first, downsampled to one row per `bucket_ms`
    /// bucket aligned to the Unix epoch: the last snapshot of each bucket, with its own timestamp. Empty
    /// buckets give no row. Times are Unix milliseconds `>= 0`.
    ///
    /// `after` is the page cursor: the timestamp of the last row of the previous page. The page starts with
    /// the first bucket *after the one holding it*, so a snapshot stored later in that bucket (the current
    /// bucket of a growing series) never repeats it. Each page costs two index seeks per returned row,
    /// however many snapshots a bucket holds or however many empty buckets lie between rows.
    Range {
        start: Timestamp,
        end: Timestamp,
        bucket_ms: i64,
        after: Option<Timestamp>,
    },
}

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

/// A row of the historical routes: the book, and whether a gap lies between it and the row before.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRow {
    pub snapshot: BookSnapshot,
    /// Always true for rows from `book_snapshots`, which recorded no gaps.
    pub continuous: bool,
}

/// The rows of `q`, from the log; and, for times before the book's first logged event, from the snapshots that
/// `book_snapshots` sampled before the log existed (databases upgraded from earlier versions). A range bucket
/// holding the log's first event is the log's.
pub async fn book_history(store: &dyn Store, q: &BookHistoryQuery) -> StoreResult<Vec<HistoryRow>> {
    let key = BookKey {
        exchange: q.exchange,
        market_id: q.market_id.clone(),
        asset_id: q.asset_id.clone(),
    };
    let snapshot = |r: LogRow| HistoryRow {
        snapshot: BookSnapshot {
            exchange: q.exchange,
            market_id: q.market_id.clone(),
            asset_id: q.asset_id.clone(),
            timestamp: r.at,
            bids: r.ladders.bids,
            asks: r.ladders.asks,
            no_bids: r.ladders.no_bids,
        },
        continuous: r.continuous,
    };
    let sampled = |s: BookSnapshot| HistoryRow {
        snapshot: s,
        continuous: true,
    };
    let limit = q.limit as usize;
    match q.window {
        HistoryWindow::Latest { before } => {
            let mut rows: Vec<HistoryRow> = log_history(store, &key, q.window, q.limit)
                .await?
                .rows
                .into_iter()
                .map(snapshot)
                .collect();
            if rows.len() < limit {
                let first = store.log_first(&key).await?;
                let before = match (first, before) {
                    (Some(f), Some(b)) => Some(f.min(b)),
                    (f, b) => f.or(b),
                };
                let older = BookHistoryQuery {
                    window: HistoryWindow::Latest { before },
                    limit: (limit - rows.len()) as u32,
                    ..q.clone()
                };
                rows.extend(store.snapshots(&older).await?.into_iter().map(sampled));
            }
            Ok(rows)
        }
        HistoryWindow::Range {
            start,
            end,
            bucket_ms,
            after,
        } => {
            let size = bucket_ms.max(1);
            let first = store.log_first(&key).await?;
            // Sampled snapshots fill the buckets before the one holding the log's first event.
            let sampled_end = first.map_or(end.millis(), |f| {
                (f.millis().div_euclid(size) * size - 1).min(end.millis())
            });
            let resume = after.map_or(start.millis(), |a| {
                next_bucket_start(a.millis(), size).max(start.millis())
            });
            let mut rows = Vec::new();
            if sampled_end >= resume {
                let older = BookHistoryQuery {
                    window: HistoryWindow::Range {
                        start,
                        end: Timestamp::from_millis(sampled_end),
                        bucket_ms,
                        after,
                    },
                    ..q.clone()
                };
                rows.extend(store.snapshots(&older).await?.into_iter().map(sampled));
            }
            if rows.len() < limit && first.is_some() {
                let window = HistoryWindow::Range {
                    start: Timestamp::from_millis(start.millis().max(sampled_end.saturating_add(1))),
                    end,
                    bucket_ms,
                    after,
                };
                let log = log_history(store, &key, window, (limit - rows.len()) as u32).await?;
                rows.extend(log.rows.into_iter().map(snapshot));
            }
            Ok(rows)
        }
    }
}

/// Times closer than this are answered by one replay in [`books_as_of`].
const AS_OF_JOIN_MS: i64 = 300_000;

/// For each time in `at`, the book as it was then, with the time of the event that left it so (`None` when
/// there was no book: before its first event, or in a gap), in the order of `at`. Times before the book's first
/// logged event read `book_snapshots`.
pub async fn books_as_of(
    store: &dyn Store,
    book: &BookKey,
    at: &[Timestamp],
) -> StoreResult<Vec<Option<BookSnapshot>>> {
    let first = store.log_first(book).await?;
    let mut times: Vec<i64> = at.iter().map(|t| t.millis()).collect();
    times.sort_unstable();
    times.dedup();
    let mut found: HashMap<i64, BookSnapshot> = HashMap::new();
    let logged_from = times.partition_point(|&t| first.is_none_or(|f| t < f.millis()));
    let (sampled, logged) = times.split_at(logged_from);
    if !sampled.is_empty() {
        let ts: Vec<Timestamp> = sampled.iter().map(|&t| Timestamp::from_millis(t)).collect();
        let old = store
            .snapshots_as_of(book.exchange, &book.market_id, book.asset_id.as_deref(), &ts)
            .await?;
        found.extend(sampled.iter().zip(old).filter_map(|(t, s)| Some((*t, s?))));
    }
    // Runs of nearby times are answered by one replay each.
    let mut i = 0;
    while i < logged.len() {
        let mut j = i;
        while logged.get(j + 1).is_some_and(|t| t - logged[j] <= AS_OF_JOIN_MS) {
            j += 1;
        }
        let read = store
            .log_events(
                book,
                Timestamp::from_millis(logged[i]),
                Timestamp::from_millis(logged[j]),
            )
            .await?;
        let (mut state, mut last_at) = (BookState::default(), None);
        let mut events = read.events.iter().peekable();
        for &t in &logged[i..=j] {
            while let Some(e) = events.next_if(|e| e.received_at.millis() <= t) {
                let _ = state.apply(&e.change);
                last_at = Some(e.received_at);
            }
            if let (Some(l), Some(when)) = (state.ladders(), last_at) {
                found.insert(
                    t,
                    BookSnapshot {
                        exchange: book.exchange,
                        market_id: book.market_id.clone(),
                        asset_id: book.asset_id.clone(),
                        timestamp: when,
                        bids: l.bids.clone(),
                        asks: l.asks.clone(),
                        no_bids: l.no_bids.clone(),
                    },
                );
            }
        }
        i = j + 1;
    }
    Ok(at.iter().map(|t| found.get(&t.millis()).cloned()).collect())
}

/// The first window a latest read looks back over; it grows fourfold until it holds `limit` rows.
const FIRST_LOOKBACK_MS: i64 = 60_000;

/// Reads up to `limit` rows of `book` in `window`.
pub async fn log_history<S: BookLogStore + ?Sized>(
    store: &S,
    book: &BookKey,
    window: HistoryWindow,
    limit: u32,
) -> StoreResult<LogHistory> {
    let limit = limit as usize;
    let mut out = LogHistory::default();
    if limit == 0 {
        return Ok(out);
    }
    match window {
        HistoryWindow::Latest { before } => {
            let mut to = before.map_or(i64::MAX / 2, |b| b.millis() - 1);
            // Without `before`, the first read starts at the newest keyframe (the window lies in the future);
            // the windows after it are measured back from the newest event, not from the far future (which
            // took some thirty reads of the same keyframe run for a quiet book).
            let mut anchored = before.is_some();
            let mut lookback = FIRST_LOOKBACK_MS;
            loop {
                let from = to.saturating_sub(lookback);
                let read = store
                    .log_events(book, Timestamp::from_millis(from), Timestamp::from_millis(to))
                    .await?;
                if !anchored {
                    anchored = true;
                    if let Some(newest) = read.events.last() {
                        to = to.min(newest.received_at.millis());
                    }
                }
                // Every event from the book's start is in hand when no keyframe lay at or before `from`.
                let whole = read.events.first().is_none_or(|e| e.received_at.millis() > from);
                let gap = read.after_gap;
                // Only the newest rows are copied out (a few spare, for rows an event that cannot apply takes).
                let mut first = newest_rows_from(&read.events, limit + 8);
                let (mut rows, mut total) = rows_of(&read.events, gap, i64::MIN, |_| true, first);
                if rows.len() < limit && total > rows.len() {
                    first = 0;
                    (rows, total) = rows_of(&read.events, gap, i64::MIN, |_| true, first);
                }
                if total >= limit || whole || from <= 0 {
                    rows.reverse();
                    rows.truncate(limit);
                    out.rows = rows;
                    out.corrupt = read.corrupt;
                    return Ok(out);
                }
                lookback = lookback.saturating_mul(4);
            }
        }
        HistoryWindow::Range {
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
                let part = if size % CHUNK_ALIGN_MS == 0 {
                    minute_bucket_rows(store, book, from, to, size).await?
                } else {
                    replayed_bucket_rows(store, book, from, to, size).await?
                };
                out.rows.extend(part.rows);
                out.corrupt.extend(part.corrupt);
                from = to.saturating_add(1);
            }
            out.rows.truncate(limit);
            Ok(out)
        }
    }
}

/// The rows of the buckets of `size` ms in `[from, to]`, by replaying every event from the keyframe before
/// `from`.
async fn replayed_bucket_rows<S: BookLogStore + ?Sized>(
    store: &S,
    book: &BookKey,
    from: i64,
    to: i64,
    size: i64,
) -> StoreResult<LogHistory> {
    let read = store
        .log_events(book, Timestamp::from_millis(from), Timestamp::from_millis(to))
        .await?;
    // Keep the last event of each bucket; earlier ones only carry the state forward.
    let events = &read.events;
    let last_of_bucket = |i: usize| {
        let t = events[i].received_at.millis();
        t >= from
            && events
                .get(i + 1)
                .is_none_or(|n| n.received_at.millis().div_euclid(size) != t.div_euclid(size))
    };
    let gap = read.after_gap;
    Ok(LogHistory {
        rows: rows_of(events, gap, from, last_of_bucket, 0).0,
        corrupt: read.corrupt,
    })
}

/// One bucket of whole minutes with events in the window, as the outline shows it.
struct Bucket {
    /// The part of the window it covers.
    from: i64,
    to: i64,
    /// Its last chunk (which ends on its last event when the bucket is whole), and the chunk before its first.
    last: usize,
    prev: Prev,
    /// Whether its row can be read from stored chunk ends.
    fast: bool,
}

/// The chunk before a bucket's first chunk.
#[derive(Clone, Copy)]
enum Prev {
    /// None is stored: the bucket holds the book's first events.
    None,
    /// The chunk before the window ([`super::LogOutline::before`]).
    Before,
    /// A chunk of the outline.
    Chunk(usize),
}

/// The rows of the buckets of `size` ms (whole minutes) in `[from, to]`. Chunks never hold two minutes' events,
/// so a whole bucket's last event ends a chunk, and compaction stored the book that chunk leaves: a bucket's
/// row is read from its last chunk's end, and its continuity from the end of the chunk before it and the gaps
/// in between, without reading events. Buckets that cannot be read so (the window cuts them, a chunk crosses
/// their edge, or a chunk end they need is not stored yet) are replayed, consecutive ones together.
async fn minute_bucket_rows<S: BookLogStore + ?Sized>(
    store: &S,
    book: &BookKey,
    from: i64,
    to: i64,
    size: i64,
) -> StoreResult<LogHistory> {
    // Buckets of one minute hold about one compacted chunk each: their ends come with the outline. Longer
    // buckets need the ends of a few of their chunks only.
    let one_minute = size == CHUNK_ALIGN_MS;
    let mut outline = store
        .log_outline(
            book,
            Timestamp::from_millis(from),
            Timestamp::from_millis(to),
            one_minute,
        )
        .await?;
    let chunks = &outline.chunks;
    let mut out = LogHistory {
        rows: Vec::new(),
        corrupt: outline.corrupt.clone(),
    };
    // The buckets holding events of the window, in order, each with the chunks holding them (a chunk reaching
    // past `to` counts in the bucket of `to`).
    let in_window = |c: &super::ChunkOutline| c.last_ts.millis() >= from && c.first_ts.millis() <= to;
    let bucket_of = |c: &super::ChunkOutline| c.last_ts.millis().min(to).div_euclid(size);
    let mut buckets: Vec<Bucket> = Vec::new();
    let mut i = 0;
    while i < chunks.len() {
        if !in_window(&chunks[i]) {
            i += 1;
            continue;
        }
        let b = bucket_of(&chunks[i]);
        let first = i;
        while chunks.get(i + 1).is_some_and(|c| in_window(c) && bucket_of(c) == b) {
            i += 1;
        }
        let (start, end) = (b * size, b * size + size - 1);
        let prev = match first.checked_sub(1) {
            Some(p) => Prev::Chunk(p),
            None if outline.before.is_some() => Prev::Before,
            None => Prev::None,
        };
        let prev_known = match prev {
            Prev::None => true,
            Prev::Before => outline.before.as_ref().is_some_and(|e| e.state != EndState::Unknown),
            Prev::Chunk(p) => chunks[p].end_known,
        };
        let fast = start >= from
            && end <= to
            && chunks[i].last_ts.millis() <= end
            && chunks[first].first_ts.millis() >= start
            && chunks.get(i + 1).is_none_or(|n| n.first_ts.millis() > end)
            && chunks[i].end_known
            && prev_known;
        buckets.push(Bucket {
            from: start.max(from),
            to: end.min(to),
            last: i,
            prev,
            fast,
        });
        i += 1;
    }
    // The stored ends the fast buckets need (at one minute, the outline brought them).
    let ends = if one_minute {
        std::mem::take(&mut outline.ends)
    } else {
        let mut wanted: Vec<Timestamp> = Vec::new();
        for b in buckets.iter().filter(|b| b.fast) {
            wanted.push(chunks[b.last].last_ts);
            if let Prev::Chunk(p) = b.prev {
                wanted.push(chunks[p].last_ts);
            }
        }
        wanted.sort();
        wanted.dedup();
        store.log_ends(book, &wanted).await?
    };
    let ends: HashMap<u64, EndState> = ends.into_iter().map(|e| (e.last_seq, e.state)).collect();
    let end_of = |p: Prev| -> Option<(u64, &EndState)> {
        match p {
            Prev::None => None,
            Prev::Before => outline.before.as_ref().map(|e| (e.last_seq, &e.state)),
            Prev::Chunk(p) => ends.get(&chunks[p].last_seq).map(|s| (chunks[p].last_seq, s)),
        }
    };
    let known = |s: Option<&EndState>| s.is_some_and(|s| *s != EndState::Unknown);

    let mut replay: Option<(i64, i64)> = None;
    for b in &buckets {
        let last = &chunks[b.last];
        let state = ends.get(&last.last_seq);
        let prev = end_of(b.prev);
        let fast = b.fast && known(state) && (matches!(b.prev, Prev::None) || known(prev.map(|p| p.1)));
        if !fast {
            replay = Some(replay.map_or((b.from, b.to), |(f, _)| (f, b.to)));
            continue;
        }
        if let Some((f, t)) = replay.take() {
            let part = replayed_bucket_rows(store, book, f, t, size).await?;
            out.rows.extend(part.rows);
            out.corrupt.extend(part.corrupt);
        }
        let Some(EndState::Book(ladders)) = state else {
            continue; // the bucket ends in a gap: no row
        };
        // Continuous when the book existed before the bucket and no gap came since.
        let since = match prev {
            None => Some(0),
            Some((seq, EndState::Book(_))) => Some(seq),
            Some(_) => None,
        };
        let continuous = since.is_some_and(|since| !outline.gap_seqs.iter().any(|&g| g > since && g <= last.last_seq));
        out.rows.push(LogRow {
            at: last.last_ts,
            ladders: ladders.clone(),
            continuous,
        });
    }
    if let Some((f, t)) = replay {
        let part = replayed_bucket_rows(store, book, f, t, size).await?;
        out.rows.extend(part.rows);
        out.corrupt.extend(part.corrupt);
    }
    Ok(out)
}

/// Applies `events` in order and keeps a row after each event `keep` selects among those that leave a book
/// and are the last of their millisecond. `gap` says whether a gap came just before the first event. A gap
/// since the last kept row makes the next row not continuous; events before `window_from` stand for rows of
/// earlier pages, so a book left by one of them clears it too.
///
/// Rows of events before `copy_from` are counted (and keep continuity) but not copied out; the count of all rows
/// is returned beside those copied.
fn rows_of(
    events: &[BookEvent],
    mut gap: bool,
    window_from: i64,
    keep: impl Fn(usize) -> bool,
    copy_from: usize,
) -> (Vec<LogRow>, usize) {
    let mut state = BookState::default();
    let (mut rows, mut total) = (Vec::new(), 0);
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
            total += 1;
            if i >= copy_from {
                rows.push(LogRow {
                    at: e.received_at,
                    ladders: ladders.clone(),
                    continuous: !gap,
                });
            }
            gap = false;
        } else if e.received_at.millis() < window_from {
            gap = false;
        }
    }
    (rows, total)
}

/// The index from which the last `n` events that can make a row lie (each the last of its millisecond and not a
/// gap); 0 when there are fewer.
fn newest_rows_from(events: &[BookEvent], n: usize) -> usize {
    let mut seen = 0;
    for i in (0..events.len()).rev() {
        let last_of_ms = events
            .get(i + 1)
            .is_none_or(|next| next.received_at.millis() != events[i].received_at.millis());
        if last_of_ms && !matches!(events[i].change, BookChange::Gap(_)) {
            seen += 1;
            if seen == n {
                return i;
            }
        }
    }
    0
}
