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

use crossbook_core::{
    Exchange, Timestamp,
    book::{BookEvent, BookKey, GapCause, Ladders},
};

use crate::{
    StoreResult,
    backend::{Backend, Exec, Pools},
    codec::Cols,
    retention,
    retention::Pruned,
    sql::Sql,
};

pub mod chunk;
mod compact;
pub mod history;
mod read;
mod write;

pub use chunk::ChunkError;
pub use write::chunk_bounds;

use compact::compact;
use read::{log_after, log_ends, log_events, log_gaps, log_outline, push_book};
use write::{insert_chunks, log_heads, new_chunks, register, write};

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

    /// One step of retention (as [`crate::SnapshotStore::prune_snapshots`]): SQLite deletes up to `max_rows` chunks
    /// whose last event is older than `cutoff`; PostgreSQL drops the daily partitions that end at or before it.
    async fn prune_log(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned>;

    /// Prepares storage for chunks starting from `from` to `until` (PostgreSQL: the daily partitions).
    async fn prepare_log(&self, from: Timestamp, until: Timestamp) -> StoreResult<()>;
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
