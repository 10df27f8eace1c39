//! Compaction: a book's small chunks (one per flush), once older than a cutoff, merged into chunks as large as
//! the bounds allow, each step replacing its inputs in one transaction.

use std::collections::BTreeMap;

use crossbook_core::{
    Timestamp,
    book::{BookEvent, BookState},
};

use super::read::{CHUNK_COLUMNS, ChunkRow, chunk_rows, overlapping};
use super::write::{NewChunk, chunks_with_ends, insert_chunks, write};
use super::{Compacted, chunk};
use crate::{
    StoreResult,
    backend::{Backend, Exec},
    codec::Cols,
    sql::Sql,
};

pub(super) async fn compact<B: Backend>(
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
pub(super) async fn ends_before<E: Exec>(
    ex: &E,
    by_book: &BTreeMap<i64, Vec<ChunkRow>>,
) -> StoreResult<BTreeMap<i64, BookState>> {
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
