//! Cross-venue arbitrage backtests on the recorded books: the pure engine behind `crossbook backtest` and
//! `/v1/backtests`.
//!
//! The caller replays both venues' book logs over `[from, to]` in receive-time order and hands each event to
//! [`Backtest::apply`]; the engine prices every pair of the changed book with the scanner's
//! [`scan_one`](crate::arb::scan_one), so a backtest finds exactly what the live scanner would have found on
//! the same books. Each new opportunity is traded under [`BacktestParams`]:
//! - its size is the depth walk's at `min_net`, in whole contracts, cut to what the capital allows at the
//!   detected prices;
//! - each leg is a limit order at the walk's last price on that leg, sent at detection (or, venue A first,
//!   the second leg once the first's fill is known) and filled against the book as it stood `latency_ms`
//!   later, walking the asks up to the limit;
//! - contracts one leg bought and the other did not match are sold into their bids or held
//!   ([`MissingLeg`]);
//! - an order whose book lost continuity after detection is not made (counted in `skipped_gap`);
//! - held contracts pay 1 dollar or nothing by the market's recorded outcome, or are marked to their book's
//!   mid at `to` when the market has none (its bid without an ask, nothing without a bid).
//!
//! Each opportunity is taken once, when first found. A twin run with no latency trades the same
//! opportunities on the same books, so the report states what latency cost. Money is exact throughout
//! (micro-dollars, sums in 1e-12 dollar, rounded once per figure) and nothing depends on a clock or on hash
//! order: the same events and parameters give the same report.

mod books;
mod engine;
mod fill;
mod params;
mod report;
#[cfg(test)]
mod tests;

pub use books::Update;
pub use engine::{Backtest, Settlement, Settlements};
pub use fill::{LegFill, Unwind};
pub use params::{
    BacktestParams, DEFAULT_CAPITAL_PER_TRADE, DEFAULT_CAPITAL_TOTAL, DEFAULT_LATENCY_MS, DEFAULT_MIN_NET, LegOrder,
    MAX_LATENCY_MS, MissingLeg,
};
pub use report::{EquityPoint, Group, Report, SeenOpportunity, Summary, Trade, TradeKind, Valuation};
