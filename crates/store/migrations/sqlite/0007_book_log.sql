-- The book event log (every book change, as snapshots, deltas and gaps), stored as chunks: runs of one book's
-- consecutive events in the compact binary form of `book_log/chunk.rs`.
--
-- Chunks are appended in time order (the rowid grows), so a flush writes to the end of the table and touches
-- one index page per book rather than one table page per book. The writer appends small chunks (one per book
-- per flush); compaction merges a book's small chunks into larger ones and marks them `compacted`.

-- One id per book, so chunk rows and their index entries carry an integer rather than three strings.
-- `asset_id` is '' for venue_a books.
CREATE TABLE log_books (
    id        INTEGER PRIMARY KEY,
    exchange  TEXT NOT NULL,
    market_id TEXT NOT NULL,
    asset_id  TEXT NOT NULL,
    UNIQUE (exchange, market_id, asset_id)
);

-- first/last: the chunk's first and last event (seq; receive time in Unix ms). `keyframe`: the first event is
-- a snapshot. `gaps`: how many gap events the chunk holds (the gap listing reads only chunks with some).
CREATE TABLE book_chunks (
    book      INTEGER NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    first_ts  INTEGER NOT NULL,
    last_ts   INTEGER NOT NULL,
    keyframe  INTEGER NOT NULL,
    gaps      INTEGER NOT NULL,
    compacted INTEGER NOT NULL DEFAULT 0,
    data      BLOB NOT NULL
);

-- Reads: a book's chunks by time.
CREATE INDEX book_chunks_by_time ON book_chunks (book, last_ts);
-- Compaction: the chunks not compacted yet, per book (a small index: compaction keeps up with the writer).
CREATE INDEX book_chunks_hot ON book_chunks (book, last_ts) WHERE compacted = 0;
-- The gaps route: the few chunks holding gaps.
CREATE INDEX book_chunks_gaps ON book_chunks (book, last_ts) WHERE gaps > 0;
-- Retention: the oldest chunks first (compacted chunks are appended late, so the rowid is not time order).
CREATE INDEX book_chunks_by_end ON book_chunks (last_ts);
