//! The whale-entry data: the `data` of a `whale.entry` webhook (spec 2.13, 6.2) as the tracker publishes it,
//! and the market ticker the feeds show for a trade.

use crossbook_core::{Exchange, whale::WhaleEntry};
use serde_json::{Value, json};

/// The ticker shown for a market: venue_b's slug when known, else the market id.
pub fn market_ticker(exchange: Exchange, market_id: &str, slug: Option<&str>) -> String {
    match (exchange, slug) {
        (Exchange::VenueB, Some(slug)) => slug.to_string(),
        _ => market_id.to_string(),
    }
}

/// The `data` of a `whale.entry` webhook for a whale entry, with the market's ticker and
/// title when the catalog has the market. Beyond the spec's fields it carries the two the feeds show, so a
/// receiver can tell what the whale bet on: `event_title` (null when the catalog does not have the event) and
/// `outcome`, the outcome the taker traded (`YES`/`NO`; with `taker_side` it says which side the whale took).
pub fn whale_entry_data(e: &WhaleEntry) -> Value {
    let t = &e.trade;
    let market = e.market.as_ref();
    let title = market.map_or_else(
        || t.market_id.clone(),
        |m| m.title.clone().unwrap_or_else(|| m.question.clone()),
    );
    json!({
        "exchange": t.exchange.as_str(),
        "event_id": t.event_id,
        "event_title": e.event_title,
        "market_id": t.market_id,
        "market_ticker": market_ticker(t.exchange, &t.market_id, market.and_then(|m| m.slug.as_deref())),
        "market_title": title,
        "source_trade_id": t.source_trade_id,
        "executed_at": t.executed_at.to_iso(),
        "taker_side": t.taker_side.as_str(),
        "outcome": t.outcome.as_str(),
        "price": t.price.to_f64_4(),
        "size": t.size.to_f64(6),
        "notional_usd": t.notional().to_f64(2),
    })
}
