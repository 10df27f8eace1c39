//! Arbitrage: the recorded opportunity episodes behind `GET /v1/arbitrage/history` (spec 2.10, contracts §6),
//! the operator's pair overrides (`crossbook pairs add|list|remove`) and the scanner's catalog view.
//!
//! # Episodes
//! An episode is identified by its key (`event_id`, `outcome_key`, `buy_yes_market`, `buy_no_market`) and its
//! `first_seen_at`; the scanner ([`crossbook_core::arb::EpisodeBook`]) decides when a detection extends an
//! episode and when it opens a new one, and [`ArbitrageStore::record_episodes`] writes its decisions as
//! upserts on that identity (an extension rewrites `last_seen_at`, the latest observation and the peak). The
//! opportunity is stored whole as JSON (the core type's serde form, exact integers) next to the columns the
//! history filters on (and `fee_model`, the fee rates the figures were computed at), each served by an index that starts with the filter and continues in the page order
//! (`last_seen_at DESC, id DESC`).

use crossbook_core::{
    Category, IntervalCode, Timestamp,
    arb::{Episode, Listing, MicroUsd, PairOverride},
};

use crate::StoreResult;

mod postgres;
mod sqlite;

/// Filters and page of the history (spec 4.3 `/v1/arbitrage/history`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistoryQuery {
    pub interval_code: Option<IntervalCode>,
    pub category: Option<Category>,
    /// Keep episodes whose latest observation nets at least this much (inclusive).
    pub min_net: Option<MicroUsd>,
    /// Keep episodes last seen at or after this time.
    pub from: Option<Timestamp>,
    /// Keep episodes first seen at or before this time.
    pub to: Option<Timestamp>,
    pub limit: u32,
    pub offset: u32,
}

/// One page of the history: the filtered count before paging and the page, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPage {
    pub total: i64,
    pub items: Vec<Episode>,
}

/// A stored operator override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredOverride {
    pub pair: PairOverride,
    pub created_at: Timestamp,
}

/// A pair the operator rejected (`crossbook pairs reject`): never scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRejection {
    pub pair: PairOverride,
    /// The operator's note, if any.
    pub reason: Option<String>,
    pub created_at: Timestamp,
}

/// The arbitrage concern.
#[async_trait::async_trait]
pub trait ArbitrageStore: Send + Sync {
    /// Writes the scanner's episode changes of one pass in one transaction: an episode not stored yet is
    /// inserted, a stored one (same key and `first_seen_at`) gets the new `last_seen_at`, latest
    /// observation and the larger peak.
    async fn record_episodes(&self, episodes: &[Episode]) -> StoreResult<()>;

    /// Episodes last seen at or after `since` (the latest episode per key), to resume the scanner's
    /// episode book after a restart.
    async fn recent_episodes(&self, since: Timestamp) -> StoreResult<Vec<Episode>>;

    /// A page of the history, newest (`last_seen_at`) first.
    async fn episode_history(&self, q: &HistoryQuery) -> StoreResult<HistoryPage>;

    /// Adds an override. `Ok(false)` when either market is already in an override (remove it first).
    async fn add_pair_override(&self, pair: &PairOverride, at: Timestamp) -> StoreResult<bool>;

    /// Every override, oldest first (the order the pairing applies them in).
    async fn pair_overrides(&self) -> StoreResult<Vec<StoredOverride>>;

    /// Removes the override naming `market_id` on either venue; returns how many were removed.
    async fn remove_pair_override(&self, market_id: &str) -> StoreResult<u64>;

    /// Active markets of both venues with their event's title and slug, classified for the pairing.
    async fn arbitrage_listings(&self) -> StoreResult<Vec<Listing>>;

    /// The markets of both venues that were open at some time of `[from, to]` (a backtest's), whatever their
    /// status now, as [`ArbitrageStore::arbitrage_listings`] lists them.
    async fn listings_between(&self, from: Timestamp, to: Timestamp) -> StoreResult<Vec<Listing>>;

    /// Rejects the pair of these two markets (the scanner never scans it). Rejecting it again replaces the
    /// reason and keeps the first time; `Ok(true)` when the pair was not rejected before.
    async fn reject_pair(&self, pair: &PairOverride, reason: Option<&str>, at: Timestamp) -> StoreResult<bool>;

    /// Every rejected pair, oldest first.
    async fn pair_rejections(&self) -> StoreResult<Vec<StoredRejection>>;

    /// Lifts the rejection of the pair; returns how many were removed (0 or 1).
    async fn unreject_pair(&self, pair: &PairOverride) -> StoreResult<u64>;
}

// ------------------------------------------------------------------------------------------------ shared SQL

use crossbook_core::arb::{EpisodeKey, FeeModel, Opportunity};

use crate::{
    backend::{Backend, Exec, Pools},
    codec::{self, Cols},
    sql::Sql,
};

/// Columns of an episode row, in the order [`episode_args`] binds them.
const EPISODE_COLS: &str = "event_id, outcome_key, buy_yes_market, buy_no_market, first_seen_at, \
     last_seen_at, interval_code, category, net_micros, peak_micros, opportunity, fee_model";

/// The `ON CONFLICT` clause of the episode upsert (an extension keeps the later `last_seen_at` and the larger
/// peak); `greatest` names the dialect's two-argument maximum (`max` on SQLite, `GREATEST` on PostgreSQL).
fn on_conflict(greatest: &str) -> String {
    format!(
        "ON CONFLICT (event_id, outcome_key, buy_yes_market, buy_no_market, first_seen_at) DO UPDATE SET \
         last_seen_at = {greatest}(arb_episodes.last_seen_at, excluded.last_seen_at), \
         interval_code = excluded.interval_code, category = excluded.category, \
         net_micros = excluded.net_micros, peak_micros = {greatest}(arb_episodes.peak_micros, excluded.peak_micros), \
         opportunity = excluded.opportunity, fee_model = excluded.fee_model"
    )
}

/// The values of one episode row, for the upsert.
struct EpisodeArgs {
    pub event_id: String,
    pub outcome_key: String,
    pub buy_yes_market: &'static str,
    pub buy_no_market: &'static str,
    pub first_seen_at: i64,
    pub last_seen_at: i64,
    pub interval_code: Option<&'static str>,
    pub category: &'static str,
    pub net_micros: i64,
    pub peak_micros: i64,
    pub opportunity: String,
    pub fee_model: String,
}

fn episode_args(e: &Episode) -> StoreResult<EpisodeArgs> {
    let o = &e.opportunity;
    Ok(EpisodeArgs {
        event_id: e.key.event_id.clone(),
        outcome_key: e.key.outcome_key.clone(),
        buy_yes_market: e.key.buy_yes_market.as_str(),
        buy_no_market: e.key.buy_no_market.as_str(),
        first_seen_at: e.first_seen_at.millis(),
        last_seen_at: e.last_seen_at.millis(),
        interval_code: o.interval_code.map(IntervalCode::as_str),
        category: o.category.as_str(),
        net_micros: o.net.micros(),
        peak_micros: o.peak_net.max(o.net).micros(),
        opportunity: serde_json::to_string(o)
            .map_err(|e| codec::decode_error(format!("cannot encode an opportunity: {e}")))?,
        fee_model: o.fee_model.clone(),
    })
}

fn episode_row(r: &impl Cols) -> StoreResult<Episode> {
    let json = r.text("opportunity")?;
    let mut opportunity: Opportunity = serde_json::from_str(&json)
        .map_err(|e| codec::decode_error(format!("unreadable opportunity in arb_episodes: {e}")))?;
    // The columns are authoritative for what the upsert maintains. `fee_model` also labels the episodes
    // recorded before the opportunity JSON carried it (migration 0012). An empty one is a row an older
    // version wrote after the migration (a process not yet upgraded, beside the migrated database): that
    // version priced at the spec rates, so it reads as their label, like the migration's backfill.
    opportunity.peak_net = MicroUsd(r.int("peak_micros")?);
    let fee_model = r.text("fee_model")?;
    opportunity.fee_model = if fee_model.is_empty() {
        FeeModel::SPEC.for_category(opportunity.category).label()
    } else {
        fee_model
    };
    Ok(Episode {
        key: EpisodeKey {
            event_id: r.text("event_id")?,
            outcome_key: r.text("outcome_key")?,
            buy_yes_market: codec::exchange(&r.text("buy_yes_market")?)?,
            buy_no_market: codec::exchange(&r.text("buy_no_market")?)?,
        },
        first_seen_at: Timestamp::from_millis(r.int("first_seen_at")?),
        last_seen_at: Timestamp::from_millis(r.int("last_seen_at")?),
        opportunity,
    })
}

fn history_where(q: &HistoryQuery) -> Sql {
    let mut s = Sql::new(" FROM arb_episodes WHERE TRUE");
    if let Some(ic) = q.interval_code {
        s.push(" AND interval_code = ").text(ic.as_str());
    }
    if let Some(c) = q.category {
        s.push(" AND category = ").text(c.as_str());
    }
    if let Some(n) = q.min_net {
        s.push(" AND net_micros >= ").int(n.micros());
    }
    if let Some(t) = q.from {
        s.push(" AND last_seen_at >= ").int(t.millis());
    }
    if let Some(t) = q.to {
        s.push(" AND first_seen_at <= ").int(t.millis());
    }
    s
}

async fn episode_history<E: Exec>(ex: &E, q: &HistoryQuery) -> StoreResult<HistoryPage> {
    let filter = history_where(q);
    let mut count = Sql::new("SELECT count(*) AS n");
    count.push(&filter.text);
    count.args = filter.args.clone();
    let total = ex
        .rows(&count)
        .await?
        .first()
        .map(|r| r.int("n"))
        .transpose()?
        .unwrap_or(0);
    let mut page = Sql::new("SELECT ");
    page.push(EPISODE_COLS).push(&filter.text);
    page.args = filter.args;
    page.push(" ORDER BY last_seen_at DESC, id DESC LIMIT ")
        .int(i64::from(q.limit))
        .push(" OFFSET ")
        .int(i64::from(q.offset));
    let items = ex
        .rows(&page)
        .await?
        .iter()
        .map(episode_row)
        .collect::<StoreResult<_>>()?;
    Ok(HistoryPage { total, items })
}

async fn recent_episodes<E: Exec>(ex: &E, since: Timestamp) -> StoreResult<Vec<Episode>> {
    let mut s = Sql::new("SELECT ");
    s.push(EPISODE_COLS)
        .push(" FROM arb_episodes WHERE last_seen_at >= ")
        .int(since.millis())
        .push(" ORDER BY last_seen_at, id");
    ex.rows(&s).await?.iter().map(episode_row).collect()
}

async fn pair_overrides<E: Exec>(ex: &E) -> StoreResult<Vec<StoredOverride>> {
    let s = Sql::new(
        "SELECT venue_a_market_id, venue_b_market_id, created_at FROM arb_pair_overrides ORDER BY created_at, id",
    );
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| {
            Ok(StoredOverride {
                pair: PairOverride {
                    venue_a_market_id: r.text("venue_a_market_id")?,
                    venue_b_market_id: r.text("venue_b_market_id")?,
                },
                created_at: Timestamp::from_millis(r.int("created_at")?),
            })
        })
        .collect()
}

/// Inserts an override unless either market already has one (both backends: `ON CONFLICT DO NOTHING` covers
/// both unique columns).
async fn add_pair_override<E: Exec>(ex: &E, pair: &PairOverride, at: Timestamp) -> StoreResult<bool> {
    let mut s = Sql::new("INSERT INTO arb_pair_overrides (venue_a_market_id, venue_b_market_id, created_at) VALUES (");
    s.text(&pair.venue_a_market_id)
        .push(", ")
        .text(&pair.venue_b_market_id)
        .push(", ")
        .int(at.millis())
        .push(") ON CONFLICT DO NOTHING");
    Ok(ex.exec(&s).await? == 1)
}

async fn remove_pair_override<E: Exec>(ex: &E, market_id: &str) -> StoreResult<u64> {
    let mut s = Sql::new("DELETE FROM arb_pair_overrides WHERE venue_a_market_id = ");
    s.text(market_id).push(" OR venue_b_market_id = ").text(market_id);
    ex.exec(&s).await
}

/// The markets `arbitrage_listings` reads: active now (`None`), or open at some time of a range (a window
/// overlapping it, or no window and not settled before it starts).
async fn arbitrage_listings<E: Exec>(ex: &E, range: Option<(Timestamp, Timestamp)>) -> StoreResult<Vec<Listing>> {
    let mut s = Sql::new("SELECT ");
    s.push(crate::catalog::rows::MARKET_COLS).push(
        ", e.title AS event_title, e.slug AS event_slug FROM markets m \
         LEFT JOIN events e ON e.exchange = m.exchange AND e.event_id = m.event_id WHERE ",
    );
    match range {
        None => s.push("m.status = 'active'"),
        Some((from, to)) => s
            .push("(m.window_end IS NULL OR m.window_end >= ")
            .int(from.millis())
            .push(") AND (m.window_start IS NULL OR m.window_start <= ")
            .int(to.millis())
            .push(") AND (m.settled_at IS NULL OR m.settled_at >= ")
            .int(from.millis())
            .push(")"),
    };
    s.push(" ORDER BY m.exchange, m.market_id");
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| {
            let market = crate::catalog::rows::market_row(r)?.market;
            let title = match r.opt_text("event_title")? {
                Some(t) => t,
                None => market.title.clone().unwrap_or_else(|| market.question.clone()),
            };
            let slug = r.opt_text("event_slug")?.or_else(|| market.slug.clone());
            let slug = if market.exchange == crossbook_core::Exchange::VenueB {
                slug
            } else {
                None
            };
            Ok(Listing::new(market, title, slug))
        })
        .collect()
}

/// Upsert on both backends: the reason is the operator's latest word, the time the first rejection's.
async fn reject_pair<E: Exec>(ex: &E, pair: &PairOverride, reason: Option<&str>, at: Timestamp) -> StoreResult<bool> {
    let mut probe = Sql::new("SELECT count(*) AS n FROM arb_pair_rejections WHERE venue_a_market_id = ");
    probe
        .text(&pair.venue_a_market_id)
        .push(" AND venue_b_market_id = ")
        .text(&pair.venue_b_market_id);
    let existed = ex
        .rows(&probe)
        .await?
        .first()
        .map(|r| r.int("n"))
        .transpose()?
        .unwrap_or(0)
        > 0;
    let mut s =
        Sql::new("INSERT INTO arb_pair_rejections (venue_a_market_id, venue_b_market_id, reason, created_at) VALUES (");
    s.text(&pair.venue_a_market_id)
        .push(", ")
        .text(&pair.venue_b_market_id)
        .push(", ")
        .text(reason.unwrap_or(""))
        .push(", ")
        .int(at.millis())
        .push(") ON CONFLICT (venue_a_market_id, venue_b_market_id) DO UPDATE SET reason = excluded.reason");
    ex.exec(&s).await?;
    Ok(!existed)
}

async fn pair_rejections<E: Exec>(ex: &E) -> StoreResult<Vec<StoredRejection>> {
    let s = Sql::new(
        "SELECT venue_a_market_id, venue_b_market_id, reason, created_at FROM arb_pair_rejections \
         ORDER BY created_at, venue_a_market_id, venue_b_market_id",
    );
    ex.rows(&s)
        .await?
        .iter()
        .map(|r| {
            // The column is NOT NULL with '' for "no reason" (the statement builder binds no NULL text).
            let reason = r.text("reason")?;
            Ok(StoredRejection {
                pair: PairOverride {
                    venue_a_market_id: r.text("venue_a_market_id")?,
                    venue_b_market_id: r.text("venue_b_market_id")?,
                },
                reason: (!reason.is_empty()).then_some(reason),
                created_at: Timestamp::from_millis(r.int("created_at")?),
            })
        })
        .collect()
}

async fn unreject_pair<E: Exec>(ex: &E, pair: &PairOverride) -> StoreResult<u64> {
    let mut s = Sql::new("DELETE FROM arb_pair_rejections WHERE venue_a_market_id = ");
    s.text(&pair.venue_a_market_id)
        .push(" AND venue_b_market_id = ")
        .text(&pair.venue_b_market_id);
    ex.exec(&s).await
}

/// Reads on the reader pool, writes on the writer; only the episode batch is written per dialect.
#[async_trait::async_trait]
impl<B: Backend> ArbitrageStore for B {
    async fn record_episodes(&self, episodes: &[Episode]) -> StoreResult<()> {
        if episodes.is_empty() {
            return Ok(());
        }
        match self.pools() {
            Pools::Sqlite { write, .. } => sqlite::record_episodes(write, episodes).await,
            Pools::Postgres(pool) => postgres::record_episodes(pool, episodes).await,
        }
    }

    async fn recent_episodes(&self, since: Timestamp) -> StoreResult<Vec<Episode>> {
        recent_episodes(self.reader(), since).await
    }

    async fn episode_history(&self, q: &HistoryQuery) -> StoreResult<HistoryPage> {
        episode_history(self.reader(), q).await
    }

    async fn add_pair_override(&self, pair: &PairOverride, at: Timestamp) -> StoreResult<bool> {
        add_pair_override(self.writer(), pair, at).await
    }

    async fn pair_overrides(&self) -> StoreResult<Vec<StoredOverride>> {
        pair_overrides(self.reader()).await
    }

    async fn remove_pair_override(&self, market_id: &str) -> StoreResult<u64> {
        remove_pair_override(self.writer(), market_id).await
    }

    async fn arbitrage_listings(&self) -> StoreResult<Vec<Listing>> {
        arbitrage_listings(self.reader(), None).await
    }

    async fn listings_between(&self, from: Timestamp, to: Timestamp) -> StoreResult<Vec<Listing>> {
        arbitrage_listings(self.reader(), Some((from, to))).await
    }

    async fn reject_pair(&self, pair: &PairOverride, reason: Option<&str>, at: Timestamp) -> StoreResult<bool> {
        reject_pair(self.writer(), pair, reason, at).await
    }

    async fn pair_rejections(&self) -> StoreResult<Vec<StoredRejection>> {
        pair_rejections(self.reader()).await
    }

    async fn unreject_pair(&self, pair: &PairOverride) -> StoreResult<u64> {
        unreject_pair(self.writer(), pair).await
    }
}
