//! Rendering of the arbitrage objects as the API and the `arbitrage.opportunity` webhook send them: the
//! only place where the exact values of [`crossbook_core::arb`] become JSON numbers (the wire format lives
//! in the server, not in the core).
//!
//! Rounding (contracts §1), half-up: cents and dollars 2 decimals, prices 4 decimals, percentages 2
//! decimals; sizes keep their 6 decimals; ladder prices are 4-decimal strings (`"0.5300"`); times ISO 8601
//! with milliseconds. The number helpers are the core's ([`MicroUsd::cents_f64`], [`MicroUsd::dollars_f64`],
//! [`Roi::percent_f64`](crossbook_core::arb::Roi::percent_f64), [`Price::to_f64_4`]).

use crossbook_core::{
    Amount, Level, Outcome, Price,
    arb::{
        Episode, ExecutionLeg, Listing, MarketPair, Masked, MicroUsd, Opportunity, OrderbookDepth, SkipReason,
        SpreadRow, yes_outcome,
    },
};
use serde_json::{Map, Value, json};

/// A ladder level: `{"price": "0.5300", "size": 120.0}`.
pub fn level_json(l: &Level) -> Value {
    json!({ "price": l.price.to_string4(), "size": l.size.to_f64(6) })
}

/// `{"yes": {"market": "venue_a", "asks": [...]}, "no": {...}, "walk": [...]}`: each leg's top asks and the
/// chunks of the depth walk, `{"yes_price": "0.4500", "no_price": "0.5000", "size": 10.0, "net_cents": 1.25}`.
pub fn orderbook_json(ob: &OrderbookDepth) -> Value {
    let leg = |market: &str, asks: &[Level]| json!({ "market": market, "asks": asks.iter().map(level_json).collect::<Vec<_>>() });
    let walk: Vec<Value> = ob
        .walk
        .iter()
        .map(|f| {
            json!({
                "yes_price": f.yes_price.to_string4(),
                "no_price": f.no_price.to_string4(),
                "size": f.size.to_f64(6),
                "net_cents": f.net.cents_f64(),
            })
        })
        .collect();
    json!({ "yes": leg(ob.yes.market.as_str(), &ob.yes.asks), "no": leg(ob.no.market.as_str(), &ob.no.asks), "walk": walk })
}

/// An execution leg. `outcome` is the outcome the leg buys (YES for `yes_leg`, NO for `no_leg`): `book_side`
/// alone does not say it, since venue_b buys either outcome with a `bid` on that outcome's own token book.
/// `fee_cents` is the leg's taker fee per contract at its ask, null when the row is locked.
fn leg_json(l: &ExecutionLeg, outcome: Outcome, fee: Option<MicroUsd>) -> Value {
    json!({
        "market": l.market.as_str(),
        "identifier": l.identifier,
        "book_side": l.book_side.as_str(),
        "action": leg_action(outcome),
        "fee_cents": fee.map(MicroUsd::cents_f64),
    })
}

/// The `action` of a leg that buys `outcome`: `buy_yes` or `buy_no`.
pub fn leg_action(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Yes => "buy_yes",
        Outcome::No => "buy_no",
    }
}

fn amount2(a: Amount) -> f64 {
    a.to_f64(2)
}

/// The fields shared by every surface, with masking applied.
fn body(m: &Masked<&Opportunity>) -> Map<String, Value> {
    let o = m.item;
    let cents = |v: Option<MicroUsd>| v.map(MicroUsd::cents_f64);
    let price = |v: Option<Price>| v.map(Price::to_f64_4);
    let mut map = Map::new();
    let mut put = |k: &str, v: Value| {
        map.insert(k.to_string(), v);
    };
    put("event_id", json!(o.event_id));
    // The pair's id in `/v1/arbitrage/pairs`: the canonical event id is already one per pair.
    put("pair_id", json!(o.event_id));
    put("event_title", json!(o.event_title));
    put("outcome_key", json!(o.outcome_key));
    put("label", json!(o.label));
    put("timestamp", json!(o.timestamp.to_iso()));
    put("market_type", json!(o.market_type.as_str()));
    put("interval_code", json!(o.interval_code.map(|c| c.as_str())));
    put("resolution_time", json!(o.resolution_time.map(|t| t.to_iso())));
    put("venue_a_event_ticker", json!(o.venue_a_event_ticker));
    put("venue_b_event_slug", json!(o.venue_b_event_slug));
    put("settlement_basis", json!(o.settlement_basis.as_str()));
    put(
        "venue_a",
        json!({
            "market_ticker": o.venue_a.market_ticker,
            "yes_ask": price(m.venue_a_yes_ask()),
            "no_ask": price(m.venue_a_no_ask()),
            "volume": amount2(o.venue_a.volume),
            "volume_24h": amount2(o.venue_a.volume_24h),
            "open_interest": amount2(o.venue_a.open_interest),
        }),
    );
    put(
        "venue_b",
        json!({
            "condition_id": o.venue_b.condition_id,
            "yes_token_id": o.venue_b.yes_token_id,
            "no_token_id": o.venue_b.no_token_id,
            "yes_ask": price(m.venue_b_yes_ask()),
            "no_ask": price(m.venue_b_no_ask()),
            "volume": amount2(o.venue_b.volume),
            "liquidity": amount2(o.venue_b.liquidity),
        }),
    );
    put("buy_yes_market", json!(o.buy_yes_market.as_str()));
    put("buy_no_market", json!(o.buy_no_market.as_str()));
    put("gross_cents", json!(cents(m.gross())));
    put("fee_cents", json!(cents(m.fee())));
    put("net_cents", json!(cents(m.net())));
    put("roi_percent", json!(m.roi().map(|r| r.percent_f64())));
    put("executable_size", json!(m.executable_size().map(|a| a.to_f64(6))));
    put("max_profit_dollars", json!(m.max_profit().map(MicroUsd::dollars_f64)));
    put("capital_dollars", json!(m.capital().map(MicroUsd::dollars_f64)));
    put("peak_net_cents", json!(cents(m.peak_net())));
    // Not masked: it names the rates, not a figure, and a locked row's figures are computed at them too.
    put("fee_model", json!(o.fee_model));
    put("yes_leg", leg_json(&o.yes_leg, Outcome::Yes, m.leg_fee(Outcome::Yes)));
    put("no_leg", leg_json(&o.no_leg, Outcome::No, m.leg_fee(Outcome::No)));
    if let Some(ob) = m.orderbook() {
        put("orderbook", orderbook_json(ob));
    }
    map
}

/// An opportunity of `/v1/arbitrage/current` and of the `arbitrage.opportunity` webhook `data`: every field,
/// no `locked`, `opinion: null`, `orderbook` only when captured.
pub fn opportunity_current_json(o: &Opportunity) -> Value {
    let mut map = body(&Masked { item: o, locked: false });
    map.insert("opinion".to_string(), Value::Null);
    Value::Object(map)
}

/// An opportunity of the history, masked: `locked` added, monetary fields null and no `orderbook` when
/// locked; `opinion` omitted.
pub fn opportunity_history_json(m: Masked<&Opportunity>) -> Value {
    let mut map = body(&m);
    map.insert("locked".to_string(), Value::Bool(m.locked));
    Value::Object(map)
}

/// One leg of a pair (`/v1/arbitrage/pairs`).
fn pair_leg_json(l: &Listing) -> Value {
    let m = &l.market;
    json!({
        "exchange": m.exchange.as_str(),
        "market_id": m.market_id,
        "title": m.title.as_deref().unwrap_or(&m.question),
        // The catalog's end of the market: the window end, the time the venue closes trading on it.
        "close_time": m.window_end.map(|t| t.to_iso()),
        "window_start": m.window_start.map(|t| t.to_iso()),
        "window_end": m.window_end.map(|t| t.to_iso()),
        "yes_outcome": yes_outcome(l),
        "resolution_source": l.resolution_source(),
    })
}

/// A pair of `/v1/arbitrage/pairs`: its id (the opportunities' `event_id`), how it was matched, both legs,
/// the settlement facts, and whether the scanner scans it. `rejection_reason` is the operator's note when
/// the pair is rejected.
pub fn pair_json(p: &MarketPair<'_>, skip: Option<SkipReason>, rejection_reason: Option<&str>) -> Value {
    let basis = p.settlement_basis();
    json!({
        "pair_id": p.event_id.as_ref(),
        "kind": p.kind_name(),
        "match_source": p.match_source_name(),
        "interval_code": p.interval_code().map(|c| c.as_str()),
        "title": p.event_title(),
        "venue_a": pair_leg_json(p.venue_a),
        "venue_b": pair_leg_json(p.venue_b),
        "yes_outcomes_differ": p.yes_outcomes_differ(),
        "settlement_basis": basis.as_str(),
        "status": if skip == Some(SkipReason::Rejected) { "rejected" } else { "active" },
        "rejection_reason": rejection_reason,
        "scanned": skip.is_none(),
        "skip_reason": skip.map(SkipReason::as_str),
    })
}

/// A history episode: `{"first_seen_at", "last_seen_at", "opportunity"}`.
pub fn episode_json(m: Masked<&Episode>) -> Value {
    json!({
        "first_seen_at": m.item.first_seen_at.to_iso(),
        "last_seen_at": m.item.last_seen_at.to_iso(),
        "opportunity": opportunity_history_json(m.opportunity()),
    })
}

/// A price-spread row with the venues' display names, and the pair it compares.
pub fn spread_row_json(r: &SpreadRow, side1: &str, side2: &str) -> Value {
    json!({
        "event_id": r.event_id,
        "label": r.label,
        "interval_code": r.interval_code.map(|c| c.as_str()),
        "venue_a_market_id": r.venue_a_market_id,
        "venue_b_market_id": r.venue_b_market_id,
        "window_start": r.window_start.map(|t| t.to_iso()),
        "window_end": r.window_end.map(|t| t.to_iso()),
        "side": r.side.as_str(),
        "side1": side1,
        "side2": side2,
        "side1_price": r.side1_price.to_f64_4(),
        "side2_price": r.side2_price.to_f64_4(),
        "diff": r.diff.dollars_f64_4(),
    })
}

/// The `data` of an `arbitrage.opportunity` webhook: the opportunity object without the captured depth.
pub fn webhook_data(o: &Opportunity) -> Value {
    let mut v = opportunity_current_json(o);
    if let Some(map) = v.as_object_mut() {
        map.remove("orderbook");
    }
    v
}

#[cfg(test)]
mod tests {
    use crossbook_core::{
        IntervalCode, Timestamp,
        arb::{
            EpisodeBook, ScanParams,
            fixtures::{T0, fixture},
            mask_page, scan,
        },
    };

    use super::*;

    #[test]
    fn renders_current_and_history_rows() {
        let now = Timestamp(T0 + 60_000);
        let (listings, books) = fixture(now.millis());
        let mut params = ScanParams::new(now);
        params.include_orderbook = true;
        let o = scan(&listings, &[], &books, &params).remove(0);

        let v = opportunity_current_json(&o);
        assert_eq!(v["event_id"], "BTC-15M-2026-11-21T19:00Z");
        assert_eq!(v["gross_cents"], 5.0);
        assert_eq!(v["fee_cents"], 3.75);
        assert_eq!(v["net_cents"], 1.25);
        assert_eq!(v["roi_percent"], 1.27);
        assert_eq!(v["executable_size"], 12.0);
        assert_eq!(v["max_profit_dollars"], 0.13);
        assert_eq!(v["venue_a"]["yes_ask"], 0.45);
        assert_eq!(v["venue_b"]["no_ask"], 0.5);
        assert_eq!(v["buy_yes_market"], "venue_a");
        assert_eq!(
            v["yes_leg"],
            json!({"market": "venue_a", "identifier": "KXBTC15M-26NOV211415-15", "book_side": "bid", "action": "buy_yes", "fee_cents": 2.0})
        );
        assert_eq!(v["no_leg"]["fee_cents"], 1.75);
        // The fixture buys NO on venue_b: a bid on the NO token's own book.
        assert_eq!(v["no_leg"]["market"], "venue_b");
        assert_eq!(v["no_leg"]["identifier"], v["venue_b"]["no_token_id"]);
        assert_eq!(v["no_leg"]["book_side"], "bid");
        assert_eq!(v["no_leg"]["action"], "buy_no");
        assert_eq!(
            v["orderbook"]["yes"]["asks"][0],
            json!({"price": "0.4500", "size": 10.0})
        );
        assert_eq!(v["orderbook"]["no"]["market"], "venue_b");
        assert_eq!(
            v["orderbook"]["walk"],
            json!([
                {"yes_price": "0.4500", "no_price": "0.5000", "size": 10.0, "net_cents": 1.25},
                {"yes_price": "0.4600", "no_price": "0.5000", "size": 2.0, "net_cents": 0.25},
            ])
        );
        assert_eq!(v["timestamp"], "2026-11-21T19:01:00.000Z");
        assert_eq!(v["resolution_time"], "2026-11-21T19:15:02.000Z");
        assert_eq!(v["interval_code"], "15m");
        assert_eq!(v["market_type"], "binary");
        assert_eq!(v["fee_model"], "venue_a:0.07;venue_b:crypto=0.07");
        assert!(v["opinion"].is_null() && v.get("opinion").is_some());
        assert!(v.get("locked").is_none());

        let mut book = EpisodeBook::new();
        let eps: Vec<_> = book
            .observe(std::slice::from_ref(&o), now)
            .iter()
            .map(|c| c.episode().clone())
            .collect();
        let page = [eps[0].clone(), eps[0].clone()];
        let masked = mask_page(&page, 0, true);
        let open = episode_json(masked[0]);
        let locked = episode_json(masked[1]);
        assert_eq!(open["first_seen_at"], "2026-11-21T19:01:00.000Z");
        assert_eq!(open["opportunity"]["locked"], false);
        assert_eq!(open["opportunity"]["net_cents"], 1.25);
        assert_eq!(open["opportunity"]["peak_net_cents"], 1.25);
        assert!(open["opportunity"].get("opinion").is_none());
        assert!(open["opportunity"].get("orderbook").is_some());
        let lo = &locked["opportunity"];
        assert_eq!(lo["locked"], true);
        for k in [
            "gross_cents",
            "fee_cents",
            "net_cents",
            "roi_percent",
            "executable_size",
            "max_profit_dollars",
            "capital_dollars",
            "peak_net_cents",
        ] {
            assert!(lo[k].is_null() && lo.get(k).is_some(), "{k}");
        }
        for leg in ["venue_a", "venue_b"] {
            assert!(lo[leg]["yes_ask"].is_null() && lo[leg]["no_ask"].is_null());
        }
        for leg in ["yes_leg", "no_leg"] {
            assert!(
                lo[leg]["fee_cents"].is_null() && lo[leg].get("fee_cents").is_some(),
                "{leg}"
            );
        }
        assert!(lo.get("orderbook").is_none());
        assert_eq!(lo["fee_model"], "venue_a:0.07;venue_b:crypto=0.07");
        assert_eq!(lo["event_id"], "BTC-15M-2026-11-21T19:00Z");
        // Trader: nothing locked on any page.
        let all = mask_page(&page, 50, false);
        assert_eq!(episode_json(all[1])["opportunity"]["net_cents"], 1.25);
    }

    #[test]
    fn renders_spread_rows() {
        let r = SpreadRow {
            event_id: "BTC-15M-2026-11-21T19:00Z".into(),
            interval_code: Some(IntervalCode::M15),
            label: "BTC 15m Up 19:00-19:15 UTC".into(),
            venue_a_market_id: "KXBTC15M-26NOV211415-15".into(),
            venue_b_market_id: "0xb1".into(),
            window_start: Some(Timestamp(T0)),
            window_end: Some(Timestamp(T0 + 900_000)),
            side: Outcome::No,
            side1_price: Price(123_450),
            side2_price: Price(100_000),
            diff: MicroUsd(23_450),
        };
        let v = spread_row_json(&r, "Venue A", "Venue B");
        assert_eq!(
            v,
            json!({
                "event_id": "BTC-15M-2026-11-21T19:00Z",
                "label": "BTC 15m Up 19:00-19:15 UTC",
                "interval_code": "15m",
                "venue_a_market_id": "KXBTC15M-26NOV211415-15",
                "venue_b_market_id": "0xb1",
                "window_start": "2026-11-21T19:00:00.000Z",
                "window_end": "2026-11-21T19:15:00.000Z",
                "side": "NO", "side1": "Venue A", "side2": "Venue B",
                "side1_price": 0.1235, "side2_price": 0.1, "diff": 0.0235
            })
        );
        // A matched pair has no interval and no window: the keys stay, null.
        let matched = SpreadRow {
            interval_code: None,
            window_start: None,
            window_end: None,
            ..r
        };
        let v = spread_row_json(&matched, "Venue A", "Venue B");
        for k in ["interval_code", "window_start", "window_end"] {
            assert!(v[k].is_null() && v.get(k).is_some(), "{k}");
        }
    }
}
