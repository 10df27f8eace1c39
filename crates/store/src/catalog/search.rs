//! The catalog search statements: needles, text matching per dialect, filters, orders and relevance tiers.
//! User input never enters the text: every value is an argument, and LIKE patterns are escaped by [`Needle`].

use crossbook_core::IntervalCode;

use crate::{
    catalog::{EventQuery, EventSort, MarketQuery, MarketSort, SeriesQuery, SeriesSort},
    sql::{Dialect, Sql, page},
};

/// Minimum needle length, in characters, that a trigram index can serve.
pub(crate) const TRIGRAM: usize = 3;

/// A search needle (`q`) in every form the queries need.
#[derive(Debug, Clone)]
pub(crate) struct Needle {
    /// As the user typed it.
    pub raw: String,
    /// `%needle%` with LIKE metacharacters escaped.
    pub contains: String,
    /// `needle%` with LIKE metacharacters escaped.
    pub prefix: String,
    /// The interval code `q` names, compared case-insensitively (markets match `interval_code = q` exactly).
    pub interval: Option<IntervalCode>,
    /// Long enough for a trigram index; shorter needles fall back to a scan.
    pub indexed: bool,
    /// The words of a needle of several whitespace-separated words, each a needle of its own; empty for one
    /// word. A row matches when every word matches under the one-word rule, in any of the searchable fields;
    /// rows holding the whole needle rank first.
    pub words: Vec<Needle>,
}

impl Needle {
    /// `None` for an absent or empty `q`.
    pub fn new(q: Option<&str>) -> Option<Needle> {
        // PostgreSQL rejects NUL in text and no stored text contains one: U+FFFD keeps such a needle a valid
        // string that matches nothing, instead of an error.
        let raw = q.filter(|s| !s.is_empty())?.replace('\0', "\u{FFFD}");
        let mut needle = Needle::word(raw);
        let words: Vec<&str> = needle.raw.split_whitespace().collect();
        if words.len() > 1 {
            needle.words = words.into_iter().map(|w| Needle::word(w.to_string())).collect();
        }
        Some(needle)
    }

    /// The needle `raw` as one word (spaces included, if any).
    fn word(raw: String) -> Needle {
        let escaped = escape_like(&raw);
        Needle {
            contains: format!("%{escaped}%"),
            prefix: format!("{escaped}%"),
            interval: raw.to_lowercase().parse().ok(),
            indexed: raw.chars().count() >= TRIGRAM,
            raw,
            words: Vec::new(),
        }
    }

    /// One word of 3+ characters: the tiered searches, which read one relevance tier at a time from the
    /// indexes, serve it. Several words are ranked and paged in one statement.
    pub fn tiered(&self) -> bool {
        self.indexed && self.words.is_empty()
    }

    /// An FTS5 query for the needle as one phrase, optionally restricted to columns (`{title question}`) and
    /// anchored at the start of the column (`^`). Inside double quotes every character is literal except the
    /// quote itself, which is doubled. With the trigram tokenizer a phrase matches exactly the rows
    /// containing the needle as a substring, case-insensitively.
    pub fn fts(&self, columns: &[&str], anchored: bool) -> String {
        let phrase = format!(
            "{}\"{}\"",
            if anchored { "^" } else { "" },
            self.raw.replace('"', "\"\"")
        );
        if columns.is_empty() {
            phrase
        } else {
            // One column filter per column, OR-ed: `{a b} : ^"x"` would not anchor in each column separately.
            columns
                .iter()
                .map(|c| format!("{{{c}}} : {phrase}"))
                .collect::<Vec<_>>()
                .join(" OR ")
        }
    }
}

/// Escapes `\`, `%` and `_` so that user input is literal inside a LIKE pattern with `ESCAPE '\'` (PostgreSQL's
/// default escape character is also the backslash).
pub(crate) fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `col` contains the needle, case-insensitively, as a scan-time predicate (no full-text index involved on
/// SQLite; on PostgreSQL `ILIKE` lets the planner use a trigram index for needles of 3+ characters).
///
/// Short needles on PostgreSQL use `strpos(lower(..))`, which no trigram index claims to serve: a trigram
/// index cannot narrow a 1–2 character needle and would only be read in full.
pub(crate) fn contains(sql: &mut Sql, d: Dialect, col: &str, n: &Needle) {
    match d {
        Dialect::Sqlite => {
            sql.push(col).push(" LIKE ").text(&n.contains).push(" ESCAPE '\\'");
        }
        Dialect::Postgres if n.indexed => {
            sql.push(col).push(" ILIKE ").text(&n.contains);
        }
        Dialect::Postgres => {
            sql.push("strpos(lower(")
                .push(col)
                .push("), lower(")
                .text(&n.raw)
                .push(")) > 0");
        }
    }
}

/// `col` starts with the needle, case-insensitively.
pub(crate) fn starts_with(sql: &mut Sql, d: Dialect, col: &str, n: &Needle) {
    match d {
        Dialect::Sqlite => sql.push(col).push(" LIKE ").text(&n.prefix).push(" ESCAPE '\\'"),
        Dialect::Postgres => sql.push(col).push(" ILIKE ").text(&n.prefix),
    };
}

/// `col` equals the needle, case-insensitively (the "exact id" relevance tier).
pub(crate) fn id_equals(sql: &mut Sql, d: Dialect, col: &str, n: &Needle) {
    match d {
        Dialect::Sqlite => sql.push(col).push(" = ").text(&n.raw).push(" COLLATE NOCASE"),
        Dialect::Postgres => sql.push("lower(").push(col).push(") = lower(").text(&n.raw).push(")"),
    };
}

/// The searchable text of a PostgreSQL row, exactly as its trigram index is defined in the migration (the planner
/// uses an expression index only for the identical expression). `a` is the table alias with its dot. Fields are
/// joined by newlines; every use rechecks the individual columns, so a needle spanning two fields never matches.
pub(crate) fn pg_text(table: &str, a: &str) -> String {
    match table {
        "series" => format!("(({a}series_id COLLATE \"default\") || E'\\n' || {a}title)"),
        "events" => {
            format!("(({a}event_id COLLATE \"default\") || E'\\n' || {a}title || E'\\n' || coalesce({a}subtitle, ''))")
        }
        _ => format!(
            "(({a}market_id COLLATE \"default\") || E'\\n' || coalesce({a}title, '') || E'\\n' || \
             coalesce({a}subtitle, '') || E'\\n' || {a}question || E'\\n' || coalesce({a}description, '') || \
             E'\\n' || coalesce({a}slug, ''))"
        ),
    }
}

/// `(text ILIKE $p AND (col ILIKE $p OR …))`: the index-served form of "one of `cols` contains the needle" on
/// PostgreSQL (needles of 3+ characters).
fn pg_indexed_any(sql: &mut Sql, table: &str, alias: &str, cols: &[&str], n: &Needle) {
    sql.push("(")
        .push(&pg_text(table, alias))
        .push(" ILIKE ")
        .text(&n.contains)
        .push(" AND (");
    any_contains(sql, Dialect::Postgres, alias, cols, n);
    sql.push("))");
}

/// `col1 … OR col2 …`: one of `cols` (prefixed with `alias`) contains the needle.
fn any_contains(sql: &mut Sql, d: Dialect, alias: &str, cols: &[&str], n: &Needle) {
    for (i, col) in cols.iter().enumerate() {
        if i > 0 {
            sql.push(" OR ");
        }
        contains(sql, d, &format!("{alias}{col}"), n);
    }
}

/// `coalesce(sum(expr), 0)` as a 64-bit integer (PostgreSQL's `sum(bigint)` is `numeric`).
pub(crate) fn sum_i64(d: Dialect, expr: &str) -> String {
    match d {
        Dialect::Sqlite => format!("coalesce(sum({expr}), 0)"),
        Dialect::Postgres => format!("coalesce(sum({expr}), 0)::bigint"),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Markets
// ---------------------------------------------------------------------------------------------------------

/// The text a market is ranked by: its headline. venue_b markets have no title; their question is their
/// headline (spec 2.3), so it takes the title's place in the relevance tiers.
pub(crate) const MARKET_HEADLINE: &str = "coalesce(m.title, m.question)";

/// Relevance tiers (contracts §4): exact id, headline prefix, headline substring, another field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tier {
    ExactId,
    Prefix,
    Contains,
    Other,
}

/// The sort actually applied: relevance needs a needle, so without one it falls back to the no-`q` default.
pub(crate) fn market_sort(q: &MarketQuery, needle: Option<&Needle>) -> MarketSort {
    match (q.sort, needle) {
        (MarketSort::Relevance, None) => MarketSort::Newest,
        (s, _) => s,
    }
}

/// ` WHERE m.status = $n AND …` for every filter of a market query except `q`.
pub(crate) fn market_filters(sql: &mut Sql, q: &MarketQuery) {
    sql.push(" WHERE m.status = ").text(q.status.as_str());
    if let Some(x) = q.exchange {
        sql.push(" AND m.exchange = ").text(x.as_str());
    }
    if let Some(c) = &q.category {
        sql.push(" AND m.category = ").text(c);
    }
    if let Some(s) = &q.series_id {
        sql.push(" AND m.series_id = ").text(s);
    }
    if let Some(e) = &q.event_id {
        sql.push(" AND m.event_id = ").text(e);
    }
    if let Some(v) = q.min_volume {
        sql.push(" AND m.volume >= ").int(v.micros());
    }
    if let Some(v) = q.min_liquidity {
        sql.push(" AND m.liquidity >= ").int(v.micros());
    }
    if let Some(t) = q.discovered_after {
        sql.push(" AND m.discovered_at >= ").int(t.millis());
    }
    if let Some(t) = q.settled_after {
        sql.push(" AND m.settled_at >= ").int(t.millis());
    }
    if let Some(t) = q.settled_before {
        sql.push(" AND m.settled_at <= ").int(t.millis());
    }
}

/// The searchable columns of a market (spec 4.1).
const MARKET_TEXT_COLS: [&str; 6] = ["market_id", "title", "subtitle", "question", "description", "slug"];

/// `(…)`: the needle is in one of the searchable fields, or equals the interval code; for several words, every
/// word is.
pub(crate) fn market_match(sql: &mut Sql, d: Dialect, n: &Needle) {
    if n.words.is_empty() {
        market_text_match(sql, d, n);
        return;
    }
    sql.push("(");
    for (i, w) in n.words.iter().enumerate() {
        if i > 0 {
            sql.push(" AND ");
        }
        match d {
            // A word of 3+ characters is read from the FTS tables, which together hold every searchable field.
            Dialect::Sqlite if w.indexed => {
                sql.push("(m.id IN (SELECT rowid FROM markets_head_fts WHERE markets_head_fts MATCH ")
                    .text(&w.fts(&[], false))
                    .push(" UNION ALL SELECT rowid FROM markets_rest_fts WHERE markets_rest_fts MATCH ")
                    .text(&w.fts(&[], false))
                    .push(")");
                if let Some(code) = w.interval {
                    sql.push(" OR m.interval_code = ").text(code.as_str());
                }
                sql.push(")");
            }
            _ => market_text_match(sql, d, w),
        }
    }
    sql.push(")");
}

/// `(…)`: the needle, as one string, is in one of the searchable fields, or equals the interval code.
fn market_text_match(sql: &mut Sql, d: Dialect, n: &Needle) {
    sql.push("(");
    if d == Dialect::Postgres && n.indexed {
        pg_indexed_any(sql, "markets", "m.", &MARKET_TEXT_COLS, n);
    } else {
        any_contains(sql, d, "m.", &MARKET_TEXT_COLS, n);
    }
    if let Some(code) = n.interval {
        sql.push(" OR m.interval_code = ").text(code.as_str());
    }
    sql.push(")");
}

/// `CASE … END`: the relevance tier of a market row as 0–3.
pub(crate) fn market_tier(sql: &mut Sql, d: Dialect, n: &Needle) {
    sql.push("CASE WHEN ");
    id_equals(sql, d, "m.market_id", n);
    sql.push(" THEN 0 WHEN ");
    starts_with(sql, d, MARKET_HEADLINE, n);
    sql.push(" THEN 1 WHEN ");
    contains(sql, d, MARKET_HEADLINE, n);
    sql.push(" THEN 2 ");
    if !n.words.is_empty() {
        // Several words: the whole needle in another field, then rows that hold only the separate words.
        sql.push("WHEN ");
        market_text_match(sql, d, n);
        sql.push(" THEN 3 ELSE 4 END");
        return;
    }
    sql.push("ELSE 3 END");
}

/// `(…)`: the row belongs to exactly `tier` (used to read one tier at a time in volume order). With
/// `matched`, the rows come from an index that already established that the needle is in some field, so
/// the "other field" tier only has to exclude the better tiers.
pub(crate) fn market_tier_predicate(sql: &mut Sql, d: Dialect, n: &Needle, tier: Tier, matched: bool) {
    sql.push("(");
    if tier == Tier::ExactId {
        id_equals(sql, d, "m.market_id", n);
        sql.push(")");
        return;
    }
    sql.push("NOT (");
    id_equals(sql, d, "m.market_id", n);
    sql.push(")");
    match tier {
        Tier::Prefix => {
            sql.push(" AND ");
            starts_with(sql, d, MARKET_HEADLINE, n);
        }
        Tier::Contains => {
            sql.push(" AND NOT (");
            starts_with(sql, d, MARKET_HEADLINE, n);
            sql.push(") AND ");
            contains(sql, d, MARKET_HEADLINE, n);
        }
        Tier::Other | Tier::ExactId => {
            sql.push(" AND NOT (");
            contains(sql, d, MARKET_HEADLINE, n);
            sql.push(")");
            if !matched {
                sql.push(" AND ");
                market_match(sql, d, n);
            }
        }
    }
    sql.push(")");
}

/// ` ORDER BY …` of a market search; ties always end on (market_id, exchange) so pages are stable.
pub(crate) fn market_order(sql: &mut Sql, d: Dialect, sort: MarketSort, n: Option<&Needle>) {
    sql.push(" ORDER BY ");
    match (sort, n) {
        (MarketSort::Relevance, Some(n)) => {
            market_tier(sql, d, n);
            sql.push(", m.volume DESC");
        }
        (MarketSort::Volume, _) | (MarketSort::Relevance, None) => {
            sql.push("m.volume DESC");
        }
        (MarketSort::Newest, _) => {
            sql.push("m.discovered_at DESC");
        }
        (MarketSort::Liquidity, _) => {
            sql.push("m.liquidity DESC");
        }
    }
    sql.push(", m.market_id, m.exchange");
}

/// The whole market search as one statement: filters, text predicate (scan-time), order and page. PostgreSQL
/// always runs this (its planner combines the trigram indexes); SQLite runs it when there is no needle, for
/// short needles and within one event.
pub(crate) fn market_search(d: Dialect, q: &MarketQuery, n: Option<&Needle>) -> Sql {
    let mut sql = Sql::new("SELECT ");
    sql.push(crate::catalog::rows::MARKET_COLS).push(" FROM markets m");
    market_filters(&mut sql, q);
    if let Some(n) = n {
        sql.push(" AND ");
        market_match(&mut sql, d, n);
    }
    market_order(&mut sql, d, market_sort(q, n), n);
    page(&mut sql, q.limit, q.offset);
    sql
}

// ---------------------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------------------

/// The event search as one statement, with the aggregates it filters and sorts on.
pub(crate) fn event_search(d: Dialect, q: &EventQuery, n: Option<&Needle>) -> Sql {
    let total_volume = sum_i64(d, "m.volume");
    let mut sql = Sql::new("SELECT ");
    sql.push(crate::catalog::rows::EVENT_COLS)
        .push(", count(m.id) AS market_count, ")
        .push(&total_volume)
        .push(" AS total_volume, ")
        .push(&sum_i64(d, "m.liquidity"))
        .push(" AS total_liquidity FROM events e LEFT JOIN markets m ON m.exchange = e.exchange AND m.event_id = e.event_id")
        .push(" WHERE e.status = ")
        .text(q.status.as_str());
    if let Some(x) = q.exchange {
        sql.push(" AND e.exchange = ").text(x.as_str());
    }
    if let Some(c) = &q.category {
        sql.push(" AND e.category = ").text(c);
    }
    if let Some(s) = &q.series_id {
        sql.push(" AND e.series_id = ").text(s);
    }
    if let Some(t) = q.discovered_after {
        sql.push(" AND e.discovered_at >= ").int(t.millis());
    }
    if let Some(n) = n {
        sql.push(" AND ");
        event_match(&mut sql, d, n);
    }
    sql.push(" GROUP BY e.id");
    if let Some(v) = q.min_volume {
        sql.push(" HAVING ").push(&total_volume).push(" >= ").int(v.micros());
    }
    sql.push(" ORDER BY ");
    let sort = match (q.sort, n) {
        (EventSort::Relevance, None) => EventSort::Newest,
        (s, _) => s,
    };
    match (sort, n) {
        (EventSort::Relevance, Some(n)) => {
            sql.push("CASE WHEN ");
            id_equals(&mut sql, d, "e.event_id", n);
            sql.push(" THEN 0 WHEN ");
            starts_with(&mut sql, d, "e.title", n);
            sql.push(" THEN 1 WHEN ");
            contains(&mut sql, d, "e.title", n);
            sql.push(" THEN 2 ");
            if !n.words.is_empty() {
                // Several words: the whole needle in another field, then rows that hold only the separate words.
                sql.push("WHEN ");
                event_text_match(&mut sql, d, n);
                sql.push(" THEN 3 ELSE 4 END");
            } else {
                sql.push("ELSE 3 END");
            }
            sql.push(", total_volume DESC");
        }
        (EventSort::Newest, _) | (EventSort::Relevance, None) => {
            sql.push("e.discovered_at DESC");
        }
        (EventSort::Markets, _) => {
            sql.push("market_count DESC");
        }
        (EventSort::Volume, _) => {
            sql.push("total_volume DESC");
        }
        (EventSort::Liquidity, _) => {
            sql.push("total_liquidity DESC");
        }
    }
    sql.push(", e.event_id, e.exchange");
    page(&mut sql, q.limit, q.offset);
    sql
}

/// `(…)`: the needle is in the event's title, subtitle or id, or in a question of one of its markets.
///
/// Several words: every word is, each under the rule of one word.
fn event_match(sql: &mut Sql, d: Dialect, n: &Needle) {
    if n.words.is_empty() {
        return event_text_match(sql, d, n);
    }
    sql.push("(");
    for (i, w) in n.words.iter().enumerate() {
        if i > 0 {
            sql.push(" AND ");
        }
        event_text_match(sql, d, w);
    }
    sql.push(")");
}

/// `(…)`: the needle, as one string, is in the event's title, subtitle or id, or in a question of one of its
/// markets.
///
/// Indexed forms collect matching event ids from the text indexes (the events' own, and the markets' for the
/// questions) so that the planner starts from the index instead of scanning events.
fn event_text_match(sql: &mut Sql, d: Dialect, n: &Needle) {
    match (d, n.indexed) {
        (Dialect::Sqlite, true) => {
            // A market's question is indexed in the "rest" table when the market has a title, and as its
            // headline when it has none (see the migration).
            let phrase = n.fts(&[], false);
            let by_market = " UNION SELECT e2.id FROM markets mq JOIN events e2 \
                 ON e2.exchange = mq.exchange AND e2.event_id = mq.event_id WHERE ";
            sql.push("e.id IN (SELECT rowid FROM events_fts WHERE events_fts MATCH ")
                .text(&phrase)
                .push(by_market)
                .push("mq.id IN (SELECT rowid FROM markets_rest_fts WHERE markets_rest_fts MATCH ")
                .text(&n.fts(&["question"], false))
                .push(")")
                .push(by_market)
                .push("mq.title IS NULL AND mq.id IN (SELECT rowid FROM markets_head_fts WHERE markets_head_fts MATCH ")
                .text(&phrase)
                .push("))");
        }
        (Dialect::Postgres, true) => {
            sql.push("e.id IN (SELECT e1.id FROM events e1 WHERE ");
            pg_indexed_any(sql, "events", "e1.", &["event_id", "title", "subtitle"], n);
            sql.push(
                " UNION SELECT e2.id FROM markets mq JOIN events e2 \
                 ON e2.exchange = mq.exchange AND e2.event_id = mq.event_id WHERE ",
            );
            pg_indexed_any(sql, "markets", "mq.", &["question"], n);
            sql.push(")");
        }
        (_, false) => {
            sql.push("(");
            contains(sql, d, "e.event_id", n);
            sql.push(" OR ");
            contains(sql, d, "e.title", n);
            sql.push(" OR ");
            contains(sql, d, "e.subtitle", n);
            sql.push(
                " OR EXISTS (SELECT 1 FROM markets mq WHERE mq.exchange = e.exchange AND mq.event_id = e.event_id AND ",
            );
            contains(sql, d, "mq.question", n);
            sql.push("))");
        }
    }
}

/// Events newest first (the recent route).
pub(crate) fn recent_events(q: &super::RecentQuery) -> Sql {
    let mut sql = Sql::new("SELECT ");
    sql.push(crate::catalog::rows::EVENT_COLS)
        .push(" FROM events e WHERE e.status = ")
        .text(q.status.as_str());
    if let Some(x) = q.exchange {
        sql.push(" AND e.exchange = ").text(x.as_str());
    }
    sql.push(" ORDER BY e.discovered_at DESC, e.event_id, e.exchange");
    page(&mut sql, q.limit, q.offset);
    sql
}

/// Markets newest first (the recent route).
pub(crate) fn recent_markets(q: &super::RecentQuery) -> Sql {
    let mut sql = Sql::new("SELECT ");
    sql.push(crate::catalog::rows::MARKET_COLS)
        .push(" FROM markets m WHERE m.status = ")
        .text(q.status.as_str());
    if let Some(x) = q.exchange {
        sql.push(" AND m.exchange = ").text(x.as_str());
    }
    sql.push(" ORDER BY m.discovered_at DESC, m.market_id, m.exchange");
    page(&mut sql, q.limit, q.offset);
    sql
}

/// The markets of the given events (exchange, event id), for the aggregates and questions of spec 2.2.
pub(crate) fn markets_of_events<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Sql> {
    let mut sql = Sql::new("SELECT m.exchange, m.event_id, m.question, m.volume, m.liquidity FROM markets m WHERE ");
    let mut any = false;
    for (exchange, event_id) in keys {
        if any {
            sql.push(" OR ");
        }
        any = true;
        sql.push("(m.exchange = ")
            .text(exchange)
            .push(" AND m.event_id = ")
            .text(event_id)
            .push(")");
    }
    sql.push(" ORDER BY m.exchange, m.event_id, m.market_id");
    any.then_some(sql)
}

// ---------------------------------------------------------------------------------------------------------
// Series
// ---------------------------------------------------------------------------------------------------------

/// The series search as one statement (aggregates are read for the page afterwards).
pub(crate) fn series_search(d: Dialect, q: &SeriesQuery, n: Option<&Needle>) -> Sql {
    let mut sql = Sql::new("SELECT ");
    sql.push(crate::catalog::rows::SERIES_COLS)
        .push(" FROM series s WHERE s.status = ")
        .text(q.status.as_str());
    if let Some(x) = q.exchange {
        sql.push(" AND s.exchange = ").text(x.as_str());
    }
    if let Some(c) = &q.category {
        sql.push(" AND s.category = ").text(c);
    }
    if let Some(n) = n {
        // Several words: every word matches, each under the rule of one word.
        let words = if n.words.is_empty() {
            std::slice::from_ref(n)
        } else {
            &n.words[..]
        };
        for w in words {
            sql.push(" AND ");
            match (d, w.indexed) {
                (Dialect::Sqlite, true) => {
                    sql.push("s.id IN (SELECT rowid FROM series_fts WHERE series_fts MATCH ")
                        .text(&w.fts(&[], false))
                        .push(")");
                }
                (Dialect::Postgres, true) => pg_indexed_any(&mut sql, "series", "s.", &["series_id", "title"], w),
                (_, false) => {
                    sql.push("(");
                    any_contains(&mut sql, d, "s.", &["series_id", "title"], w);
                    sql.push(")");
                }
            }
        }
    }
    match q.sort {
        // Case-insensitive, then bytewise ("C") so that both backends order titles identically.
        SeriesSort::Title => match d {
            Dialect::Sqlite => sql.push(" ORDER BY lower(s.title)"),
            Dialect::Postgres => sql.push(" ORDER BY lower(s.title) COLLATE \"C\""),
        },
        SeriesSort::Newest => sql.push(" ORDER BY s.discovered_at DESC"),
    };
    sql.push(", s.series_id, s.exchange");
    page(&mut sql, q.limit, q.offset);
    sql
}

/// Aggregates of spec 2.1 for the given series (exchange, series id).
pub(crate) fn series_aggregates<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Sql> {
    let mut sql = Sql::new(
        "SELECT exchange, series_id, count(*) AS n_total, count(*) FILTER (WHERE status = 'active') AS n_active, \
         min(window_start) AS earliest, max(window_end) AS latest FROM events WHERE ",
    );
    let mut any = false;
    for (exchange, series_id) in keys {
        if any {
            sql.push(" OR ");
        }
        any = true;
        sql.push("(exchange = ")
            .text(exchange)
            .push(" AND series_id = ")
            .text(series_id)
            .push(")");
    }
    sql.push(" GROUP BY exchange, series_id");
    any.then_some(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_metacharacters_are_escaped() {
        assert_eq!(escape_like(r"50%_a\b"), r"50\%\_a\\b");
        let n = Needle::new(Some("5%")).unwrap();
        assert_eq!(n.contains, r"%5\%%");
        assert_eq!(n.prefix, r"5\%%");
        assert!(!n.indexed);
    }

    #[test]
    fn needles() {
        assert!(Needle::new(None).is_none());
        assert!(Needle::new(Some("")).is_none());
        let n = Needle::new(Some("15M")).unwrap();
        assert_eq!(n.interval, Some(IntervalCode::M15));
        assert!(n.indexed);
        // Characters, not bytes: "été" is three characters.
        assert!(Needle::new(Some("été")).unwrap().indexed);
        assert!(!Needle::new(Some("ét")).unwrap().indexed);
    }

    #[test]
    fn fts_phrases_quote_the_needle() {
        let n = Needle::new(Some(r#"say "hi" OR x"#)).unwrap();
        assert_eq!(n.fts(&[], false), r#""say ""hi"" OR x""#);
        let n = Needle::new(Some("btc")).unwrap();
        assert_eq!(
            n.fts(&["title", "question"], true),
            r#"{title} : ^"btc" OR {question} : ^"btc""#
        );
    }
}
