//! venue_a wire shapes (post-March-2026 fixed-point form, PROTOCOLS A.3–A.6 and `samples/kalshi_*.json`):
//! prices are 4-decimal dollar strings (`"0.4700"`), counts 2-decimal strings (`"312.00"`), strikes and
//! `fee_multiplier` JSON numbers, times RFC 3339.

use crossbook_core::{Amount, Exchange, Price, Timestamp};
use serde_json::{Value, json};

use crate::{
    model::{
        Model,
        book::{Ladder, YesBook},
        types::{Phase, SimEvent, SimMarket, SimSeries, SimTrade, Top},
    },
    render::{fixed, iso_micros, iso_millis, iso_secs, number},
};

/// `"0.4700"`.
pub(crate) fn dollars(p: Price) -> String {
    p.to_string4()
}

/// `"312.00"` (`"-12.00"` for deltas).
pub(crate) fn count(a: Amount) -> String {
    fixed(a.micros(), 2)
}

/// `[["0.4300","500.00"], …]`.
pub(crate) fn ladder(levels: &Ladder) -> Value {
    Value::Array(levels.iter().map(|(p, s)| json!([dollars(*p), count(*s)])).collect())
}

/// `$80,712.34` from cents.
fn usd(cents: i64) -> String {
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("${grouped}.{:02}", cents % 100)
}

fn ts_plus(t: Timestamp, ms: i64) -> Timestamp {
    Timestamp::from_millis(t.millis() + ms)
}

/// `Series` (A.3).
pub(crate) fn series(s: &SimSeries, volume: Option<Amount>) -> Value {
    let source = match s.category.as_str() {
        "Crypto" => json!([{"name": "CF Benchmarks", "url": "https://www.cfbenchmarks.com/data/indices/BRTI"}]),
        _ => json!([]),
    };
    let mut v = json!({
        "ticker": s.series_id,
        "title": s.title,
        "frequency": s.frequency,
        "category": s.category,
        "tags": [s.category],
        "settlement_sources": source,
        "contract_url": format!("https://venue-a.invalid/contracts/{}.pdf", s.series_id),
        "contract_terms_url": format!("https://venue-a.invalid/contract-terms/{}.pdf", s.series_id),
        "fee_type": "quadratic",
        "fee_multiplier": 1,
        "additional_prohibitions": [],
        "product_metadata": null,
        "last_updated_ts": "2026-01-01T00:00:00Z",
    });
    if let Some(vol) = volume {
        v["volume_fp"] = json!(count(vol));
    }
    v
}

/// The `status` filter value (`unopened|open|closed|settled`) an event matches.
pub(crate) fn event_status(model: &Model, e: &SimEvent) -> &'static str {
    let phases: Vec<Phase> = e
        .markets
        .iter()
        .filter_map(|id| model.market(Exchange::VenueA, id))
        .map(|m| m.phase)
        .collect();
    if phases.contains(&Phase::Open) {
        "open"
    } else if !phases.is_empty() && phases.iter().all(|p| *p == Phase::Upcoming) {
        "unopened"
    } else if !phases.is_empty() && phases.iter().all(|p| *p == Phase::Settled) {
        "settled"
    } else {
        "closed"
    }
}

/// `EventData` (A.3), with `markets` when `nested`.
pub(crate) fn event(model: &Model, e: &SimEvent, nested: bool) -> Value {
    let mut v = json!({
        "event_ticker": e.event_id,
        "series_ticker": e.series_id,
        "title": e.title,
        "sub_title": e.sub_title,
        "collateral_return_type": if e.mutually_exclusive { "MECNET" } else { "" },
        "mutually_exclusive": e.mutually_exclusive,
        "category": e.category,
        "strike_date": if e.interval.is_some() { json!(iso_secs(e.end)) } else { Value::Null },
        "strike_period": null,
        "available_on_brokers": true,
        "product_metadata": null,
        "last_updated_ts": iso_secs(e.created),
    });
    if nested {
        v["markets"] = Value::Array(event_markets(model, e));
    }
    v
}

pub(crate) fn event_markets(model: &Model, e: &SimEvent) -> Vec<Value> {
    e.markets
        .iter()
        .filter_map(|id| model.market(Exchange::VenueA, id))
        .map(|m| market(model, m))
        .collect()
}

/// `Market` (A.3), the shape of `samples/kalshi_market.json`.
pub(crate) fn market(model: &Model, m: &SimMarket) -> Value {
    let top = model.top(Exchange::VenueA, &m.market_id);
    let (yes_bid, yes_bid_size) = top
        .bid
        .map_or((Price::ZERO, Amount::ZERO), |(p, s)| (Price::from_cents(p), s));
    // YES ask = 1 − best NO bid; the NO bid ladder is the YES ask ladder mirrored.
    let (yes_ask, yes_ask_size) = top
        .ask
        .map_or((Price::ONE, Amount::ZERO), |(p, s)| (Price::from_cents(p), s));
    let settled = m.phase == Phase::Settled;
    let window = m.interval.is_some();
    let target = m
        .strike_cents
        .map(|c| format!("Target Price: {}", usd(c)))
        .unwrap_or_default();
    let (yes_sub, no_sub) = if window {
        (target.clone(), target)
    } else {
        (m.yes_label.clone(), m.no_label.clone())
    };
    let settle_at = ts_plus(m.close_time, m.settle_delay_ms);
    let result = match (settled, m.result) {
        (true, Some(crossbook_core::Outcome::Yes)) => "yes",
        (true, Some(crossbook_core::Outcome::No)) => "no",
        _ => "",
    };
    let mut v = json!({
        "ticker": m.market_id,
        "event_ticker": m.event_id,
        "market_type": "binary",
        "title": m.question,
        "subtitle": "",
        "yes_sub_title": yes_sub,
        "no_sub_title": no_sub,
        "created_time": iso_micros(m.created),
        "updated_time": iso_micros(if m.phase >= Phase::Open { m.open_time } else { m.created }),
        "open_time": iso_secs(m.open_time),
        "close_time": iso_secs(m.close_time),
        "expected_expiration_time": iso_secs(settle_at),
        "expiration_time": iso_secs(ts_plus(m.close_time, 7 * 86_400_000)),
        "latest_expiration_time": iso_secs(ts_plus(m.close_time, 7 * 86_400_000)),
        "occurrence_datetime": iso_secs(settle_at),
        "settlement_timer_seconds": m.settle_delay_ms / 1000,
        "status": m.phase.venue_a_status(),
        "notional_value_dollars": "1.0000",
        "yes_bid_dollars": dollars(yes_bid),
        "yes_bid_size_fp": count(yes_bid_size),
        "yes_ask_dollars": dollars(yes_ask),
        "yes_ask_size_fp": count(yes_ask_size),
        "no_bid_dollars": dollars(yes_ask.complement()),
        "no_ask_dollars": dollars(yes_bid.complement()),
        "last_price_dollars": dollars(m.last_price.unwrap_or(Price::ZERO)),
        "previous_yes_bid_dollars": "0.0000",
        "previous_yes_ask_dollars": "0.0000",
        "previous_price_dollars": "0.0000",
        "volume_fp": count(m.volume),
        "volume_24h_fp": count(m.volume),
        "open_interest_fp": count(m.open_interest),
        "liquidity_dollars": "0.0000",
        "result": result,
        "can_close_early": false,
        "fractional_trading_enabled": false,
        "expiration_value": match (settled, m.final_cents) {
            (true, Some(c)) => fixed(c * 10_000, 2),
            _ => String::new(),
        },
        "settlement_value_dollars": if settled {
            json!(if result == "yes" { "1.0000" } else { "0.0000" })
        } else {
            Value::Null
        },
        "settlement_ts": m.settled_at.map_or(Value::Null, |t| json!(iso_secs(t))),
        "fee_waiver_expiration_time": null,
        "early_close_condition": null,
        "floor_strike": m.strike_cents.map_or(Value::Null, |c| number(c * 10_000)),
        "cap_strike": null,
        "functional_strike": null,
        "custom_strike": null,
        "rules_primary": m.description,
        "rules_secondary": "",
        "price_level_structure": "linear_cent",
        "price_ranges": [{"start": "0.0000", "end": "1.0000", "step": "0.0100"}],
        "is_provisional": false,
        "primary_participant_key": null,
    });
    if window {
        v["strike_type"] = json!("greater_or_equal");
    }
    v
}

/// `{"orderbook_fp": {"yes_dollars": [...], "no_dollars": [...]}}`, `depth` levels per side nearest the
/// top (0 = all), ascending with the best level last.
pub(crate) fn orderbook_fp(book: Option<&YesBook>, depth: usize) -> Value {
    let empty = YesBook::default();
    let book = book.unwrap_or(&empty);
    let cut = |mut l: Ladder| {
        if depth > 0 && l.len() > depth {
            l.drain(..l.len() - depth);
        }
        l
    };
    json!({
        "yes_dollars": ladder(&cut(book.venue_a_yes())),
        "no_dollars": ladder(&cut(book.venue_a_no())),
    })
}

/// `Trade` (A.5).
pub(crate) fn trade(t: &SimTrade) -> Value {
    let side = outcome_side(t);
    json!({
        "trade_id": t.trade_id,
        "ticker": t.market_id,
        "count_fp": count(t.size),
        "yes_price_dollars": dollars(t.yes_price()),
        "no_price_dollars": dollars(t.yes_price().complement()),
        "taker_side": side,
        "taker_outcome_side": side,
        "taker_book_side": if side == "yes" { "bid" } else { "ask" },
        "is_block_trade": false,
        "created_time": iso_micros(t.at),
    })
}

pub(crate) fn outcome_side(t: &SimTrade) -> &'static str {
    match t.outcome {
        crossbook_core::Outcome::Yes => "yes",
        crossbook_core::Outcome::No => "no",
    }
}

/// WS `ticker` message body (A.6).
pub(crate) fn ticker_msg(ticker: &str, market_uuid: &str, top: &Top, now: Timestamp) -> Value {
    let bid = top.bid.map_or(Price::ZERO, |(p, _)| Price::from_cents(p));
    let ask = top.ask.map_or(Price::ONE, |(p, _)| Price::from_cents(p));
    let last = top.last_price.unwrap_or(Price::ZERO);
    json!({
        "market_ticker": ticker,
        "market_id": market_uuid,
        "price_dollars": dollars(last),
        "yes_bid_dollars": dollars(bid),
        "yes_ask_dollars": dollars(ask),
        "volume_fp": count(top.volume),
        "open_interest_fp": count(top.open_interest),
        "yes_bid_size_fp": count(top.bid.map_or(Amount::ZERO, |(_, s)| s)),
        "yes_ask_size_fp": count(top.ask.map_or(Amount::ZERO, |(_, s)| s)),
        "last_trade_size_fp": count(top.last_size),
        "dollar_volume": Amount::notional(last, top.volume).micros() / 1_000_000,
        "dollar_open_interest": Amount::notional(last, top.open_interest).micros() / 1_000_000,
        "ts": now.secs(),
        "ts_ms": now.millis(),
        "time": iso_millis(now),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_price_text() {
        assert_eq!(usd(8_071_234), "$80,712.34");
        assert_eq!(usd(99_905), "$999.05");
        assert_eq!(usd(100_000_000), "$1,000,000.00");
    }
}
