//! The sampled order-book snapshots that databases written before the event log hold: the historical
//! routes still read them for times before a book's log begins, and retention removes them.
//!
//! A "book" is one `(exchange, market_id, asset_id)`: a venue_a market (no asset id) or one venue_b token.
//! Snapshots are unique per book and millisecond; a second write for the same millisecond replaces the first.

use crossbook_core::{BookSnapshot, Exchange, Timestamp};

use std::collections::HashMap;

use crate::{
    StoreResult,
    backend::{Backend, Exec, Pools},
    books::history::{BookHistoryQuery, HistoryWindow},
    codec::{self, Cols},
    retention::{self, Pruned},
    sql::{Dialect, Sql},
};

mod sqlite;

/// The order-book snapshot concern.
#[async_trait::async_trait]
pub trait SnapshotStore: Send + Sync {
    /// Inserts a batch in one transaction. A snapshot for a book and millisecond already stored replaces it.
    async fn insert_snapshots(&self, batch: &[BookSnapshot]) -> StoreResult<()>;
    /// Reads snapshots of one book; see [`BookHistoryQuery`].
    async fn snapshots(&self, q: &BookHistoryQuery) -> StoreResult<Vec<BookSnapshot>>;
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
            let q = BookHistoryQuery {
                exchange,
                market_id: market_id.to_string(),
                asset_id: asset_id.map(str::to_string),
                window: HistoryWindow::Latest {
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

// ------------------------------------------------------------------------------------------------ shared SQL

async fn snapshots<E: Exec>(ex: &E, d: Dialect, q: &BookHistoryQuery) -> StoreResult<Vec<BookSnapshot>> {
    let asset = codec::asset_key(q.asset_id.as_deref());
    let book = |sql: &mut Sql, alias: &str| {
        sql.push(alias)
            .push("exchange = ")
            .text(q.exchange.as_str())
            .push(" AND ")
            .push(alias)
            .push("market_id = ")
            .text(&q.market_id)
            .push(" AND ")
            .push(alias)
            .push("asset_id = ")
            .text(asset);
    };
    let mut sql;
    match q.window {
        HistoryWindow::Latest { before } => {
            sql = Sql::new("SELECT ts, bids, asks, no_bids FROM book_snapshots WHERE ");
            book(&mut sql, "");
            if let Some(b) = before {
                sql.push(" AND ts < ").int(b.millis());
            }
            sql.push(" ORDER BY ts DESC LIMIT ").int(i64::from(q.limit));
        }
        HistoryWindow::Range {
            start,
            end,
            bucket_ms,
            after,
        } => {
            // A skip scan in one statement. `walk` finds the first snapshot of each non-empty bucket, one index
            // seek per bucket (the first at or after the start of the next bucket), so empty stretches cost
            // nothing; the outer query then seeks the last snapshot of each of those buckets. Two seeks per row,
            // however dense the series: a page never reads the rows between the ones it returns.
            let size = bucket_ms.max(1);
            let from = match after {
                Some(a) => crossbook_core::history::next_bucket_start(a.millis(), size).max(start.millis()),
                None => start.millis(),
            };
            sql = Sql::new("WITH RECURSIVE walk(n, first) AS (SELECT 1, (SELECT ts FROM book_snapshots WHERE ");
            book(&mut sql, "");
            sql.push(" AND ts >= ")
                .int(from)
                .push(" AND ts <= ")
                .int(end.millis())
                .push(" ORDER BY ts LIMIT 1) UNION ALL SELECT w.n + 1, (SELECT s.ts FROM book_snapshots s WHERE ");
            book(&mut sql, "s.");
            sql.push(" AND s.ts >= (w.first / ")
                .int(size)
                .push(" + 1) * ")
                .int(size)
                .push(" AND s.ts <= ")
                .int(end.millis())
                .push(" ORDER BY s.ts LIMIT 1) FROM walk w WHERE w.first IS NOT NULL AND w.n < ")
                .int(i64::from(q.limit))
                .push("), lasts(ts) AS (SELECT (SELECT s.ts FROM book_snapshots s WHERE ");
            book(&mut sql, "s.");
            sql.push(" AND s.ts >= w.first AND s.ts < (w.first / ")
                .int(size)
                .push(" + 1) * ")
                .int(size)
                .push(" AND s.ts <= ")
                .int(end.millis())
                .push(" ORDER BY s.ts DESC LIMIT 1) FROM walk w WHERE w.first IS NOT NULL) SELECT ts AS n FROM lasts");
            // Then the ladders of exactly those rows, by primary key. Two statements rather than a join: joined,
            // both planners may pick a plan that scans the whole book (SQLite runs the walk inside a scan of the
            // book; PostgreSQL hashes the walk and scans the book when its statistics are missing).
            let mut times: Vec<i64> = ex
                .rows(&sql)
                .await?
                .iter()
                .map(|r| r.int("n"))
                .collect::<StoreResult<_>>()?;
            if times.is_empty() {
                return Ok(Vec::new());
            }
            times.sort_unstable();
            match d {
                // SQLite seeks the primary key once per value of an IN list.
                Dialect::Sqlite => {
                    sql = Sql::new("SELECT ts, bids, asks, no_bids FROM book_snapshots WHERE ");
                    book(&mut sql, "");
                    sql.push(" AND ts IN (");
                    for (i, t) in times.iter().enumerate() {
                        if i > 0 {
                            sql.push(", ");
                        }
                        sql.int(*t);
                    }
                    sql.push(") ORDER BY ts");
                }
                // PostgreSQL, with the book's statistics as they usually are (a partition filled within the
                // day), reads the whole book and filters it by the IN list (~250 ms for a day of 1-second
                // snapshots), and hash-joins a VALUES list the same way. One point lookup per row, joined by
                // UNION ALL, is a primary-key seek each whatever the statistics (~3 ms for 200 rows).
                Dialect::Postgres => {
                    sql = Sql::new("SELECT * FROM (");
                    for (i, t) in times.iter().enumerate() {
                        if i > 0 {
                            sql.push(" UNION ALL ");
                        }
                        sql.push("SELECT ts, bids, asks, no_bids FROM book_snapshots WHERE ");
                        book(&mut sql, "");
                        sql.push(" AND ts = ").int(*t);
                    }
                    sql.push(") x ORDER BY ts");
                }
            }
        }
    }
    ex.rows(&sql)
        .await?
        .iter()
        .map(|r| codec::snapshot_row(r, q.exchange, &q.market_id, q.asset_id.as_deref()))
        .collect()
}

/// See [`SnapshotStore::snapshots_as_of`]: one statement, each time paired with the book's latest snapshot at
/// or before it by an index seek.
async fn snapshots_as_of<E: Exec>(
    ex: &E,
    exchange: Exchange,
    market_id: &str,
    asset_id: Option<&str>,
    at: &[Timestamp],
) -> StoreResult<Vec<Option<BookSnapshot>>> {
    let mut times: Vec<i64> = at.iter().map(|t| t.millis()).collect();
    times.sort_unstable();
    times.dedup();
    if times.is_empty() {
        return Ok(Vec::new());
    }
    let asset = codec::asset_key(asset_id);
    let book = |sql: &mut Sql, alias: &str| {
        sql.push(alias)
            .push("exchange = ")
            .text(exchange.as_str())
            .push(" AND ")
            .push(alias)
            .push("market_id = ")
            .text(market_id)
            .push(" AND ")
            .push(alias)
            .push("asset_id = ")
            .text(asset);
    };
    let mut sql = Sql::new("WITH v(at) AS (VALUES ");
    for (i, t) in times.iter().enumerate() {
        if i > 0 {
            sql.push(", ");
        }
        sql.push("(").int(*t).push(")");
    }
    // CROSS JOIN: the times drive the loop (see `snapshots`).
    sql.push(") SELECT v.at AS at, b.ts, b.bids, b.asks, b.no_bids FROM v CROSS JOIN book_snapshots b WHERE ");
    book(&mut sql, "b.");
    sql.push(" AND b.ts = (SELECT s.ts FROM book_snapshots s WHERE ");
    book(&mut sql, "s.");
    sql.push(" AND s.ts <= v.at ORDER BY s.ts DESC LIMIT 1)");
    let mut found: HashMap<i64, BookSnapshot> = HashMap::new();
    for r in ex.rows(&sql).await? {
        found.insert(r.int("at")?, codec::snapshot_row(&r, exchange, market_id, asset_id)?);
    }
    Ok(at.iter().map(|t| found.get(&t.millis()).cloned()).collect())
}

async fn delete_snapshots_before<E: Exec>(ex: &E, cutoff: Timestamp) -> StoreResult<u64> {
    let mut q = Sql::new("DELETE FROM book_snapshots WHERE ts < ");
    q.int(cutoff.millis());
    ex.exec(&q).await
}

#[async_trait::async_trait]
impl<B: Backend> SnapshotStore for B {
    async fn insert_snapshots(&self, batch: &[BookSnapshot]) -> StoreResult<()> {
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::insert_snapshots(write, batch).await,
            // Inserts meet the daily partitions that retention manages (a missing day is created).
            Pools::Postgres(pool) => retention::postgres::insert_snapshots(pool, batch).await,
        }
    }

    async fn snapshots(&self, q: &BookHistoryQuery) -> StoreResult<Vec<BookSnapshot>> {
        snapshots(self.reader(), B::DIALECT, q).await
    }

    async fn delete_snapshots_before(&self, cutoff: Timestamp) -> StoreResult<u64> {
        delete_snapshots_before(self.writer(), cutoff).await
    }

    async fn snapshots_as_of(
        &self,
        exchange: Exchange,
        market_id: &str,
        asset_id: Option<&str>,
        at: &[Timestamp],
    ) -> StoreResult<Vec<Option<BookSnapshot>>> {
        snapshots_as_of(self.reader(), exchange, market_id, asset_id, at).await
    }

    async fn prune_snapshots(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned> {
        match self.pools() {
            Pools::Sqlite { read, write } => retention::sqlite::prune(read, write, cutoff, max_rows).await,
            Pools::Postgres(pool) => retention::postgres::prune(pool, retention::postgres::SNAPSHOTS, cutoff).await,
        }
    }

    async fn prepare_snapshots(&self, from: Timestamp, until: Timestamp) -> StoreResult<()> {
        match self.pools() {
            Pools::Sqlite { .. } => Ok(()),
            Pools::Postgres(pool) => {
                retention::postgres::prepare(pool, retention::postgres::SNAPSHOTS, from, until).await
            }
        }
    }
}
