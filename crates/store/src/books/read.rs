//! Reading the log: chunk rows by book and time, the events after a position, the gaps, and the stored chunk
//! ends that history buckets of whole minutes read instead of replaying.

use crossbook_core::{
    Timestamp,
    book::{BookChange, BookEvent, BookKey},
};

use super::{
    ChunkEnd, ChunkOutline, CorruptChunk, EndState, LogOutline, LogPage, LogRead, MAX_CHUNK_SPAN_MS, StoredGap, chunk,
    chunk::ChunkError,
};
use crate::{
    StoreResult,
    backend::Exec,
    codec::{self, Cols},
    sql::Sql,
};

/// A stored chunk as read.
pub(super) struct ChunkRow {
    pub(super) book: i64,
    pub(super) first_seq: i64,
    pub(super) last_seq: i64,
    pub(super) first_ts: i64,
    pub(super) last_ts: i64,
    pub(super) keyframe: bool,
    pub(super) data: Vec<u8>,
}

// `keyframe` is a SMALLINT on PostgreSQL; rows are read as 64-bit integers.
pub(super) const CHUNK_COLUMNS: &str =
    "book, first_seq, last_seq, first_ts, last_ts, CAST(keyframe AS BIGINT) AS keyframe, data";

/// [`CHUNK_COLUMNS`] with the events only of chunks holding gaps (NULL `data` for the others), and `gaps`: for
/// reads that need a chunk's events only to find its gaps.
pub(super) const GAP_CHUNK_COLUMNS: &str = "book, first_seq, last_seq, first_ts, last_ts, CAST(keyframe AS BIGINT) AS keyframe, \
     CAST(gaps AS BIGINT) AS gaps, CASE WHEN gaps > 0 THEN data ELSE NULL END AS data";

impl ChunkRow {
    pub(super) fn of(r: &impl Cols) -> StoreResult<ChunkRow> {
        ChunkRow::with_data(r, r.bytes("data")?)
    }

    /// A row of [`GAP_CHUNK_COLUMNS`]: the chunk when it holds gaps (and so its events were read).
    pub(super) fn of_gap_chunk(r: &impl Cols) -> StoreResult<Option<ChunkRow>> {
        match (r.int("gaps")?, r.opt_bytes("data")?) {
            (1.., Some(data)) => Ok(Some(ChunkRow::with_data(r, data)?)),
            _ => Ok(None),
        }
    }

    pub(super) fn with_data(r: &impl Cols, data: Vec<u8>) -> StoreResult<ChunkRow> {
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

    pub(super) fn name(&self) -> String {
        format!("book {} seq {}-{}", self.book, self.first_seq, self.last_seq)
    }

    /// The chunk's events, or the chunk reported as corrupt. A chunk whose events disagree with its row (count
    /// or first seq) is corrupt too.
    /// A corrupt chunk is logged here, once per read that meets it.
    pub(super) fn decode(&self) -> Result<Vec<BookEvent>, CorruptChunk> {
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
pub(super) async fn chunk_rows<E: Exec>(ex: &E, sql: &Sql) -> StoreResult<Vec<ChunkRow>> {
    ex.rows(sql).await?.iter().map(ChunkRow::of).collect()
}

pub(super) async fn book_id<E: Exec>(ex: &E, book: &BookKey) -> StoreResult<Option<i64>> {
    let mut sql = Sql::new("SELECT id FROM log_books WHERE exchange = ");
    sql.text(book.exchange.as_str())
        .push(" AND market_id = ")
        .text(&book.market_id)
        .push(" AND asset_id = ")
        .text(codec::asset_key(book.asset_id.as_deref()));
    ex.rows(&sql).await?.first().map(|r| r.int("id")).transpose()
}

/// A book in a statement: its id, or its key looked up inside the statement (saving a round trip per read).
#[derive(Clone, Copy)]
pub(super) enum BookRef<'a> {
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
pub(super) fn push_book(sql: &mut Sql, book: BookRef<'_>) {
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
pub(super) fn overlapping<'a>(sql: &mut Sql, book: impl Into<BookRef<'a>>, from: i64, to: i64) {
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

pub(super) async fn log_events<E: Exec>(
    ex: &E,
    book: &BookKey,
    from: Timestamp,
    to: Timestamp,
) -> StoreResult<LogRead> {
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

pub(super) async fn log_after<E: Exec>(
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
pub(super) async fn follows_gap<E: Exec>(ex: &E, book: &BookKey, first: &BookEvent) -> StoreResult<bool> {
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

pub(super) async fn log_gaps<E: Exec>(
    ex: &E,
    book: &BookKey,
    from: Timestamp,
    to: Timestamp,
) -> StoreResult<Vec<StoredGap>> {
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

/// The stored end of a chunk row (`last_seq`, `last_ts`, `last_book` columns).
pub(super) fn chunk_end(r: &impl Cols, book: i64) -> StoreResult<ChunkEnd> {
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

pub(super) async fn log_outline<E: Exec>(
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

pub(super) async fn log_ends<E: Exec>(ex: &E, book: &BookKey, last_ts: &[Timestamp]) -> StoreResult<Vec<ChunkEnd>> {
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
