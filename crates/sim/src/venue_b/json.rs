//! venue_b wire shapes (PROTOCOLS B.2–B.5 and `samples/polymarket_*.json`). The mixed typing is the
//! venue's own and deliberate here: Gamma market `volume`/`liquidity` are strings but `volumeNum`,
//! `bestBid`… are numbers, event-level `volume` is a number, `outcomes`/`outcomePrices`/`clobTokenIds` are
//! strings holding JSON arrays; CLOB book prices and sizes are strings, `timestamp` a string of
//! milliseconds; Data API `size`/`price` are numbers and `timestamp` integer seconds.

use crossbook_core::{Amount, Exchange, Outcome, Price, Timestamp};
use serde_json::{Value, json};

use crate::{
    model::{
        Model,
        book::{Ladder, YesBook},
        types::{Phase, SimEvent, SimMarket, SimSeries, SimTrade, Tag, Top},
    },
    render::{fixed, iso_micros, iso_secs, number, trimmed},
};

const B: Exchange = Exchange::VenueB;
const IMAGE: &str = "https://venue-b.invalid/images/";

/// A price as the venue prints it at the market's tick: `"0.47"` (0.01) or `"0.470"` (0.001).
pub(crate) fn price_text(p: Price, tick: Price) -> String {
    fixed(p.micros(), if tick.micros() < 10_000 { 3 } else { 2 })
}

/// A size without trailing zeros: `"110"`, `"212.49"`.
pub(crate) fn size_text(a: Amount) -> String {
    trimmed(a.micros())
}

/// `"0.01"` / `"0.001"`.
pub(crate) fn tick_text(tick: Price) -> String {
    trimmed(tick.micros())
}

/// `[{"price": "0.47", "size": "110"}, …]` in the given order.
fn levels(l: &Ladder, tick: Price) -> Value {
    Value::Array(
        l.iter()
            .map(|(p, s)| json!({"price": price_text(*p, tick), "size": size_text(*s)}))
            .collect(),
    )
}

/// 40 hex digits standing in for the venue's book hash: a digest of the book's content, so equal books have
/// equal hashes.
pub(crate) fn digest40(text: &str) -> String {
    let mut out = String::with_capacity(48);
    for salt in [0x811c_9dc5u64, 0x1234_5678, 0x9e37_79b9] {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
    }
    out.truncate(40);
    out
}

/// The last trade price of token `index` (`"0.520"`), `"0.500"` before any trade.
fn last_trade_text(m: &SimMarket, index: usize) -> String {
    let p = m
        .last_price
        .map_or(Price::from_cents(50), |p| if index == 0 { p } else { p.complement() });
    fixed(p.micros(), 3)
}

/// Book of token `index` of `m`: `(bids ascending, asks descending, hash)`.
fn token_book(m: &SimMarket, book: &YesBook, index: usize, now: Timestamp) -> (Value, Value, String) {
    let (bids, asks) = book.token_view(index);
    let (bids, asks) = (levels(&bids, m.tick), levels(&asks, m.tick));
    let token = m.tokens.as_ref().map_or("", |t| t[index].as_str());
    let hash = digest40(&format!("{}{token}{}{bids}{asks}", m.market_id, now.millis()));
    (bids, asks, hash)
}

/// CLOB `OrderBookSummary` of token `index` (`GET /book`, `POST /books`).
pub(crate) fn book_summary(m: &SimMarket, book: &YesBook, index: usize, now: Timestamp) -> Value {
    let (bids, asks, hash) = token_book(m, book, index, now);
    json!({
        "market": m.market_id,
        "asset_id": m.tokens.as_ref().map(|t| t[index].clone()),
        "timestamp": now.millis().to_string(),
        "hash": hash,
        "bids": bids,
        "asks": asks,
        "min_order_size": "5",
        "tick_size": tick_text(m.tick),
        "neg_risk": false,
        "last_trade_price": last_trade_text(m, index),
    })
}

/// WS `book` event of token `index`.
pub(crate) fn book_event(m: &SimMarket, book: &YesBook, index: usize, now: Timestamp) -> Value {
    let (bids, asks, hash) = token_book(m, book, index, now);
    json!({
        "event_type": "book",
        "asset_id": m.tokens.as_ref().map(|t| t[index].clone()),
        "market": m.market_id,
        "bids": bids,
        "asks": asks,
        "timestamp": now.millis().to_string(),
        "hash": format!("0x{hash}"),
        "last_trade_price": last_trade_text(m, index),
        "tick_size": tick_text(m.tick),
    })
}

/// Best bid and ask of token `index` from a YES-book top, as text (`"0"`/`"1"` for an empty side).
pub(crate) fn token_best(top: &Top, index: usize, tick: Price) -> (String, String, Option<(i64, i64)>) {
    let (bid, ask) = match index {
        0 => (top.bid.map(|b| b.0), top.ask.map(|a| a.0)),
        _ => (top.ask.map(|a| 100 - a.0), top.bid.map(|b| 100 - b.0)),
    };
    let text = |c: Option<i64>, empty: &str| c.map_or(empty.to_string(), |c| price_text(Price::from_cents(c), tick));
    (text(bid, "0"), text(ask, "1"), bid.zip(ask))
}

fn tags(tags: &[Tag]) -> Value {
    Value::Array(
        tags.iter()
            .map(|t| json!({"id": t.id, "label": t.label, "slug": t.slug}))
            .collect(),
    )
}

/// Fee parameters by category (fee schedule v2, PROTOCOLS B.7): fee type, taker rate and rebate rate, the
/// rates in millionths.
fn fee_schedule(category: &str) -> (&'static str, i64, i64) {
    match category {
        "Crypto" => ("crypto_fees_v2", 70_000, 200_000),
        "Sports" => ("sports_fees_v2", 30_000, 250_000),
        "Politics" => ("politics_fees_v2", 40_000, 200_000),
        _ => ("culture_fees_v2", 50_000, 200_000),
    }
}

/// Fee parameters by category as Gamma prints them.
fn fees(category: &str) -> (&'static str, Value, Value) {
    let (kind, rate, rebate) = fee_schedule(category);
    (kind, number(rate), number(rebate))
}

/// The taker rate a fill of a market in `category` was charged, in basis points as the real feed's
/// `fee_rate_bps` string (`"0"` on a fee-free market). Derived from the same schedule Gamma publishes, so a
/// client that checks the two sees them agree: 0.07 = 70,000 millionths = 700 bps.
pub(crate) fn fee_rate_bps(category: &str) -> String {
    let (_, rate, _) = fee_schedule(category);
    (rate / 100).to_string()
}

/// Dollars resting in a book (Σ price × size over both sides of the YES book).
fn liquidity(book: Option<&YesBook>) -> Amount {
    let Some(b) = book else { return Amount::ZERO };
    b.bids
        .iter()
        .map(|(p, s)| Amount::notional(Price::from_cents(*p), *s))
        .chain(
            b.asks
                .iter()
                .map(|(p, s)| Amount::notional(Price::from_cents(100 - p), *s)),
        )
        .fold(Amount::ZERO, Amount::saturating_add)
}

/// Traded dollars, valued at the last price (or 0.50).
fn volume_usd(m: &SimMarket) -> Amount {
    Amount::notional(m.last_price.unwrap_or(Price::from_cents(50)), m.volume)
}

fn pg_time(t: Timestamp) -> String {
    // The venue prints sports start times as `2026-05-12 23:00:00+00`.
    let s = iso_secs(t);
    format!("{} {}+00", &s[..10], &s[11..19])
}

/// Gamma `Market`. `with_events` adds the compact `events` list the `/markets` listing carries.
pub(crate) fn market(model: &Model, m: &SimMarket, with_events: bool) -> Value {
    let top = model.top(B, &m.market_id);
    let event = model.event(B, &m.event_id);
    let category = event.map_or("", |e| e.category.as_str());
    let settled = m.phase == Phase::Settled;
    let mid = match (top.bid, top.ask) {
        (Some((b, _)), Some((a, _))) => Price::from_micros((b + a) * 5_000),
        _ => m.last_price.unwrap_or(Price::from_cents(50)),
    };
    let prices = match (settled, m.result) {
        (true, Some(Outcome::Yes)) => ("1".to_string(), "0".to_string()),
        (true, _) => ("0".to_string(), "1".to_string()),
        _ => (trimmed(mid.micros()), trimmed(mid.complement().micros())),
    };
    let tokens = m.tokens.clone().unwrap_or_default();
    let (fee_type, rate, rebate) = fees(category);
    let liq = liquidity(model.yes_book(B, &m.market_id));
    let vol = volume_usd(m);
    let cents = |c: Option<(i64, Amount)>| c.map_or(Value::Null, |(p, _)| number(p * 10_000));
    let spread = match (top.bid, top.ask) {
        (Some((b, _)), Some((a, _))) => number((a - b) * 10_000),
        _ => Value::Null,
    };
    let image = format!("{IMAGE}{}.png", m.series_id);
    let mut v = json!({
        "id": m.gamma_id,
        "question": m.question,
        "conditionId": m.market_id,
        "slug": m.slug,
        "resolutionSource": event.map_or(String::new(), resolution_source),
        "endDate": iso_secs(m.close_time),
        "startDate": iso_micros(m.created),
        "endDateIso": iso_secs(m.close_time)[..10].to_string(),
        "startDateIso": iso_secs(m.created)[..10].to_string(),
        "image": image,
        "icon": image,
        "description": m.description,
        "outcomes": format!("[\"{}\", \"{}\"]", m.yes_label, m.no_label),
        "outcomePrices": format!("[\"{}\", \"{}\"]", prices.0, prices.1),
        "clobTokenIds": format!("[\"{}\", \"{}\"]", tokens[0], tokens[1]),
        "liquidity": fixed(liq.micros(), 4),
        "volume": fixed(vol.micros(), 6),
        "liquidityNum": number(liq.micros()),
        "volumeNum": number(vol.micros()),
        "volume24hr": number(vol.micros()),
        "volumeClob": number(vol.micros()),
        "liquidityClob": number(liq.micros()),
        "active": true,
        "closed": settled,
        "archived": false,
        "restricted": true,
        "questionID": m.wire_uuid,
        "enableOrderBook": true,
        "acceptingOrders": m.trading(),
        "acceptingOrdersTimestamp": iso_secs(m.created),
        "orderPriceMinTickSize": number(m.tick.micros()),
        "orderMinSize": 5,
        "negRisk": false,
        "bestBid": cents(top.bid),
        "bestAsk": cents(top.ask),
        "spread": spread,
        "lastTradePrice": number(m.last_price.unwrap_or(Price::ZERO).micros()),
        "oneHourPriceChange": 0,
        "clearBookOnStart": false,
        "umaResolutionStatuses": if settled { "[\"resolved\"]" } else { "[]" },
        "makerBaseFee": 1000,
        "takerBaseFee": 1000,
        "feesEnabled": true,
        "feeType": fee_type,
        "feeSchedule": {"exponent": 1, "rate": rate, "takerOnly": true, "rebateRate": rebate},
        "makerRebatesFeeShareBps": 10000,
        "rewardsMinSize": 50,
        "rewardsMaxSpread": number(4_500_000),
    });
    if m.protocol_v2() {
        // The market trades on protocol v2: its outcome ids are `positionIds`; `clobTokenIds` keeps ids
        // that no book, socket or trade answers for, so a client that ignores `version` follows nothing.
        v["version"] = json!("v2");
        v["positionIds"] = v["clobTokenIds"].clone();
        v["clobTokenIds"] = json!(format!(
            "[\"{}\", \"{}\"]",
            retired_id(&tokens[0]),
            retired_id(&tokens[1])
        ));
    }
    if m.interval.is_some() {
        v["eventStartTime"] = json!(iso_secs(m.open_time));
    }
    if let Some(e) = event.filter(|e| e.category == "Sports") {
        v["gameStartTime"] = json!(pg_time(e.start));
    }
    if let Some(t) = m.settled_at {
        v["closedTime"] = json!(pg_time(t));
    }
    if with_events && let Some(e) = event {
        v["events"] = json!([{
            "id": e.event_id,
            "ticker": e.slug,
            "slug": e.slug,
            "title": e.title,
            "startDate": iso_micros(e.created),
            "endDate": iso_secs(e.end),
            "startTime": iso_secs(e.start),
            "active": true,
            "closed": event_closed(model, e),
            "seriesSlug": e.series_id,
        }]);
    }
    v
}

/// A protocol v1 id standing for `token` on a v2 market: the same digits with another first digit.
fn retired_id(token: &str) -> String {
    let first = if token.starts_with('9') { '8' } else { '9' };
    format!("{first}{}", &token[1..])
}

fn resolution_source(e: &SimEvent) -> String {
    let marker = "resolution source for this market is ";
    e.description.find(marker).map_or(String::new(), |i| {
        e.description[i + marker.len()..].trim_end_matches('.').to_string()
    })
}

/// An event is closed once every market in it is.
pub(crate) fn event_closed(model: &Model, e: &SimEvent) -> bool {
    e.markets
        .iter()
        .filter_map(|id| model.market(B, id))
        .all(|m| m.phase == Phase::Settled)
}

/// Gamma `Series` (as nested in events and served by `/series`).
pub(crate) fn series(model: &Model, s: &SimSeries) -> Value {
    let vol = model
        .markets(B)
        .filter(|m| m.series_id == s.series_id)
        .fold(Amount::ZERO, |a, m| a.saturating_add(volume_usd(m)));
    json!({
        "id": s.gamma_id,
        "ticker": s.series_id,
        "slug": s.series_id,
        "title": s.title,
        "seriesType": "single",
        "recurrence": s.frequency,
        "active": true,
        "closed": false,
        "volume24hr": number(vol.micros()),
        "volume": number(vol.micros()),
        "liquidity": 0,
    })
}

/// Gamma `Event` with nested markets, series and tags (`samples/polymarket_gamma_event.json`).
pub(crate) fn event(model: &Model, e: &SimEvent) -> Value {
    let markets: Vec<&SimMarket> = e.markets.iter().filter_map(|id| model.market(B, id)).collect();
    let vol = markets
        .iter()
        .fold(Amount::ZERO, |a, m| a.saturating_add(volume_usd(m)));
    let liq = markets.iter().fold(Amount::ZERO, |a, m| {
        a.saturating_add(liquidity(model.yes_book(B, &m.market_id)))
    });
    let oi = markets
        .iter()
        .fold(Amount::ZERO, |a, m| a.saturating_add(m.open_interest));
    let closed = event_closed(model, e);
    let image = format!("{IMAGE}{}.png", e.series_id);
    let mut v = json!({
        "id": e.event_id,
        "ticker": e.slug,
        "slug": e.slug,
        "title": e.title,
        "description": e.description,
        "resolutionSource": resolution_source(e),
        "startDate": iso_micros(e.created),
        "creationDate": iso_micros(e.created),
        "endDate": iso_secs(e.end),
        "startTime": iso_secs(e.start),
        "image": image,
        "icon": image,
        "active": true,
        "closed": closed,
        "archived": false,
        "new": false,
        "featured": false,
        "restricted": true,
        "liquidity": number(liq.micros()),
        "volume": number(vol.micros()),
        "openInterest": number(oi.micros()),
        "volume24hr": number(vol.micros()),
        "competitive": number(999_906),
        "enableOrderBook": true,
        "liquidityClob": number(liq.micros()),
        "negRisk": false,
        "commentCount": 0,
        "seriesSlug": e.series_id,
        "markets": markets.iter().map(|m| market(model, m, false)).collect::<Vec<_>>(),
        "series": model.series(B, &e.series_id).map(|s| vec![series(model, s)]).unwrap_or_default(),
        "tags": tags(&e.tags),
    });
    if let Some(m) = markets.first().filter(|m| m.interval.is_some())
        && let Some(strike) = m.strike_cents
    {
        let mut meta = json!({"priceToBeat": number(strike * 10_000)});
        if let (Some(fin), true) = (m.final_cents, m.phase >= Phase::Closed) {
            meta["finalPrice"] = number(fin * 10_000);
        }
        v["eventMetadata"] = meta;
    }
    if closed && let Some(t) = markets.iter().filter_map(|m| m.settled_at).max() {
        v["closedTime"] = json!(pg_time(t));
    }
    v
}

/// Data API trade (`samples/polymarket_data_api_trades.json`).
pub(crate) fn data_trade(model: &Model, t: &SimTrade) -> Value {
    let m = model.market(B, &t.market_id);
    let e = model.event(B, &t.event_id);
    let index = m
        .and_then(|m| m.token_index(t.token_id.as_deref().unwrap_or("")))
        .unwrap_or(0);
    let outcome = m.map_or(String::new(), |m| {
        if index == 0 {
            m.yes_label.clone()
        } else {
            m.no_label.clone()
        }
    });
    json!({
        "proxyWallet": t.wallet,
        "side": if t.taker_side == crossbook_core::TakerSide::Buy { "BUY" } else { "SELL" },
        "asset": t.token_id,
        "conditionId": t.market_id,
        "size": number(t.size.micros()),
        "price": number(t.price.micros()),
        "timestamp": t.at.secs(),
        "title": m.map_or(String::new(), |m| m.question.clone()),
        "slug": m.and_then(|m| m.slug.clone()),
        "icon": format!("{IMAGE}{}.png", m.map_or("", |m| m.series_id.as_str())),
        "eventSlug": e.and_then(|e| e.slug.clone()),
        "outcome": outcome,
        "outcomeIndex": index,
        "name": "",
        "pseudonym": t.pseudonym,
        "bio": "",
        "profileImage": "",
        "profileImageOptimized": "",
        "transactionHash": t.trade_id,
    })
}

/// Data API v2 trade row: snake_case, decimal strings for size and price, Unix milliseconds.
pub(crate) fn data_trade_v2(model: &Model, t: &SimTrade) -> Value {
    let v1 = data_trade(model, t);
    json!({
        "proxy_wallet": v1["proxyWallet"],
        "side": v1["side"],
        "asset": v1["asset"],
        "condition_id": v1["conditionId"],
        "size": size_text(t.size),
        "price": trimmed(t.price.micros()),
        "timestamp": t.at.millis(),
        "title": v1["title"],
        "slug": v1["slug"],
        "event_slug": v1["eventSlug"],
        "outcome": v1["outcome"],
        "outcome_index": v1["outcomeIndex"],
        "pseudonym": v1["pseudonym"],
        "transaction_hash": v1["transactionHash"],
    })
}

/// WS `new_market` (custom features): sent to every session for every market listed, as the venue
/// broadcasts it platform-wide.
pub(crate) fn new_market(model: &Model, m: &SimMarket, ts: &str) -> Value {
    let e = model.event(B, &m.event_id);
    let tokens = m.tokens.clone().unwrap_or_default();
    json!({
        "event_type": "new_market",
        "id": m.gamma_id,
        "question": m.question,
        "market": m.market_id,
        "condition_id": m.market_id,
        "slug": m.slug,
        "description": m.description,
        "assets_ids": tokens,
        "clob_token_ids": tokens,
        "outcomes": [m.yes_label, m.no_label],
        "event_message": e.map(|e| json!({"id": e.event_id, "ticker": e.slug, "slug": e.slug, "title": e.title,
                                           "description": e.description})),
        "tags": e.map(|e| e.tags.iter().map(|t| t.label).collect::<Vec<_>>()).unwrap_or_default(),
        "active": true,
        "order_price_min_tick_size": tick_text(m.tick),
        "group_item_title": m.yes_label,
        "fees_enabled": true,
        "timestamp": ts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_follow_the_tick() {
        assert_eq!(price_text(Price::from_cents(47), Price::from_cents(1)), "0.47");
        assert_eq!(price_text(Price::from_cents(3), Price::from_micros(1_000)), "0.030");
        assert_eq!(tick_text(Price::from_micros(1_000)), "0.001");
        assert_eq!(size_text(Amount::from_micros(212_490_000)), "212.49");
        assert_eq!(digest40("x").len(), 40);
        assert_eq!(pg_time(Timestamp::from_secs(1_778_626_800)), "2026-05-12 23:00:00+00");
    }
}
