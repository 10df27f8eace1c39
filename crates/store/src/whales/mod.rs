//! Whale tracking (spec §2.13, §4.4; contracts §7): per-customer watchlists, the whale-trade reads of the
//! feeds and stats, and the daily public pool.
//!
//! A whale is not stored separately: every trade is stored once with its exact notional (`abs(price × size)`
//! in micro-dollars, see [`crate::TradeStore`]), and a whale is the filter `notional >= threshold` on a tracked
//! event. The reads take a list of [`WhaleTarget`]s, one per event with the threshold that applies to it (a
//! watchlist entry's own threshold, a request's `min_trade_size`, or the public minimum), so the same queries
//! serve the personal feed, the public feed, the stats and the catalog.
//!
//! The reads are written once over both backends' pools (the statements are the same text): the targets become
//! a `VALUES` list joined to `trades` through the `trades_event_notional` index
//! (`exchange, event_id, notional, executed_at, id`), so counting and ordering the whale trades of each event
//! reads only index entries at or above its threshold, and the page's rows are read last.

use crossbook_core::{Amount, Exchange, Outcome, Price, TakerSide, Timestamp};

use crate::{
    StoreError, StoreResult,
    backend::{Backend, Exec},
    codec::{self, Cols},
    sql::{self, Sql},
};

/// One watchlist entry, as listed (with the event's title and its whale trades since a time).
#[derive(Debug, Clone, PartialEq)]
pub struct WatchEntry {
    pub id: i64,
    pub customer_id: i64,
    pub exchange: Exchange,
    pub event_id: String,
    /// The event's title, when the catalog has the event.
    pub event_title: Option<String>,
    /// Notional at or above which a trade of this event is a whale for this customer.
    pub threshold: Amount,
    pub created_at: Timestamp,
    /// Whale trades (at or above `threshold`) executed at or after the `since` of the read.
    pub whale_count: i64,
}

/// An event (or one market of it) and the notional at or above which its trades count as whales.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WhaleTarget {
    pub exchange: Exchange,
    pub event_id: String,
    pub min_notional: Amount,
    /// Only this market of the event.
    pub market_id: Option<String>,
}

impl WhaleTarget {
    /// Every market of an event.
    pub fn event(exchange: Exchange, event_id: &str, min_notional: Amount) -> Self {
        WhaleTarget {
            exchange,
            event_id: event_id.to_string(),
            min_notional,
            market_id: None,
        }
    }
}

/// The whale trades of one market over a period.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketWhales {
    pub exchange: Exchange,
    pub market_id: String,
    pub event_id: String,
    /// The market's slug (venue_b) when known.
    pub market_slug: Option<String>,
    /// `coalesce(title, question)`, when the catalog has the market.
    pub market_title: Option<String>,
    pub whales: WhaleAggregate,
    /// The newest whale trade's execution time.
    pub last_trade_at: Timestamp,
}

/// A page of [`MarketWhales`], highest whale volume first, and how many markets there are in all.
#[derive(Debug, Clone, Default)]
pub struct MarketWhalesPage {
    pub markets: Vec<MarketWhales>,
    pub total: i64,
}

/// A page of whale trades over a set of targets.
#[derive(Debug, Clone)]
pub struct WhaleQuery {
    pub targets: Vec<WhaleTarget>,
    /// Inclusive bounds on `executed_at`.
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub limit: u32,
    pub offset: u32,
    /// The window of [`WhalePage::recent`] starts here (the feeds' 24h stats).
    pub stats_since: Timestamp,
}

/// A stored trade with the catalog fields the feeds show.
#[derive(Debug, Clone, PartialEq)]
pub struct WhaleTrade {
    /// The trade's row id.
    pub id: i64,
    pub exchange: Exchange,
    pub event_id: String,
    pub event_title: Option<String>,
    pub market_id: String,
    /// The market's slug (venue_b) when known.
    pub market_slug: Option<String>,
    /// The market's headline, `coalesce(title, question)`, when the catalog has the market.
    pub market_title: Option<String>,
    pub source_trade_id: String,
    pub executed_at: Timestamp,
    pub taker_side: TakerSide,
    pub outcome: Outcome,
    pub price: Price,
    pub size: Amount,
    pub notional: Amount,
}

/// Count and notional sum of a set of whale trades.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WhaleAggregate {
    pub trade_count: i64,
    pub total_volume: Amount,
}

impl WhaleAggregate {
    /// `total_volume / trade_count`, rounded half-up to the micro-dollar; zero without trades.
    pub fn average(&self) -> Amount {
        if self.trade_count <= 0 {
            return Amount::ZERO;
        }
        let n = i128::from(self.trade_count);
        let v = i128::from(self.total_volume.micros());
        let q = v / n;
        let r = v % n;
        Amount::from_micros((if r * 2 >= n { q + 1 } else { q }) as i64)
    }
}

/// A page of the feed, its total and the recent aggregate.
#[derive(Debug, Clone, Default)]
pub struct WhalePage {
    pub trades: Vec<WhaleTrade>,
    /// Every whale trade matching the query (dates included), for `pagination.total`.
    pub total: i64,
    /// Whale trades of the targets since `stats_since` (dates of the query ignored).
    pub recent: WhaleAggregate,
}

/// Per-target stats over a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TargetStats {
    pub whales: WhaleAggregate,
    /// Distinct markets among the whale trades.
    pub market_count: i64,
}

/// Activity of one event over a period, whatever the size of its trades (the public catalog).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventActivity {
    pub trades: WhaleAggregate,
    /// Trades at or above the target's threshold.
    pub whale_trades: i64,
}

/// An event the public pool may draw, with its 24h volume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolCandidate {
    pub exchange: Exchange,
    pub event_id: String,
    pub volume_24h: Amount,
}

/// The whale concern.
#[async_trait::async_trait]
pub trait WhaleStore: Send + Sync {
    /// Adds an event to a customer's watchlist; [`StoreError::Conflict`] when it is already there.
    async fn add_watch(
        &self,
        customer_id: i64,
        exchange: Exchange,
        event_id: &str,
        threshold: Amount,
        now: Timestamp,
    ) -> StoreResult<i64>;
    /// One of the customer's entries (`None` if the id is not theirs), whale counts since `since`.
    async fn get_watch(&self, customer_id: i64, id: i64, since: Timestamp) -> StoreResult<Option<WatchEntry>>;
    /// The customer's entry for an event, whale counts since `since`.
    async fn find_watch(
        &self,
        customer_id: i64,
        exchange: Exchange,
        event_id: &str,
        since: Timestamp,
    ) -> StoreResult<Option<WatchEntry>>;
    /// The customer's watchlist, oldest entry first, whale counts since `since` (left at 0 without it: the
    /// feed needs only the thresholds).
    async fn list_watch(&self, customer_id: i64, since: Option<Timestamp>) -> StoreResult<Vec<WatchEntry>>;
    /// Changes an entry's threshold; `false` if the id is not the customer's.
    async fn set_watch_threshold(&self, customer_id: i64, id: i64, threshold: Amount) -> StoreResult<bool>;
    /// Removes an entry by id; the removed `(exchange, event_id)`, `None` if the id is not the customer's.
    async fn delete_watch(&self, customer_id: i64, id: i64) -> StoreResult<Option<(Exchange, String)>>;
    /// Removes the customer's entry for an event; its id, `None` if not tracked.
    async fn delete_watch_by_event(
        &self,
        customer_id: i64,
        exchange: Exchange,
        event_id: &str,
    ) -> StoreResult<Option<i64>>;
    /// Every event on any watchlist (what ingestion must follow).
    async fn watched_events(&self) -> StoreResult<Vec<(Exchange, String)>>;

    /// A page of whale trades over `q.targets`, newest first (ties by id, newest first), its total and the
    /// aggregate since `q.stats_since`.
    async fn whale_trades(&self, q: &WhaleQuery) -> StoreResult<WhalePage>;
    /// Whale stats of each target since `since` (all time when `None`), in the order of `targets`.
    async fn whale_stats(&self, targets: &[WhaleTarget], since: Option<Timestamp>) -> StoreResult<Vec<TargetStats>>;
    /// The markets with whale trades of `targets` executed at or after `since`, highest whale volume first
    /// (ties by venue and market id), a page at a time.
    async fn whale_markets(
        &self,
        targets: &[WhaleTarget],
        since: Option<Timestamp>,
        limit: u32,
        offset: u32,
    ) -> StoreResult<MarketWhalesPage>;
    /// Every trade of each target since `since`, and how many were whales, in the order of `targets`.
    async fn event_activity(&self, targets: &[WhaleTarget], since: Timestamp) -> StoreResult<Vec<EventActivity>>;

    /// The stored public pool of `date` (`YYYY-MM-DD`), in unlock order; empty when not drawn yet.
    async fn pool(&self, date: &str) -> StoreResult<Vec<(Exchange, String)>>;
    /// Stores the pool of `date` unless one is stored already, and returns the stored one (so concurrent
    /// drawers all end up with the first pool written).
    async fn save_pool(&self, date: &str, events: &[(Exchange, String)]) -> StoreResult<Vec<(Exchange, String)>>;
    /// Active events by 24h volume (the event's own figure, else the sum of its markets'), most first, ties
    /// by exchange and id; at most `limit`.
    async fn pool_candidates(&self, limit: u32) -> StoreResult<Vec<PoolCandidate>>;
}

// ------------------------------------------------------------------------------------------------ shared SQL

const WATCH_COLS: &str =
    "w.id, w.customer_id, w.exchange, w.event_id, w.threshold, w.created_at, e.title AS event_title";

/// `SELECT` of watchlist entries with their whale counts since `since` (0 without it); the caller adds the
/// `WHERE` and order.
fn watch_select(since: Option<Timestamp>) -> Sql {
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

fn watch_row(r: &impl Cols) -> StoreResult<WatchEntry> {
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

async fn add_watch<E: Exec>(
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

async fn get_watch<E: Exec>(ex: &E, customer_id: i64, id: i64, since: Timestamp) -> StoreResult<Option<WatchEntry>> {
    let mut s = watch_select(Some(since));
    s.push(" WHERE w.customer_id = ")
        .int(customer_id)
        .push(" AND w.id = ")
        .int(id);
    ex.rows(&s).await?.first().map(watch_row).transpose()
}

async fn find_watch<E: Exec>(
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

async fn list_watch<E: Exec>(ex: &E, customer_id: i64, since: Option<Timestamp>) -> StoreResult<Vec<WatchEntry>> {
    let mut s = watch_select(since);
    s.push(" WHERE w.customer_id = ")
        .int(customer_id)
        .push(" ORDER BY w.created_at, w.id");
    ex.rows(&s).await?.iter().map(watch_row).collect()
}

async fn set_watch_threshold<E: Exec>(ex: &E, customer_id: i64, id: i64, threshold: Amount) -> StoreResult<bool> {
    let mut s = Sql::new("UPDATE whale_watchlist SET threshold = ");
    s.int(threshold.micros())
        .push(" WHERE customer_id = ")
        .int(customer_id)
        .push(" AND id = ")
        .int(id);
    Ok(ex.exec(&s).await? > 0)
}

async fn delete_watch<E: Exec>(ex: &E, customer_id: i64, id: i64) -> StoreResult<Option<(Exchange, String)>> {
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

async fn delete_watch_by_event<E: Exec>(
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

async fn watched_events<E: Exec>(ex: &E) -> StoreResult<Vec<(Exchange, String)>> {
    let s = Sql::new("SELECT DISTINCT exchange, event_id FROM whale_watchlist ORDER BY exchange, event_id");
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| Ok((codec::exchange(&r.text("exchange")?)?, r.text("event_id")?)))
        .collect()
}

/// `WITH w (k, exchange, event_id, min_notional, market_id) AS (VALUES …)`: the targets as a table, `k` their
/// position, `market_id` NULL for a whole event.
fn targets_cte(s: &mut Sql, targets: &[WhaleTarget]) {
    s.push("WITH w (k, exchange, event_id, min_notional, market_id) AS (VALUES ");
    for (i, t) in targets.iter().enumerate() {
        if i > 0 {
            s.push(", ");
        }
        s.push("(")
            .int(i as i64)
            .push(", ")
            .text(t.exchange.as_str())
            .push(", ")
            .text(&t.event_id)
            .push(", ")
            .int(t.min_notional.micros())
            .push(", ");
        match &t.market_id {
            Some(m) => s.text(m),
            // Typed, so PostgreSQL reads an all-NULL column as text.
            None => s.push("CAST(NULL AS TEXT)"),
        };
        s.push(")");
    }
    s.push(") ");
}

/// ` FROM w CROSS JOIN trades t WHERE <t is a whale of w>`. `CROSS JOIN` makes SQLite keep the few targets as
/// the outer loop (PostgreSQL plans the same nested loop by itself), so each target is one index range.
const WHALES_OF_TARGETS: &str = " FROM w CROSS JOIN trades t WHERE t.exchange = w.exchange AND t.event_id = w.event_id \
     AND t.notional >= w.min_notional AND (w.market_id IS NULL OR t.market_id = w.market_id)";

/// `CAST(coalesce(sum(expr), 0) AS BIGINT)`: PostgreSQL sums BIGINT as NUMERIC.
fn sum(expr: &str) -> String {
    format!("CAST(coalesce(sum({expr}), 0) AS BIGINT)")
}

fn dates(s: &mut Sql, start: Option<Timestamp>, end: Option<Timestamp>) {
    if let Some(st) = start {
        s.push(" AND t.executed_at >= ").int(st.millis());
    }
    if let Some(en) = end {
        s.push(" AND t.executed_at <= ").int(en.millis());
    }
}

const TRADE_COLS: &str = "t.id, t.exchange, t.event_id, t.market_id, t.source_trade_id, t.executed_at, t.taker_side, \
     t.outcome, t.price, t.size, t.notional, e.title AS event_title, m.slug AS market_slug, \
     coalesce(m.title, m.question) AS market_title";

fn trade_row(r: &impl Cols) -> StoreResult<WhaleTrade> {
    Ok(WhaleTrade {
        id: r.int("id")?,
        exchange: codec::exchange(&r.text("exchange")?)?,
        event_id: r.text("event_id")?,
        event_title: r.opt_text("event_title")?,
        market_id: r.text("market_id")?,
        market_slug: r.opt_text("market_slug")?,
        market_title: r.opt_text("market_title")?,
        source_trade_id: r.text("source_trade_id")?,
        executed_at: Timestamp::from_millis(r.int("executed_at")?),
        taker_side: codec::taker_side(&r.text("taker_side")?)?,
        outcome: codec::outcome(&r.text("outcome")?)?,
        price: Price::from_micros(r.int("price")?),
        size: Amount::from_micros(r.int("size")?),
        notional: Amount::from_micros(r.int("notional")?),
    })
}

async fn whale_trades<E: Exec>(ex: &E, q: &WhaleQuery) -> StoreResult<WhalePage> {
    if q.targets.is_empty() {
        return Ok(WhalePage::default());
    }
    // 1. The page's ids, from the index alone; then only those rows, with their catalog fields.
    let mut s = Sql::default();
    targets_cte(&mut s, &q.targets);
    s.push("SELECT ")
        .push(TRADE_COLS)
        .push(" FROM (SELECT t.id, t.executed_at")
        .push(WHALES_OF_TARGETS);
    dates(&mut s, q.start, q.end);
    s.push(" ORDER BY t.executed_at DESC, t.id DESC");
    sql::page(&mut s, q.limit, q.offset);
    s.push(
        ") p JOIN trades t ON t.id = p.id LEFT JOIN events e ON e.exchange = t.exchange AND e.event_id = t.event_id \
         LEFT JOIN markets m ON m.exchange = t.exchange AND m.market_id = t.market_id \
         ORDER BY p.executed_at DESC, p.id DESC",
    );
    let trades = ex
        .rows(&s)
        .await?
        .iter()
        .map(trade_row)
        .collect::<StoreResult<Vec<_>>>()?;

    // 2. The total (with the dates) and the recent aggregate (without them), in one pass over the index.
    let since = q.stats_since.millis();
    let mut s = Sql::default();
    targets_cte(&mut s, &q.targets);
    s.push("SELECT CAST(coalesce(sum(CASE WHEN 1 = 1");
    dates(&mut s, q.start, q.end);
    s.push(" THEN 1 ELSE 0 END), 0) AS BIGINT) AS total, CAST(coalesce(sum(CASE WHEN t.executed_at >= ")
        .int(since)
        .push(" THEN 1 ELSE 0 END), 0) AS BIGINT) AS recent_count, CAST(coalesce(sum(CASE WHEN t.executed_at >= ")
        .int(since)
        .push(" THEN t.notional ELSE 0 END), 0) AS BIGINT) AS recent_volume")
        .push(WHALES_OF_TARGETS);
    let rows = ex.rows(&s).await?;
    let r = rows.first().ok_or(StoreError::NotFound)?;
    Ok(WhalePage {
        trades,
        total: r.int("total")?,
        recent: WhaleAggregate {
            trade_count: r.int("recent_count")?,
            total_volume: Amount::from_micros(r.int("recent_volume")?),
        },
    })
}

async fn whale_stats<E: Exec>(
    ex: &E,
    targets: &[WhaleTarget],
    since: Option<Timestamp>,
) -> StoreResult<Vec<TargetStats>> {
    let mut out = vec![TargetStats::default(); targets.len()];
    if targets.is_empty() {
        return Ok(out);
    }
    let mut s = Sql::default();
    targets_cte(&mut s, targets);
    s.push("SELECT w.k, count(*) AS n, ")
        .push(&sum("t.notional"))
        .push(" AS volume, count(DISTINCT t.market_id) AS markets")
        .push(WHALES_OF_TARGETS);
    dates(&mut s, since, None);
    s.push(" GROUP BY w.k");
    for r in ex.rows(&s).await? {
        let k = r.int("k")? as usize;
        if let Some(slot) = out.get_mut(k) {
            *slot = TargetStats {
                whales: WhaleAggregate {
                    trade_count: r.int("n")?,
                    total_volume: Amount::from_micros(r.int("volume")?),
                },
                market_count: r.int("markets")?,
            };
        }
    }
    Ok(out)
}

async fn whale_markets<E: Exec>(
    ex: &E,
    targets: &[WhaleTarget],
    since: Option<Timestamp>,
    limit: u32,
    offset: u32,
) -> StoreResult<MarketWhalesPage> {
    if targets.is_empty() {
        return Ok(MarketWhalesPage::default());
    }
    // A trade matching two targets (an event and one of its markets) counts once: grouped by trade first.
    let mut s = Sql::default();
    targets_cte(&mut s, targets);
    s.push("SELECT g.exchange, g.market_id, g.event_id, g.n, g.volume, g.last_at, m.slug AS market_slug, \
         coalesce(m.title, m.question) AS market_title FROM (SELECT t.exchange, t.market_id, min(t.event_id) AS event_id, \
         count(*) AS n, ")
        .push(&sum("t.notional"))
        .push(" AS volume, max(t.executed_at) AS last_at FROM (SELECT DISTINCT t.id")
        .push(WHALES_OF_TARGETS);
    dates(&mut s, since, None);
    s.push(
        ") x JOIN trades t ON t.id = x.id GROUP BY t.exchange, t.market_id ORDER BY volume DESC, t.exchange, \
         t.market_id",
    );
    sql::page(&mut s, limit, offset);
    s.push(
        ") g LEFT JOIN markets m ON m.exchange = g.exchange AND m.market_id = g.market_id \
         ORDER BY g.volume DESC, g.exchange, g.market_id",
    );
    let markets = ex
        .rows(&s)
        .await?
        .iter()
        .map(|r| {
            Ok(MarketWhales {
                exchange: codec::exchange(&r.text("exchange")?)?,
                market_id: r.text("market_id")?,
                event_id: r.text("event_id")?,
                market_slug: r.opt_text("market_slug")?,
                market_title: r.opt_text("market_title")?,
                whales: WhaleAggregate {
                    trade_count: r.int("n")?,
                    total_volume: Amount::from_micros(r.int("volume")?),
                },
                last_trade_at: Timestamp::from_millis(r.int("last_at")?),
            })
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let mut s = Sql::default();
    targets_cte(&mut s, targets);
    s.push("SELECT count(*) AS n FROM (SELECT t.exchange, t.market_id")
        .push(WHALES_OF_TARGETS);
    dates(&mut s, since, None);
    s.push(" GROUP BY t.exchange, t.market_id) x");
    let rows = ex.rows(&s).await?;
    let total = rows.first().map(|r| r.int("n")).transpose()?.unwrap_or(0);
    Ok(MarketWhalesPage { markets, total })
}

async fn event_activity<E: Exec>(ex: &E, targets: &[WhaleTarget], since: Timestamp) -> StoreResult<Vec<EventActivity>> {
    let mut out = vec![EventActivity::default(); targets.len()];
    if targets.is_empty() {
        return Ok(out);
    }
    let mut s = Sql::default();
    targets_cte(&mut s, targets);
    s.push("SELECT w.k, count(*) AS n, ")
        .push(&sum("t.notional"))
        .push(" AS volume, ")
        .push(&sum("CASE WHEN t.notional >= w.min_notional THEN 1 ELSE 0 END"))
        .push(
            " AS whales FROM w CROSS JOIN trades t WHERE t.exchange = w.exchange AND t.event_id = w.event_id \
             AND t.executed_at >= ",
        )
        .int(since.millis())
        .push(" GROUP BY w.k");
    for r in ex.rows(&s).await? {
        let k = r.int("k")? as usize;
        if let Some(slot) = out.get_mut(k) {
            *slot = EventActivity {
                trades: WhaleAggregate {
                    trade_count: r.int("n")?,
                    total_volume: Amount::from_micros(r.int("volume")?),
                },
                whale_trades: r.int("whales")?,
            };
        }
    }
    Ok(out)
}

async fn pool<E: Exec>(ex: &E, date: &str) -> StoreResult<Vec<(Exchange, String)>> {
    let mut s = Sql::new("SELECT exchange, event_id FROM whale_pool WHERE pool_date = ");
    s.text(date).push(" ORDER BY rank");
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| Ok((codec::exchange(&r.text("exchange")?)?, r.text("event_id")?)))
        .collect()
}

async fn save_pool<E: Exec>(ex: &E, date: &str, events: &[(Exchange, String)]) -> StoreResult<Vec<(Exchange, String)>> {
    if !events.is_empty() {
        // One statement: a concurrent drawer's rows conflict from the first rank on, so one pool wins whole.
        let mut s = Sql::new("INSERT INTO whale_pool (pool_date, rank, exchange, event_id) VALUES ");
        for (i, (exchange, event_id)) in events.iter().enumerate() {
            if i > 0 {
                s.push(", ");
            }
            s.push("(")
                .text(date)
                .push(", ")
                .int(i as i64)
                .push(", ")
                .text(exchange.as_str())
                .push(", ")
                .text(event_id)
                .push(")");
        }
        s.push(" ON CONFLICT (pool_date, rank) DO NOTHING");
        ex.exec(&s).await?;
    }
    pool(ex, date).await
}

async fn pool_candidates<E: Exec>(ex: &E, limit: u32) -> StoreResult<Vec<PoolCandidate>> {
    let mut s = Sql::new(
        "SELECT e.exchange, e.event_id, coalesce(e.volume_24h, (SELECT CAST(coalesce(sum(m.volume_24h), 0) AS BIGINT) \
         FROM markets m WHERE m.exchange = e.exchange AND m.event_id = e.event_id)) AS volume \
         FROM events e WHERE e.status = 'active' ORDER BY volume DESC, e.exchange, e.event_id LIMIT ",
    );
    s.int(i64::from(limit));
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| {
            Ok(PoolCandidate {
                exchange: codec::exchange(&r.text("exchange")?)?,
                event_id: r.text("event_id")?,
                volume_24h: Amount::from_micros(r.int("volume")?),
            })
        })
        .collect()
}

#[async_trait::async_trait]
impl<B: Backend> WhaleStore for B {
    async fn add_watch(
        &self,
        customer_id: i64,
        exchange: Exchange,
        event_id: &str,
        threshold: Amount,
        now: Timestamp,
    ) -> StoreResult<i64> {
        add_watch(self.writer(), customer_id, exchange, event_id, threshold, now).await
    }
    async fn get_watch(&self, customer_id: i64, id: i64, since: Timestamp) -> StoreResult<Option<WatchEntry>> {
        get_watch(self.reader(), customer_id, id, since).await
    }
    async fn find_watch(
        &self,
        customer_id: i64,
        exchange: Exchange,
        event_id: &str,
        since: Timestamp,
    ) -> StoreResult<Option<WatchEntry>> {
        find_watch(self.reader(), customer_id, exchange, event_id, since).await
    }
    async fn list_watch(&self, customer_id: i64, since: Option<Timestamp>) -> StoreResult<Vec<WatchEntry>> {
        list_watch(self.reader(), customer_id, since).await
    }
    async fn set_watch_threshold(&self, customer_id: i64, id: i64, threshold: Amount) -> StoreResult<bool> {
        set_watch_threshold(self.writer(), customer_id, id, threshold).await
    }
    async fn delete_watch(&self, customer_id: i64, id: i64) -> StoreResult<Option<(Exchange, String)>> {
        delete_watch(self.writer(), customer_id, id).await
    }
    async fn delete_watch_by_event(
        &self,
        customer_id: i64,
        exchange: Exchange,
        event_id: &str,
    ) -> StoreResult<Option<i64>> {
        delete_watch_by_event(self.writer(), customer_id, exchange, event_id).await
    }
    async fn watched_events(&self) -> StoreResult<Vec<(Exchange, String)>> {
        watched_events(self.reader()).await
    }
    async fn whale_trades(&self, q: &WhaleQuery) -> StoreResult<WhalePage> {
        whale_trades(self.reader(), q).await
    }
    async fn whale_stats(&self, targets: &[WhaleTarget], since: Option<Timestamp>) -> StoreResult<Vec<TargetStats>> {
        whale_stats(self.reader(), targets, since).await
    }
    async fn whale_markets(
        &self,
        targets: &[WhaleTarget],
        since: Option<Timestamp>,
        limit: u32,
        offset: u32,
    ) -> StoreResult<MarketWhalesPage> {
        whale_markets(self.reader(), targets, since, limit, offset).await
    }
    async fn event_activity(&self, targets: &[WhaleTarget], since: Timestamp) -> StoreResult<Vec<EventActivity>> {
        event_activity(self.reader(), targets, since).await
    }
    async fn pool(&self, date: &str) -> StoreResult<Vec<(Exchange, String)>> {
        pool(self.reader(), date).await
    }
    async fn save_pool(&self, date: &str, events: &[(Exchange, String)]) -> StoreResult<Vec<(Exchange, String)>> {
        save_pool(self.writer(), date, events).await
    }
    async fn pool_candidates(&self, limit: u32) -> StoreResult<Vec<PoolCandidate>> {
        pool_candidates(self.reader(), limit).await
    }
}
