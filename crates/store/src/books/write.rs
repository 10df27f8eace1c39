//! Appending to the log: a flush's runs cut into chunks at their bounds, and the books registered with their
//! last stored event.

use crossbook_core::{
    Exchange, Timestamp,
    book::{BookChange, BookEvent, BookKey, BookState},
};

use super::{CHUNK_ALIGN_MS, CHUNKS, LogHead, MAX_CHUNK_EVENTS, MAX_CHUNK_SPAN_MS, ROWS_PER_INSERT, chunk};
use crate::{
    StoreError, StoreResult,
    backend::{Backend, Exec, Pools},
    codec::{self, Cols},
    retention,
    sql::Sql,
};

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
pub(super) struct NewChunk {
    pub(super) book: i64,
    pub(super) first_seq: i64,
    pub(super) last_seq: i64,
    pub(super) first_ts: i64,
    pub(super) last_ts: i64,
    pub(super) keyframe: bool,
    pub(super) gaps: i64,
    pub(super) data: Vec<u8>,
    /// [`chunk::encode_book`] of the book the chunk leaves, when known.
    pub(super) last_book: Option<Vec<u8>>,
}

impl NewChunk {
    pub(super) fn of(book: i64, events: &[BookEvent]) -> Option<NewChunk> {
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
pub(super) fn chunks_with_ends(book: i64, events: &[BookEvent], state: &mut Option<BookState>) -> Vec<NewChunk> {
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
pub(super) fn new_chunks<'a>(runs: impl IntoIterator<Item = (i64, &'a [BookEvent])>) -> Vec<NewChunk> {
    let mut out = Vec::new();
    for (book, events) in runs {
        for r in chunk_bounds(events) {
            out.extend(NewChunk::of(book, &events[r]));
        }
    }
    out
}

/// The `INSERT`s of `chunks`, `ROWS_PER_INSERT` rows each.
pub(super) fn insert_chunks(chunks: &[NewChunk], compacted: bool) -> Vec<Sql> {
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
pub(super) async fn write<B: Backend>(
    store: &B,
    stmts: &[Sql],
    first_ts: impl Iterator<Item = i64>,
) -> StoreResult<()> {
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

/// Registers the books in `chunk` (at most a few hundred) and reads their heads.
pub(super) async fn register<B: Backend>(store: &B, books: &[BookKey]) -> StoreResult<Vec<LogHead>> {
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
pub(super) async fn log_heads<E: Exec>(ex: &E, exchange: Exchange) -> StoreResult<Vec<LogHead>> {
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
