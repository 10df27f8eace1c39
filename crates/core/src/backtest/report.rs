//! What a backtest reports: every opportunity it saw, every trade it made, and the figures over them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Amount, Category, Exchange, IntervalCode, Timestamp, arb::MicroUsd};

use super::{
    fill::{LegFill, Unwind, total},
    params::BacktestParams,
};

/// One opportunity the replay found: a pair priced at or above the threshold in one direction, from when it
/// was first found until it was last found (reappearing within two minutes continues it, as in the
/// recorded history).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenOpportunity {
    pub event_id: String,
    pub outcome_key: String,
    pub label: String,
    pub buy_yes_market: Exchange,
    pub buy_no_market: Exchange,
    pub first_seen_at: Timestamp,
    pub last_seen_at: Timestamp,
    /// Net edge per contract when first found, and the best while it lasted.
    pub net: MicroUsd,
    pub peak_net: MicroUsd,
    /// The depth walk's size and profit when first found.
    pub executable_size: Amount,
    pub max_profit: MicroUsd,
    /// Whether the run traded it.
    pub taken: bool,
}

/// How a trade's legs filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TradeKind {
    /// Both legs filled the size asked.
    Filled,
    /// Both legs filled the same, less than asked.
    Partial,
    /// One leg filled more than the other: the second leg was not there (or not all of it).
    SecondLegMissed,
}

impl TradeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TradeKind::Filled => "filled",
            TradeKind::Partial => "partial",
            TradeKind::SecondLegMissed => "second_leg_missed",
        }
    }
}

/// How a trade's held contracts were valued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Valuation {
    /// Every held contract's market has a recorded outcome: it paid 1 dollar or nothing.
    Settled,
    /// At least one market had no recorded outcome: its contracts are valued at their book's mid at the end of
    /// the range (its bid without an ask; nothing without a bid, or where the book was unknown then).
    Marked,
}

impl Valuation {
    pub fn as_str(self) -> &'static str {
        match self {
            Valuation::Settled => "settled",
            Valuation::Marked => "marked",
        }
    }
}

/// One trade: both legs, the sale of an unmatched leg if any, and the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trade {
    /// 1, 2, … in detection order.
    pub id: u64,
    pub event_id: String,
    pub label: String,
    pub category: Category,
    pub interval_code: Option<IntervalCode>,
    pub detected_at: Timestamp,
    /// Net edge per contract at detection.
    pub detected_net: MicroUsd,
    /// What the depth walk at detection promised for the size asked, after fees.
    pub expected_pnl: MicroUsd,
    pub yes: LegFill,
    pub no: LegFill,
    pub kind: TradeKind,
    /// Contracts bought on both legs.
    pub matched: Amount,
    pub unwind: Option<Unwind>,
    pub valuation: Valuation,
    /// When the result is known: the later settlement of the two markets, or the end of the range for a
    /// marked trade.
    pub closed_at: Timestamp,
    /// What the held contracts paid (or are marked at).
    pub payout: MicroUsd,
    /// What the legs cost with their fees: the capital the trade held.
    pub capital: MicroUsd,
    /// Payout and sale proceeds less cost, before fees.
    pub pnl_gross: MicroUsd,
    /// Both legs' fees and the sale's.
    pub fees: MicroUsd,
    /// The result after fees, rounded once from the exact sum.
    pub pnl_net: MicroUsd,
}

/// The figures of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub latency_ms: i64,
    pub opportunities_taken: u64,
    pub trades: u64,
    pub filled: u64,
    pub partial: u64,
    pub second_legs_missed: u64,
    /// Orders that met no contract on either leg.
    pub unfilled: u64,
    /// Opportunities passed over because the capital was in use (or too little for one contract).
    pub skipped_capital: u64,
    /// Opportunities abandoned because a leg's book lost continuity between detection and the order.
    pub skipped_gap: u64,
    /// Orders still on their way at the end of the range.
    pub cut_by_end: u64,
    /// The most capital open trades held at once.
    pub capital_used: MicroUsd,
    pub pnl_gross: MicroUsd,
    pub fees: MicroUsd,
    pub pnl_net: MicroUsd,
    /// The deepest fall of the equity curve from a previous high (0 or more).
    pub max_drawdown: MicroUsd,
    pub settled_trades: u64,
    pub marked_trades: u64,
}

/// One point of the equity curve: the summed net result of the trades closed by `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EquityPoint {
    pub at: Timestamp,
    pub pnl_net: MicroUsd,
}

/// The trades of one group (an interval, a category, a pair) and their result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub key: String,
    pub trades: u64,
    pub pnl_gross: MicroUsd,
    pub pnl_net: MicroUsd,
}

/// A backtest's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub params: BacktestParams,
    /// Pairs priced, books read and book events replayed.
    pub pairs: u64,
    pub books: u64,
    pub events: u64,
    pub opportunities_seen: u64,
    pub summary: Summary,
    /// The same replay with no latency.
    pub zero_latency: Summary,
    /// What latency cost: the zero-latency net result less this run's.
    pub latency_cost: MicroUsd,
    pub equity: Vec<EquityPoint>,
    pub by_interval: Vec<Group>,
    pub by_category: Vec<Group>,
    pub by_pair: Vec<Group>,
    /// Markets whose contracts were marked to the book (no recorded outcome), as `venue:market_id`.
    pub marked_markets: Vec<String>,
    pub opportunities: Vec<SeenOpportunity>,
    pub trades: Vec<Trade>,
}

/// The equity curve of `trades` (by close time, then id) and its maximum drawdown.
pub(crate) fn equity(trades: &[Trade]) -> (Vec<EquityPoint>, MicroUsd) {
    let mut order: Vec<&Trade> = trades.iter().collect();
    order.sort_by_key(|t| (t.closed_at, t.id));
    let (mut total, mut peak, mut drawdown) = (MicroUsd::ZERO, MicroUsd::ZERO, MicroUsd::ZERO);
    let mut points = Vec::with_capacity(order.len());
    for t in order {
        total += t.pnl_net;
        peak = peak.max(total);
        drawdown = drawdown.max(peak - total);
        points.push(EquityPoint {
            at: t.closed_at,
            pnl_net: total,
        });
    }
    (points, drawdown)
}

/// The trades grouped by `key`, in key order.
pub(crate) fn groups(trades: &[Trade], key: impl Fn(&Trade) -> String) -> Vec<Group> {
    let mut by: BTreeMap<String, Vec<&Trade>> = BTreeMap::new();
    for t in trades {
        by.entry(key(t)).or_default().push(t);
    }
    by.into_iter()
        .map(|(key, ts)| Group {
            key,
            trades: ts.len() as u64,
            pnl_gross: total(ts.iter().map(|t| t.pnl_gross)),
            pnl_net: total(ts.iter().map(|t| t.pnl_net)),
        })
        .collect()
}
