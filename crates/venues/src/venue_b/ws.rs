//! venue_b market-channel WebSocket protocol state (PROTOCOLS B.5).
//!
//! ```text
//! → {"assets_ids":[…],"type":"market","initial_dump":true,"level":2,"custom_feature_enabled":true}
//! ← [{"event_type":"book","asset_id":…,"bids":[{"price":"0.51","size":"212.49"}],…}, …]
//! ← {"event_type":"price_change","price_changes":[{"asset_id":…,"price":"0.51","size":"262.49","side":"BUY"}],…}
//! → PING            ← PONG          (text, every 10 s; not JSON)
//! → {"operation":"subscribe"|"unsubscribe","assets_ids":[…],"custom_feature_enabled":true}
//! ```
//!
//! There is no sequence number: a `book` frame replaces the local book (sent on subscribe and after
//! trades), a `price_change` sets the **absolute** size of a level (`"0"` removes it). Both tokens of a
//! market are subscribed; each has its own book. Fills (`last_trade_price`) carry no trade id or trader, so
//! they only prompt a read of the public tape, which is the source of record for trades.

use std::collections::{HashMap, HashSet};

use crossbook_core::{
    Amount, BookSnapshot, Exchange, Price, Timestamp,
    book::{GapCause, LevelChange, Side},
};
use serde::Deserialize;
use serde_json::json;
use tracing::{debug, warn};

use super::{model, normalise};
use crate::{
    classify::{Ladder, levels},
    error::VenueError,
    venue::{BookUpdate, FeedSession, FeedUpdate, MarketSet},
    wire::Num,
};
use crossbook_live::BookKey;

const EX: Exchange = Exchange::VenueB;
/// How long a subscribed token may wait for its `book` before it is subscribed again; doubles per attempt
/// up to [`RESNAPSHOT_MAX_MS`].
const RESNAPSHOT_AFTER_MS: i64 = 2_000;
const RESNAPSHOT_MAX_MS: i64 = 60_000;

/// A local book of one token.
#[derive(Debug, Default)]
struct LocalBook {
    market: String,
    bids: Ladder,
    asks: Ladder,
}

/// The protocol state of one venue_b connection.
#[derive(Debug, Default)]
pub struct Session {
    /// Followed tokens → their condition id.
    assets: HashMap<String, String>,
    subscribed: HashSet<String>,
    /// Whether the first (`type: market`) subscription went out on this connection.
    initial_sent: bool,
    books: HashMap<String, LocalBook>,
    /// Tokens subscribed without a `book` yet: since when, and how many times asked.
    awaiting: HashMap<String, (Timestamp, u32)>,
}

/// What one level change of a `price_change` did.
enum Level {
    Set(LevelChange),
    /// The token has no book (yet): nothing to apply.
    NoBook,
    /// The change cannot apply; the book was dropped.
    Bad(BookKey),
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    fn subscribe_msg(&mut self, mut assets: Vec<String>, now: Timestamp) -> Option<String> {
        if assets.is_empty() {
            return None;
        }
        assets.sort();
        for a in &assets {
            let attempts = self.awaiting.get(a).map_or(0, |(_, n)| n + 1);
            self.awaiting.insert(a.clone(), (now, attempts));
        }
        let msg = if self.initial_sent {
            json!({"operation": "subscribe", "assets_ids": assets, "custom_feature_enabled": true})
        } else {
            self.initial_sent = true;
            json!({
                "assets_ids": assets,
                "type": "market",
                "initial_dump": true,
                "level": 2,
                "custom_feature_enabled": true,
            })
        };
        Some(msg.to_string())
    }

    fn snapshot_of(&self, asset: &str, timestamp: Timestamp) -> Option<BookSnapshot> {
        let b = self.books.get(asset)?;
        Some(BookSnapshot {
            exchange: EX,
            market_id: b.market.clone(),
            asset_id: Some(asset.to_string()),
            timestamp,
            bids: levels(&b.bids, true),
            asks: levels(&b.asks, false),
            no_bids: Vec::new(),
        })
    }

    /// Sets one level to an absolute size and returns the change; `None` when the token has no book yet (the
    /// change is dropped: the `book` that follows the subscription carries it).
    fn set_level(&mut self, asset: &str, side: &str, price: &Num, size: &Num) -> Result<Level, String> {
        let price: Price = price.price().map_err(|e| format!("price: {e}"))?;
        let size: Amount = size.amount().map_err(|e| format!("size: {e}"))?;
        let Some(book) = self.books.get_mut(asset) else {
            return Ok(Level::NoBook);
        };
        let (ladder, side) = match side.to_ascii_uppercase().as_str() {
            "BUY" => (&mut book.bids, Side::Bid),
            "SELL" => (&mut book.asks, Side::Ask),
            other => return Err(format!("unknown side {other:?}")),
        };
        // A level our book cannot hold (a price outside (0, 1), a negative size) means it and the venue's
        // differ: the book is dropped, so the tick asks for a fresh one, rather than guessed at.
        if let Err(e) = crossbook_core::book::check_level(price, size) {
            warn!(venue = %EX, %asset, %price, %size, error = %e, "a change that does not apply to our book; resnapshotting it");
            metrics::counter!("crossbook_venue_bad_deltas_total", "venue" => EX.as_str()).increment(1);
            let market = book.market.clone();
            self.books.remove(asset);
            return Ok(Level::Bad(BookKey::venue_b(&market, asset)));
        }
        if size.micros() == 0 {
            ladder.remove(&price);
        } else {
            ladder.insert(price, size);
        }
        Ok(Level::Set(LevelChange { side, price, size }))
    }

    fn on_event(&mut self, ev: model::WsEvent, now: Timestamp) -> Result<FeedUpdate, String> {
        use model::WsEvent as E;
        let mut update = FeedUpdate {
            data: true,
            ..Default::default()
        };
        match ev {
            E::Book(b) => {
                if !self.assets.contains_key(&b.asset_id) {
                    return Ok(update);
                }
                let snap = normalise::book(&b, now).map_err(|e| e.to_string())?;
                self.awaiting.remove(&b.asset_id);
                self.books.insert(
                    b.asset_id.clone(),
                    LocalBook {
                        market: b.market.clone(),
                        bids: snap.bids.iter().map(|l| (l.price, l.size)).collect(),
                        asks: snap.asks.iter().map(|l| (l.price, l.size)).collect(),
                    },
                );
                let venue_ts = b.timestamp.map(|t| t.timestamp());
                update.books.push(BookUpdate::snapshot(snap, None, venue_ts));
            }
            E::PriceChange(pc) => {
                let venue_ts = pc.timestamp.map(|t| t.timestamp());
                // The changes of each token, in the order the frame lists them.
                let mut touched: Vec<(String, Vec<LevelChange>)> = Vec::new();
                let mut apply = |s: &mut Session, asset: &str, side: &str, price: &Num, size: &Num| {
                    match s.set_level(asset, side, price, size)? {
                        Level::Set(change) => match touched.iter_mut().find(|(a, _)| a == asset) {
                            Some((_, changes)) => changes.push(change),
                            None => touched.push((asset.to_string(), vec![change])),
                        },
                        Level::NoBook => {}
                        Level::Bad(key) => update.stale.push((key, GapCause::BadMessage)),
                    }
                    Ok::<(), String>(())
                };
                match (&pc.price_changes, &pc.asset_id, &pc.changes) {
                    (Some(items), _, _) => {
                        for c in items {
                            apply(self, &c.asset_id, &c.side, &c.price, &c.size)?;
                        }
                    }
                    (None, Some(asset), Some(changes)) => {
                        for c in changes {
                            apply(self, asset, &c.side, &c.price, &c.size)?;
                        }
                    }
                    (None, Some(asset), None) => match (&pc.side, &pc.price, &pc.size) {
                        (Some(side), Some(price), Some(size)) => apply(self, asset, side, price, size)?,
                        _ => return Err("price_change without price_changes, changes or a level".into()),
                    },
                    _ => return Err("price_change without price_changes or changes".into()),
                }
                for (asset, changes) in touched {
                    if let Some(book) = self.snapshot_of(&asset, venue_ts.unwrap_or(now)) {
                        update.books.push(BookUpdate::delta(book, changes, None, venue_ts));
                    }
                }
            }
            E::LastTradePrice(_) => update.backfill_trades = true,
            E::TickSizeChange(t) => {
                debug!(venue = %EX, asset = %t.asset_id, old = ?t.old_tick_size, new = ?t.new_tick_size, "tick size changed");
            }
            E::NewMarket(_) | E::MarketResolved(_) => update.catalog_hint = true,
            E::BestBidAsk(_) | E::Unknown => {}
        }
        Ok(update)
    }
}

impl FeedSession for Session {
    fn sync_markets(&mut self, markets: &MarketSet) -> FeedUpdate {
        self.assets = markets
            .values()
            .flat_map(|m| {
                [&m.yes_token_id, &m.no_token_id]
                    .into_iter()
                    .flatten()
                    .map(|t| (t.clone(), m.market_id.clone()))
            })
            .collect();
        let mut send = Vec::new();
        let mut gone: Vec<String> = self
            .subscribed
            .iter()
            .filter(|a| !self.assets.contains_key(*a))
            .cloned()
            .collect();
        if !gone.is_empty() {
            gone.sort();
            for a in &gone {
                self.subscribed.remove(a);
                self.books.remove(a);
                self.awaiting.remove(a);
            }
            send.push(json!({"operation": "unsubscribe", "assets_ids": gone}).to_string());
        }
        let new: Vec<String> = self
            .assets
            .keys()
            .filter(|a| !self.subscribed.contains(*a))
            .cloned()
            .collect();
        self.subscribed.extend(new.iter().cloned());
        send.extend(self.subscribe_msg(new, Timestamp::now()));
        FeedUpdate::sending(send)
    }

    fn resubscribe(&mut self, cause: GapCause) -> FeedUpdate {
        let mut update = FeedUpdate {
            stale: self
                .books
                .iter()
                .map(|(asset, b)| (BookKey::venue_b(&b.market, asset), cause))
                .collect(),
            ..Default::default()
        };
        self.books.clear();
        self.awaiting.clear();
        let mut all: Vec<String> = self.assets.keys().cloned().collect();
        all.sort();
        if self.initial_sent && !self.subscribed.is_empty() {
            let mut old: Vec<String> = self.subscribed.iter().cloned().collect();
            old.sort();
            update
                .send
                .push(json!({"operation": "unsubscribe", "assets_ids": old}).to_string());
        }
        self.subscribed = all.iter().cloned().collect();
        update.send.extend(self.subscribe_msg(all, Timestamp::now()));
        update
    }

    /// Tokens still without a `book` after their wait (the answer to their subscription was lost, e.g. to a
    /// silent feed) are unsubscribed and subscribed again: the venue sends a `book` only for a token it
    /// does not consider subscribed yet.
    fn on_tick(&mut self, now: Timestamp) -> FeedUpdate {
        let mut due: Vec<String> = self
            .assets
            .keys()
            .filter(|a| !self.books.contains_key(*a))
            .filter(|a| {
                self.awaiting.get(*a).is_none_or(|(since, n)| {
                    let wait = (RESNAPSHOT_AFTER_MS << (*n).min(5)).min(RESNAPSHOT_MAX_MS);
                    now.millis() - since.millis() >= wait
                })
            })
            .cloned()
            .collect();
        if due.is_empty() {
            return FeedUpdate::default();
        }
        due.sort();
        debug!(venue = %EX, tokens = due.len(), "books missing; subscribing those tokens again");
        let mut send = Vec::new();
        if self.initial_sent {
            send.push(json!({"operation": "unsubscribe", "assets_ids": due}).to_string());
        }
        self.subscribed.extend(due.iter().cloned());
        send.extend(self.subscribe_msg(due, now));
        FeedUpdate::sending(send)
    }

    fn on_text(&mut self, text: &str, now: Timestamp) -> FeedUpdate {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("PONG") || trimmed.eq_ignore_ascii_case("PING") {
            // A keepalive: the connection is alive, though no market changed.
            return FeedUpdate {
                alive: true,
                ..Default::default()
            };
        }
        let malformed = |reason: String, payload: &str| FeedUpdate {
            malformed: vec![VenueError::malformed(EX, "websocket frame", reason, payload)],
            ..Default::default()
        };
        let value: serde_json::Value = match serde_json::from_str(trimmed) {
            Ok(v) => v,
            Err(e) => return malformed(e.to_string(), text),
        };
        let items = match value {
            serde_json::Value::Array(items) => items,
            other => vec![other],
        };
        let mut update = FeedUpdate::default();
        for item in items {
            let parsed = model::WsEvent::deserialize(&item)
                .map_err(|e| e.to_string())
                .and_then(|ev| self.on_event(ev, now));
            match parsed {
                Ok(u) => update.absorb(u),
                Err(reason) => update.absorb(malformed(reason, &item.to_string())),
            }
        }
        update
    }

    fn keepalive(&self) -> Option<String> {
        Some("PING".to_string())
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::{Level, Market};
    use serde_json::Value;

    use super::*;
    use crossbook_core::book::BookChange;

    const WS_PRICE_CHANGE: &str = include_str!("../../tests/fixtures/polymarket_ws_price_change.json");
    const WS_PRICE_CHANGE_LEGACY: &str =
        include_str!("../../tests/fixtures/variants/polymarket_ws_price_change_legacy_pre_2025-09-15.json");
    const CLOB_BOOK: &str = include_str!("../../tests/fixtures/polymarket_clob_book.json");
    const COND: &str = "0x6f1c2a9e4b7d03a55e8c91f2d4b6a7c8e9f0a1b2c3d4e5f60718293a4b5c6d7e";
    const UP: &str = "48418917734180607831833027288777571190488909295977497623601373906809754084036";
    const DOWN: &str = "14943202171143669362180565155331992758433128192256190594100236888666963607938";

    fn now() -> Timestamp {
        Timestamp::from_millis(1_778_584_000_000)
    }

    fn market(cond: &str, yes: &str, no: &str) -> (String, Market) {
        let m = Market {
            yes_token_id: Some(yes.into()),
            no_token_id: Some(no.into()),
            ..Market::new(EX, cond, "473201", "10192", "Bitcoin Up or Down")
        };
        (cond.to_string(), m)
    }

    fn lv(price: &str, size: &str) -> Level {
        Level {
            price: price.parse().unwrap(),
            size: size.parse().unwrap(),
        }
    }

    fn parse(frames: &[String]) -> Vec<Value> {
        frames.iter().map(|f| serde_json::from_str(f).unwrap()).collect()
    }

    /// A session following the sample market with books of both tokens.
    fn session_with_books() -> Session {
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let down_book = CLOB_BOOK.replace(UP, DOWN);
        let frame = format!(
            "[{}, {}]",
            CLOB_BOOK.replacen('{', r#"{"event_type": "book","#, 1),
            down_book.replacen('{', r#"{"event_type": "book","#, 1)
        );
        let u = s.on_text(&frame, now());
        assert!(u.malformed.is_empty(), "{:?}", u.malformed);
        assert_eq!(u.books.len(), 2, "an array frame carries several events");
        s
    }

    #[test]
    fn subscriptions_follow_the_market_set() {
        let mut s = Session::new();
        let u = s.sync_markets(&MarketSet::new());
        assert!(u.send.is_empty(), "nothing to subscribe yet");
        let u = s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let msgs = parse(&u.send);
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0]["type"], "market");
        assert_eq!(
            msgs[0]["assets_ids"],
            serde_json::json!([DOWN, UP]),
            "both tokens, as strings"
        );
        assert_eq!(msgs[0]["initial_dump"], true);
        assert_eq!(msgs[0]["custom_feature_enabled"], true);
        // A second market later: the operation form.
        let both = MarketSet::from([market(COND, UP, DOWN), market("0x2", "3", "4")]);
        let msgs = parse(&s.sync_markets(&both).send);
        assert_eq!(msgs[0]["operation"], "subscribe");
        assert_eq!(msgs[0]["assets_ids"], serde_json::json!(["3", "4"]));
        // The first market goes away: unsubscribe its tokens.
        let msgs = parse(&s.sync_markets(&MarketSet::from([market("0x2", "3", "4")])).send);
        assert_eq!(msgs[0]["operation"], "unsubscribe");
        assert_eq!(msgs[0]["assets_ids"], serde_json::json!([DOWN, UP]));
        assert_eq!(s.keepalive().as_deref(), Some("PING"));
    }

    #[test]
    fn a_change_that_does_not_apply_drops_the_book_and_asks_for_it_again() {
        for (price, size) in [("1.20", "5"), ("0", "5"), ("0.51", "-3")] {
            let mut s = session_with_books();
            let u = s.on_text(
                &format!(
                    r#"{{"event_type":"price_change","market":"{COND}","timestamp":"1","price_changes":[
                    {{"asset_id":"{UP}","price":"{price}","size":"{size}","side":"BUY"}},
                    {{"asset_id":"{DOWN}","price":"0.48","size":"7","side":"BUY"}}]}}"#
                ),
                now(),
            );
            assert!(u.malformed.is_empty(), "{:?}", u.malformed);
            // The bad token's book is dropped and logged as a gap; the other token's change applies.
            assert_eq!(
                u.stale,
                vec![(BookKey::venue_b(COND, UP), GapCause::BadMessage)],
                "{price} {size}"
            );
            assert_eq!(u.books.len(), 1);
            assert_eq!(u.books[0].asset_id.as_deref(), Some(DOWN));
            // The next tick subscribes the token again for a fresh book.
            let msgs = parse(&s.on_tick(now()).send);
            assert!(
                msgs.iter()
                    .any(|m| m["assets_ids"] == serde_json::json!([UP]) && m["operation"] == "subscribe"),
                "{msgs:?}"
            );
        }
    }

    #[test]
    fn price_change_sets_absolute_sizes_per_asset() {
        let mut s = session_with_books();
        let u = s.on_text(WS_PRICE_CHANGE, now());
        assert!(u.malformed.is_empty(), "{:?}", u.malformed);
        assert_eq!(u.books.len(), 2, "one frame, two assets");
        let up = u.books.iter().find(|b| b.asset_id.as_deref() == Some(UP)).unwrap();
        assert_eq!(up.market_id, COND);
        assert_eq!(up.bids[0], lv("0.51", "262.49"), "absolute, not 212.49 + 262.49");
        assert_eq!(up.timestamp.millis(), 1_778_584_051_512);
        assert_eq!(
            up.change,
            BookChange::Delta(vec![LevelChange {
                side: Side::Bid,
                price: "0.51".parse().unwrap(),
                size: "262.49".parse().unwrap(),
            }]),
            "the log gets the level the venue set"
        );
        assert_eq!(up.venue_ts, Some(Timestamp::from_millis(1_778_584_051_512)));
        assert_eq!(up.venue_seq, None, "venue_b has no sequence numbers");
        let down = u.books.iter().find(|b| b.asset_id.as_deref() == Some(DOWN)).unwrap();
        assert!(down.asks.contains(&lv("0.49", "262.49")), "SELL is the ask side");
        assert_eq!(down.asks[0], lv("0.49", "262.49"), "best ask first");
        // Size "0" removes the level.
        let u = s.on_text(
            &format!(r#"{{"event_type":"price_change","market":"{COND}","timestamp":"1","price_changes":[{{"asset_id":"{UP}","price":"0.51","size":"0","side":"BUY"}}]}}"#),
            now(),
        );
        assert_eq!(u.books[0].bids[0], lv("0.50", "106"));
    }

    #[test]
    fn legacy_price_change() {
        let mut s = session_with_books();
        let u = s.on_text(WS_PRICE_CHANGE_LEGACY, now());
        assert!(u.malformed.is_empty(), "{:?}", u.malformed);
        assert_eq!(u.books.len(), 1);
        assert_eq!(u.books[0].bids[0], lv("0.51", "262.49"));
    }

    /// The flat shape of 2024: one level, its fields beside `asset_id`, no list.
    #[test]
    fn flat_price_change_of_2024() {
        let mut s = session_with_books();
        let u = s.on_text(
            &format!(
                r#"{{"event_type":"price_change","market":"{COND}","asset_id":"{UP}","price":"0.51","size":"262.49","side":"BUY","timestamp":"1"}}"#
            ),
            now(),
        );
        assert!(u.malformed.is_empty(), "{:?}", u.malformed);
        assert_eq!(u.books.len(), 1);
        assert_eq!(u.books[0].bids[0], lv("0.51", "262.49"));
        // Without the level's fields it is still malformed.
        let u = s.on_text(
            &format!(r#"{{"event_type":"price_change","market":"{COND}","asset_id":"{UP}","timestamp":"1"}}"#),
            now(),
        );
        assert_eq!(u.malformed.len(), 1);
    }

    #[test]
    fn changes_before_a_book_and_for_unknown_tokens_are_dropped() {
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let u = s.on_text(WS_PRICE_CHANGE, now());
        assert!(u.books.is_empty() && u.malformed.is_empty());
        let foreign = CLOB_BOOK
            .replace(UP, "777")
            .replacen('{', r#"{"event_type": "book","#, 1);
        let u = s.on_text(&foreign, now());
        assert!(u.books.is_empty());
        assert!(u.data);
    }

    #[test]
    fn keepalives_fills_and_catalog_hints() {
        let mut s = session_with_books();
        let u = s.on_text("PONG", now());
        assert!(!u.data && u.malformed.is_empty(), "PONG is not data");
        assert!(u.alive, "but shows the connection is alive");
        let u = s.on_text(
            &format!(r#"{{"event_type":"last_trade_price","asset_id":"{UP}","market":"{COND}","price":"0.52","size":"10","side":"BUY","timestamp":"1"}}"#),
            now(),
        );
        assert!(u.backfill_trades && u.trades.is_empty(), "fills prompt a tape read");
        let u = s.on_text(
            r#"{"event_type":"new_market","id":"5","slug":"btc-updown-15m-1778584500"}"#,
            now(),
        );
        assert!(u.catalog_hint);
        let u = s.on_text(
            r#"{"event_type":"tick_size_change","asset_id":"1","old_tick_size":"0.01","new_tick_size":"0.001"}"#,
            now(),
        );
        assert!(u.data && u.books.is_empty());
    }

    #[test]
    fn malformed_parts_are_skipped_and_the_rest_applied() {
        let mut s = session_with_books();
        let frame = format!(
            r#"[{{"event_type":"price_change","price_changes":[]}},
               {{"event_type":"price_change","market":"{COND}","timestamp":"1","price_changes":[{{"asset_id":"{UP}","price":"0.40","size":"7","side":"BUY"}}]}},
               {{"event_type":"price_change","market":"{COND}","price_changes":[{{"asset_id":"{UP}","price":"x","size":"7","side":"BUY"}}]}}]"#
        );
        let u = s.on_text(&frame, now());
        assert_eq!(u.malformed.len(), 2);
        assert!(
            u.malformed
                .iter()
                .all(|e| matches!(e, VenueError::Malformed { payload, .. } if payload.contains("price_change")))
        );
        assert_eq!(u.books.len(), 1);
        assert!(u.books[0].bids.contains(&lv("0.40", "7")));
        let u = s.on_text("{oops", now());
        assert!(matches!(&u.malformed[..], [VenueError::Malformed { payload, .. }] if payload == "{oops"));
    }

    #[test]
    fn tokens_without_a_book_are_subscribed_again_with_backoff() {
        let t0 = Timestamp::now();
        let at = |ms: i64| Timestamp::from_millis(t0.millis() + ms);
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let up_book = CLOB_BOOK.replacen('{', r#"{"event_type": "book","#, 1);
        assert_eq!(s.on_text(&up_book, at(10)).books.len(), 1);
        assert!(s.on_tick(at(1_000)).send.is_empty());
        let msgs = parse(&s.on_tick(at(3_000)).send);
        assert_eq!(msgs[0]["operation"], "unsubscribe");
        assert_eq!(msgs[0]["assets_ids"], serde_json::json!([DOWN]));
        assert_eq!(msgs[1]["operation"], "subscribe");
        assert_eq!(msgs[1]["assets_ids"], serde_json::json!([DOWN]));
        assert!(s.on_tick(at(5_000)).send.is_empty(), "the wait doubles");
        assert!(!s.on_tick(at(7_500)).send.is_empty());
        let down_book = CLOB_BOOK
            .replace(UP, DOWN)
            .replacen('{', r#"{"event_type": "book","#, 1);
        s.on_text(&down_book, at(7_600));
        assert!(s.on_tick(at(60_000)).send.is_empty());
    }

    #[test]
    fn resubscribe_drops_books_and_subscribes_again() {
        let mut s = session_with_books();
        let u = s.resubscribe(GapCause::Silence);
        assert!(u.stale.iter().all(|(_, cause)| *cause == GapCause::Silence));
        let mut stale: Vec<String> = u.stale.iter().filter_map(|(k, _)| k.asset_id.clone()).collect();
        stale.sort();
        assert_eq!(stale, vec![DOWN.to_string(), UP.to_string()]);
        let msgs = parse(&u.send);
        assert_eq!(msgs[0]["operation"], "unsubscribe");
        assert_eq!(msgs[1]["operation"], "subscribe");
        assert_eq!(msgs[1]["assets_ids"], serde_json::json!([DOWN, UP]));
        // Until the next `book`, changes are dropped.
        assert!(s.on_text(WS_PRICE_CHANGE, now()).books.is_empty());
    }
}
