//! A backtest's report as JSON: the shape `GET /v1/backtests/{id}` answers and `crossbook backtest` prints.
//!
//! Money in a report is exact to the micro-dollar: `_dollars` figures are JSON numbers with up to 6 decimals
//! (a trade's fee of 0.0175 dollar is written as such, not rounded to the cent), per-contract edges are
//! `_cents` with up to 4 decimals, prices up to 6 decimals (an average price is rarely a tick). Times are
//! RFC 3339 in UTC with milliseconds, except the range as the caller gave it (`from`, `to`: Unix
//! milliseconds). The same report always renders to the same bytes.

use crossbook_core::{
    Amount,
    arb::MicroUsd,
    backtest::{BacktestParams, Group, LegFill, Report, SeenOpportunity, Summary, Trade, Unwind},
};
use serde_json::{Value, json};

use crate::api::common::iso;

/// Dollars as a JSON number, exact to the micro-dollar (rendering only).
pub fn dollars(m: MicroUsd) -> f64 {
    m.micros() as f64 / 1_000_000.0
}

/// Cents as a JSON number, exact to the micro-dollar (4 decimals of a cent).
pub fn cents(m: MicroUsd) -> f64 {
    m.micros() as f64 / 10_000.0
}

/// Contracts as a JSON number (whole contracts on venue_a, to 6 decimals on venue_b).
pub fn contracts(a: Amount) -> f64 {
    a.micros() as f64 / 1_000_000.0
}

/// The parameters as a run read them (every default filled in).
pub fn params(p: &BacktestParams) -> Value {
    json!({
        "from": p.from.millis(),
        "to": p.to.millis(),
        "min_net_cents": cents(p.min_net),
        "capital_per_trade_dollars": p.capital_per_trade.map(dollars),
        "capital_total_dollars": p.capital_total.map(dollars),
        "latency_ms": p.latency_ms,
        "leg_order": p.leg_order.as_str(),
        "missing_leg": p.missing_leg.as_str(),
        "venue_b_fee_rate": p.fees.to_string(),
        "interval_code": p.interval_code.map(|c| c.as_str()),
    })
}

fn summary(s: &Summary) -> Value {
    json!({
        "latency_ms": s.latency_ms,
        "opportunities_taken": s.opportunities_taken,
        "trades": s.trades,
        "fills": s.filled,
        "partial_fills": s.partial,
        "second_legs_missed": s.second_legs_missed,
        "unfilled": s.unfilled,
        "skipped_capital": s.skipped_capital,
        "skipped_gap": s.skipped_gap,
        "cut_by_end": s.cut_by_end,
        "capital_used_dollars": dollars(s.capital_used),
        "pnl_gross_dollars": dollars(s.pnl_gross),
        "fees_dollars": dollars(s.fees),
        "pnl_net_dollars": dollars(s.pnl_net),
        "max_drawdown_dollars": dollars(s.max_drawdown),
        "settled_trades": s.settled_trades,
        "marked_trades": s.marked_trades,
    })
}

fn group(g: &Group) -> Value {
    json!({
        "key": g.key,
        "trades": g.trades,
        "pnl_gross_dollars": dollars(g.pnl_gross),
        "pnl_net_dollars": dollars(g.pnl_net),
    })
}

fn opportunity(o: &SeenOpportunity) -> Value {
    json!({
        "event_id": o.event_id,
        "outcome_key": o.outcome_key,
        "label": o.label,
        "buy_yes_market": o.buy_yes_market.as_str(),
        "buy_no_market": o.buy_no_market.as_str(),
        "first_seen_at": iso(o.first_seen_at),
        "last_seen_at": iso(o.last_seen_at),
        "net_cents": cents(o.net),
        "peak_net_cents": cents(o.peak_net),
        "executable_size": contracts(o.executable_size),
        "max_profit_dollars": dollars(o.max_profit),
        "taken": o.taken,
    })
}

fn leg(l: &LegFill) -> Value {
    json!({
        "market": l.venue.as_str(),
        "market_id": l.market_id,
        "identifier": l.identifier,
        "outcome": l.outcome.as_str(),
        "at": iso(l.at),
        "limit_price": dollars(MicroUsd::from_price(l.limit)),
        "requested": contracts(l.requested),
        "filled": contracts(l.filled),
        "average_price": l.average_price.map(dollars),
        "cost_dollars": dollars(l.cost),
        "fee_dollars": dollars(l.fee),
    })
}

/// The fields of a trade's `unwind`, in one place for the object and for the CSV columns of a trade without
/// one.
pub const UNWIND_FIELDS: [&str; 7] = [
    "market",
    "outcome",
    "at",
    "unmatched",
    "sold",
    "proceeds_dollars",
    "fee_dollars",
];

fn unwind(u: &Unwind) -> Value {
    let values = [
        json!(u.venue.as_str()),
        json!(u.outcome.as_str()),
        json!(iso(u.at)),
        json!(contracts(u.unmatched)),
        json!(contracts(u.sold)),
        json!(dollars(u.proceeds)),
        json!(dollars(u.fee)),
    ];
    Value::Object(UNWIND_FIELDS.iter().map(|k| k.to_string()).zip(values).collect())
}

/// One trade.
pub fn trade(t: &Trade) -> Value {
    json!({
        "id": t.id,
        "event_id": t.event_id,
        "label": t.label,
        "category": t.category.as_str(),
        "interval_code": t.interval_code.map(|c| c.as_str()),
        "detected_at": iso(t.detected_at),
        "detected_net_cents": cents(t.detected_net),
        "expected_pnl_dollars": dollars(t.expected_pnl),
        "kind": t.kind.as_str(),
        "matched": contracts(t.matched),
        "yes_leg": leg(&t.yes),
        "no_leg": leg(&t.no),
        "unwind": t.unwind.as_ref().map(unwind),
        "valuation": t.valuation.as_str(),
        "closed_at": iso(t.closed_at),
        "payout_dollars": dollars(t.payout),
        "capital_dollars": dollars(t.capital),
        "pnl_gross_dollars": dollars(t.pnl_gross),
        "fees_dollars": dollars(t.fees),
        "pnl_net_dollars": dollars(t.pnl_net),
    })
}

/// The whole report.
pub fn report(r: &Report) -> Value {
    json!({
        "params": params(&r.params),
        "pairs": r.pairs,
        "books": r.books,
        "events": r.events,
        "opportunities_seen": r.opportunities_seen,
        "opportunities_taken": r.summary.opportunities_taken,
        "pnl_gross_dollars": dollars(r.summary.pnl_gross),
        "pnl_net_dollars": dollars(r.summary.pnl_net),
        "max_drawdown_dollars": dollars(r.summary.max_drawdown),
        "latency_cost_dollars": dollars(r.latency_cost),
        "summary": summary(&r.summary),
        "zero_latency": summary(&r.zero_latency),
        "equity": r.equity.iter().map(|p| json!({"at": iso(p.at), "pnl_net_dollars": dollars(p.pnl_net)})).collect::<Vec<_>>(),
        "by_interval": r.by_interval.iter().map(group).collect::<Vec<_>>(),
        "by_category": r.by_category.iter().map(group).collect::<Vec<_>>(),
        "by_pair": r.by_pair.iter().map(group).collect::<Vec<_>>(),
        "marked_markets": r.marked_markets,
        "opportunities": r.opportunities.iter().map(opportunity).collect::<Vec<_>>(),
        "trades": r.trades.iter().map(trade).collect::<Vec<_>>(),
    })
}

/// The report as stored and served.
pub fn report_bytes(r: &Report) -> Vec<u8> {
    serde_json::to_vec(&report(r)).unwrap_or_default()
}
