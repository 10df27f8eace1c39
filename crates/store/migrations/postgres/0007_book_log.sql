-- The book event log (every book change, as snapshots, deltas and gaps), stored as chunks: runs of one book's
-- consecutive events in the compact binary form of `book_log/chunk.rs`.
--
-- `book_chunks` is partitioned by day of `first_ts` like `book_snapshots` (migration 0002): partitions
-- "book_chunks_d<d>" are created ahead of time and on demand, and retention drops whole days. The writer
-- appends small chunks (one per book per flush); compaction merges a book's small chunks into larger ones and
-- marks them `compacted`.

-- One id per book, so chunk rows and their index entries carry an integer rather than three strings.
-- `asset_id` is '' for venue_a books.
CREATE TABLE log_books (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exchange  TEXT COLLATE "C" NOT NULL,
    market_id TEXT COLLATE "C" NOT NULL,
    asset_id  TEXT COLLATE "C" NOT NULL,
    UNIQUE (exchange, market_id, asset_id)
);

-- first/last: the chunk's first and last event (seq; receive time in Unix ms). `keyframe`: the first event is
-- a snapshot. `gaps`: how many gap events the chunk holds (the gap listing reads only chunks with some).
CREATE TABLE book_chunks (
    book      BIGINT NOT NULL,
    first_seq BIGINT NOT NULL,
    last_seq  BIGINT NOT NULL,
    first_ts  BIGINT NOT NULL,
    last_ts   BIGINT NOT NULL,
    keyframe  SMALLINT NOT NULL,
    gaps      INTEGER NOT NULL,
    compacted SMALLINT NOT NULL DEFAULT 0,
    data      BYTEA NOT NULL
) PARTITION BY RANGE (first_ts);

-- Reads: a book's chunks by time.
CREATE INDEX book_chunks_by_time ON book_chunks (book, last_ts);
-- Compaction: the chunks not compacted yet, per book.
CREATE INDEX book_chunks_hot ON book_chunks (book, last_ts) WHERE compacted = 0;
-- The gaps route: the few chunks holding gaps.
CREATE INDEX book_chunks_gaps ON book_chunks (book, last_ts) WHERE gaps > 0;
