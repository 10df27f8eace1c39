//! The catalog on SQLite: markets upserted row by row in one `BEGIN IMMEDIATE` transaction, and the indexed
//! market search: FTS5 trigram candidates when they are few, a walk of an ordered index when they are many,
//! so a page never needs to rank every match.

use crossbook_core::{Market, Timestamp};
use sqlx::sqlite::SqlitePool;

use super::{
    MarketQuery, MarketSort, StoredMarket, markets_of,
    search::{self, Needle, Tier},
};
use crate::{
    StoreResult,
    backend::Exec,
    codec::Cols,
    sql::{Dialect, Sql},
    sqlite::SqliteStore,
};

const D: Dialect = Dialect::Sqlite;

/// Most text matches ranked directly. Below it, the candidates named by the FTS index are filtered, ranked and
/// paged in one statement. Above it, matches make up a sizeable share of the catalog, so walking an index in
/// the requested order meets a page of them after a few thousand rows; see `Indexed::search_markets`.
const SPARSE_LIMIT: i64 = 2_000;

/// The indexed search runs on the reader pool.
pub(super) struct Indexed<'a> {
    pub read: &'a SqlitePool,
}

impl Indexed<'_> {
    async fn count(&self, sql: &Sql) -> StoreResult<i64> {
        let rows = self.read.rows(sql).await?;
        rows.first().map_or(Ok(0), |r| r.int("n"))
    }

    /// The sum of the (capped) candidate counts of `sources`.
    async fn count_all(&self, sources: &[Source], n: &Needle) -> StoreResult<i64> {
        let mut total = 0;
        for src in sources {
            total += self.count(&count(*src, n)).await?;
        }
        Ok(total)
    }

    /// The indexed market search (needle of 3+ characters).
    ///
    /// 1. Count the candidates each index names (headline FTS, other-fields FTS, interval code), each count
    ///    stopping at `SPARSE_LIMIT + 1`. If there are at most `SPARSE_LIMIT` in all, one statement filters,
    ///    ranks and pages exactly those rows.
    /// 2. Otherwise the needle is common. For `newest`/`volume`/`liquidity` one statement walks the index of that
    ///    order and stops after the page: with matches this dense, a page is met after a few thousand rows.
    /// 3. For `relevance` the result is the concatenation of four tiers (exact id, headline prefix, headline
    ///    substring, other field), each ordered by volume. Tiers are filled in order until the page is full;
    ///    each tier is read from its own index when that index names few rows (the market id index, a
    ///    case-insensitive range on the headline index, the headline FTS, the other-fields FTS), or by walking
    ///    the volume index when it names many.
    ///
    /// Every tier predicate is exclusive and computed in SQL, so a page is the same slice a full ranking of
    /// every match would give, without ranking every match. Case folding: FTS folds Unicode, LIKE only ASCII,
    /// so a row matching only through non-ASCII case folding ranks as "other field" (or, on the walk of a very
    /// common needle, is missed); ASCII text is exact.
    pub(super) async fn search_markets(&self, q: &MarketQuery, n: &Needle) -> StoreResult<Vec<StoredMarket>> {
        let sort = search::market_sort(q, Some(n));
        let mut rest_sources = vec![Source::Rest];
        if n.interval.is_some() {
            rest_sources.push(Source::Interval);
        }
        // The other-fields count is only needed when the headline count leaves the total open, or when the page
        // reaches the "other field" tier; common needles skip it.
        let head = self.count(&count(Source::Head, n)).await?;
        let mut rest = None;
        if head <= SPARSE_LIMIT {
            let r = self.count_all(&rest_sources, n).await?;
            if head + r <= SPARSE_LIMIT {
                return markets_of(&self.read.rows(&rank_candidates(q, n, sort)).await?);
            }
            rest = Some(r);
        }
        tracing::debug!(needle = %n.raw, head, ?rest, ?sort, "common needle: walking ordered indexes");
        if sort != MarketSort::Relevance {
            let mut s = select(crate::catalog::rows::MARKET_COLS, walk(q, sort));
            s.push(" AND ");
            search::market_match(&mut s, D, n);
            search::market_order(&mut s, D, sort, Some(n));
            crate::sql::page(&mut s, q.limit, q.offset);
            return markets_of(&self.read.rows(&s).await?);
        }

        // Tiers are read in order. Rows before `offset` are counted, never loaded: a deep page costs a walk, not
        // memory.
        let mut skip = i64::from(q.offset);
        let mut out: Vec<StoredMarket> = Vec::new();
        for tier in [Tier::ExactId, Tier::Prefix, Tier::Contains, Tier::Other] {
            let missing = i64::from(q.limit) - out.len() as i64;
            if missing <= 0 {
                break;
            }
            // `indexed`: the statement reads candidates from an index that already checked the text.
            let (mut s, indexed) = match tier {
                Tier::ExactId => (from_markets(q, " INDEXED BY markets_market_id_nocase"), true),
                Tier::Prefix if self.count(&count(Source::Prefix, n)).await? <= SPARSE_LIMIT => {
                    let mut s = from_markets(q, " INDEXED BY markets_headline_nocase");
                    s.push(" AND ");
                    headline_range(&mut s, "m.", n);
                    (s, true)
                }
                Tier::Contains if head <= SPARSE_LIMIT => {
                    let mut s = from_markets(q, NOT_INDEXED);
                    candidates_in(&mut s, &[Source::Head], n);
                    (s, true)
                }
                Tier::Other
                    if match rest {
                        Some(r) => r,
                        None => self.count_all(&rest_sources, n).await?,
                    } <= SPARSE_LIMIT =>
                {
                    let mut s = from_markets(q, NOT_INDEXED);
                    candidates_in(&mut s, &rest_sources, n);
                    (s, true)
                }
                Tier::Prefix | Tier::Contains | Tier::Other => (walk(q, MarketSort::Volume), false),
            };
            s.push(" AND ");
            search::market_tier_predicate(&mut s, D, n, tier, indexed);
            if skip > 0 {
                // How many rows of this tier the offset skips, counting no further than the offset.
                let mut c = select("1", s.clone());
                c.text.insert_str(0, "SELECT count(*) AS n FROM (");
                c.push(" LIMIT ").int(skip).push(")");
                let rows = self.count(&c).await?;
                if rows < skip {
                    skip -= rows;
                    continue;
                }
            }
            let mut s = select(crate::catalog::rows::MARKET_COLS, s);
            s.push(" ORDER BY m.volume DESC, m.market_id, m.exchange LIMIT ")
                .int(missing)
                .push(" OFFSET ")
                .int(skip);
            skip = 0;
            out.extend(markets_of(&self.read.rows(&s).await?)?);
        }
        Ok(out)
    }
}

impl SqliteStore {
    /// `EXPLAIN QUERY PLAN` of the statements a market search with `q` starts with, one line per plan step.
    /// For tests and diagnostics: they show which index serves the search.
    pub async fn explain_market_search(&self, q: &MarketQuery) -> StoreResult<Vec<String>> {
        let needle = Needle::new(q.q.as_deref());
        let statements = match &needle {
            Some(n) if n.tiered() && q.event_id.is_none() => {
                vec![
                    count(Source::Head, n),
                    count(Source::Rest, n),
                    rank_candidates(q, n, search::market_sort(q, Some(n))),
                ]
            }
            n => vec![search::market_search(D, q, n.as_ref())],
        };
        let mut lines = Vec::new();
        for mut s in statements {
            s.text.insert_str(0, "EXPLAIN QUERY PLAN ");
            for r in self.read.rows(&s).await? {
                lines.push(r.text("detail")?);
            }
        }
        Ok(lines)
    }
}

/// An index naming the markets that match a needle in one way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The headline contains the needle (FTS).
    Head,
    /// Another searchable field contains the needle (FTS).
    Rest,
    /// The interval code equals the needle.
    Interval,
    /// The headline starts with the needle (range on the headline index).
    Prefix,
}

/// `SELECT <rowid> FROM …`: the markets `src` names for `n`.
fn source_select(s: &mut Sql, src: Source, n: &Needle) {
    match src {
        Source::Head => {
            s.push("SELECT rowid FROM markets_head_fts WHERE markets_head_fts MATCH ")
                .text(&n.fts(&[], false));
        }
        Source::Rest => {
            s.push("SELECT rowid FROM markets_rest_fts WHERE markets_rest_fts MATCH ")
                .text(&n.fts(&[], false));
        }
        Source::Interval => {
            let code = n.interval.map_or("", |c| c.as_str());
            s.push("SELECT id FROM markets WHERE interval_code = ").text(code);
        }
        Source::Prefix => {
            s.push("SELECT id FROM markets INDEXED BY markets_headline_nocase WHERE ");
            headline_range(s, "", n);
        }
    }
}

/// `coalesce(title, question)` starts with the needle, ignoring ASCII case, as a range the headline index
/// serves: `[needle, needle + U+10FFFF)` under NOCASE, which compares ASCII-lowercased bytes.
fn headline_range(s: &mut Sql, alias: &str, n: &Needle) {
    let head = format!("coalesce({alias}title, {alias}question) COLLATE NOCASE");
    s.push(&head)
        .push(" >= ")
        .text(&n.raw)
        .push(" AND ")
        .push(&head)
        .push(" < ")
        .text(&format!("{}{}", n.raw, char::MAX));
}

/// `SELECT count(*) AS n` of the markets `src` names, stopping at `SPARSE_LIMIT + 1`.
fn count(src: Source, n: &Needle) -> Sql {
    let mut s = Sql::new("SELECT count(*) AS n FROM (");
    source_select(&mut s, src, n);
    s.push(" LIMIT ").int(SPARSE_LIMIT + 1).push(")");
    s
}

/// ` AND m.id IN (…)`: restricts to the markets the sources name.
fn candidates_in(s: &mut Sql, sources: &[Source], n: &Needle) {
    s.push(" AND m.id IN (");
    for (i, src) in sources.iter().enumerate() {
        if i > 0 {
            s.push(" UNION ALL ");
        }
        source_select(s, *src, n);
    }
    s.push(")");
}

/// Statements driven by a list of FTS candidates must look each one up by rowid. Without this hint the planner
/// may prefer an index that matches the `ORDER BY` and scan the whole catalog; `NOT INDEXED` still allows
/// rowid lookups.
const NOT_INDEXED: &str = " NOT INDEXED";

/// ` FROM markets AS m <hint> WHERE <filters>`; [`select`] puts a column list in front.
fn from_markets(q: &MarketQuery, hint: &str) -> Sql {
    let mut s = Sql::new(" FROM markets AS m");
    s.push(hint);
    search::market_filters(&mut s, q);
    s
}

/// `SELECT <cols>` + `from` (the column list holds no placeholders, so prepending keeps `$N` numbering valid).
fn select(cols: &str, mut from: Sql) -> Sql {
    from.text.insert_str(0, &format!("SELECT {cols}"));
    from
}

/// Filters, ranks and pages the (few) candidates the indexes name for `n`, in one statement.
fn rank_candidates(q: &MarketQuery, n: &Needle, sort: MarketSort) -> Sql {
    let mut s = select(crate::catalog::rows::MARKET_COLS, from_markets(q, NOT_INDEXED));
    let sources: &[Source] = if n.interval.is_some() {
        &[Source::Head, Source::Rest, Source::Interval]
    } else {
        &[Source::Head, Source::Rest]
    };
    candidates_in(&mut s, sources, n);
    search::market_order(&mut s, D, sort, Some(n));
    crate::sql::page(&mut s, q.limit, q.offset);
    s
}

/// ` FROM markets m INDEXED BY <the index of sort> WHERE <filters>`: a scan in the requested order that
/// stops as soon as the `LIMIT` is met. Forced because the planner cannot know that the text predicate added
/// after it matches densely, and would otherwise sort every match.
fn walk(q: &MarketQuery, sort: MarketSort) -> Sql {
    let index = match sort {
        MarketSort::Relevance | MarketSort::Volume => "markets_status_volume",
        MarketSort::Newest => "markets_status_discovered",
        MarketSort::Liquidity => "markets_status_liquidity",
    };
    from_markets(q, &format!(" INDEXED BY {index}"))
}

const UPSERT_MARKET: &str = concat!(
    "INSERT INTO markets (",
    super::market_insert_cols!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, \
     $23, $24, $25, $26, $27, $27) ON CONFLICT (exchange, market_id) DO UPDATE SET ",
    super::market_update_set!()
);

pub(super) async fn upsert_markets(write: &SqlitePool, items: &[Market], seen_at: Timestamp) -> StoreResult<()> {
    let mut tx = crate::backend::sqlite_begin(write).await?;
    for m in items {
        sqlx::query(UPSERT_MARKET)
            .bind(m.exchange.as_str())
            .bind(&m.market_id)
            .bind(&m.event_id)
            .bind(&m.series_id)
            .bind(m.title.as_deref())
            .bind(m.subtitle.as_deref())
            .bind(&m.question)
            .bind(m.description.as_deref())
            .bind(m.slug.as_deref())
            .bind(m.url.as_deref())
            .bind(m.category.as_deref())
            .bind(m.status.as_str())
            .bind(m.interval_code.map(|c| c.as_str()))
            .bind(m.window_start.map(Timestamp::millis))
            .bind(m.window_end.map(Timestamp::millis))
            .bind(m.volume.micros())
            .bind(m.volume_24h.micros())
            .bind(m.liquidity.micros())
            .bind(m.open_interest.micros())
            .bind(m.last_yes_price.map(|p| p.micros()))
            .bind(m.last_no_price.map(|p| p.micros()))
            .bind(m.settled_at.map(Timestamp::millis))
            .bind(m.source_id.as_deref())
            .bind(m.yes_token_id.as_deref())
            .bind(m.no_token_id.as_deref())
            .bind(m.resolution_source.as_deref())
            .bind(seen_at.millis())
            .execute(&mut *tx)
            .await?;
    }
    Ok(tx.commit().await?)
}
