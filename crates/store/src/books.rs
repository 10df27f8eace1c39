//! Order-book snapshots. Ingestion writes them in batches through one writer (at most one per book per
//! second); the historical routes read them.
//!
//! A "book" is one `(exchange, market_id, asset_id)`: a venue_a market (no asset id) or one venue_b token.
//! Snapshots are unique per book and millisecond; a second write for the same millisecond replaces the first.

use crossbook_core::{BookSnapshot, Exchange, Timestamp};

use crate::StoreResult;

/// Which snapshots of one book to read (the historical routes, contracts §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotQuery {
    pub exchange: Exchange,
    pub market_id: String,
    /// The venue_b token; `None` for venue_a books. A venue_b market has one book per token, so a caller
    /// wanting both tokens reads each one.
    pub asset_id: Option<String>,
    pub window: SnapshotWindow,
    /// Page size.
    pub limit: u32,
}

/// The two read shapes of the historical routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotWindow {
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

/// The order-book snapshot concern.
#[async_trait::async_trait]
pub trait BookStore: Send + Sync {
    /// Inserts a batch in one transaction. A snapshot for a book and millisecond already stored replaces it.
    async fn insert_snapshots(&self, batch: &[BookSnapshot]) -> StoreResult<()>;
    /// Reads snapshots of one book; see [`SnapshotQuery`].
    async fn snapshots(&self, q: &SnapshotQuery) -> StoreResult<Vec<BookSnapshot>>;
    /// Deletes snapshots older than `cutoff` (retention); returns how many were deleted.
    async fn delete_snapshots_before(&self, cutoff: Timestamp) -> StoreResult<u64>;

    /// For each time in `at`, the book's latest snapshot at or before it (`None` when there is none), in the
    /// order of `at`. One statement for the whole list: the unified route pairs each venue_b YES row with the
    /// NO token's book as of the same moment.
    async fn snapshots_as_of(
        &self,
        exchange: Exchange,
        market_id: &str,
        asset_id: Option<&str>,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Option<BookSnapshot>>> {
        // Fallback for stores without a single-statement version (test doubles): one read per time.
        let mut out = Vec::with_capacity(at.len());
        for t in at {
            let q = SnapshotQuery {
                exchange,
                market_id: market_id.to_string(),
                asset_id: asset_id.map(str::to_string),
                window: SnapshotWindow::Latest {
                    before: Some(Timestamp::from_millis(t.millis().saturating_add(1))),
                },
                limit: 1,
            };
            out.push(self.snapshots(&q).await?.pop());
        }
        Ok(out)
    }

    /// One step of retention, run by the retention worker until it reports `done`: removes snapshots older
    /// than `cutoff` without holding up ingestion or reads.
    ///
    /// - SQLite: deletes at most `max_rows` of the oldest rows in one short write transaction (the single
    ///   writer is busy for one small batch at a time, so ingestion's inserts interleave with retention).
    /// - PostgreSQL: detaches (`CONCURRENTLY`) and drops every daily partition that ends at or before
    ///   `cutoff`; rows of the day holding `cutoff` stay until that whole day has passed (at most one day
    ///   more than the retention period). `max_rows` is not used.
    async fn prune_snapshots(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned> {
        let _ = max_rows;
        let rows = self.delete_snapshots_before(cutoff).await?;
        Ok(Pruned {
            rows,
            partitions: 0,
            done: true,
        })
    }

    /// Prepares storage for snapshots stamped from `from` to `until`: on PostgreSQL creates the daily
    /// partitions ahead of time (inserts also create a missing one on demand); nothing to do on SQLite.
    async fn prepare_snapshots(&self, from: Timestamp, until: Timestamp) -> StoreResult<()> {
        let _ = (from, until);
        Ok(())
    }
}

/// What one [`BookStore::prune_snapshots`] step removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Rows deleted one by one (SQLite). Rows of dropped partitions are not counted.
    pub rows: u64,
    /// Daily partitions dropped whole (PostgreSQL).
    pub partitions: u64,
    /// Nothing older than the cutoff is left to remove (as far as this backend prunes).
    pub done: bool,
}

/// The length of a PostgreSQL snapshot partition, and of the day retention reasons in.
pub const DAY_MS: i64 = 86_400_000;
