//! Response bodies of the whale routes (spec §2.13, contracts §7).

use crossbook_core::Exchange;
use crossbook_store::{WatchEntry, WhaleAggregate, WhaleTrade};
use serde::Serialize;
use utoipa::ToSchema;

use super::StatsPeriod;
use crate::{
    api::common::{dollars, iso},
    whales::market_ticker,
};
// ------------------------------------------------------------------------------------------------ outputs

/// A whale trade as the feeds show it: the fields of the `whale.entry` webhook data (which also carries
/// `event_title` and `outcome`) plus `id`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WhaleTradeOut {
    /// The stored trade's id.
    pub id: i64,
    pub exchange: Exchange,
    /// The venue's event id.
    pub event_id: String,
    /// The event's title, saying what the market is about; null when the catalog does not have the event.
    #[schema(required = true, examples("Bitcoin Up or Down - November 21, 2:15PM-2:30PM ET"))]
    pub event_title: Option<String>,
    pub market_id: String,
    /// venue_a: the market ticker; venue_b: the market slug (the condition id when it has none).
    pub market_ticker: String,
    /// The market's headline (its id when the catalog does not have the market).
    pub market_title: String,
    /// The venue's trade id.
    pub source_trade_id: String,
    #[schema(format = DateTime)]
    pub executed_at: String,
    /// `buy` or `sell`: what the whale (the taker) did with `outcome`. venue_a takers always buy.
    #[schema(examples("buy"))]
    pub taker_side: String,
    /// `YES` or `NO`: the outcome whose contracts the whale traded. On venue_a, the outcome the taker bought
    /// (the trade's taker side); on venue_b, the outcome of the token traded. Buying YES and selling NO both
    /// bet on YES.
    #[schema(examples("YES"))]
    pub outcome: String,
    /// Price in dollars, 4 decimals.
    pub price: f64,
    /// Contracts (venue_a) or shares (venue_b), exact to 6 decimals.
    pub size: f64,
    /// `abs(price × size)` in dollars, 2 decimals.
    pub notional_usd: f64,
}

impl From<WhaleTrade> for WhaleTradeOut {
    fn from(t: WhaleTrade) -> Self {
        WhaleTradeOut {
            id: t.id,
            exchange: t.exchange,
            market_ticker: market_ticker(t.exchange, &t.market_id, t.market_slug.as_deref()),
            market_title: t.market_title.unwrap_or_else(|| t.market_id.clone()),
            event_id: t.event_id,
            event_title: t.event_title,
            market_id: t.market_id,
            source_trade_id: t.source_trade_id,
            executed_at: iso(t.executed_at),
            taker_side: t.taker_side.as_str().to_string(),
            outcome: t.outcome.as_str().to_string(),
            price: t.price.to_f64_4(),
            size: t.size.to_f64(6),
            notional_usd: dollars(t.notional),
        }
    }
}

/// Aggregate 24h stats of a feed's event set.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeedStatsOut {
    /// Summed notional of the whale trades of the last 24 hours, in dollars.
    pub total_volume_24h: f64,
    /// Whale trades of the last 24 hours.
    pub total_trades_24h: i64,
    /// `total_volume_24h / total_trades_24h` in dollars; 0 without trades.
    pub avg_trade_size: f64,
}

impl From<WhaleAggregate> for FeedStatsOut {
    fn from(a: WhaleAggregate) -> Self {
        FeedStatsOut {
            total_volume_24h: dollars(a.total_volume),
            total_trades_24h: a.trade_count,
            avg_trade_size: dollars(a.average()),
        }
    }
}

/// Offset paging of a whale feed: `limit` and `offset` as requested, and how many trades match in all.
///
/// Its own schema name: the historical routes page by cursor with a different `pagination` object, and two
/// schemas of one name would leave the document describing only one of them.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"limit": 50, "offset": 0, "total": 6}))]
pub struct OffsetPaginationOut {
    /// Page size of the request.
    pub limit: u32,
    /// Trades skipped before this page.
    pub offset: u32,
    /// Whale trades matching the filters, over all pages.
    pub total: i64,
}

/// The personal feed: whale trades of the caller's watchlist, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserFeedOut {
    pub trades: Vec<WhaleTradeOut>,
    /// Over the watchlist events selected by `platform` and `event_id`, at the thresholds of the request.
    pub stats: FeedStatsOut,
    pub pagination: OffsetPaginationOut,
}

/// The public feed envelope.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PublicFeedOut {
    /// Whale trades of the unlocked events, newest first.
    pub trades: Vec<WhaleTradeOut>,
    /// Over the unlocked events only.
    pub stats: FeedStatsOut,
    pub pagination: OffsetPaginationOut,
    /// `true` for free and anonymous callers: only a prefix of the pool is unlocked.
    pub preview_only: bool,
    /// Events of the daily pool fully visible to this caller.
    pub unlocked_events: usize,
    /// Whale trades that match the same filters on the pool's events this caller cannot see (0 with a paid
    /// key, which sees the whole pool), so a preview caller knows what a paid key would show.
    pub locked_trades: i64,
}

/// A watchlist record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchRecordOut {
    /// The numeric watchlist id (for PATCH and DELETE).
    #[schema(examples(65))]
    pub id: i64,
    pub exchange: Exchange,
    /// The venue's event id.
    pub event_id: String,
    /// The venue's event id, as the ticker it was added by.
    pub event_ticker: String,
    /// The event's title; null when the catalog does not have the event.
    #[schema(required = true)]
    pub event_title: Option<String>,
    /// Notional in dollars at or above which a trade of this event is a whale.
    pub whale_threshold_usd: f64,
    /// Whale trades of this event in the last 24 hours, at this threshold.
    pub whale_count_24h: i64,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<WatchEntry> for WatchRecordOut {
    fn from(e: WatchEntry) -> Self {
        WatchRecordOut {
            id: e.id,
            exchange: e.exchange,
            event_ticker: e.event_id.clone(),
            event_id: e.event_id,
            event_title: e.event_title,
            whale_threshold_usd: dollars(e.threshold),
            whale_count_24h: e.whale_count,
            created_at: iso(e.created_at),
        }
    }
}

/// The caller's watchlist.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchListOut {
    /// Oldest first.
    pub tracked_events: Vec<WatchRecordOut>,
}

/// Answer to adding an event: `success`, `message` and the record's fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchAddedOut {
    pub success: bool,
    pub message: String,
    #[serde(flatten)]
    pub record: WatchRecordOut,
}

/// Answer to changing a threshold: `success` and the record's fields.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchUpdatedOut {
    pub success: bool,
    #[serde(flatten)]
    pub record: WatchRecordOut,
}

/// Answer to removing an event from the watchlist.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchDeletedOut {
    pub success: bool,
    /// The removed record's id.
    pub id: i64,
    pub exchange: Exchange,
    pub event_ticker: String,
}

/// Whale stats of one watchlist event over the period.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventStatsOut {
    /// Whale trades.
    pub trade_count: i64,
    /// Their summed notional, in dollars.
    pub total_volume: f64,
    /// `total_volume / trade_count`; 0 without trades.
    pub avg_trade_size: f64,
    /// Distinct markets among them.
    pub market_count: i64,
}

/// One watchlist event and its stats.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WatchStatsOut {
    /// The watchlist id.
    pub id: i64,
    pub exchange: Exchange,
    pub event_id: String,
    #[schema(required = true)]
    pub event_title: Option<String>,
    pub stats: EventStatsOut,
}

/// `/whales/user/stats`: every watchlist event, with zero stats when it has no whale trades in the period.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserStatsOut {
    pub period: StatsPeriod,
    pub events: Vec<WatchStatsOut>,
}

/// An event of the public catalog. Locked entries keep `exchange` and `title` and null the rest.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CatalogEventOut {
    pub exchange: Exchange,
    /// Null when locked.
    #[schema(required = true)]
    pub event_id: Option<String>,
    /// The event's title (its id when the catalog does not have the event).
    pub title: String,
    /// Trades of the last 24 hours, any size; null when locked.
    #[schema(required = true)]
    pub trades_24h: Option<i64>,
    /// Their summed notional in dollars; null when locked.
    #[schema(required = true)]
    pub volume_24h: Option<f64>,
    /// Trades of the last 24 hours at or above the public minimum; null when locked.
    #[schema(required = true)]
    pub whale_trades_24h: Option<i64>,
    pub locked: bool,
}

/// The public catalog: the day's pool in unlock order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CatalogOut {
    /// The UTC day of the pool (`YYYY-MM-DD`).
    #[schema(examples("2026-11-21"))]
    pub pool_date: String,
    /// Events of the pool fully visible to this caller (the first ones).
    pub unlocked_events: usize,
    pub events: Vec<CatalogEventOut>,
}
