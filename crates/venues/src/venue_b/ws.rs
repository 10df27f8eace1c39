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
//!
//! **Consistency.** The venue sends one match as several `price_change` frames, and each of their items
//! states the token's best bid and ask *after the whole match*. Between those frames the local book is
//! half-changed and can even be crossed. A book is therefore published (live map, bus, event log) only while
//! it agrees with the venue's own latest statement: its best bid and best ask equal the stated ones, and it
//! is not crossed. Changes that leave it disagreeing are held and go out together, as one delta, with the
//! frame that makes it agree again. This was chosen over grouping frames by their timestamp because it does
//! not depend on how frames are grouped, ordered or timed: frames of two matches may share a millisecond,
//! interleave, or arrive far apart, and a timestamp group would still publish a half-applied match whenever
//! a frame of another timestamp (or a flush deadline) cut it; the venue's statement is judged afresh after
//! every frame whatever came before. The statement with the newest venue timestamp wins, so a late frame of
//! an earlier match does not overrule a newer one. A book that still disagrees [`SETTLE_WITHIN_MS`] after it
//! began to is dropped (stale, a `bad_message` gap) and asked for again, never served.
//!
//! **Catalog notices.** The venue broadcasts `new_market` and `market_resolved` for every market it has. A
//! session turns only those of followed markets into [`CatalogNotice`]s for the catalog worker: a new market
//! of a followed event or series family (see [`family`]), or of any event when everything is followed, and
//! the resolution of a followed market. Everything else is dropped here, counted, without any lookup.

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
    venue::{BookUpdate, CatalogNotice, FeedSession, FeedUpdate, MarketSet},
    wire::Num,
};
use crossbook_live::BookKey;

const EX: Exchange = Exchange::VenueB;
/// How long a subscribed token may wait for its `book` before it is subscribed again; doubles per attempt
/// up to [`RESNAPSHOT_MAX_MS`].
const RESNAPSHOT_AFTER_MS: i64 = 2_000;
const RESNAPSHOT_MAX_MS: i64 = 60_000;
/// A token asked for this many times more without a `book` counts as missing: the venue says nothing about
/// tokens past its per-connection limit, so asking again alone would hide them (about 14 s at the waits
/// above).
const MISSING_AFTER_ASKS: u32 = 3;
/// How long a book may disagree with the venue's own best prices before it is dropped and asked for again.
/// The frames of one match arrive within milliseconds of each other; a book still disagreeing after this
/// long has missed something.
pub const SETTLE_WITHIN_MS: i64 = 2_000;

/// A local book of one token.
#[derive(Debug, Default)]
struct LocalBook {
    market: String,
    bids: Ladder,
    asks: Ladder,
    /// Changes applied since the book was last published, held while it disagrees with the venue.
    held: Vec<LevelChange>,
    /// The newest venue timestamp among the held changes.
    held_ts: Option<Timestamp>,
    /// The venue's latest statement of this book's best prices.
    stated: Option<Stated>,
    /// Since when (receive time) the book has disagreed with the venue; `None` while it agrees.
    unsettled_since: Option<Timestamp>,
}

/// The best prices a `price_change` item says its token has after the change (the whole match).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stated {
    /// The frame's venue timestamp: a statement replaces one at most as old.
    at: Option<Timestamp>,
    /// `None`: not stated; `Some(None)`: stated empty (`"0"` for bids, `"1"` or `"0"` for asks).
    bid: Option<Option<Price>>,
    ask: Option<Option<Price>>,
}

impl Stated {
    fn of(at: Option<Timestamp>, bid: &Option<Num>, ask: &Option<Num>) -> Option<Stated> {
        // A price outside (0, 1) cannot be a level: the venue's way of saying the side is empty.
        let side = |v: &Option<Num>| {
            let p = v.as_ref()?.price().ok()?;
            Some((p > Price::ZERO && p < Price::ONE).then_some(p))
        };
        let (bid, ask) = (side(bid), side(ask));
        (bid.is_some() || ask.is_some()).then_some(Stated { at, bid, ask })
    }
}

impl LocalBook {
    fn new(market: &str, snap: &BookSnapshot) -> Self {
        LocalBook {
            market: market.to_string(),
            bids: snap.bids.iter().map(|l| (l.price, l.size)).collect(),
            asks: snap.asks.iter().map(|l| (l.price, l.size)).collect(),
            ..Default::default()
        }
    }

    fn best_bid(&self) -> Option<Price> {
        self.bids.last_key_value().map(|(p, _)| *p)
    }

    fn best_ask(&self) -> Option<Price> {
        self.asks.first_key_value().map(|(p, _)| *p)
    }

    /// Takes `stated` unless the one held is newer (a late frame of an earlier match).
    fn state(&mut self, stated: Stated) {
        let newer = match (self.stated.and_then(|s| s.at), stated.at) {
            (Some(held), Some(new)) => new >= held,
            _ => true,
        };
        if newer {
            self.stated = Some(stated);
        }
    }

    /// Why the book cannot be the venue's book as it stands, if it cannot: crossed, or its best prices
    /// differ from the ones the venue stated last.
    fn disagreement(&self) -> Option<String> {
        let (bid, ask) = (self.best_bid(), self.best_ask());
        if let (Some(b), Some(a)) = (bid, ask)
            && b >= a
        {
            return Some(format!("crossed: bid {b} >= ask {a}"));
        }
        let s = self.stated?;
        let show = |p: Option<Price>| p.map_or("none".to_string(), |p| p.to_string());
        match (s.bid, s.ask) {
            (Some(sb), _) if sb != bid => Some(format!("best bid {} but the venue says {}", show(bid), show(sb))),
            (_, Some(sa)) if sa != ask => Some(format!("best ask {} but the venue says {}", show(ask), show(sa))),
            _ => None,
        }
    }
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
    /// Tokens whose book disagrees with the venue (held, not published).
    unsettled: HashSet<String>,
    /// Every open market is followed: any listed market is of interest.
    follow_all: bool,
    /// Followed markets, events and series families (see [`family`]), for telling the venue's
    /// `new_market` and `market_resolved` broadcasts of followed markets from the rest.
    markets: HashSet<String>,
    events: HashSet<String>,
    families: HashSet<String>,
}

/// What one level change of a `price_change` did.
enum Level {
    Set(LevelChange),
    /// The token has no book (yet): nothing to apply.
    NoBook,
    /// The change cannot apply; the book was dropped.
    Bad(BookKey),
}

/// The family of a slug: the slug without its date and number parts, so that every window of a recurring
/// series shares one (`btc-updown-15m-1778583600` → `btc-updown-15m`, `bitcoin-up-or-down-june-19-2026-8am-et`
/// → `bitcoin-up-or-down-et`). A market listed in a family already followed is likely of a followed series;
/// the catalog worker checks its series before following it. `None` when nothing is left.
pub fn family(slug: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let kept: Vec<&str> = slug
        .split('-')
        .filter(|part| {
            let p = part.to_ascii_lowercase();
            let digits = p.trim_end_matches("am").trim_end_matches("pm");
            !p.is_empty()
                && !digits.is_empty()
                && !digits.bytes().all(|b| b.is_ascii_digit())
                && !MONTHS.contains(&p.as_str())
        })
        .collect();
    (!kept.is_empty()).then(|| kept.join("-").to_ascii_lowercase())
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// A session of a connector that follows every open market (no series configured).
    pub fn following_everything() -> Self {
        Session {
            follow_all: true,
            ..Self::default()
        }
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

    /// Publishes the book's held changes as one delta if the book now agrees with the venue; otherwise holds
    /// them and notes since when it disagrees.
    fn settle(&mut self, asset: &str, now: Timestamp, update: &mut FeedUpdate) {
        let Some(book) = self.books.get_mut(asset) else {
            return;
        };
        if book.held.is_empty() {
            return;
        }
        if let Some(why) = book.disagreement() {
            if book.unsettled_since.is_none() {
                debug!(venue = %EX, %asset, %why, "book disagrees with the venue's best prices; holding its changes");
                book.unsettled_since = Some(now);
                self.unsettled.insert(asset.to_string());
            }
            return;
        }
        book.unsettled_since = None;
        self.unsettled.remove(asset);
        let changes = std::mem::take(&mut book.held);
        let venue_ts = book.held_ts.take();
        if let Some(snap) = self.snapshot_of(asset, venue_ts.unwrap_or(now)) {
            update.books.push(BookUpdate::delta(snap, changes, None, venue_ts));
        }
    }

    /// Books that went on disagreeing with the venue for [`SETTLE_WITHIN_MS`]: dropped (stale, with a gap),
    /// never served; the tokens are subscribed again for fresh books.
    fn drop_unsettled(&mut self, now: Timestamp, update: &mut FeedUpdate) {
        let mut overdue: Vec<String> = self
            .unsettled
            .iter()
            .filter(|a| {
                self.books
                    .get(*a)
                    .and_then(|b| b.unsettled_since)
                    .is_none_or(|since| now.millis() - since.millis() >= SETTLE_WITHIN_MS)
            })
            .cloned()
            .collect();
        if overdue.is_empty() {
            return;
        }
        overdue.sort();
        for asset in &overdue {
            self.unsettled.remove(asset);
            if let Some(book) = self.books.remove(asset) {
                warn!(venue = %EX, %asset, why = ?book.disagreement(), "book still disagrees with the venue's best prices; resnapshotting it");
                metrics::counter!("crossbook_venue_bad_deltas_total", "venue" => EX.as_str()).increment(1);
                update
                    .stale
                    .push((BookKey::venue_b(&book.market, asset), GapCause::BadMessage));
            }
        }
        overdue.retain(|a| self.assets.contains_key(a));
        update.send.extend(self.ask_again(overdue, now));
    }

    /// Unsubscribes and subscribes `assets` again: the venue sends a `book` only for a token it does not
    /// consider subscribed yet.
    fn ask_again(&mut self, assets: Vec<String>, now: Timestamp) -> Vec<String> {
        if assets.is_empty() {
            return Vec::new();
        }
        let mut send = Vec::new();
        if self.initial_sent {
            send.push(json!({"operation": "unsubscribe", "assets_ids": assets}).to_string());
        }
        self.subscribed.extend(assets.iter().cloned());
        send.extend(self.subscribe_msg(assets, now));
        send
    }

    /// The notice for a listed market worth following, `None` for the rest.
    fn listed(&self, m: &model::NewMarket) -> Option<CatalogNotice> {
        let market_id = m.market.as_ref().or(m.condition_id.as_ref())?;
        if self.markets.contains(market_id) {
            return None;
        }
        let event = m.event_message.as_ref();
        let event_id = event.and_then(|e| e.id.as_ref()).map(Num::to_string);
        let event_slug = event.and_then(|e| e.slug.clone().or_else(|| e.ticker.clone()));
        let followed_event = event_id.as_ref().is_some_and(|id| self.events.contains(id));
        let followed_family = [event_slug.as_deref(), m.slug.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(family)
            .any(|f| self.families.contains(&f));
        if !(self.follow_all || followed_event || followed_family) {
            return None;
        }
        Some(CatalogNotice::Listed {
            event: event_id.or(event_slug)?,
            market_id: market_id.clone(),
        })
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
        let price: Price = price.price_exact().map_err(|e| format!("price: {e}"))?;
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
            self.unsettled.remove(asset);
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
                // The venue's whole book: it replaces whatever was held, agreeing or not.
                self.unsettled.remove(&b.asset_id);
                self.books.insert(b.asset_id.clone(), LocalBook::new(&b.market, &snap));
                let venue_ts = b.timestamp.map(|t| t.timestamp());
                update.books.push(BookUpdate::snapshot(snap, None, venue_ts));
            }
            E::PriceChange(pc) => {
                let venue_ts = pc.timestamp.map(|t| t.timestamp());
                // The tokens changed, in the order the frame lists them; their changes wait in `held`.
                let mut touched: Vec<String> = Vec::new();
                let mut apply = |s: &mut Session, asset: &str, side: &str, price: &Num, size: &Num, stated| {
                    match s.set_level(asset, side, price, size)? {
                        Level::Set(change) => {
                            if let Some(book) = s.books.get_mut(asset) {
                                book.held.push(change);
                                book.held_ts = book.held_ts.max(venue_ts);
                                if let Some(stated) = stated {
                                    book.state(stated);
                                }
                            }
                            if !touched.iter().any(|a| a == asset) {
                                touched.push(asset.to_string());
                            }
                        }
                        Level::NoBook => {}
                        Level::Bad(key) => update.stale.push((key, GapCause::BadMessage)),
                    }
                    Ok::<(), String>(())
                };
                match (&pc.price_changes, &pc.asset_id, &pc.changes) {
                    (Some(items), _, _) => {
                        for c in items {
                            let stated = Stated::of(venue_ts, &c.best_bid, &c.best_ask);
                            apply(self, &c.asset_id, &c.side, &c.price, &c.size, stated)?;
                        }
                    }
                    (None, Some(asset), Some(changes)) => {
                        for c in changes {
                            apply(self, asset, &c.side, &c.price, &c.size, None)?;
                        }
                    }
                    (None, Some(asset), None) => match (&pc.side, &pc.price, &pc.size) {
                        (Some(side), Some(price), Some(size)) => apply(self, asset, side, price, size, None)?,
                        _ => return Err("price_change without price_changes, changes or a level".into()),
                    },
                    _ => return Err("price_change without price_changes or changes".into()),
                }
                for asset in touched {
                    self.settle(&asset, now, &mut update);
                }
            }
            E::LastTradePrice(_) => update.backfill_trades = true,
            E::TickSizeChange(t) => {
                debug!(venue = %EX, asset = %t.asset_id, old = ?t.old_tick_size, new = ?t.new_tick_size, "tick size changed");
            }
            E::NewMarket(m) => {
                platform_wide(&mut update);
                match self.listed(&m) {
                    Some(notice) => update.catalog.push(notice),
                    None => ignored_notice(),
                }
            }
            E::MarketResolved(r) => {
                platform_wide(&mut update);
                let market = r.market.as_ref().or(r.condition_id.as_ref());
                match market.filter(|m| self.markets.contains(*m)) {
                    Some(m) => update.catalog.push(CatalogNotice::Resolved {
                        market_id: m.clone(),
                        winner: r.winning_asset_id.clone(),
                        at: r.timestamp.map_or(now, |t| t.timestamp()),
                    }),
                    None => ignored_notice(),
                }
            }
            E::BestBidAsk(_) | E::Unknown => {}
        }
        Ok(update)
    }
}

/// `new_market`/`market_resolved` are broadcast to every socket whatever it subscribed: they show the
/// connection is alive but say nothing of its subscriptions, so they do not count as market data (a socket
/// whose subscriptions died would otherwise never look silent while the venue lists markets).
fn platform_wide(update: &mut FeedUpdate) {
    update.data = false;
    update.alive = true;
}

impl FeedSession for Session {
    fn sync_markets(&mut self, markets: &MarketSet) -> FeedUpdate {
        self.markets = markets.keys().cloned().collect();
        self.events = markets.values().map(|m| m.event_id.clone()).collect();
        self.families = markets
            .values()
            .filter_map(|m| m.slug.as_deref())
            .filter_map(family)
            .collect();
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
                self.unsettled.remove(a);
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
        self.unsettled.clear();
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
        let mut update = FeedUpdate::default();
        self.drop_unsettled(now, &mut update);
        update.missing = Some(
            self.assets
                .keys()
                .filter(|a| !self.books.contains_key(*a))
                .filter(|a| self.awaiting.get(*a).is_some_and(|(_, n)| *n >= MISSING_AFTER_ASKS))
                .count(),
        );
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
            return update;
        }
        due.sort();
        debug!(venue = %EX, tokens = due.len(), "books missing; subscribing those tokens again");
        update.send.extend(self.ask_again(due, now));
        update
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
        if !self.unsettled.is_empty() {
            self.drop_unsettled(now, &mut update);
        }
        update
    }

    fn keepalive(&self) -> Option<String> {
        Some("PING".to_string())
    }
}

/// A `new_market` or `market_resolved` of a market not followed: dropped, counted.
fn ignored_notice() {
    metrics::counter!("crossbook_venue_catalog_notices_total", "venue" => EX.as_str(), "kind" => "ignored")
        .increment(1);
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

    /// The other token's book of a binary market: its bids are the complements of `book`'s asks and its asks
    /// those of its bids, as the venue's books of the two tokens are.
    fn mirrored(book: &str, asset: &str) -> String {
        let mut v: Value = serde_json::from_str(book).unwrap();
        let flip = |side: &Value| -> Value {
            let levels = side.as_array().unwrap().iter().map(|l| {
                let p: Price = l["price"].as_str().unwrap().parse().unwrap();
                serde_json::json!({"price": p.complement().to_string(), "size": l["size"]})
            });
            Value::Array(levels.collect())
        };
        let (bids, asks) = (flip(&v["asks"]), flip(&v["bids"]));
        v["bids"] = bids;
        v["asks"] = asks;
        v["asset_id"] = asset.into();
        v.to_string()
    }

    /// A session following the sample market with books of both tokens.
    fn session_with_books() -> Session {
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let down_book = mirrored(CLOB_BOOK, DOWN);
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
        assert_eq!(down.bids[0].price, "0.48".parse().unwrap(), "the venue's best bid");
        // Size "0" removes the level.
        let u = s.on_text(
            &format!(r#"{{"event_type":"price_change","market":"{COND}","timestamp":"1778584051600","price_changes":[{{"asset_id":"{UP}","price":"0.51","size":"0","side":"BUY","best_bid":"0.50","best_ask":"0.52"}}]}}"#),
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
            r#"{"event_type":"new_market","id":"5","market":"0x5","slug":"x-1","event_message":{"id":"473201"}}"#,
            now(),
        );
        assert_eq!(
            u.catalog,
            vec![CatalogNotice::Listed {
                event: "473201".into(),
                market_id: "0x5".into()
            }],
            "a new market of a followed event"
        );
        assert!(!u.data && u.alive, "a platform-wide notice is not market data");
        let u = s.on_text(
            r#"{"event_type":"market_resolved","id":"9","market":"0x9","winning_asset_id":"1","timestamp":"1"}"#,
            now(),
        );
        assert!(!u.data && u.alive, "nor is a resolution, of any market");
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
    fn tokens_the_venue_never_sends_are_counted_missing() {
        let t0 = Timestamp::now();
        let at = |ms: i64| Timestamp::from_millis(t0.millis() + ms);
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let up_book = CLOB_BOOK.replacen('{', r#"{"event_type": "book","#, 1);
        s.on_text(&up_book, at(10));
        // Asked again at 3 s, 7.5 s and 16 s (the wait doubles each time): missing after the third ask.
        let mut missing = Vec::new();
        for ms in [3_000, 7_500, 16_000, 16_100] {
            missing.push(s.on_tick(at(ms)).missing);
        }
        assert_eq!(missing, [Some(0), Some(0), Some(0), Some(1)]);
        let down_book = CLOB_BOOK
            .replace(UP, DOWN)
            .replacen('{', r#"{"event_type": "book","#, 1);
        s.on_text(&down_book, at(16_200));
        assert_eq!(
            s.on_tick(at(16_300)).missing,
            Some(0),
            "a book that comes is no longer missing"
        );
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

    // ------------------------------------------------------------------ one match in several frames

    /// The recorded case, on a 0.001 grid: the Up book has bids 0.311, 0.30 and 0.29 and asks from 0.32. A
    /// sell at 0.301 takes the bids at 0.311 and 0.30 and rests at 0.301. The venue sends the match as three
    /// `price_change` frames with one timestamp: the resting ask first, then the two taken bids; every item
    /// states the best prices after the whole match (Up 0.29 / 0.301, Down 0.699 / 0.71). Applied one by one,
    /// the first two frames leave the Up book crossed (bid 0.311 or 0.30 over ask 0.301).
    const BURST_TS: &str = "1778584051512";

    fn burst_books() -> String {
        let up = format!(
            r#"{{"market": "{COND}", "asset_id": "{UP}", "timestamp": "1778584051000",
            "bids": [{{"price": "0.29", "size": "100"}}, {{"price": "0.30", "size": "40"}}, {{"price": "0.311", "size": "50"}}],
            "asks": [{{"price": "0.33", "size": "60"}}, {{"price": "0.32", "size": "80"}}], "tick_size": "0.001"}}"#
        );
        let down = mirrored(&up, DOWN);
        let book = |b: &str| b.replacen('{', r#"{"event_type": "book","#, 1);
        format!("[{}, {}]", book(&up), book(&down))
    }

    /// Frame `i` of the burst (0: the resting ask, 1: bid 0.30 taken, 2: bid 0.311 taken), both tokens.
    fn burst_frame(i: usize) -> String {
        let (up, down) = match i {
            0 => (("0.301", "30", "SELL"), ("0.699", "30", "BUY")),
            1 => (("0.30", "0", "BUY"), ("0.70", "0", "SELL")),
            _ => (("0.311", "0", "BUY"), ("0.689", "0", "SELL")),
        };
        format!(
            r#"{{"event_type": "price_change", "market": "{COND}", "timestamp": "{BURST_TS}", "price_changes": [
            {{"asset_id": "{UP}", "price": "{}", "size": "{}", "side": "{}", "hash": "a", "best_bid": "0.29", "best_ask": "0.301"}},
            {{"asset_id": "{DOWN}", "price": "{}", "size": "{}", "side": "{}", "hash": "b", "best_bid": "0.699", "best_ask": "0.71"}}]}}"#,
            up.0, up.1, up.2, down.0, down.1, down.2
        )
    }

    fn burst_session() -> Session {
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([market(COND, UP, DOWN)]));
        let u = s.on_text(&burst_books(), now());
        assert_eq!(u.books.len(), 2);
        assert!(u.books.iter().all(|b| b.bids[0].price < b.asks[0].price));
        s
    }

    fn crossed(b: &BookSnapshot) -> bool {
        matches!((b.bids.first(), b.asks.first()), (Some(bid), Some(ask)) if bid.price >= ask.price)
    }

    /// In every order of its frames, the match is published once per token, after its last frame, as one
    /// delta with all of its changes, and the book then has the venue's best prices; nothing crossed is ever
    /// published.
    #[test]
    fn a_match_in_several_frames_is_published_once_whole_in_any_order() {
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let mut s = burst_session();
            let mut published = Vec::new();
            for (n, i) in order.iter().enumerate() {
                let u = s.on_text(&burst_frame(*i), now());
                assert!(u.malformed.is_empty() && u.stale.is_empty(), "{order:?}: {u:?}");
                assert!(
                    !u.books.iter().any(|b| crossed(b)),
                    "{order:?}: a crossed book went out"
                );
                if n < 2 {
                    assert!(
                        u.books.is_empty(),
                        "{order:?}: published after frame {n}: {:?}",
                        u.books
                    );
                }
                published.extend(u.books);
            }
            assert_eq!(published.len(), 2, "{order:?}");
            let up = published.iter().find(|b| b.asset_id.as_deref() == Some(UP)).unwrap();
            assert_eq!(up.bids, vec![lv("0.29", "100")], "{order:?}");
            assert_eq!(up.asks[0], lv("0.301", "30"), "{order:?}");
            assert_eq!(up.venue_ts, Some(Timestamp::from_millis(1_778_584_051_512)));
            match &up.change {
                BookChange::Delta(changes) => assert_eq!(changes.len(), 3, "{order:?}: every change, once"),
                other => panic!("{other:?}"),
            }
            let down = published.iter().find(|b| b.asset_id.as_deref() == Some(DOWN)).unwrap();
            assert_eq!(
                (down.bids[0].price, down.asks[0].price),
                ("0.699".parse().unwrap(), "0.71".parse().unwrap()),
                "{order:?}"
            );
            // Held books are not overdue once published.
            assert!(
                s.on_tick(Timestamp::from_millis(now().millis() + 60_000))
                    .stale
                    .is_empty()
            );
        }
    }

    /// A frame of a later match may arrive before the last frame of an earlier one; the newest statement is
    /// what the book must reach, and a late frame with an older statement does not bring back the old one.
    #[test]
    fn the_newest_statement_of_the_venue_wins() {
        let mut s = burst_session();
        s.on_text(&burst_frame(0), now());
        s.on_text(&burst_frame(1), now());
        // A later match (one millisecond on) adds 5 at 0.29; the venue states the same best prices.
        let later = format!(
            r#"{{"event_type": "price_change", "market": "{COND}", "timestamp": "1778584051513", "price_changes": [
            {{"asset_id": "{UP}", "price": "0.29", "size": "105", "side": "BUY", "best_bid": "0.29", "best_ask": "0.301"}}]}}"#
        );
        assert!(s.on_text(&later, now()).books.is_empty(), "still crossed: held");
        // The late last frame of the first match carries the older statement (and a stale best bid).
        let late = burst_frame(2).replace(r#""best_bid": "0.29""#, r#""best_bid": "0.311""#);
        let u = s.on_text(&late, now());
        let up = u
            .books
            .iter()
            .find(|b| b.asset_id.as_deref() == Some(UP))
            .expect("published");
        assert_eq!(up.bids, vec![lv("0.29", "105")]);
        assert_eq!(up.venue_ts, Some(Timestamp::from_millis(1_778_584_051_513)));
    }

    /// A book that goes on disagreeing with the venue past the limit is dropped (stale, a gap) and asked for
    /// again, never published; a fresh `book` brings it back.
    #[test]
    fn a_book_that_stays_inconsistent_is_dropped_and_asked_for_again() {
        let mut s = burst_session();
        let at = |ms: i64| Timestamp::from_millis(now().millis() + ms);
        assert!(s.on_text(&burst_frame(0), at(0)).books.is_empty());
        let u = s.on_tick(at(SETTLE_WITHIN_MS - 1));
        assert!(u.stale.is_empty() && u.send.is_empty(), "within the limit: held");
        // Past the limit, the next frame (of any kind) or tick drops both books.
        let u = s.on_text(
            r#"{"event_type": "tick_size_change", "asset_id": "1"}"#,
            at(SETTLE_WITHIN_MS),
        );
        assert!(u.stale.iter().all(|(_, c)| *c == GapCause::BadMessage), "{:?}", u.stale);
        let mut stale: Vec<String> = u.stale.iter().filter_map(|(k, _)| k.asset_id.clone()).collect();
        stale.sort();
        assert_eq!(stale, vec![DOWN.to_string(), UP.to_string()]);
        assert!(u.books.is_empty(), "never published");
        let msgs = parse(&u.send);
        assert_eq!(msgs[0]["operation"], "unsubscribe");
        assert_eq!(msgs[1]["operation"], "subscribe");
        assert_eq!(msgs[1]["assets_ids"], serde_json::json!([DOWN, UP]));
        // The rest of the match finds no book; the fresh books are published as they come.
        assert!(s.on_text(&burst_frame(1), at(SETTLE_WITHIN_MS + 1)).books.is_empty());
        assert!(s.on_tick(at(SETTLE_WITHIN_MS + 2)).send.is_empty(), "asked for already");
        assert_eq!(s.on_text(&burst_books(), at(SETTLE_WITHIN_MS + 3)).books.len(), 2);
    }

    /// Older frames state no best prices: a crossed book is still never published.
    #[test]
    fn a_crossed_book_is_held_without_stated_prices_too() {
        let mut s = burst_session();
        let legacy = |price: &str, size: &str, side: &str| {
            format!(
                r#"{{"event_type": "price_change", "market": "{COND}", "asset_id": "{UP}", "timestamp": "1",
                "changes": [{{"price": "{price}", "size": "{size}", "side": "{side}"}}]}}"#
            )
        };
        assert!(s.on_text(&legacy("0.301", "30", "SELL"), now()).books.is_empty());
        assert!(s.on_text(&legacy("0.30", "0", "BUY"), now()).books.is_empty());
        let u = s.on_text(&legacy("0.311", "0", "BUY"), now());
        assert_eq!(u.books.len(), 1);
        assert_eq!(u.books[0].bids[0], lv("0.29", "100"));
    }

    // ------------------------------------------------------------------ catalog notices

    #[test]
    fn families_of_slugs() {
        assert_eq!(family("btc-updown-15m-1778583600").as_deref(), Some("btc-updown-15m"));
        assert_eq!(family("btc-updown-5m-1778583900").as_deref(), Some("btc-updown-5m"));
        assert_eq!(
            family("bitcoin-up-or-down-june-19-2026-8am-et").as_deref(),
            Some("bitcoin-up-or-down-et")
        );
        assert_eq!(
            family("bitcoin-up-or-down-january-5-12pm-et"),
            family("bitcoin-up-or-down-june-19-2026-8am-et")
        );
        assert_eq!(
            family("bitcoin-up-or-down-on-june-19-2026").as_deref(),
            Some("bitcoin-up-or-down-on")
        );
        assert_ne!(family("eth-updown-15m-1778583600"), family("btc-updown-15m-1778583600"));
        assert_eq!(family("2026-05-12"), None);
    }

    /// The venue announces every market; the session passes on only followed ones, and resolutions of
    /// followed markets.
    #[test]
    fn only_announcements_of_followed_markets_become_notices() {
        let followed = Market {
            slug: Some("btc-updown-15m-1778583600".into()),
            ..market(COND, UP, DOWN).1
        };
        let mut s = Session::new();
        s.sync_markets(&MarketSet::from([(COND.to_string(), followed)]));
        let new_market = |market: &str, slug: &str, event: &str| {
            format!(
                r#"{{"event_type": "new_market", "id": 7, "question": "q", "market": "{market}", "slug": "{slug}",
                "assets_ids": ["1", "2"], "outcomes": ["Up", "Down"], "timestamp": "1778584051512", "tags": ["crypto"],
                "event_message": {{"id": {event}, "ticker": "{slug}", "slug": "{slug}", "title": "t"}}}}"#
            )
        };
        let listed = |event: &str, market: &str| {
            vec![CatalogNotice::Listed {
                event: event.into(),
                market_id: market.into(),
            }]
        };
        // The next window of a followed series family.
        let u = s.on_text(&new_market("0x9", "btc-updown-15m-1778584500", "9001"), now());
        assert_eq!(u.catalog, listed("9001", "0x9"));
        assert!(!u.data && u.alive, "an announcement is not market data");
        // Another series, a market already followed: nothing.
        assert!(
            s.on_text(&new_market("0x8", "eth-updown-15m-1778584500", "9002"), now())
                .catalog
                .is_empty()
        );
        assert!(
            s.on_text(&new_market(COND, "btc-updown-15m-1778583600", "473201"), now())
                .catalog
                .is_empty()
        );
        // A market added to a followed event, whatever its slug.
        let u = s.on_text(&new_market("0x7", "anything", r#""473201""#), now());
        assert_eq!(u.catalog, listed("473201", "0x7"));
        // Following everything: any market; an event without an id is looked up by slug.
        let mut all = Session::following_everything();
        all.sync_markets(&MarketSet::new());
        let u = all.on_text(&new_market("0x8", "eth-updown-15m-1778584500", "null"), now());
        assert_eq!(u.catalog, listed("eth-updown-15m-1778584500", "0x8"));
        // Resolutions: only of followed markets.
        let resolved = |market: &str| {
            format!(
                r#"{{"event_type": "market_resolved", "id": "7", "market": "{market}", "assets_ids": ["{UP}", "{DOWN}"],
                "winning_asset_id": "{UP}", "winning_outcome": "Up", "timestamp": "1778584051512"}}"#
            )
        };
        assert_eq!(
            s.on_text(&resolved(COND), now()).catalog,
            vec![CatalogNotice::Resolved {
                market_id: COND.into(),
                winner: Some(UP.into()),
                at: Timestamp::from_millis(1_778_584_051_512),
            }]
        );
        assert!(s.on_text(&resolved("0x8"), now()).catalog.is_empty());
    }
}
