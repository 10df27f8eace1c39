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

use crate::{StoreResult, backend::Backend};

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

mod pool;
mod reads;
mod watchlist;

use pool::{pool, pool_candidates, save_pool};
use reads::{event_activity, whale_markets, whale_stats, whale_trades};
use watchlist::{
    add_watch, delete_watch, delete_watch_by_event, find_watch, get_watch, list_watch, set_watch_threshold,
    watched_events,
};

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
