//! Daily partitions on PostgreSQL: the book snapshots (migration 0002) and the book log's chunks (migration
//! 0007) are tables partitioned by day, so retention drops whole partitions instead of deleting rows.
//!
//! - Partition of day `d` (days since the Unix epoch, UTC) of table `t`: `{t}_d{d}`, holding
//!   `[d × 86 400 000, (d + 1) × 86 400 000)` ms.
//! - Creation: the retention worker creates today's and the next days' partitions ahead
//!   ([`prepare`]); an insert that still meets a missing day (a backfill, a clock jump) creates it and retries
//!   once. Creating a partition takes only a `SHARE UPDATE EXCLUSIVE` lock on the parent, so reads and inserts
//!   continue; concurrent creators (several processes) are serialised by a transaction-level advisory lock.
//! - Retention ([`prune`]): `DETACH PARTITION … CONCURRENTLY` (which does not block queries on the parent), then
//!   `DROP TABLE` of the detached table. A detach interrupted half-way is finished with `FINALIZE`, and a table
//!   detached but not yet dropped is dropped on the next pass.

use std::collections::BTreeSet;

use crossbook_core::{BookSnapshot, Timestamp};
use sqlx::{AssertSqlSafe, Row, postgres::PgPool};

use crate::{
    StoreResult, codec,
    retention::{DAY_MS, Pruned},
};

const UPSERT_SNAPSHOTS: &str = "INSERT INTO book_snapshots (exchange, market_id, asset_id, ts, bids, asks, no_bids) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int8[], $5::bytea[], $6::bytea[], $7::bytea[]) \
     ON CONFLICT (exchange, market_id, asset_id, ts) DO UPDATE SET \
     bids = excluded.bids, asks = excluded.asks, no_bids = excluded.no_bids";

/// Serialises partition creation across processes (`pg_advisory_xact_lock` key).
const PARTITION_LOCK: i64 = 0x0c80_5b00_4b5a_0002;

/// The day (since the epoch, UTC) holding `ms`.
pub(crate) fn day_of(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS)
}

/// A table partitioned by day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Daily(pub &'static str);

/// The order-book snapshots.
pub(crate) const SNAPSHOTS: Daily = Daily("book_snapshots");

impl Daily {
    /// The name of day `day`'s partition.
    pub(crate) fn partition_name(self, day: i64) -> String {
        format!("{}_d{day}", self.0)
    }
}

/// Inserts a batch in one statement; creates the partitions of its days if one is missing, then retries.
pub(crate) async fn insert_snapshots(pool: &PgPool, batch: &[BookSnapshot]) -> StoreResult<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let batch = crate::postgres::last_per_key(batch, |s| {
        (s.exchange, s.market_id.clone(), s.asset_id.clone(), s.timestamp)
    });
    let text = |f: fn(&BookSnapshot) -> String| batch.iter().map(|s| f(s)).collect::<Vec<_>>();
    let blob = |f: fn(&BookSnapshot) -> Vec<u8>| batch.iter().map(|s| f(s)).collect::<Vec<_>>();
    let exchanges = text(|s| s.exchange.as_str().to_string());
    let markets = text(|s| s.market_id.clone());
    let assets = text(|s| codec::asset_key(s.asset_id.as_deref()).to_string());
    let times = batch.iter().map(|s| s.timestamp.millis()).collect::<Vec<_>>();
    let bids = blob(|s| codec::encode_ladder(&s.bids));
    let asks = blob(|s| codec::encode_ladder(&s.asks));
    let no_bids = blob(|s| codec::encode_ladder(&s.no_bids));
    let run = || {
        sqlx::query(UPSERT_SNAPSHOTS)
            .bind(&exchanges)
            .bind(&markets)
            .bind(&assets)
            .bind(&times)
            .bind(&bids)
            .bind(&asks)
            .bind(&no_bids)
            .execute(pool)
    };
    match run().await {
        Ok(_) => Ok(()),
        Err(e) if is_missing_partition(&e) => {
            let days: BTreeSet<i64> = times.iter().map(|t| day_of(*t)).collect();
            ensure_days(pool, SNAPSHOTS, days).await?;
            run().await?;
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// "no partition of relation … found for row" (SQLSTATE 23514, raised by the partition router).
pub(crate) fn is_missing_partition(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => d.code().as_deref() == Some("23514") && d.message().contains("no partition"),
        _ => false,
    }
}

/// Creates the partitions of `days` that do not exist yet.
pub(crate) async fn ensure_days(pool: &PgPool, table: Daily, days: impl IntoIterator<Item = i64>) -> StoreResult<()> {
    let existing = partitions(pool, table).await?;
    for day in days {
        if existing.iter().any(|p| p.day == day && p.attached) {
            continue;
        }
        let mut tx = pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(PARTITION_LOCK)
            .execute(&mut *tx)
            .await?;
        // Names and bounds are integers formatted here, never user input.
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS \"{}\" PARTITION OF {} FOR VALUES FROM ({}) TO ({})",
            table.partition_name(day),
            table.0,
            day * DAY_MS,
            (day + 1) * DAY_MS
        );
        sqlx::raw_sql(AssertSqlSafe(ddl)).execute(&mut *tx).await?;
        tx.commit().await?;
    }
    Ok(())
}

/// Creates the daily partitions covering `[from, until]`.
pub(crate) async fn prepare(pool: &PgPool, table: Daily, from: Timestamp, until: Timestamp) -> StoreResult<()> {
    ensure_days(pool, table, day_of(from.millis())..=day_of(until.millis())).await
}

/// A daily partition (or a detached leftover of one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Partition {
    pub day: i64,
    /// Attached to its parent table (possibly with a detach pending).
    pub attached: bool,
    /// A `DETACH … CONCURRENTLY` started but did not finish.
    pub detach_pending: bool,
}

/// Every table named like a partition of `table` in the current schema, attached or not, oldest first.
pub(crate) async fn partitions(pool: &PgPool, table: Daily) -> StoreResult<Vec<Partition>> {
    let rows = sqlx::query(
        "SELECT c.relname::text AS name, i.inhrelid IS NOT NULL AS attached, \
         coalesce(i.inhdetachpending, false) AS pending \
         FROM pg_class c \
         LEFT JOIN pg_inherits i ON i.inhrelid = c.oid AND i.inhparent = $1::regclass \
         WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace \
         AND starts_with(c.relname::text, $2)",
    )
    .bind(table.0)
    .bind(format!("{}_d", table.0))
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let name: String = r.try_get("name")?;
        let Some(day) = name
            .strip_prefix(&format!("{}_d", table.0))
            .and_then(|d| d.parse::<i64>().ok())
        else {
            continue;
        };
        out.push(Partition {
            day,
            attached: r.try_get("attached")?,
            detach_pending: r.try_get("pending")?,
        });
    }
    out.sort_by_key(|p| p.day);
    Ok(out)
}

/// Detaches and drops every partition whose day ends at or before `cutoff`.
pub(crate) async fn prune(pool: &PgPool, table: Daily, cutoff: Timestamp) -> StoreResult<Pruned> {
    let mut dropped = 0;
    for p in partitions(pool, table).await? {
        if (p.day + 1) * DAY_MS > cutoff.millis() {
            continue;
        }
        let name = table.partition_name(p.day);
        if p.attached {
            // CONCURRENTLY cannot run inside a transaction block; each statement here is its own.
            let how = if p.detach_pending { "FINALIZE" } else { "CONCURRENTLY" };
            sqlx::raw_sql(AssertSqlSafe(format!(
                "ALTER TABLE {} DETACH PARTITION \"{name}\" {how}",
                table.0
            )))
            .execute(pool)
            .await?;
        }
        sqlx::raw_sql(AssertSqlSafe(format!("DROP TABLE IF EXISTS \"{name}\"")))
            .execute(pool)
            .await?;
        dropped += 1;
        tracing::info!(partition = %name, "dropped an expired daily partition");
    }
    Ok(Pruned {
        rows: 0,
        partitions: dropped,
        done: true,
    })
}
