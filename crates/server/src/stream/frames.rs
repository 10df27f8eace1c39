//! The channel messages, rendered from domain events at the stream's edge (DESIGN §2: each consumer of the
//! bus renders at its own edge). Prices follow the REST API's rule (book levels four-decimal strings, a
//! trade's price a number) and times are ISO 8601 with milliseconds; the opportunity and whale objects are
//! the REST and webhook renderings themselves.

use crossbook_core::{
    Exchange, Timestamp, Trade,
    arb::OpportunityChange,
    book::{BookChange, GapCause},
    whale::WhaleEntry,
};
use crossbook_live::{BookChanged, BookKey, LiveBook};
use crossbook_venues::{FeedHealth, Freshness};
use serde_json::{Value, json};

use super::protocol::{Channel, Frag, frag, levels_json, side_name};
use crate::{arbitrage::render::opportunity_current_json, whales::entry::whale_entry_data};

fn book_id(key: &BookKey) -> Value {
    json!({ "exchange": key.exchange.as_str(), "market_id": key.market_id, "asset_id": key.asset_id })
}

/// The answer to a `subscribe`.
pub fn subscribed(channel: Channel, fields: Value) -> Frag {
    frag("subscribed", Some(channel), None, None, fields)
}

/// The answer to an `unsubscribe`.
pub fn unsubscribed(channel: Channel, fields: Value) -> Frag {
    frag("unsubscribed", Some(channel), None, None, fields)
}

/// A `snapshot` of a live book as it is now.
pub fn book_snapshot(key: &BookKey, e: &LiveBook) -> Frag {
    let mut f = book_id(key);
    f["book_seq"] = json!(e.seq);
    f["bids"] = levels_json(&e.book.bids);
    f["asks"] = levels_json(&e.book.asks);
    f["no_bids"] = levels_json(&e.book.no_bids);
    frag(
        "snapshot",
        Some(Channel::Book),
        Some(e.book.timestamp),
        Some(e.updated_at),
        f,
    )
}

/// A book change as the venue sent it: a `snapshot` when it sent the whole book, else a `change` with the
/// levels' new absolute sizes. `None` for an event with nothing to show.
pub fn book_change(c: &BookChanged) -> Option<Frag> {
    let mut f = book_id(&c.key);
    f["book_seq"] = json!(c.book_seq);
    let kind = match &c.change {
        BookChange::Snapshot { bids, asks, no_bids } => {
            f["bids"] = levels_json(bids);
            f["asks"] = levels_json(asks);
            f["no_bids"] = levels_json(no_bids);
            "snapshot"
        }
        BookChange::Delta(changes) if !changes.is_empty() => {
            f["changes"] = Value::Array(
                changes
                    .iter()
                    .map(|l| json!({ "side": side_name(l.side), "price": l.price.four_decimals().as_str(), "size": l.size.to_f64(6) }))
                    .collect(),
            );
            "change"
        }
        BookChange::Delta(_) | BookChange::Gap(_) => return None,
    };
    Some(frag(
        kind,
        Some(Channel::Book),
        c.venue_ts.or(Some(c.timestamp)),
        Some(c.received_at),
        f,
    ))
}

/// A book that lost continuity: unknown until its next `snapshot`. `book_seq` is the gap's number (the log's
/// `gap` event has the same `seq`). `cause` is `null` for a book found stale when a client subscribes (the
/// live map keeps the mark, not its cause).
pub fn book_stale(key: &BookKey, cause: Option<GapCause>, at: Timestamp, book_seq: u64) -> Frag {
    let mut f = book_id(key);
    f["book_seq"] = json!(book_seq);
    f["cause"] = json!(cause);
    frag("stale", Some(Channel::Book), None, Some(at), f)
}

/// A `gap` on the status channel: books of a venue that lost continuity (each with its gap's number), and
/// why.
pub fn gap(exchange: Exchange, keys: &[BookKey], book_seqs: &[u64], cause: GapCause, at: Timestamp) -> Frag {
    let books: Vec<Value> = keys
        .iter()
        .zip(book_seqs)
        .map(|(k, seq)| json!({ "market_id": k.market_id, "asset_id": k.asset_id, "book_seq": seq }))
        .collect();
    frag(
        "gap",
        Some(Channel::Status),
        None,
        Some(at),
        json!({ "exchange": exchange.as_str(), "cause": cause, "books": books }),
    )
}

/// A `venue` message: a venue's feed as `/readyz` sees it (the same freshness rule, the same counts, the
/// same reason when it is not fresh, and since when its state has held).
pub fn venue(exchange: Exchange, h: &FeedHealth, freshness: &Freshness, since: Timestamp) -> Frag {
    let reason = match freshness {
        Freshness::Fresh => None,
        Freshness::Waiting(why) | Freshness::Stale(why) | Freshness::Degraded(why) => Some(why),
    };
    frag(
        "venue",
        Some(Channel::Status),
        None,
        h.last_message_at,
        json!({
            "exchange": exchange.as_str(),
            "connected": h.connected,
            "fresh": reason.is_none(),
            "reason": reason,
            "since": since.to_iso(),
            "mode": h.mode.as_str(),
            "books": h.books,
            "stale_books": h.stale_books,
        }),
    )
}

/// A `trade`.
pub fn trade(t: &Trade, received_at: Timestamp) -> Frag {
    frag(
        "trade",
        Some(Channel::Trades),
        Some(t.executed_at),
        Some(received_at),
        json!({
            "exchange": t.exchange.as_str(),
            "event_id": t.event_id,
            "market_id": t.market_id,
            "outcome": t.outcome.as_str(),
            "trade_id": t.source_trade_id,
            "executed_at": t.executed_at.to_iso(),
            "taker_side": t.taker_side.as_str(),
            "price": t.price.to_f64_4(),
            "size": t.size.to_f64(6),
            "notional_usd": t.notional().to_f64(2),
        }),
    )
}

/// The id of an episode, as its identity in the history: event, outcome, direction and first sighting.
pub fn episode_id(c: &OpportunityChange) -> String {
    format!(
        "{}|{}|{}|{}",
        c.key.event_id,
        c.key.outcome_key,
        c.key.buy_yes_market.as_str(),
        c.first_seen_at.millis()
    )
}

/// An `opportunity` that opened, changed or closed.
pub fn opportunity(c: &OpportunityChange, received_at: Timestamp) -> Frag {
    frag(
        "opportunity",
        Some(Channel::Arbitrage),
        Some(c.opportunity.timestamp),
        Some(received_at),
        json!({
            "change": c.kind.as_str(),
            "episode": { "id": episode_id(c), "first_seen_at": c.first_seen_at.to_iso() },
            "opportunity": opportunity_current_json(&c.opportunity),
        }),
    )
}

/// A `whale`: the `whale.entry` webhook's data.
pub fn whale(w: &WhaleEntry, received_at: Timestamp) -> Frag {
    frag(
        "whale",
        Some(Channel::Whales),
        Some(w.trade.executed_at),
        Some(received_at),
        json!({ "data": whale_entry_data(w) }),
    )
}

#[cfg(test)]
mod tests {
    use crossbook_core::{Amount, Price, book::LevelChange, book::Side};

    use super::*;
    use crate::stream::protocol::envelope;

    #[test]
    fn a_delta_renders_its_levels_and_an_empty_one_renders_nothing() {
        let key = BookKey::venue_a("KX-1");
        let mut c = BookChanged {
            key,
            book_seq: 9,
            timestamp: Timestamp::from_millis(5),
            change: BookChange::Delta(vec![LevelChange {
                side: Side::NoBid,
                price: Price::from_cents(47),
                size: Amount::from_units(0),
            }]),
            venue_ts: None,
            received_at: Timestamp::from_millis(6),
        };
        let v: Value = serde_json::from_str(&envelope(
            1,
            &Timestamp::from_millis(7).to_iso(),
            &book_change(&c).unwrap(),
        ))
        .unwrap();
        assert_eq!(v["type"], "change");
        assert_eq!(v["book_seq"], 9);
        assert_eq!(
            v["changes"],
            json!([{"side": "no_bid", "price": "0.4700", "size": 0.0}])
        );
        assert_eq!(
            v["venue_ts"], "1970-01-01T00:00:00.005Z",
            "the book's time when the venue sends none"
        );
        assert_eq!(v["received_at"], "1970-01-01T00:00:00.006Z");
        c.change = BookChange::Delta(vec![]);
        assert!(book_change(&c).is_none());
    }
}
