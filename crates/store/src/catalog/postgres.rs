//! The catalog on PostgreSQL: markets upserted as arrays (`UNNEST`) in one statement, and the market search for
//! needles of three characters or more, one relevance tier at a time.
//!
//! A single statement ("every match, ranked by tier then volume, one page") is right for a rare needle, but a
//! common one ("bitcoin" over a million markets) makes PostgreSQL fetch and sort every match: hundreds of
//! milliseconds. This is the plan the SQLite backend follows (`catalog/sqlite.rs`):
//!
//! 1. Count the matches, stopping at `SPARSE_LIMIT + 1` (trigram index). If there are few, the single
//!    statement is cheap: run it. For relevance, a probe of the first rows in volume order comes first
//!    ([`Tiered::dense`]): a needle with a page of matches there skips the count, which for a common needle
//!    costs more than the whole walk.
//! 2. Otherwise, for `newest`/`volume`/`liquidity`, walk the index of that order and stop after the page.
//! 3. For `relevance`, fill the page tier by tier (exact id, headline prefix, headline substring, other field),
//!    each tier in volume order, each read from the index naming its rows when it names few (the market-id
//!    index, a byte range on the lower-cased headline, the headline trigram index), else by walking the volume
//!    index, where dense matches fill a page after a few thousand rows.
//!
//! The planner cannot know which case it is in (trigram selectivity estimates are coarse), so the walks run
//! with bitmap scans disabled for that one transaction: the same role as SQLite's `INDEXED BY`.

use crossbook_core::{Market, Timestamp};
use sqlx::{Row, postgres::PgPool};

use super::{
    MarketQuery, MarketSort, StoredMarket, markets_of,
    search::{self, Needle, Tier},
};
use crate::{
    StoreResult,
    backend::{Exec, query},
    sql::{Dialect, Sql},
};

const D: Dialect = Dialect::Postgres;

/// At most this many matches count as "few": ranking them in one statement is cheap.
const SPARSE_LIMIT: i64 = 2_000;

/// At most this many rows in a tier are read from the index naming them and sorted; beyond it the tier is
/// walked in volume order.
const NAMED_LIMIT: i64 = 25_000;

/// Rows at the top of the volume order that [`Tiered::dense`] looks at.
const PROBE_ROWS: i64 = 4_000;
/// Matches among those rows that make a needle common (1 in 40: a walk in volume order fills a page of 100
/// within a few thousand rows), without counting it.
const PROBE_DENSE: i64 = 100;

/// The headline expression exactly as the indexes of migration 0006 are defined.
const HEAD: &str = "coalesce(m.title, m.question)";
/// The headline of a walked row (alias `w`).
const HEAD_W: &str = "coalesce(w.title, w.question)";

/// Pages up to this deep (`offset + limit`) try [`Tiered::first_pages`] first.
const FAST_MAX_ROWS: i64 = 200;
/// Rows at the top of the volume order that [`Tiered::first_pages`] walks at most per tier: a tier with a
/// page of hits among them (1 in 50 for a page of 20) is answered by the walk.
const FAST_WALK_ROWS: i64 = 1_000;
/// The headline-prefix tier is read from its index and sorted when it names at most this many rows.
const FAST_NAMED_LIMIT: i64 = 5_000;

/// The tiered search runs on the pool.
pub(super) struct Tiered<'a> {
    pub pool: &'a PgPool,
}

impl Tiered<'_> {
    pub(super) async fn search_markets(&self, q: &MarketQuery, n: &Needle) -> StoreResult<Vec<StoredMarket>> {
        // Counting the matches of a common needle through the trigram index costs tens of milliseconds (the
        // whole bitmap is built before the LIMIT applies), so for relevance (whose walks are in volume order)
        // a cheap look at the top of the volume order comes first: a needle with at least a page of matches
        // there is common, and its walks stop within those rows. Only the others are counted.
        let sort = search::market_sort(q, Some(n));
        // The first pages of a relevance search are answered by one statement when they can be (see
        // [`Tiered::first_pages`]); only the rest go through the probes and counts below.
        let mut sparse_top = false;
        if sort == MarketSort::Relevance && i64::from(q.offset) + i64::from(q.limit) <= FAST_MAX_ROWS {
            match self.first_pages(q, n).await? {
                Fast::Page(rows) => return Ok(rows),
                Fast::Short => sparse_top = true,
                Fast::Inexact => {}
            }
        }
        // A needle whose first three tiers left a page unfilled among the rows the fast path walked is not
        // dense at the top of the volume order either: the probe would only confirm it.
        let dense =
            sort == MarketSort::Relevance && !sparse_top && self.dense(q, |s| search::market_match(s, D, n)).await?;
        if !dense {
            let all = self
                .capped_count(q, SPARSE_LIMIT, |s| search::market_match(s, D, n))
                .await?;
            if all <= SPARSE_LIMIT {
                return super::search_markets_scan(self.pool, D, q, Some(n)).await;
            }
        }
        tracing::debug!(needle = %n.raw, ?sort, "common needle: reading ordered indexes");
        if sort != MarketSort::Relevance {
            return self.walk_rows(&search::market_search(D, q, Some(n))).await;
        }

        let mut skip = i64::from(q.offset);
        let mut out: Vec<StoredMarket> = Vec::new();
        for tier in [Tier::ExactId, Tier::Prefix, Tier::Contains, Tier::Other] {
            let missing = i64::from(q.limit) - out.len() as i64;
            if missing <= 0 {
                break;
            }
            let mut s = from_markets(q);
            // Whether the tier's rows come from an index that names them (else: a walk in volume order).
            let named = match tier {
                Tier::ExactId => true,
                // A tier is walked in volume order when its rows are dense at the top of that order (the walk
                // then meets a page of them within the probed rows) or too many to sort; otherwise it is read
                // from the index naming its rows and sorted, which costs what the tier holds however low its
                // volumes. A needle can be common and still sit in low-volume markets (a team name among
                // sports markets): walking for it would read most of the catalog.
                Tier::Prefix => {
                    let named = !self.dense(q, |s| prefix_range(s, n)).await?
                        && self.capped_count(q, NAMED_LIMIT, |s| prefix_range(s, n)).await? <= NAMED_LIMIT;
                    if named {
                        s.push(" AND ");
                        prefix_range(&mut s, n);
                    }
                    named
                }
                Tier::Contains => {
                    let named = !self.dense(q, |s| head_contains(s, n)).await?
                        && self.capped_count(q, NAMED_LIMIT, |s| head_contains(s, n)).await? <= NAMED_LIMIT;
                    if named {
                        s.push(" AND ");
                        head_contains(&mut s, n);
                    }
                    named
                }
                // The tier's predicate includes the match over every field, which the markets trigram index
                // serves.
                Tier::Other => !dense,
            };
            s.push(" AND ");
            search::market_tier_predicate(&mut s, D, n, tier, false);
            if skip > 0 {
                let mut c = Sql::new("SELECT count(*) AS n FROM (SELECT 1");
                c.push(&s.text[s.text.find(" FROM ").unwrap_or(0)..]);
                c.args = s.args.clone();
                c.push(" LIMIT ").int(skip).push(") x");
                let rows = if named {
                    self.count(&c).await?
                } else {
                    self.walk_count(&c).await?
                };
                if rows < skip {
                    skip -= rows;
                    continue;
                }
            }
            s.push(" ORDER BY m.volume DESC, m.market_id, m.exchange LIMIT ")
                .int(missing)
                .push(" OFFSET ")
                .int(skip);
            skip = 0;
            out.extend(if named {
                self.pool_rows(&s).await?
            } else {
                self.walk_rows(&s).await?
            });
        }
        Ok(out)
    }

    /// The first `offset + limit` rows of a relevance search in one statement, without counting: tier 0 from
    /// the market-id index; tier 1 from the headline-prefix index when it names at most [`FAST_NAMED_LIMIT`]
    /// rows (else by walking the first [`FAST_WALK_ROWS`] rows in volume order); tier 2 by that walk. Each
    /// branch runs only when the earlier ones may leave the page short (its gate is a one-time filter), and a
    /// walk stops at a page of hits, so a common needle costs a few hundred rows. The answer is exact when
    /// every tier before the last row's was read from an index (complete); otherwise the caller falls back.
    async fn first_pages(&self, q: &MarketQuery, n: &Needle) -> StoreResult<Fast> {
        let need = i64::from(q.offset) + i64::from(q.limit);
        // The rows of tier 1 by the prefix index, at most one more than the limit.
        let mut s = Sql::new("WITH p AS MATERIALIZED (SELECT m.id, m.volume, m.market_id, m.exchange FROM markets m");
        search::market_filters(&mut s, q);
        s.push(" AND ");
        prefix_range(&mut s, n);
        s.push(" AND NOT (");
        search::id_equals(&mut s, D, "m.market_id", n);
        s.push(&format!(") LIMIT {}), ", FAST_NAMED_LIMIT + 1));
        // Tier 0.
        s.push("t0 AS MATERIALIZED (SELECT m.id, m.volume, m.market_id, m.exchange FROM markets m");
        search::market_filters(&mut s, q);
        s.push(" AND ");
        search::id_equals(&mut s, D, "m.market_id", n);
        s.push(&format!(
            " ORDER BY m.volume DESC, m.market_id, m.exchange LIMIT {need}), \
             pc AS (SELECT count(*) AS n FROM p) \
             SELECT {}, u.tier, (SELECT n FROM pc) AS p_rows FROM (\
             (SELECT id, 0 AS tier FROM t0) UNION ALL \
             (SELECT id, 1 FROM p WHERE (SELECT n FROM pc) <= {FAST_NAMED_LIMIT} \
              ORDER BY volume DESC, market_id, exchange LIMIT {need}) UNION ALL ",
            crate::catalog::rows::MARKET_COLS
        ));
        // Tier 1 walked, when the index names too many rows.
        walk_branch(
            &mut s,
            q,
            1,
            &format!("(SELECT n FROM pc) > {FAST_NAMED_LIMIT}"),
            need,
            |s| {
                s.push(HEAD_W).push(" ILIKE ").text(&n.prefix).push(" AND NOT (");
                search::id_equals(s, D, "w.market_id", n);
                s.push(")");
            },
        );
        s.push(" UNION ALL ");
        // Tier 2 walked, when tiers 0 and 1 may leave the page short.
        walk_branch(
            &mut s,
            q,
            2,
            &format!(
                "((SELECT n FROM pc) > {FAST_NAMED_LIMIT} OR (SELECT n FROM pc) + (SELECT count(*) FROM t0) < {need})"
            ),
            need,
            |s| {
                s.push(HEAD_W).push(" ILIKE ").text(&n.contains);
                s.push(" AND NOT (")
                    .push(HEAD_W)
                    .push(" ILIKE ")
                    .text(&n.prefix)
                    .push(") AND NOT (");
                search::id_equals(s, D, "w.market_id", n);
                s.push(")");
            },
        );
        s.push(&format!(
            ") u JOIN markets m ON m.id = u.id ORDER BY u.tier, m.volume DESC, m.market_id, m.exchange LIMIT {need}"
        ));
        let rows = self.pool.rows(&s).await?;
        if (rows.len() as i64) < need {
            return Ok(Fast::Short);
        }
        let last_tier: i32 = rows[rows.len() - 1].try_get("tier")?;
        let prefix_named = rows[0].try_get::<i64, _>("p_rows")? <= FAST_NAMED_LIMIT;
        // Tier 0 is always complete, tier 1 when read from its index, tier 2 never (it is walked).
        if last_tier <= 1 || (last_tier == 2 && prefix_named) {
            let skip = q.offset as usize;
            Ok(Fast::Page(markets_of(&rows[skip.min(rows.len())..])?))
        } else {
            Ok(Fast::Inexact)
        }
    }

    /// Whether `pred` holds for at least [`PROBE_DENSE`] of the first [`PROBE_ROWS`] rows in volume order
    /// under the query's filters: a few milliseconds however common the needle. Only chooses a plan; a
    /// `false` is followed by an exact (capped) count.
    async fn dense(&self, q: &MarketQuery, pred: impl FnOnce(&mut Sql)) -> StoreResult<bool> {
        let mut s = Sql::new("SELECT count(*) AS n FROM (SELECT ");
        pred(&mut s);
        s.push(" AS hit FROM markets m");
        search::market_filters(&mut s, q);
        s.push(" ORDER BY m.volume DESC, m.market_id, m.exchange LIMIT ")
            .int(PROBE_ROWS)
            .push(") x WHERE hit");
        Ok(self.walk_count(&s).await? >= PROBE_DENSE)
    }

    /// How many active rows match `pred` under the query's filters, counting no further than `cap + 1`.
    async fn capped_count(&self, q: &MarketQuery, cap: i64, pred: impl FnOnce(&mut Sql)) -> StoreResult<i64> {
        let mut s = Sql::new("SELECT count(*) AS n FROM (SELECT 1 FROM markets m");
        search::market_filters(&mut s, q);
        s.push(" AND ");
        pred(&mut s);
        s.push(" LIMIT ").int(cap + 1).push(") x");
        self.count(&s).await
    }

    async fn count(&self, s: &Sql) -> StoreResult<i64> {
        let rows = self.pool.rows(s).await?;
        Ok(rows.first().map(|r| r.try_get::<i64, _>("n")).transpose()?.unwrap_or(0))
    }

    async fn pool_rows(&self, s: &Sql) -> StoreResult<Vec<StoredMarket>> {
        markets_of(&self.pool.rows(s).await?)
    }

    /// Runs `s` in a read-only transaction where the planner must walk an ordered index instead of collecting
    /// every trigram match in a bitmap first.
    async fn walk_rows(&self, s: &Sql) -> StoreResult<Vec<StoredMarket>> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET LOCAL enable_bitmapscan = off")
            .execute(&mut *tx)
            .await?;
        let rows = query(s).fetch_all(&mut *tx).await?;
        tx.commit().await?;
        markets_of(&rows)
    }

    async fn walk_count(&self, s: &Sql) -> StoreResult<i64> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET LOCAL enable_bitmapscan = off")
            .execute(&mut *tx)
            .await?;
        let rows = query(s).fetch_all(&mut *tx).await?;
        tx.commit().await?;
        Ok(rows.first().map(|r| r.try_get::<i64, _>("n")).transpose()?.unwrap_or(0))
    }
}

/// The outcome of [`Tiered::first_pages`].
enum Fast {
    /// The exact page.
    Page(Vec<StoredMarket>),
    /// Tiers 0–2 gave fewer rows than the page needs among the rows read: the needle is rare at the top.
    Short,
    /// A page, but a walked tier came before its last row: rows past the walk might rank higher.
    Inexact,
}

/// `(SELECT w.id, <tier> FROM (first FAST_WALK_ROWS rows in volume order) w WHERE <gate> AND <pred> ORDER BY
/// volume LIMIT need)`: a tier read by walking the top of the volume order, stopping at `need` hits. The gate
/// only refers to earlier results, so it is a one-time filter: the walk does not run when it is false.
fn walk_branch(s: &mut Sql, q: &MarketQuery, tier: i32, gate: &str, need: i64, pred: impl FnOnce(&mut Sql)) {
    s.push(&format!(
        "(SELECT w.id, {tier} FROM (SELECT m.id, m.title, m.question, m.market_id, m.exchange, m.volume FROM markets m"
    ));
    search::market_filters(s, q);
    s.push(&format!(
        " ORDER BY m.volume DESC, m.market_id, m.exchange LIMIT {FAST_WALK_ROWS}) w WHERE {gate} AND "
    ));
    pred(s);
    s.push(&format!(
        " ORDER BY w.volume DESC, w.market_id, w.exchange LIMIT {need})"
    ));
}

/// `SELECT <cols> FROM markets m WHERE <filters>`.
fn from_markets(q: &MarketQuery) -> Sql {
    let mut s = Sql::new("SELECT ");
    s.push(crate::catalog::rows::MARKET_COLS).push(" FROM markets m");
    search::market_filters(&mut s, q);
    s
}

/// The headline contains the needle (served by `markets_head_trgm`).
fn head_contains(s: &mut Sql, n: &Needle) {
    s.push(HEAD).push(" ILIKE ").text(&n.contains);
}

/// The headline starts with the needle: a byte range on `lower(headline)` (served by
/// `markets_head_lower_prefix`) narrowed by the exact case-insensitive test. The range is written with the
/// pattern operators because a `LIKE $1` with a bound parameter cannot use the index in a generic plan.
fn prefix_range(s: &mut Sql, n: &Needle) {
    let lower = format!("lower({HEAD})");
    s.push("(")
        .push(&lower)
        .push(" ~>=~ lower(")
        .text(&n.raw)
        .push(") AND ")
        .push(&lower)
        .push(" ~<~ (lower(")
        .text(&n.raw)
        .push(") || U&'\\+10FFFF') AND ")
        .push(HEAD)
        .push(" ILIKE ")
        .text(&n.prefix)
        .push(")");
}

const UPSERT_MARKETS: &str = concat!(
    "INSERT INTO markets (",
    super::market_insert_cols!(),
    ") SELECT u.*, $27, $27 FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
     $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int8[], \
     $15::int8[], $16::int8[], $17::int8[], $18::int8[], $19::int8[], $20::int8[], $21::int8[], $22::int8[], \
     $23::text[], $24::text[], $25::text[], $26::text[]) AS u ON CONFLICT (exchange, market_id) DO UPDATE SET ",
    super::market_update_set!()
);

pub(super) async fn upsert_markets(pool: &PgPool, items: &[Market], seen_at: Timestamp) -> StoreResult<()> {
    if items.is_empty() {
        return Ok(());
    }
    // One statement may not update a row twice, so a batch naming a market twice keeps its last state.
    let items = crate::postgres::last_per_key(items, |m| (m.exchange, m.market_id.clone()));
    let col = |f: fn(&Market) -> Option<String>| items.iter().map(|m| f(m)).collect::<Vec<_>>();
    let int = |f: fn(&Market) -> Option<i64>| items.iter().map(|m| f(m)).collect::<Vec<_>>();
    sqlx::query(UPSERT_MARKETS)
        .bind(col(|m| Some(m.exchange.as_str().to_string())))
        .bind(col(|m| Some(m.market_id.clone())))
        .bind(col(|m| Some(m.event_id.clone())))
        .bind(col(|m| Some(m.series_id.clone())))
        .bind(col(|m| m.title.clone()))
        .bind(col(|m| m.subtitle.clone()))
        .bind(col(|m| Some(m.question.clone())))
        .bind(col(|m| m.description.clone()))
        .bind(col(|m| m.slug.clone()))
        .bind(col(|m| m.url.clone()))
        .bind(col(|m| m.category.clone()))
        .bind(col(|m| Some(m.status.as_str().to_string())))
        .bind(col(|m| m.interval_code.map(|c| c.as_str().to_string())))
        .bind(int(|m| m.window_start.map(Timestamp::millis)))
        .bind(int(|m| m.window_end.map(Timestamp::millis)))
        .bind(int(|m| Some(m.volume.micros())))
        .bind(int(|m| Some(m.volume_24h.micros())))
        .bind(int(|m| Some(m.liquidity.micros())))
        .bind(int(|m| Some(m.open_interest.micros())))
        .bind(int(|m| m.last_yes_price.map(|p| p.micros())))
        .bind(int(|m| m.last_no_price.map(|p| p.micros())))
        .bind(int(|m| m.settled_at.map(Timestamp::millis)))
        .bind(col(|m| m.source_id.clone()))
        .bind(col(|m| m.yes_token_id.clone()))
        .bind(col(|m| m.no_token_id.clone()))
        .bind(col(|m| m.resolution_source.clone()))
        .bind(seen_at.millis())
        .execute(pool)
        .await?;
    Ok(())
}

impl crate::postgres::PgStore {
    /// `EXPLAIN` of the statement a market search with `q` runs, one line per plan node. For tests and
    /// diagnostics: it shows whether the trigram indexes serve the search.
    pub async fn explain_market_search(&self, q: &MarketQuery) -> StoreResult<Vec<String>> {
        let needle = Needle::new(q.q.as_deref());
        let mut s = search::market_search(D, q, needle.as_ref());
        s.text.insert_str(0, "EXPLAIN ");
        // Planner settings are per session: run on one connection, inside a transaction so `SET LOCAL` ends
        // with it. Sequential scans are discouraged so the answer does not depend on how few rows a test has.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET LOCAL enable_seqscan = off").execute(&mut *tx).await?;
        let rows = query(&s).fetch_all(&mut *tx).await?;
        tx.rollback().await?;
        rows.iter().map(|r| Ok(r.try_get::<String, _>(0)?)).collect()
    }
}
