//! Response bodies of the historical routes (spec §2.5–2.8, contracts §5), and the rows built from books.

use crossbook_core::{
    Amount, BookSnapshot, Exchange, IntervalCode, Level, Market, Outcome, Price, Price4, TopOfBook, book,
};
use crossbook_store::books::history::HistoryRow;
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::common::iso;

use super::params::FormatName;

/// Ask levels summed into `yes_depth` / `no_depth` of the interval format.
const DEPTH_LEVELS: usize = 5;

/// One price level: `price` a 4-decimal string, `size` a number.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LevelOut {
    // Formatted on the stack: a page of 100 books renders thousands of levels.
    #[schema(value_type = String, examples("0.5300"))]
    pub price: Price4,
    #[schema(examples(120.0))]
    pub size: f64,
}

pub(super) fn levels(ladder: &[Level]) -> Vec<LevelOut> {
    ladder
        .iter()
        .map(|l| LevelOut {
            price: l.price.four_decimals(),
            size: size(l.size),
        })
        .collect()
}

/// Contracts or shares, rendered to 2 decimals.
pub(super) fn size(a: Amount) -> f64 {
    a.to_f64(2)
}

pub(super) fn price(p: Option<Price>) -> Option<f64> {
    p.map(Price::to_f64_4)
}

/// Mid and spread of a top of book as JSON numbers, when both sides exist. Core computes and rounds them
/// ([`book::mid`], [`book::spread`]); this only renders.
pub(super) fn mid_spread(bid: Option<Price>, ask: Option<Price>) -> (Option<f64>, Option<f64>) {
    let quote = bid.zip(ask);
    (
        price(quote.map(|(b, a)| book::mid(b, a))),
        price(quote.map(|(b, a)| book::spread(b, a))),
    )
}

/// Page metadata.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PaginationOut {
    /// The page size asked for.
    pub limit: u32,
    /// Rows on this page.
    pub count: usize,
    /// Whether another page follows.
    pub has_more: bool,
    /// Opaque cursor of the next page (pass it as `pagination_key`); null on the last page.
    #[schema(required = true)]
    pub pagination_key: Option<String>,
}

/// A venue_a snapshot. Best bid and ask are from the YES side; the YES ask is `1 −` the best NO bid.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueASnapshotOut {
    /// Market ticker.
    pub market_id: String,
    /// Snapshot time, Unix milliseconds.
    pub timestamp: i64,
    /// YES bids, best first.
    pub yes_bids: Vec<LevelOut>,
    /// NO bids, best first.
    pub no_bids: Vec<LevelOut>,
    /// Top YES bid; null when there is none.
    #[schema(required = true)]
    pub best_yes_bid: Option<f64>,
    /// Top YES ask (`1 −` the top NO bid); null when there is no NO bid.
    #[schema(required = true)]
    pub best_yes_ask: Option<f64>,
    /// `(best_yes_bid + best_yes_ask) / 2` when both exist.
    #[schema(required = true)]
    pub mid: Option<f64>,
    /// `best_yes_ask − best_yes_bid` when both exist.
    #[schema(required = true)]
    pub spread: Option<f64>,
    /// False when the capture lost continuity between the row before this one in time and this one (a dropped
    /// connection, a sequence gap, a silent feed, a restart): changes in between were not recorded. See
    /// `/v1/historical/gaps` for when and why. Rows recorded before the service kept every change are true.
    pub continuous: bool,
}

impl From<&HistoryRow> for VenueASnapshotOut {
    fn from(row: &HistoryRow) -> Self {
        let s = &row.snapshot;
        let top = TopOfBook::of_book(Exchange::VenueA, s);
        let (bid, ask) = (top.bid_price(), top.ask_price());
        let (mid, spread) = mid_spread(bid, ask);
        VenueASnapshotOut {
            market_id: s.market_id.clone(),
            timestamp: s.timestamp.millis(),
            yes_bids: levels(&s.bids),
            no_bids: levels(&s.no_bids),
            best_yes_bid: price(bid),
            best_yes_ask: price(ask),
            mid,
            spread,
            continuous: row.continuous,
        }
    }
}

/// A venue_b snapshot of one token.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueBSnapshotOut {
    /// Condition id of the market.
    pub market_id: String,
    /// Token id.
    pub asset_id: String,
    /// Which side of the market the token is.
    pub outcome: Outcome,
    /// Snapshot time, Unix milliseconds.
    pub timestamp: i64,
    /// Bids, best first.
    pub bids: Vec<LevelOut>,
    /// Asks, best first.
    pub asks: Vec<LevelOut>,
    #[schema(required = true)]
    pub best_bid: Option<f64>,
    #[schema(required = true)]
    pub best_ask: Option<f64>,
    /// `(best_bid + best_ask) / 2` when both exist.
    #[schema(required = true)]
    pub mid: Option<f64>,
    /// `best_ask − best_bid` when both exist.
    #[schema(required = true)]
    pub spread: Option<f64>,
    /// False when the capture lost continuity between the row before this one in time and this one (a dropped
    /// connection, a sequence gap, a silent feed, a restart): changes in between were not recorded. See
    /// `/v1/historical/gaps` for when and why. Rows recorded before the service kept every change are true.
    pub continuous: bool,
}

/// One side (YES or NO) of a unified row.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SideOut {
    pub bids: Vec<LevelOut>,
    pub asks: Vec<LevelOut>,
    #[schema(required = true)]
    pub best_bid: Option<f64>,
    #[schema(required = true)]
    pub best_ask: Option<f64>,
}

/// A row of the `unified` format: both sides of the market at one moment; `mid` and `spread` of the YES side.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnifiedRowOut {
    /// Unix milliseconds.
    pub timestamp: i64,
    pub yes: SideOut,
    pub no: SideOut,
    #[schema(required = true)]
    pub mid: Option<f64>,
    #[schema(required = true)]
    pub spread: Option<f64>,
    /// False when the capture lost continuity between the row before this one in time and this one, on the YES side (a dropped
    /// connection, a sequence gap, a silent feed, a restart): changes in between were not recorded. See
    /// `/v1/historical/gaps` for when and why. Rows recorded before the service kept every change are true.
    pub continuous: bool,
}

/// A row of the `interval` format: top of book of both sides, the market's window, and depth.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IntervalRowOut {
    /// Unix milliseconds.
    pub timestamp: i64,
    /// The market's interval code; null for a market without one (`format=interval` asked explicitly).
    #[schema(required = true)]
    pub interval_code: Option<IntervalCode>,
    /// Window start, ISO 8601.
    #[schema(required = true, format = DateTime)]
    pub window_start: Option<String>,
    /// Window end, ISO 8601.
    #[schema(required = true, format = DateTime)]
    pub window_end: Option<String>,
    #[schema(required = true)]
    pub yes_bid: Option<f64>,
    #[schema(required = true)]
    pub yes_ask: Option<f64>,
    #[schema(required = true)]
    pub no_bid: Option<f64>,
    #[schema(required = true)]
    pub no_ask: Option<f64>,
    /// Of the YES side.
    #[schema(required = true)]
    pub mid: Option<f64>,
    /// Of the YES side.
    #[schema(required = true)]
    pub spread: Option<f64>,
    /// Contracts on the top 5 YES ask levels.
    pub yes_depth: f64,
    /// Contracts on the top 5 NO ask levels.
    pub no_depth: f64,
    /// False when the capture lost continuity between the row before this one in time and this one, on the YES side (a dropped
    /// connection, a sequence gap, a silent feed, a restart): changes in between were not recorded. See
    /// `/v1/historical/gaps` for when and why. Rows recorded before the service kept every change are true.
    pub continuous: bool,
}

/// A row of the unified route, in the format the response names.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(untagged)]
pub enum UnifiedSnapshotOut {
    Unified(UnifiedRowOut),
    Interval(IntervalRowOut),
}

/// Response of `/v1/historical/venue_a/orderbook`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueAHistoryOut {
    pub snapshots: Vec<VenueASnapshotOut>,
    pub pagination: PaginationOut,
}

/// Response of `/v1/historical/venue_b/orderbook`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VenueBHistoryOut {
    pub snapshots: Vec<VenueBSnapshotOut>,
    pub pagination: PaginationOut,
}

/// Response of `/v1/historical/orderbook`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UnifiedHistoryOut {
    pub exchange: Exchange,
    /// The market's venue-native id (for venue_b the condition id, also when asked by numeric id).
    pub market_id: String,
    pub format: FormatName,
    pub snapshots: Vec<UnifiedSnapshotOut>,
    pub pagination: PaginationOut,
}

/// Both sides of a market at one moment, asks best first.
pub(super) struct Sides {
    pub(super) timestamp: i64,
    pub(super) continuous: bool,
    pub(super) yes_bids: Vec<Level>,
    pub(super) yes_asks: Vec<Level>,
    pub(super) no_bids: Vec<Level>,
    pub(super) no_asks: Vec<Level>,
}

impl Sides {
    /// venue_a: two bid ladders; each side's asks are the other side's bids at `1 − p`.
    pub(super) fn venue_a(row: &HistoryRow) -> Sides {
        let s = &row.snapshot;
        Sides {
            timestamp: s.timestamp.millis(),
            continuous: row.continuous,
            yes_bids: s.bids.clone(),
            yes_asks: s.derived_yes_asks(),
            no_bids: s.no_bids.clone(),
            no_asks: s.derived_no_asks(),
        }
    }

    /// venue_b: the YES token's book and the NO token's book as of the same moment.
    pub(super) fn venue_b(row: &HistoryRow, no: Option<&BookSnapshot>) -> Sides {
        let yes = &row.snapshot;
        Sides {
            timestamp: yes.timestamp.millis(),
            continuous: row.continuous,
            yes_bids: yes.bids.clone(),
            yes_asks: yes.asks.clone(),
            no_bids: no.map(|n| n.bids.clone()).unwrap_or_default(),
            no_asks: no.map(|n| n.asks.clone()).unwrap_or_default(),
        }
    }

    /// Mid and spread of the YES side.
    fn yes_mid_spread(&self) -> (Option<f64>, Option<f64>) {
        let top = TopOfBook::of(&self.yes_bids, &self.yes_asks);
        mid_spread(top.bid_price(), top.ask_price())
    }

    pub(super) fn unified(&self) -> UnifiedRowOut {
        let side = |bids: &[Level], asks: &[Level]| SideOut {
            bids: levels(bids),
            asks: levels(asks),
            best_bid: price(book::best(bids)),
            best_ask: price(book::best(asks)),
        };
        let (mid, spread) = self.yes_mid_spread();
        UnifiedRowOut {
            timestamp: self.timestamp,
            yes: side(&self.yes_bids, &self.yes_asks),
            no: side(&self.no_bids, &self.no_asks),
            mid,
            spread,
            continuous: self.continuous,
        }
    }

    pub(super) fn interval(&self, market: &Market) -> IntervalRowOut {
        let depth = |asks: &[Level]| size(book::depth(asks, DEPTH_LEVELS));
        let (mid, spread) = self.yes_mid_spread();
        IntervalRowOut {
            timestamp: self.timestamp,
            interval_code: market.interval_code,
            window_start: market.window_start.map(iso),
            window_end: market.window_end.map(iso),
            yes_bid: price(book::best(&self.yes_bids)),
            yes_ask: price(book::best(&self.yes_asks)),
            no_bid: price(book::best(&self.no_bids)),
            no_ask: price(book::best(&self.no_asks)),
            mid,
            spread,
            yes_depth: depth(&self.yes_asks),
            no_depth: depth(&self.no_asks),
            continuous: self.continuous,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mid_and_spread_are_exact_and_half_up() {
        let p = |m: i64| Some(Price::from_micros(m));
        assert_eq!(mid_spread(p(530_000), p(550_000)), (Some(0.54), Some(0.02)));
        // 0.53 and 0.5401 → mid 0.53505 → 0.5351 (half-up), spread 0.0101.
        assert_eq!(mid_spread(p(530_000), p(540_100)), (Some(0.5351), Some(0.0101)));
        // Crossed books keep their negative spread.
        assert_eq!(mid_spread(p(600_000), p(580_000)), (Some(0.59), Some(-0.02)));
        assert_eq!(mid_spread(None, p(1)), (None, None));
    }
}
