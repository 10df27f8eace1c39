-- The `ts` index repeated every snapshot's book key (up to ~120 bytes for a venue_b token) a second time, and
-- served only retention. Retention now walks the books through the primary key instead (sqlite/history.rs),
-- which brings a 10-level snapshot from ~280 to ~150 bytes on disk.
DROP INDEX IF EXISTS book_snapshots_ts;
