//! venue_b market channel at `/ws/market` (PROTOCOLS B.5).
//!
//! No auth. The client sends `{"assets_ids": [...], "type": "market", "initial_dump": true,
//! "custom_feature_enabled": true}` and later `{"operation": "subscribe"|"unsubscribe", "assets_ids": [...]}`;
//! text `PING` is answered with text `PONG`. Server messages: `book` snapshots (the initial dump as one
//! JSON array frame; after each trade, together with `last_trade_price`, as another array),
//! `price_change` (current schema: `price_changes[]` with absolute sizes and per-asset best bid/ask, both
//! tokens of a market in one frame), `tick_size_change`, and with custom features `best_bid_ask` and
//! `market_resolved`. There are no sequence numbers.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
    time::Duration,
};

use axum::{
    extract::{State, WebSocketUpgrade},
    response::Response,
};
use crossbook_core::{Exchange, Outcome, Price};
use serde_json::{Value, json};

use super::json::{self as wire, price_text, size_text, tick_text};
use crate::{
    http::{Batch, Shared},
    model::{
        Model, SimScale,
        book::token_level,
        types::{Phase, Update},
    },
    socket::{Protocol, Reply, drive},
};

const B: Exchange = Exchange::VenueB;

/// `GET /ws/market`.
pub(crate) async fn upgrade(State(s): State<Arc<Shared>>, ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(move |socket| {
        let session = Session::new(s.clone());
        drive(s, socket, session)
    })
}

pub(crate) struct Session {
    shared: Arc<Shared>,
    assets: BTreeSet<String>,
    custom: bool,
    /// Model version each asset's `book` was taken at; earlier batches are already in it.
    snap: HashMap<String, u64>,
    /// Last `best_bid_ask` sent per asset, to send only changes.
    best: HashMap<String, (String, String)>,
    /// Market of each subscribed asset, and how many of each market's assets are subscribed: a batch's
    /// changes to other markets are skipped without the model's lock (every session reads every batch, and
    /// at the full scale most changes are for markets on other sessions).
    market_of: HashMap<String, String>,
    markets: HashMap<String, usize>,
}

impl Session {
    fn new(shared: Arc<Shared>) -> Self {
        Session {
            shared,
            assets: BTreeSet::new(),
            custom: false,
            snap: HashMap::new(),
            best: HashMap::new(),
            market_of: HashMap::new(),
            markets: HashMap::new(),
        }
    }

    fn carries_market(&self, market_id: &str) -> bool {
        self.markets.contains_key(market_id)
    }

    /// Whether `u` can make a frame for this session (checked before taking the model's lock).
    fn wants(&self, u: &Update) -> bool {
        match u {
            Update::Book {
                exchange: B, market_id, ..
            } => self.carries_market(market_id),
            Update::Trade { trade, .. } => trade.exchange == B && self.carries_market(&trade.market_id),
            Update::TickSize { market_id, .. } => self.carries_market(market_id),
            Update::Phase {
                exchange: B,
                phase: Phase::Settled,
                ..
            }
            | Update::Listed { exchange: B, .. } => self.custom,
            _ => false,
        }
    }

    /// `book` events for `ids` (unknown ids skipped; markets that stopped trading give empty books).
    fn dump(&mut self, ids: &[String]) -> Option<String> {
        let model = self.shared.model();
        let mut events = Vec::new();
        for id in ids {
            let Some((m, index)) = model.market_by_token(id) else {
                continue;
            };
            let book = model.yes_book(B, &m.market_id).cloned().unwrap_or_default();
            events.push(wire::book_event(m, &book, index, model.now()));
            self.snap.insert(id.clone(), model.version());
        }
        (!events.is_empty()).then(|| Value::Array(events).to_string())
    }

    /// The subscribed tokens of `market_id` whose snapshot predates `version`: `(index, token)`.
    fn tokens_of(&self, model: &Model, market_id: &str, version: u64) -> Vec<(usize, String)> {
        let Some(m) = model.market(B, market_id) else {
            return Vec::new();
        };
        let Some(tokens) = &m.tokens else { return Vec::new() };
        tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| self.assets.contains(*t) && self.snap.get(*t).is_some_and(|v| *v < version))
            .map(|(i, t)| (i, t.clone()))
            .collect()
    }
}

impl Protocol for Session {
    const EXCHANGE: Exchange = B;
    const MALFORMED: &'static str = "{\"event_type\":\"price_change\",\"market\":\"0x";
    const PING: Option<(Duration, &'static [u8])> = None;

    fn carries(&self, id: &str) -> bool {
        self.assets.contains(id)
    }

    fn on_text(&mut self, text: &str) -> Reply {
        if text.trim() == "PING" {
            return Reply {
                control: vec!["PONG".into()],
                ..Reply::default()
            };
        }
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            return Reply {
                frames: vec!["INVALID OPERATION".into()],
                ..Reply::default()
            };
        };
        let Some(ids) = v.get("assets_ids").and_then(Value::as_array) else {
            return Reply {
                frames: vec!["INVALID OPERATION".into()],
                ..Reply::default()
            };
        };
        let ids: Vec<String> = ids.iter().filter_map(Value::as_str).map(str::to_string).collect();
        if let Some(c) = v.get("custom_feature_enabled").and_then(Value::as_bool) {
            self.custom = c;
        }
        if v.get("operation").and_then(Value::as_str) == Some("unsubscribe") {
            for id in &ids {
                self.assets.remove(id);
                self.snap.remove(id);
                self.best.remove(id);
                if let Some(m) = self.market_of.remove(id)
                    && let Some(n) = self.markets.get_mut(&m)
                {
                    *n -= 1;
                    if *n == 0 {
                        self.markets.remove(&m);
                    }
                }
            }
            return Reply::default();
        }
        // Past the connection's asset limit the venue serves nothing more for it: extra assets are
        // ignored (no `book`, no changes), which a client notices only as books that never come.
        let limit = self.shared.faults.ws_limit(B);
        let mut fresh: Vec<String> = Vec::new();
        for id in ids {
            if !self.assets.contains(&id) && self.assets.len() < limit {
                self.assets.insert(id.clone());
                fresh.push(id);
            }
        }
        {
            let model = self.shared.model();
            for id in &fresh {
                if let Some((m, _)) = model.market_by_token(id) {
                    self.market_of.insert(id.clone(), m.market_id.clone());
                    *self.markets.entry(m.market_id.clone()).or_default() += 1;
                }
            }
        }
        let initial_dump = v.get("initial_dump").and_then(Value::as_bool).unwrap_or(true);
        if !initial_dump {
            // Without a snapshot the client still gets every change from now on.
            let version = self.shared.model().version();
            for id in &fresh {
                self.snap.insert(id.clone(), version);
            }
            return Reply::default();
        }
        Reply {
            frames: self.dump(&fresh).into_iter().collect(),
            ..Reply::default()
        }
    }

    fn on_batch(&mut self, batch: &Batch) -> Vec<String> {
        if self.assets.is_empty() || !batch.updates.iter().any(|u| self.wants(u)) {
            return Vec::new();
        }
        let ts = batch.now.millis().to_string();
        let mut out = Vec::new();
        let model = self.shared.model();
        for u in &batch.updates {
            match u {
                Update::Book {
                    exchange: B,
                    market_id,
                    changes,
                    top,
                } => {
                    if !self.carries_market(market_id) {
                        continue;
                    }
                    let tokens = self.tokens_of(&model, market_id, batch.version);
                    let Some(m) = model.market(B, market_id).filter(|_| !tokens.is_empty()) else {
                        continue;
                    };
                    let mut entries = Vec::new();
                    for (index, token) in &tokens {
                        let (best_bid, best_ask, _) = wire::token_best(top, *index, m.tick);
                        for c in changes {
                            let (price, side) = token_level(c, *index);
                            entries.push(json!({
                                "asset_id": token,
                                "price": price_text(price, m.tick),
                                "size": size_text(c.new),
                                "side": side,
                                "hash": wire::digest40(&format!("{token}{ts}{}{}", c.cents, c.new.micros())),
                                "best_bid": best_bid,
                                "best_ask": best_ask,
                            }));
                        }
                    }
                    out.push(
                        json!({"event_type": "price_change", "market": market_id, "price_changes": entries,
                               "timestamp": ts})
                        .to_string(),
                    );
                    if self.custom {
                        for (index, token) in &tokens {
                            let (bid, ask, pair) = wire::token_best(top, *index, m.tick);
                            if self.best.get(token) == Some(&(bid.clone(), ask.clone())) {
                                continue;
                            }
                            self.best.insert(token.clone(), (bid.clone(), ask.clone()));
                            let spread =
                                pair.map_or("1".to_string(), |(b, a)| price_text(Price::from_cents(a - b), m.tick));
                            out.push(
                                json!({"event_type": "best_bid_ask", "asset_id": token, "market": market_id,
                                       "best_bid": bid, "best_ask": ask, "spread": spread, "timestamp": ts})
                                .to_string(),
                            );
                        }
                    }
                }
                Update::Trade { trade, book, .. } if trade.exchange == B => {
                    let tokens = self.tokens_of(&model, &trade.market_id, batch.version);
                    let Some(m) = model.market(B, &trade.market_id).filter(|_| !tokens.is_empty()) else {
                        continue;
                    };
                    let mut events = Vec::new();
                    if let Some(token) = trade.token_id.as_ref().filter(|t| self.assets.contains(*t)) {
                        events.push(json!({
                            "event_type": "last_trade_price",
                            "asset_id": token,
                            "market": trade.market_id,
                            "price": price_text(trade.price, m.tick),
                            "size": size_text(trade.size),
                            "side": if trade.taker_side == crossbook_core::TakerSide::Buy { "BUY" } else { "SELL" },
                            // The real feed sends it and typed clients require it.
                            "fee_rate_bps": wire::fee_rate_bps(
                                model.event(B, &m.event_id).map_or("", |e| e.category.as_str())
                            ),
                            "timestamp": ts,
                            "transaction_hash": trade.trade_id,
                        }));
                    }
                    for (index, _) in &tokens {
                        events.push(wire::book_event(m, book, *index, batch.now));
                    }
                    out.push(Value::Array(events).to_string());
                }
                Update::TickSize { market_id, old, new } => {
                    for (_, token) in self.tokens_of(&model, market_id, batch.version) {
                        out.push(
                            json!({"event_type": "tick_size_change", "asset_id": token, "market": market_id,
                                   "old_tick_size": tick_text(*old), "new_tick_size": tick_text(*new),
                                   "timestamp": ts})
                            .to_string(),
                        );
                    }
                }
                Update::Phase {
                    exchange: B,
                    market_id,
                    phase: Phase::Settled,
                } if self.custom => {
                    let Some(m) = model.market(B, market_id) else { continue };
                    // At the full scale the venue's platform-wide broadcast: every market, subscribed or not.
                    let wide = model.scale() == SimScale::Full;
                    let Some(tokens) = m
                        .tokens
                        .as_ref()
                        .filter(|ts| wide || ts.iter().any(|t| self.assets.contains(t)))
                    else {
                        continue;
                    };
                    let (winner, label) = match m.result {
                        Some(Outcome::No) => (&tokens[1], &m.no_label),
                        _ => (&tokens[0], &m.yes_label),
                    };
                    out.push(
                        json!({"event_type": "market_resolved", "id": m.gamma_id, "market": market_id,
                               "assets_ids": tokens, "winning_asset_id": winner, "winning_outcome": label,
                               "timestamp": ts})
                        .to_string(),
                    );
                }
                Update::Listed { exchange: B, market_id } if self.custom => {
                    if let Some(m) = model.market(B, market_id) {
                        out.push(wire::new_market(&model, m, &ts).to_string());
                    }
                }
                _ => {}
            }
        }
        out
    }
}
