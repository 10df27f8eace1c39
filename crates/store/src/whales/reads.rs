//! The whale-trade reads of the feeds, the stats and the catalog: every read takes its targets as a `VALUES`
//! list joined to the trades index, so one statement serves each shape.

use crossbook_core::{Amount, Price, Timestamp};

use super::{
    EventActivity, MarketWhales, MarketWhalesPage, TargetStats, WhaleAggregate, WhalePage, WhaleQuery, WhaleTarget,
    WhaleTrade,
};
use crate::{
    StoreError, StoreResult,
    backend::Exec,
    codec::{self, Cols},
    sql::{self, Sql},
};

/// `WITH w (k, exchange, event_id, min_notional, market_id) AS (VALUES …)`: the targets as a table, `k` their
/// position, `market_id` NULL for a whole event.
pub(super) fn targets_cte(s: &mut Sql, targets: &[WhaleTarget]) {
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
pub(super) const WHALES_OF_TARGETS: &str = " FROM w CROSS JOIN trades t WHERE t.exchange = w.exchange AND t.event_id = w.event_id \
     AND t.notional >= w.min_notional AND (w.market_id IS NULL OR t.market_id = w.market_id)";

/// `CAST(coalesce(sum(expr), 0) AS BIGINT)`: PostgreSQL sums BIGINT as NUMERIC.
pub(super) fn sum(expr: &str) -> String {
    format!("CAST(coalesce(sum({expr}), 0) AS BIGINT)")
}

pub(super) fn dates(s: &mut Sql, start: Option<Timestamp>, end: Option<Timestamp>) {
    if let Some(st) = start {
        s.push(" AND t.executed_at >= ").int(st.millis());
    }
    if let Some(en) = end {
        s.push(" AND t.executed_at <= ").int(en.millis());
    }
}

pub(super) const TRADE_COLS: &str = "t.id, t.exchange, t.event_id, t.market_id, t.source_trade_id, t.executed_at, t.taker_side, \
     t.outcome, t.price, t.size, t.notional, e.title AS event_title, m.slug AS market_slug, \
     coalesce(m.title, m.question) AS market_title";

pub(super) fn trade_row(r: &impl Cols) -> StoreResult<WhaleTrade> {
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

pub(super) async fn whale_trades<E: Exec>(ex: &E, q: &WhaleQuery) -> StoreResult<WhalePage> {
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

pub(super) async fn whale_stats<E: Exec>(
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

pub(super) async fn whale_markets<E: Exec>(
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

pub(super) async fn event_activity<E: Exec>(
    ex: &E,
    targets: &[WhaleTarget],
    since: Timestamp,
) -> StoreResult<Vec<EventActivity>> {
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
