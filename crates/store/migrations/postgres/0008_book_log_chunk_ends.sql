-- The book as each chunk of the book event log leaves it, so a history bucket of whole minutes is one chunk
-- row read instead of a replay of the minute (chunks never hold events of two UTC minutes from now on).
--
-- `last_book`: the book after the chunk's last event, in the compact form of `book_log/chunk.rs`
-- (`encode_book`): either "no book" (the chunk ends in a gap) or the three ladders. NULL when not known:
-- chunks written before this migration, and chunks not compacted yet (compaction fills it in).
ALTER TABLE book_chunks ADD COLUMN last_book BYTEA;
