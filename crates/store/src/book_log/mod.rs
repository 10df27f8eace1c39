//! The book event log: every change of every book, in order, as the history that the historical routes,
//! replay and export read.
//!
//! Each book's events (snapshots, deltas, gaps; [`crossbook_core::book::BookEvent`]) are numbered by the book's
//! own `seq`, which goes up by one. They are stored as *chunks*: runs of one book's consecutive events in the
//! compact form of [`chunk`], one row each, appended in time order so that a flush writes to the end of the
//! table instead of one page per book.
//!
//! - **Chunk boundaries.** A chunk starts at every snapshot (so a keyframe always opens its chunk and a reader
//!   finds one by an index seek), and holds at most [`MAX_CHUNK_EVENTS`] events spanning at most
//!   [`MAX_CHUNK_SPAN_MS`] of receive time. The span bound lets a time read seek a bounded index range. A chunk
//!   never holds events of two UTC minutes ([`CHUNK_ALIGN_MS`]), so the last event of any bucket of whole
//!   minutes is the last event of a chunk.
//! - **Chunk ends.** Compaction stores with each chunk the book its last event left (`last_book`), so a history
//!   row of a bucket of whole minutes is one small read ([`BookLogStore::log_outline`],
//!   [`BookLogStore::log_ends`]) instead of a replay of the bucket.
//! - **Writes.** The ingest writer is the only appender: it registers books ([`BookLogStore::register_log_books`],
//!   which also gives each book's last stored `seq`), then appends one run per book per flush.
//! - **Compaction** merges a book's small chunks (one per flush), once they are older than a cutoff, into
//!   chunks as large as the boundaries allow, book by book; each step replaces its inputs in one transaction.
//! - **Retention** drops whole days on PostgreSQL (`book_chunks` is partitioned by day of its first event) and
//!   deletes old chunks in short batches on SQLite.
//! - **Corrupt chunks** are skipped and reported by name ([`CorruptChunk`]), never a panic.

use std::collections::BTreeMap;

use crossbook_core::{
    Exchange, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState, GapCause, Ladders},
};

use crate::{
    StoreError, StoreResult,
    backend::{Backend, Exec, Pools},
    books::Pruned,
    codec::{self, Cols},
    retention,
    sql::Sql,
};

pub mod chunk;
pub mod history;

pub use chunk::ChunkError;

/// The most events one chunk holds.
pub const MAX_CHUNK_EVENTS: usize = 4_096;
/// The longest receive-time span of one chunk, first event to last.
pub const MAX_CHUNK_SPAN_MS: i64 = 60_000;

/// Chunks never hold events of two of these periods (UTC minutes): history buckets of whole minutes end on a
/// chunk's end.
pub const CHUNK_ALIGN_MS: i64 = 60_000;

/// The table of chunks, partitioned by day on PostgreSQL.
pub(crate) const CHUNKS: retention::postgres::Daily = retention::postgres::Daily("book_chunks");

/// Chunk rows per `INSERT` (10 arguments each: far below both backends' argument limits).
const ROWS_PER_INSERT: usize = 500;

/// A book of the log: its id and its last stored event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHead {
    pub id: i64,
    pub book: BookKey,
    /// The `seq` of the book's last stored event; 0 when none is stored.
    pub last_seq: u64,
    /// The receive time of that event.
    pub last_ts: Option<Timestamp>,
}

/// Consecutive events of one book to append, in `seq` order, continuing the book's stored events.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRun {
    /// The id [`BookLogStore::register_log_books`] gave the book.
    pub book_id: i64,
    pub events: Vec<BookEvent>,
}

/// What [`BookLogStore::log_events`] read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogRead {
    /// In `seq` order.
    pub events: Vec<BookEvent>,
    /// Chunks that failed to decode; their events are missing from `events`.
    pub corrupt: Vec<CorruptChunk>,
    /// The first event is a keyframe that ended a gap (the event before it, not read, is a gap).
    pub after_gap: bool,
}

/// What [`BookLogStore::log_after`] read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogPage {
    /// In `seq` order.
    pub events: Vec<BookEvent>,
    /// Chunks that failed to decode; their events are missing from `events`.
    pub corrupt: Vec<CorruptChunk>,
    /// Where the next read goes on from (its `after_seq` and `after_ts`) when the read stopped at `max_chunks`:
    /// the last chunk read, corrupt or not, so a corrupt chunk is never read twice. `None` once `to` is reached.
    pub next: Option<(u64, Timestamp)>,
}

/// A stored chunk that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("book log chunk {name} skipped: {error}")]
pub struct CorruptChunk {
    /// The chunk's name: its book id and seq range, e.g. `book 12 seq 100-180`.
    pub name: String,
    pub error: ChunkError,
}

/// A capture gap of one book: continuity was lost at `start` and came back with the resnapshot at `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredGap {
    /// The `seq` of the gap event.
    pub seq: u64,
    pub start: Timestamp,
    /// When the book was captured again (its next keyframe); `None` while the gap lasts.
    pub end: Option<Timestamp>,
    pub cause: GapCause,
}

/// The book a chunk's last event left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndState {
    /// Not stored: the chunk is not compacted yet, or was written before chunk ends were kept.
    Unknown,
    /// The chunk ends in a gap: there is no book.
    Gap,
    Book(Ladders),
}

/// Where a chunk ends, and the book it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkEnd {
    pub last_seq: u64,
    pub last_ts: Timestamp,
    pub state: EndState,
}

/// A chunk without its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOutline {
    pub first_seq: u64,
    pub last_seq: u64,
    pub first_ts: Timestamp,
    pub last_ts: Timestamp,
    /// Whether the book it leaves is stored ([`EndState`] is not `Unknown`).
    pub end_known: bool,
}

/// What [`BookLogStore::log_outline`] read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogOutline {
    /// The chunk that ends last before the window, with the book it leaves.
    pub before: Option<ChunkEnd>,
    /// The chunks ending in the window or reaching into it from before or past it, in `seq` order.
    pub chunks: Vec<ChunkOutline>,
    /// Their ends, in the same order, when asked for.
    pub ends: Vec<ChunkEnd>,
    /// The `seq` of every gap event in those chunks, ascending.
    pub gap_seqs: Vec<u64>,
    /// Chunks holding gaps that failed to decode.
    pub corrupt: Vec<CorruptChunk>,
}

/// What one [`BookLogStore::compact_log`] step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compacted {
    /// Small chunks read and replaced.
    pub chunks_in: u64,
    /// Compacted chunks written in their place.
    pub chunks_out: u64,
    /// Chunks that failed to decode (left in place, marked compacted so they are not read again).
    pub corrupt: u64,
    /// Where the next step starts (its `after_book`); `None` when every book has been visited.
    pub next: Option<i64>,
}

/// The book event log concern.
#[async_trait::async_trait]
pub trait BookLogStore: Send + Sync {
    /// The heads of `books`, registering those the log has not seen: each book's id and last stored event.
    /// Returned in the order of `books`.
    async fn register_log_books(&self, books: &[BookKey]) -> StoreResult<Vec<LogHead>>;

    /// The heads of every book of `exchange` the log holds events of (books registered with none stored are
    /// left out), without registering anything: the ingest continues each book's numbering from these.
    async fn log_heads(&self, exchange: Exchange) -> StoreResult<Vec<LogHead>>;

    /// Appends runs in one transaction, each split into chunks at its snapshots and at the size and span
    /// bounds. Empty runs are ignored.
    async fn append_log(&self, runs: &[LogRun]) -> StoreResult<()>;

    /// The events of `book` from the last snapshot received at or before `from` (so the caller can rebuild the
    /// book as of `from`; from the book's first event received at or after `from` when there is none) through
    /// the last event received at or before `to`.
    async fn log_events(&self, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<LogRead>;

    /// The events of `book` after `after_seq`, received from `after_ts` (the receive time of event `after_seq`,
    /// or where the read starts) through `to`, in `seq` order, from at most `max_chunks` chunks: a reader of a
    /// long range calls it again from [`LogPage::next`] while there is one. No keyframe is
    /// looked for: the caller already holds the book as of `after_seq`.
    async fn log_after(
        &self,
        book: &BookKey,
        after_seq: u64,
        after_ts: Timestamp,
        to: Timestamp,
        max_chunks: u32,
    ) -> StoreResult<LogPage>;

    /// The outline of `book`'s chunks around `[from, to]` (see [`LogOutline`]): their bounds and gaps, without
    /// their events, for reads of whole-minute buckets; with their ends too when `ends` is set.
    async fn log_outline(&self, book: &BookKey, from: Timestamp, to: Timestamp, ends: bool) -> StoreResult<LogOutline>;

    /// The receive time of `book`'s first stored event; `None` when the log holds none.
    async fn log_first(&self, book: &BookKey) -> StoreResult<Option<Timestamp>>;

    /// The ends of `book`'s chunks whose last event was received at one of `last_ts`, in `seq` order.
    async fn log_ends(&self, book: &BookKey, last_ts: &[Timestamp]) -> StoreResult<Vec<ChunkEnd>>;

    /// The gaps of `book` that overlap `[from, to]` (started at or before `to`, and ended at or after `from` or
    /// still open), oldest first.
    async fn log_gaps(&self, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<Vec<StoredGap>>;

    /// One step of compaction: for the books with ids above `after_book` (0 for the first step) that hold small
    /// chunks, merges up to `max_chunks` of those whose last event is older than `older_than`. The caller
    /// repeats from [`Compacted::next`] until it is `None`.
    async fn compact_log(&self, older_than: Timestamp, after_book: i64, max_chunks: u32) -> StoreResult<Compacted>;

    /// One step of retention (as [`crate::BookStore::prune_snapshots`]): SQLite deletes up to `max_rows` chunks
    /// whose last event is older than `cutoff`; PostgreSQL drops the daily partitions that end at or before it.
    async fn prune_log(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned>;

    /// Prepares storage for chunks starting from `from` to `until` (PostgreSQL: the daily partitions).
    async fn prepare_log(&self, from: Timestamp, until: Timestamp) -> StoreResult<()>;
}

/// Splits a run of one book's events into chunks: a new chunk at each snapshot after the first event, at each
/// new UTC minute, and whenever the size or span bound would be passed.
pub fn chunk_bounds(events: &[BookEvent]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, e) in events.iter().enumerate().skip(1) {
        let (t, t0) = (e.received_at.millis(), events[start].received_at.millis());
        let keyframe = matches!(e.change, BookChange::Snapshot { .. });
        let full = i - start >= MAX_CHUNK_EVENTS;
        let long = t - t0 > MAX_CHUNK_SPAN_MS;
        let new_minute = t.div_euclid(CHUNK_ALIGN_MS) != t0.div_euclid(CHUNK_ALIGN_MS);
        if keyframe || full || long || new_minute {
            out.push(start..i);
            start = i;
        }
    }
    if start < events.len() {
        out.push(start..events.len());
    }
    out
}

/// One chunk row to insert.
struct NewChunk {
    book: i64,
    first_seq: i64,
    last_seq: i64,
    first_ts: i64,
    last_ts: i64,
    keyframe: bool,
    gaps: i64,
    data: Vec<u8>,
    /// [`chunk::encode_book`] of the book the chunk leaves, when known.
    last_book: Option<Vec<u8>>,
}

impl NewChunk {
    fn of(book: i64, events: &[BookEvent]) -> Option<NewChunk> {
        let (first, last) = (events.first()?, events.last()?);
        Some(NewChunk {
            book,
            first_seq: first.seq as i64,
            last_seq: last.seq as i64,
            first_ts: first.received_at.millis(),
            last_ts: last.received_at.millis(),
            keyframe: matches!(first.change, BookChange::Snapshot { .. }),
            gaps: events.iter().filter(|e| matches!(e.change, BookChange::Gap(_))).count() as i64,
            data: chunk::encode(events),
            last_book: None,
        })
    }
}

/// The chunks of one book's consecutive events with the book each leaves, starting from `state` (the book
/// before the first event; `None` when not known, until a snapshot makes it known). `state` is left as the
/// last event leaves it.
fn chunks_with_ends(book: i64, events: &[BookEvent], state: &mut Option<BookState>) -> Vec<NewChunk> {
    let mut out = Vec::new();
    for r in chunk_bounds(events) {
        for e in &events[r.clone()] {
            if matches!(e.change, BookChange::Snapshot { .. }) && state.is_none() {
                *state = Some(BookState::default());
            }
            if let Some(s) = state.as_mut() {
                // A change that cannot apply leaves the book in a gap, as a replay would.
                let _ = s.apply(&e.change);
            }
        }
        if let Some(mut c) = NewChunk::of(book, &events[r]) {
            c.last_book = state.as_ref().map(|s| chunk::encode_book(s.ladders()));
            out.push(c);
        }
    }
    out
}

/// The chunks of `runs`, split at the chunk bounds.
fn new_chunks<'a>(runs: impl IntoIterator<Item = (i64, &'a [BookEvent])>) -> Vec<NewChunk> {
    let mut out = Vec::new();
    for (book, events) in runs {
        for r in chunk_bounds(events) {
            out.extend(NewChunk::of(book, &events[r]));
        }
    }
    out
}

/// The `INSERT`s of `chunks`, `ROWS_PER_INSERT` rows each.
fn insert_chunks(chunks: &[NewChunk], compacted: bool) -> Vec<Sql> {
    chunks
        .chunks(ROWS_PER_INSERT)
        .map(|rows| {
            let mut sql = Sql::new(
                "INSERT INTO book_chunks (book, first_seq, last_seq, first_ts, last_ts, keyframe, gaps, compacted, data, last_book) VALUES ",
            );
            for (i, c) in rows.iter().enumerate() {
                sql.push(if i == 0 { "(" } else { ", (" })
                    .int(c.book)
                    .push(", ")
                    .int(c.first_seq)
                    .push(", ")
                    .int(c.last_seq)
                    .push(", ")
                    .int(c.first_ts)
                    .push(", ")
                    .int(c.last_ts)
                    .push(", ")
                    .int(i64::from(c.keyframe))
                    .push(", ")
                    .int(c.gaps)
                    .push(", ")
                    .int(i64::from(compacted))
                    .push(", ")
                    .bytes(&c.data)
                    .push(", ")
                    .opt_bytes(c.last_book.as_deref())
                    .push(")");
            }
            sql
        })
        .collect()
}

/// Runs `stmts` in one write transaction; on PostgreSQL, creates the daily partitions of `first_ts` when one is
/// missing and runs them again.
async fn write<B: Backend>(store: &B, stmts: &[Sql], first_ts: impl Iterator<Item = i64>) -> StoreResult<()> {
    match store.writer().transaction(stmts).await {
        Ok(_) => Ok(()),
        Err(StoreError::Db(e)) if retention::postgres::is_missing_partition(&e) => {
            if let Pools::Postgres(pool) = store.pools() {
                let days: std::collections::BTreeSet<i64> = first_ts.map(retention::postgres::day_of).collect();
                retention::postgres::ensure_days(pool, CHUNKS, days).await?;
            }
            store.writer().transaction(stmts).await.map(|_| ())
        }
        Err(e) => Err(e),
    }
}

/// A stored chunk as read.
struct ChunkRow {
    book: i64,
    first_seq: i64,
    last_seq: i64,
    first_ts: i64,
    last_ts: i64,
    keyframe: bool,
    data: Vec<u8>,
}

// `keyframe` is a SMALLINT on PostgreSQL; rows are read as 64-bit integers.
const CHUNK_COLUMNS: &str = "book, first_seq, last_seq, first_ts, last_ts, CAST(keyframe AS BIGINT) AS keyframe, data";

/// [`CHUNK_COLUMNS`] with the events only of chunks holding gaps (NULL `data` for the others), and `gaps`: for
/// reads that need a chunk's events only to find its gaps.
const GAP_CHUNK_COLUMNS: &str = "book, first_seq, last_seq, first_ts, last_ts, CAST(keyframe AS BIGINT) AS keyframe, \
     CAST(gaps AS BIGINT) AS gaps, CASE WHEN gaps > 0 THEN data ELSE NULL END AS data";

impl ChunkRow {
    fn of(r: &impl Cols) -> StoreResult<ChunkRow> {
        ChunkRow::with_data(r, r.bytes("data")?)
    }

    /// A row of [`GAP_CHUNK_COLUMNS`]: the chunk when it holds gaps (and so its events were read).
    fn of_gap_chunk(r: &impl Cols) -> StoreResult<Option<ChunkRow>> {
        match (r.int("gaps")?, r.opt_bytes("data")?) {
            (1.., Some(data)) => Ok(Some(ChunkRow::with_data(r, data)?)),
            _ => Ok(None),
        }
    }

    fn with_data(r: &impl Cols, data: Vec<u8>) -> StoreResult<ChunkRow> {
        Ok(ChunkRow {
            book: r.int("book")?,
            first_seq: r.int("first_seq")?,
            last_seq: r.int("last_seq")?,
            first_ts: r.int("first_ts")?,
            last_ts: r.int("last_ts")?,
            keyframe: r.int("keyframe")? == 1,
            data,
        })
    }

    fn name(&self) -> String {
        format!("book {} seq {}-{}", self.book, self.first_seq, self.last_seq)
    }

    /// The chunk's events, or the chunk reported as corrupt. A chunk whose events disagree with its row (count
    /// or first seq) is corrupt too.
    /// A corrupt chunk is logged here, once per read that meets it.
    fn decode(&self) -> Result<Vec<BookEvent>, CorruptChunk> {
        let corrupt = |error| {
            let c = CorruptChunk {
                name: self.name(),
                error,
            };
            tracing::warn!(chunk = %c.name, error = %c.error, "skipping a book log chunk that does not decode");
            c
        };
        let events = chunk::decode(&self.data).map_err(corrupt)?;
        match (events.first(), events.last()) {
            (Some(f), Some(l)) if f.seq as i64 == self.first_seq && l.seq as i64 == self.last_seq => Ok(events),
            _ => Err(corrupt(ChunkError::new("row and events disagree"))),
        }
    }
}

/// The chunk rows `sql` selects ([`CHUNK_COLUMNS`]).
async fn chunk_rows<E: Exec>(ex: &E, sql: &Sql) -> StoreResult<Vec<ChunkRow>> {
    ex.rows(sql).await?.iter().map(ChunkRow::of).collect()
}

async fn book_id<E: Exec>(ex: &E, book: &BookKey) -> StoreResult<Option<i64>> {
    let mut sql = Sql::new("SELECT id FROM log_books WHERE exchange = ");
    sql.text(book.exchange.as_str())
        .push(" AND market_id = ")
        .text(&book.market_id)
        .push(" AND asset_id = ")
        .text(codec::asset_key(book.asset_id.as_deref()));
    ex.rows(&sql).await?.first().map(|r| r.int("id")).transpose()
}

/// Registers the books in `chunk` (at most a few hundred) and reads their heads.
async fn register<B: Backend>(store: &B, books: &[BookKey]) -> StoreResult<Vec<LogHead>> {
    let values = |sql: &mut Sql| {
        for (i, b) in books.iter().enumerate() {
            sql.push(if i == 0 { "(" } else { ", (" })
                .text(b.exchange.as_str())
                .push(", ")
                .text(&b.market_id)
                .push(", ")
                .text(codec::asset_key(b.asset_id.as_deref()))
                .push(")");
        }
    };
    let mut insert = Sql::new("INSERT INTO log_books (exchange, market_id, asset_id) VALUES ");
    values(&mut insert);
    insert.push(" ON CONFLICT (exchange, market_id, asset_id) DO NOTHING");
    store.writer().exec(&insert).await?;
    // The head of each: the chunk with the latest last event, by an index seek per book.
    let mut select = Sql::new(
        "SELECT b.id AS id, b.exchange AS exchange, b.market_id AS market_id, b.asset_id AS asset_id, \
         (SELECT c.last_seq FROM book_chunks c WHERE c.book = b.id ORDER BY c.last_ts DESC, c.last_seq DESC LIMIT 1) AS last_seq, \
         (SELECT c.last_ts FROM book_chunks c WHERE c.book = b.id ORDER BY c.last_ts DESC LIMIT 1) AS last_ts \
         FROM log_books b WHERE (b.exchange, b.market_id, b.asset_id) IN (VALUES ",
    );
    values(&mut select);
    select.push(")");
    let mut found = std::collections::HashMap::new();
    for r in store.writer().rows(&select).await? {
        let asset = r.text("asset_id")?;
        let key = BookKey {
            exchange: codec::exchange(&r.text("exchange")?)?,
            market_id: r.text("market_id")?,
            asset_id: Some(asset).filter(|a| !a.is_empty()),
        };
        let head = LogHead {
            id: r.int("id")?,
            book: key.clone(),
            last_seq: r.opt_int("last_seq")?.unwrap_or(0).max(0) as u64,
            last_ts: r.opt_int("last_ts")?.map(Timestamp::from_millis),
        };
        found.insert(key, head);
    }
    books
        .iter()
        .map(|b| {
            found
                .get(b)
                .cloned()
                .ok_or_else(|| codec::decode_error(format!("book {b:?} missing after registering it")))
        })
        .collect()
}

/// The heads of a venue's books with stored events, each by an index seek on its latest chunk (as
/// [`register`] reads them); read from the writer so a flush just made is seen.
async fn log_heads<E: Exec>(ex: &E, exchange: Exchange) -> StoreResult<Vec<LogHead>> {
    let mut sql = Sql::new(
        "SELECT id, exchange, market_id, asset_id, last_seq, last_ts FROM (\
         SELECT b.id AS id, b.exchange AS exchange, b.market_id AS market_id, b.asset_id AS asset_id, \
         (SELECT c.last_seq FROM book_chunks c WHERE c.book = b.id ORDER BY c.last_ts DESC, c.last_seq DESC LIMIT 1) AS last_seq, \
         (SELECT c.last_ts FROM book_chunks c WHERE c.book = b.id ORDER BY c.last_ts DESC LIMIT 1) AS last_ts \
         FROM log_books b WHERE b.exchange = ",
    );
    sql.text(exchange.as_str())
        .push(") h WHERE last_seq IS NOT NULL ORDER BY id");
    let mut out = Vec::new();
    for r in ex.rows(&sql).await? {
        let asset = r.text("asset_id")?;
        out.push(LogHead {
            id: r.int("id")?,
            book: BookKey {
                exchange: codec::exchange(&r.text("exchange")?)?,
                market_id: r.text("market_id")?,
                asset_id: Some(asset).filter(|a| !a.is_empty()),
            },
            last_seq: r.opt_int("last_seq")?.unwrap_or(0).max(0) as u64,
            last_ts: r.opt_int("last_ts")?.map(Timestamp::from_millis),
        });
    }
    Ok(out)
}

/// A book in a statement: its id, or its key looked up inside the statement (saving a round trip per read).
#[derive(Clone, Copy)]
enum BookRef<'a> {
    Id(i64),
    Key(&'a BookKey),
}

impl From<i64> for BookRef<'_> {
    fn from(id: i64) -> Self {
        BookRef::Id(id)
    }
}

impl<'a> From<&'a BookKey> for BookRef<'a> {
    fn from(key: &'a BookKey) -> Self {
        BookRef::Key(key)
    }
}

/// Appends the book's id: a placeholder, or a subquery on `log_books` (NULL, matching nothing, when the book is
/// not in the log).
fn push_book(sql: &mut Sql, book: BookRef<'_>) {
    match book {
        BookRef::Id(id) => {
            sql.int(id);
        }
        BookRef::Key(k) => {
            sql.push("(SELECT id FROM log_books WHERE exchange = ")
                .text(k.exchange.as_str())
                .push(" AND market_id = ")
                .text(&k.market_id)
                .push(" AND asset_id = ")
                .text(codec::asset_key(k.asset_id.as_deref()))
                .push(")");
        }
    }
}

/// `book = …`, with the bounds on `last_ts` and (for partition pruning on PostgreSQL) `first_ts` that a read
/// of events received in `[from, to]` needs: a chunk holding one ends at or after `from` and starts at or before
/// `to`, and spans at most [`MAX_CHUNK_SPAN_MS`].
fn overlapping<'a>(sql: &mut Sql, book: impl Into<BookRef<'a>>, from: i64, to: i64) {
    sql.push("book = ");
    push_book(sql, book.into());
    sql.push(" AND last_ts >= ")
        .int(from)
        .push(" AND last_ts <= ")
        .int(to.saturating_add(MAX_CHUNK_SPAN_MS))
        .push(" AND first_ts >= ")
        .int(from.saturating_sub(MAX_CHUNK_SPAN_MS))
        .push(" AND first_ts <= ")
        .int(to);
}

async fn log_events<E: Exec>(ex: &E, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<LogRead> {
    let (from, to) = (from.millis(), to.millis());
    // One statement: the last keyframe at or before `from` (walking the book's chunks back from `from`, at most
    // one keyframe interval of small chunks), then the chunks from it through `to`.
    let mut sql = Sql::new("WITH k AS (SELECT first_seq, first_ts FROM book_chunks WHERE book = ");
    push_book(&mut sql, book.into());
    sql.push(" AND keyframe = 1 AND first_ts <= ")
        .int(from)
        .push(" AND last_ts <= ")
        .int(from.saturating_add(MAX_CHUNK_SPAN_MS))
        .push(" ORDER BY last_ts DESC, first_seq DESC LIMIT 1) SELECT ")
        .push(CHUNK_COLUMNS)
        .push(", (SELECT first_seq FROM k) AS keyframe_seq FROM book_chunks WHERE book = ");
    push_book(&mut sql, book.into());
    sql.push(" AND last_ts >= COALESCE((SELECT first_ts FROM k), ")
        .int(from)
        .push(") AND last_ts <= ")
        .int(to.saturating_add(MAX_CHUNK_SPAN_MS))
        .push(" AND first_ts >= COALESCE((SELECT first_ts FROM k), ")
        .int(from)
        .push(") - ")
        .int(MAX_CHUNK_SPAN_MS)
        .push(" AND first_ts <= ")
        .int(to)
        .push(" AND first_seq >= COALESCE((SELECT first_seq FROM k), 0)");
    let rows = ex.rows(&sql).await?;
    let keyframe = match rows.first() {
        Some(r) => r.opt_int("keyframe_seq")?,
        None => None,
    };
    let mut rows: Vec<ChunkRow> = rows.iter().map(ChunkRow::of).collect::<StoreResult<_>>()?;
    rows.sort_by_key(|r| r.first_seq);
    let mut out = LogRead::default();
    for row in &rows {
        match row.decode() {
            Ok(events) => out
                .events
                .extend(events.into_iter().filter(|e| e.received_at.millis() <= to)),
            Err(c) => out.corrupt.push(c),
        }
    }
    if keyframe.is_none() {
        out.events.retain(|e| e.received_at.millis() >= from);
    }
    out.after_gap = match out.events.first() {
        Some(first) if first.seq > 1 && matches!(first.change, BookChange::Snapshot { .. }) => {
            follows_gap(ex, book, first).await?
        }
        _ => false,
    };
    Ok(out)
}

async fn log_after<E: Exec>(
    ex: &E,
    book: &BookKey,
    after_seq: u64,
    after_ts: Timestamp,
    to: Timestamp,
    max_chunks: u32,
) -> StoreResult<LogPage> {
    let mut sql = Sql::new("SELECT ");
    sql.push(CHUNK_COLUMNS).push(" FROM book_chunks WHERE ");
    overlapping(&mut sql, book, after_ts.millis(), to.millis());
    sql.push(" AND last_seq > ")
        .int(after_seq as i64)
        .push(" ORDER BY last_ts, first_seq LIMIT ")
        .int(i64::from(max_chunks));
    let rows = chunk_rows(ex, &sql).await?;
    let mut page = LogPage::default();
    for row in &rows {
        match row.decode() {
            Ok(events) => page
                .events
                .extend(events.into_iter().filter(|e| e.seq > after_seq && e.received_at <= to)),
            Err(c) => page.corrupt.push(c),
        }
    }
    page.events.sort_by_key(|e| e.seq);
    // Only a read that stopped at `max_chunks` may have stopped short of `to`.
    if rows.len() == max_chunks as usize
        && let Some(last) = rows.iter().max_by_key(|r| r.last_seq)
    {
        page.next = Some((last.last_seq as u64, Timestamp::from_millis(last.last_ts)));
    }
    Ok(page)
}

/// Whether the event just before `first` (a keyframe) is a gap, so that the keyframe ended it. After a gap the
/// writer writes nothing for the book until its next keyframe, so a gap ends exactly there.
async fn follows_gap<E: Exec>(ex: &E, book: &BookKey, first: &BookEvent) -> StoreResult<bool> {
    let mut sql = Sql::new("SELECT ");
    sql.push(GAP_CHUNK_COLUMNS).push(" FROM book_chunks WHERE book = ");
    push_book(&mut sql, book.into());
    sql.push(" AND last_ts <= ")
        .int(first.received_at.millis())
        .push(" AND last_seq < ")
        .int(first.seq as i64)
        .push(" ORDER BY last_ts DESC, last_seq DESC LIMIT 1");
    let Some(r) = ex.rows(&sql).await?.into_iter().next() else {
        return Ok(false);
    };
    if r.int("last_seq")? != first.seq as i64 - 1 {
        return Ok(false);
    }
    let Some(row) = ChunkRow::of_gap_chunk(&r)? else {
        return Ok(false);
    };
    Ok(row
        .decode()
        .is_ok_and(|events| events.last().is_some_and(|e| matches!(e.change, BookChange::Gap(_)))))
}

async fn log_gaps<E: Exec>(ex: &E, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<Vec<StoredGap>> {
    let Some(id) = book_id(ex, book).await? else {
        return Ok(Vec::new());
    };
    let (from, to) = (from.millis(), to.millis());
    // The chunks holding gaps (a small partial index): those ending in the range, and the last one before it,
    // whose gap may still be open at `from`.
    let mut sql = Sql::new("SELECT * FROM (SELECT ");
    sql.push(CHUNK_COLUMNS)
        .push(" FROM book_chunks WHERE gaps > 0 AND book = ")
        .int(id)
        .push(" AND last_ts < ")
        .int(from)
        .push(" ORDER BY last_ts DESC LIMIT 1) x UNION ALL SELECT ")
        .push(CHUNK_COLUMNS)
        .push(" FROM book_chunks WHERE gaps > 0 AND book = ")
        .int(id)
        .push(" AND last_ts >= ")
        .int(from)
        .push(" AND last_ts <= ")
        .int(to.saturating_add(MAX_CHUNK_SPAN_MS))
        .push(" AND first_ts <= ")
        .int(to);
    let mut rows = chunk_rows(ex, &sql).await?;
    rows.sort_by_key(|r| r.first_seq);
    let mut out = Vec::new();
    for row in &rows {
        let Ok(events) = row.decode() else { continue };
        for e in &events {
            let BookChange::Gap(cause) = e.change else { continue };
            if e.received_at.millis() > to {
                continue;
            }
            // A gap ends at the book's next keyframe, which always opens a chunk.
            let mut next = Sql::new("SELECT first_ts FROM book_chunks WHERE book = ");
            next.int(id)
                .push(" AND keyframe = 1 AND last_ts >= ")
                .int(e.received_at.millis())
                .push(" AND first_ts >= ")
                .int(e.received_at.millis())
                .push(" AND first_seq > ")
                .int(e.seq as i64)
                .push(" ORDER BY last_ts, first_seq LIMIT 1");
            let end = match ex.rows(&next).await?.first() {
                Some(r) => Some(Timestamp::from_millis(r.int("first_ts")?)),
                None => None,
            };
            if end.is_some_and(|t| t.millis() < from) {
                continue;
            }
            out.push(StoredGap {
                seq: e.seq,
                start: e.received_at,
                end,
                cause,
            });
        }
    }
    Ok(out)
}

async fn compact<B: Backend>(
    store: &B,
    older_than: Timestamp,
    after_book: i64,
    max_chunks: u32,
) -> StoreResult<Compacted> {
    // The small chunks older than the cutoff, in (book, time) order after the cursor, at most `max_chunks`: one
    // walk of the partial index of small chunks that stops at the limit. (Listing the books first and asking
    // for their chunks with `book IN (…)` made PostgreSQL sort every small chunk of those books to keep a
    // few thousand: 6.5 s a step at two million small chunks.) Chunks younger than the cutoff are skipped
    // in the walk; a pass meets each small chunk once. `first_seq` orders chunks ending at the same time, so
    // the rows a limit cuts are a book's oldest, consecutive in seq (the DELETE below takes a seq range).
    let mut sql = Sql::new("SELECT ");
    sql.push(CHUNK_COLUMNS)
        .push(" FROM book_chunks WHERE compacted = 0 AND book > ")
        .int(after_book)
        .push(" AND last_ts < ")
        .int(older_than.millis())
        .push(" ORDER BY book, last_ts, first_seq LIMIT ")
        .int(i64::from(max_chunks));
    let rows = chunk_rows(store.reader(), &sql).await?;
    // A step that filled its limit may have cut its last book short: the next step starts at that book again
    // (its chunks merged here are gone from the small ones by then).
    let mut done = Compacted {
        next: if rows.len() >= max_chunks as usize {
            rows.last().map(|r| r.book - 1)
        } else {
            None
        },
        ..Compacted::default()
    };
    if rows.is_empty() {
        return Ok(done);
    }
    let mut by_book: BTreeMap<i64, Vec<ChunkRow>> = BTreeMap::new();
    for r in rows {
        by_book.entry(r.book).or_default().push(r);
    }
    for rows in by_book.values_mut() {
        rows.sort_by_key(|r| r.first_seq);
    }
    let mut before = ends_before(store.reader(), &by_book).await?;
    let mut stmts = Vec::new();
    let mut merged = Vec::new();
    for (book, rows) in by_book {
        // The rows taken are the book's oldest small chunks, consecutive in seq: remove them all, write back
        // what decodes as large chunks, and keep what does not decode as it is (marked compacted, so
        // compaction does not meet it again; reads keep reporting it).
        let (lo_ts, hi_ts) = (rows[0].first_ts, rows.iter().map(|r| r.last_ts).max().unwrap_or(0));
        let (lo_seq, hi_seq) = (rows[0].first_seq, rows.iter().map(|r| r.last_seq).max().unwrap_or(0));
        let mut del = Sql::new("DELETE FROM book_chunks WHERE compacted = 0 AND ");
        overlapping(&mut del, book, lo_ts, hi_ts);
        del.push(" AND first_seq >= ")
            .int(lo_seq)
            .push(" AND last_seq <= ")
            .int(hi_seq);
        stmts.push(del);
        // The book before the first of them, to store the book each merged chunk leaves.
        let mut state = before.remove(&book);
        let mut events: Vec<BookEvent> = Vec::new();
        let flush = |events: &mut Vec<BookEvent>, merged: &mut Vec<NewChunk>, state: &mut Option<BookState>| {
            merged.extend(chunks_with_ends(book, events, state));
            events.clear();
        };
        for r in &rows {
            done.chunks_in += 1;
            match r.decode() {
                Ok(mut es) => events.append(&mut es),
                Err(_) => {
                    done.corrupt += 1;
                    flush(&mut events, &mut merged, &mut state);
                    // What the corrupt chunk did to the book is unknown until the next snapshot.
                    state = None;
                    merged.push(NewChunk {
                        book,
                        first_seq: r.first_seq,
                        last_seq: r.last_seq,
                        first_ts: r.first_ts,
                        last_ts: r.last_ts,
                        keyframe: false,
                        gaps: 0,
                        data: r.data.clone(),
                        last_book: None,
                    });
                }
            }
        }
        flush(&mut events, &mut merged, &mut state);
    }
    done.chunks_out = merged.len() as u64;
    stmts.extend(insert_chunks(&merged, true));
    write(store, &stmts, merged.iter().map(|c| c.first_ts)).await?;
    Ok(done)
}

/// The book before the first of each book's `rows` (the oldest chunks not compacted), from the stored end of
/// the chunk just before it; absent when not known, or not needed because the first chunk opens on a keyframe.
async fn ends_before<E: Exec>(ex: &E, by_book: &BTreeMap<i64, Vec<ChunkRow>>) -> StoreResult<BTreeMap<i64, BookState>> {
    let firsts: Vec<&ChunkRow> = by_book
        .values()
        .filter_map(|rows| rows.first())
        .filter(|r| !r.keyframe)
        .collect();
    let mut out = BTreeMap::new();
    // One statement per 200 books: SQLite allows 500 terms in a compound select.
    for part in firsts.chunks(200) {
        let mut sql = Sql::new("");
        for (i, r) in part.iter().enumerate() {
            if i > 0 {
                sql.push(" UNION ALL ");
            }
            sql.push("SELECT * FROM (SELECT book, last_seq, last_book FROM book_chunks WHERE book = ")
                .int(r.book)
                .push(" AND last_ts <= ")
                .int(r.first_ts)
                .push(" AND first_ts <= ")
                .int(r.first_ts)
                .push(" AND last_seq < ")
                .int(r.first_seq)
                .push(" ORDER BY last_ts DESC, last_seq DESC LIMIT 1) p")
                .push(&i.to_string());
        }
        for row in ex.rows(&sql).await? {
            let book = row.int("book")?;
            let first_seq = by_book.get(&book).and_then(|rows| rows.first()).map(|r| r.first_seq);
            // Only the chunk right before counts: a hole in the numbering leaves the book unknown.
            if Some(row.int("last_seq")? + 1) != first_seq {
                continue;
            }
            let Some(bytes) = row.opt_bytes("last_book")? else {
                continue;
            };
            if let Ok(ladders) = chunk::decode_book(&bytes) {
                out.insert(book, BookState::from_ladders(ladders));
            }
        }
    }
    Ok(out)
}

/// The stored end of a chunk row (`last_seq`, `last_ts`, `last_book` columns).
fn chunk_end(r: &impl Cols, book: i64) -> StoreResult<ChunkEnd> {
    let (last_seq, last_ts) = (r.int("last_seq")?, r.int("last_ts")?);
    let state = match r.opt_bytes("last_book")? {
        None => EndState::Unknown,
        Some(bytes) => match chunk::decode_book(&bytes) {
            Ok(Some(l)) => EndState::Book(l),
            Ok(None) => EndState::Gap,
            Err(error) => {
                // The events are still there: a replay reads them, so the end is only unknown.
                tracing::warn!(chunk = %format!("book {book} seq ..{last_seq}"), %error, "a stored chunk end does not decode");
                EndState::Unknown
            }
        },
    };
    Ok(ChunkEnd {
        last_seq: last_seq.max(0) as u64,
        last_ts: Timestamp::from_millis(last_ts),
        state,
    })
}

async fn log_outline<E: Exec>(
    ex: &E,
    book: &BookKey,
    from: Timestamp,
    to: Timestamp,
    ends: bool,
) -> StoreResult<LogOutline> {
    let (from, to) = (from.millis(), to.millis());
    let mut out = LogOutline::default();
    let mut sql = Sql::new("SELECT book, last_seq, last_ts, last_book FROM book_chunks WHERE book = ");
    push_book(&mut sql, book.into());
    sql.push(" AND last_ts < ")
        .int(from)
        .push(" ORDER BY last_ts DESC, last_seq DESC LIMIT 1");
    if let Some(r) = ex.rows(&sql).await?.first() {
        out.before = Some(chunk_end(r, r.int("book")?)?);
    }
    // Events only of the chunks that hold gaps (a few): the others are outlined by their columns.
    let mut sql = Sql::new("SELECT ");
    sql.push(GAP_CHUNK_COLUMNS)
        .push(", CAST(CASE WHEN last_book IS NULL THEN 0 ELSE 1 END AS BIGINT) AS end_known, ")
        .push(if ends { "last_book" } else { "NULL AS last_book" })
        .push(" FROM book_chunks WHERE ");
    overlapping(&mut sql, book, from, to);
    let mut rows = ex.rows(&sql).await?;
    rows.sort_by_key(|r| r.int("first_seq").unwrap_or(0));
    for r in &rows {
        let id = r.int("book")?;
        let c = ChunkOutline {
            first_seq: r.int("first_seq")?.max(0) as u64,
            last_seq: r.int("last_seq")?.max(0) as u64,
            first_ts: Timestamp::from_millis(r.int("first_ts")?),
            last_ts: Timestamp::from_millis(r.int("last_ts")?),
            end_known: r.int("end_known")? == 1,
        };
        if ends {
            out.ends.push(chunk_end(r, id)?);
        }
        if let Some(row) = ChunkRow::of_gap_chunk(r)? {
            match row.decode() {
                Ok(events) => out.gap_seqs.extend(
                    events
                        .iter()
                        .filter(|e| matches!(e.change, BookChange::Gap(_)))
                        .map(|e| e.seq),
                ),
                Err(corrupt) => out.corrupt.push(corrupt),
            }
        }
        out.chunks.push(c);
    }
    Ok(out)
}

async fn log_ends<E: Exec>(ex: &E, book: &BookKey, last_ts: &[Timestamp]) -> StoreResult<Vec<ChunkEnd>> {
    let (Some(lo), Some(hi)) = (
        last_ts.iter().map(|t| t.millis()).min(),
        last_ts.iter().map(|t| t.millis()).max(),
    ) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(last_ts.len());
    // 500 times per statement keeps far below both backends' argument limits.
    for part in last_ts.chunks(500) {
        let mut sql = Sql::new("SELECT book, last_seq, last_ts, last_book FROM book_chunks WHERE ");
        overlapping(&mut sql, book, lo, hi);
        sql.push(" AND last_ts IN (");
        for (i, t) in part.iter().enumerate() {
            if i > 0 {
                sql.push(", ");
            }
            sql.int(t.millis());
        }
        sql.push(")");
        for r in ex.rows(&sql).await? {
            out.push(chunk_end(&r, r.int("book")?)?);
        }
    }
    out.sort_by_key(|e| e.last_seq);
    out.dedup_by_key(|e| e.last_seq);
    Ok(out)
}

#[async_trait::async_trait]
impl<B: Backend> BookLogStore for B {
    async fn register_log_books(&self, books: &[BookKey]) -> StoreResult<Vec<LogHead>> {
        let mut out = Vec::with_capacity(books.len());
        // 3 arguments per book twice in one statement pair: 500 books keep far below the argument limits.
        for part in books.chunks(500) {
            out.extend(register(self, part).await?);
        }
        Ok(out)
    }

    async fn log_heads(&self, exchange: Exchange) -> StoreResult<Vec<LogHead>> {
        log_heads(self.writer(), exchange).await
    }

    async fn append_log(&self, runs: &[LogRun]) -> StoreResult<()> {
        let chunks = new_chunks(runs.iter().map(|r| (r.book_id, r.events.as_slice())));
        if chunks.is_empty() {
            return Ok(());
        }
        write(self, &insert_chunks(&chunks, false), chunks.iter().map(|c| c.first_ts)).await
    }

    async fn log_events(&self, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<LogRead> {
        log_events(self.reader(), book, from, to).await
    }

    async fn log_after(
        &self,
        book: &BookKey,
        after_seq: u64,
        after_ts: Timestamp,
        to: Timestamp,
        max_chunks: u32,
    ) -> StoreResult<LogPage> {
        log_after(self.reader(), book, after_seq, after_ts, to, max_chunks.max(1)).await
    }

    async fn log_outline(&self, book: &BookKey, from: Timestamp, to: Timestamp, ends: bool) -> StoreResult<LogOutline> {
        log_outline(self.reader(), book, from, to, ends).await
    }

    async fn log_ends(&self, book: &BookKey, last_ts: &[Timestamp]) -> StoreResult<Vec<ChunkEnd>> {
        log_ends(self.reader(), book, last_ts).await
    }

    async fn log_first(&self, book: &BookKey) -> StoreResult<Option<Timestamp>> {
        let mut sql = Sql::new("SELECT first_ts FROM book_chunks WHERE book = ");
        push_book(&mut sql, book.into());
        sql.push(" ORDER BY last_ts, first_seq LIMIT 1");
        match self.reader().rows(&sql).await?.first() {
            Some(r) => Ok(Some(Timestamp::from_millis(r.int("first_ts")?))),
            None => Ok(None),
        }
    }

    async fn log_gaps(&self, book: &BookKey, from: Timestamp, to: Timestamp) -> StoreResult<Vec<StoredGap>> {
        log_gaps(self.reader(), book, from, to).await
    }

    async fn compact_log(&self, older_than: Timestamp, after_book: i64, max_chunks: u32) -> StoreResult<Compacted> {
        compact(self, older_than, after_book, max_chunks.max(1)).await
    }

    async fn prune_log(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned> {
        match self.pools() {
            Pools::Postgres(pool) => retention::postgres::prune(pool, CHUNKS, cutoff).await,
            Pools::Sqlite { .. } => {
                // Short batches, oldest first by the `last_ts` index, so the single writer stays free for ingestion.
                let mut sql =
                    Sql::new("DELETE FROM book_chunks WHERE rowid IN (SELECT rowid FROM book_chunks WHERE last_ts < ");
                sql.int(cutoff.millis())
                    .push(" ORDER BY last_ts LIMIT ")
                    .int(i64::from(max_rows.max(1)))
                    .push(")");
                let rows = self.writer().exec(&sql).await?;
                Ok(Pruned {
                    rows,
                    partitions: 0,
                    done: rows < u64::from(max_rows.max(1)),
                })
            }
        }
    }

    async fn prepare_log(&self, from: Timestamp, until: Timestamp) -> StoreResult<()> {
        match self.pools() {
            Pools::Sqlite { .. } => Ok(()),
            Pools::Postgres(pool) => retention::postgres::prepare(pool, CHUNKS, from, until).await,
        }
    }
}
