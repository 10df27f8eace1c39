//! Retention of order-book snapshots, per backend, because the two store the book differently: SQLite deletes
//! in short batches so its single writer stays free for ingestion; PostgreSQL keeps the book in daily
//! partitions (created ahead and on insert) and drops whole partitions. [`crate::BookStore::prune_snapshots`]
//! calls these; the delivery log's retention is part of the webhooks concern.

pub(crate) mod postgres;
pub(crate) mod sqlite;
