//! Retention of order-book snapshots, per backend, because the two store the book differently: SQLite deletes
//! in short batches so its single writer stays free for ingestion; PostgreSQL keeps the book in daily
//! partitions (created ahead and on insert) and drops whole partitions. [`crate::SnapshotStore::prune_snapshots`]
//! calls these; the delivery log's retention is part of the webhooks concern.

pub(crate) mod postgres;
pub(crate) mod sqlite;

/// What one [`crate::SnapshotStore::prune_snapshots`] or [`crate::BookLogStore::prune_log`] step removed.
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
pub use crossbook_core::time::DAY_MS;
