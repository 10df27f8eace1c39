//! Watchlists: each customer's watched events with their thresholds, and the events anyone watches.

use crossbook_core::{Amount, Exchange, Timestamp};

use super::WatchEntry;
use crate::{
    StoreError, StoreResult,
    backend::Exec,
    codec::{self, Cols},
    sql::Sql,
};

pub(super) const WATCH_COLS: &str =
    "w.id, w.customer_id, w.exchange, w.event_id, w.threshold, w.created_at, e.title AS event_title";

/// `SELECT` of watchlist entries with their whale counts since `since` (0 without it); the caller adds the
/// `WHERE` and order.
pub(super) fn watch_select(since: Option<Timestamp>) -> Sql {
    let mut s = Sql::new("SELECT ");
    s.push(WATCH_COLS);
    match since {
        Some(since) => {
            s.push(
                ", (SELECT count(*) FROM trades t WHERE t.exchange = w.exchange AND t.event_id = w.event_id \
                 AND t.notional >= w.threshold AND t.executed_at >= ",
            )
            .int(since.millis())
            .push(") AS whale_count");
        }
        None => {
            s.push(", CAST(0 AS BIGINT) AS whale_count");
        }
    }
    s.push(" FROM whale_watchlist w LEFT JOIN events e ON e.exchange = w.exchange AND e.event_id = w.event_id");
    s
}

pub(super) fn watch_row(r: &impl Cols) -> StoreResult<WatchEntry> {
    Ok(WatchEntry {
        id: r.int("id")?,
        customer_id: r.int("customer_id")?,
        exchange: codec::exchange(&r.text("exchange")?)?,
        event_id: r.text("event_id")?,
        event_title: r.opt_text("event_title")?,
        threshold: Amount::from_micros(r.int("threshold")?),
        created_at: Timestamp::from_millis(r.int("created_at")?),
        whale_count: r.int("whale_count")?,
    })
}

pub(super) async fn add_watch<E: Exec>(
    ex: &E,
    customer_id: i64,
    exchange: Exchange,
    event_id: &str,
    threshold: Amount,
    now: Timestamp,
) -> StoreResult<i64> {
    let mut s =
        Sql::new("INSERT INTO whale_watchlist (customer_id, exchange, event_id, threshold, created_at) VALUES (");
    s.int(customer_id)
        .push(", ")
        .text(exchange.as_str())
        .push(", ")
        .text(event_id)
        .push(", ")
        .int(threshold.micros())
        .push(", ")
        .int(now.millis())
        .push(") ON CONFLICT (customer_id, exchange, event_id) DO NOTHING RETURNING id");
    match ex.rows(&s).await?.first() {
        Some(r) => r.int("id"),
        None => Err(StoreError::Conflict(format!(
            "{exchange} event {event_id} is already on the watchlist"
        ))),
    }
}

pub(super) async fn get_watch<E: Exec>(
    ex: &E,
    customer_id: i64,
    id: i64,
    since: Timestamp,
) -> StoreResult<Option<WatchEntry>> {
    let mut s = watch_select(Some(since));
    s.push(" WHERE w.customer_id = ")
        .int(customer_id)
        .push(" AND w.id = ")
        .int(id);
    ex.rows(&s).await?.first().map(watch_row).transpose()
}

pub(super) async fn find_watch<E: Exec>(
    ex: &E,
    customer_id: i64,
    exchange: Exchange,
    event_id: &str,
    since: Timestamp,
) -> StoreResult<Option<WatchEntry>> {
    let mut s = watch_select(Some(since));
    s.push(" WHERE w.customer_id = ")
        .int(customer_id)
        .push(" AND w.exchange = ")
        .text(exchange.as_str())
        .push(" AND w.event_id = ")
        .text(event_id);
    ex.rows(&s).await?.first().map(watch_row).transpose()
}

pub(super) async fn list_watch<E: Exec>(
    ex: &E,
    customer_id: i64,
    since: Option<Timestamp>,
) -> StoreResult<Vec<WatchEntry>> {
    let mut s = watch_select(since);
    s.push(" WHERE w.customer_id = ")
        .int(customer_id)
        .push(" ORDER BY w.created_at, w.id");
    ex.rows(&s).await?.iter().map(watch_row).collect()
}

pub(super) async fn set_watch_threshold<E: Exec>(
    ex: &E,
    customer_id: i64,
    id: i64,
    threshold: Amount,
) -> StoreResult<bool> {
    let mut s = Sql::new("UPDATE whale_watchlist SET threshold = ");
    s.int(threshold.micros())
        .push(" WHERE customer_id = ")
        .int(customer_id)
        .push(" AND id = ")
        .int(id);
    Ok(ex.exec(&s).await? > 0)
}

pub(super) async fn delete_watch<E: Exec>(
    ex: &E,
    customer_id: i64,
    id: i64,
) -> StoreResult<Option<(Exchange, String)>> {
    let mut s = Sql::new("DELETE FROM whale_watchlist WHERE customer_id = ");
    s.int(customer_id)
        .push(" AND id = ")
        .int(id)
        .push(" RETURNING exchange, event_id");
    match ex.rows(&s).await?.first() {
        Some(r) => Ok(Some((codec::exchange(&r.text("exchange")?)?, r.text("event_id")?))),
        None => Ok(None),
    }
}

pub(super) async fn delete_watch_by_event<E: Exec>(
    ex: &E,
    customer_id: i64,
    exchange: Exchange,
    event_id: &str,
) -> StoreResult<Option<i64>> {
    let mut s = Sql::new("DELETE FROM whale_watchlist WHERE customer_id = ");
    s.int(customer_id)
        .push(" AND exchange = ")
        .text(exchange.as_str())
        .push(" AND event_id = ")
        .text(event_id)
        .push(" RETURNING id");
    ex.rows(&s).await?.first().map(|r| r.int("id")).transpose()
}

pub(super) async fn watched_events<E: Exec>(ex: &E) -> StoreResult<Vec<(Exchange, String)>> {
    let s = Sql::new("SELECT DISTINCT exchange, event_id FROM whale_watchlist ORDER BY exchange, event_id");
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| Ok((codec::exchange(&r.text("exchange")?)?, r.text("event_id")?)))
        .collect()
}
