//! venue_a WebSocket at `/trade-api/ws/v2` (PROTOCOLS A.6).
//!
//! The upgrade must carry a valid signed handshake (401 otherwise). One socket multiplexes subscriptions;
//! each channel of a `subscribe` gets its own `sid`, and `seq` counts every sequenced frame of that `sid`
//! across all its markets: `orderbook_snapshot` (one per market, first), `orderbook_delta` (one per changed
//! level, signed `delta_fp`), `trade`. `ticker` frames carry no `seq`. The server pings every 10 s with the
//! body `heartbeat`.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
    time::Duration,
};

use axum::{
    extract::{State, WebSocketUpgrade},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use crossbook_core::{Exchange, Timestamp};
use serde_json::{Value, json};

use super::{
    auth::WS_PATH,
    json::{self as wire, count, dollars},
};
use crate::{
    http::{Batch, Shared, reply},
    model::{
        book::{Ladder, LevelChange, venue_a_level},
        types::{SimTrade, Top, Update},
    },
    render::iso_millis,
    socket::{Protocol, Reply, drive},
};

const A: Exchange = Exchange::VenueA;

/// `GET /trade-api/ws/v2`: verifies the handshake, then runs the session.
pub(crate) async fn upgrade(State(s): State<Arc<Shared>>, headers: HeaderMap, ws: WebSocketUpgrade) -> Response {
    if let Err(reason) = s.verifier.check(&headers, "GET", WS_PATH) {
        return reply(
            StatusCode::UNAUTHORIZED,
            json!({"error": {"code": "unauthorized", "message": reason}}),
        );
    }
    ws.on_upgrade(move |socket| {
        let session = Session::new(s.clone());
        drive(s, socket, session)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    OrderbookDelta,
    Trade,
    Ticker,
}

impl Channel {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "orderbook_delta" => Some(Channel::OrderbookDelta),
            "trade" => Some(Channel::Trade),
            "ticker" | "ticker_v2" => Some(Channel::Ticker),
            _ => None,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Channel::OrderbookDelta => "orderbook_delta",
            Channel::Trade => "trade",
            Channel::Ticker => "ticker",
        }
    }
}

#[derive(Debug)]
struct Sub {
    channel: Channel,
    /// Markets of the subscription; empty = every market (trade and ticker only).
    tickers: BTreeSet<String>,
    seq: u64,
    /// Model version each market's snapshot was taken at; deltas from batches up to it are already in it.
    snap: HashMap<String, u64>,
    use_yes_price: bool,
}

impl Sub {
    fn covers(&self, ticker: &str) -> bool {
        self.tickers.is_empty() || self.tickers.contains(ticker)
    }
}

pub(crate) struct Session {
    shared: Arc<Shared>,
    subs: BTreeMap<u64, Sub>,
    next_sid: u64,
    /// Ticker → WS `market_id` UUID.
    uuids: HashMap<String, String>,
}

fn error(id: Option<u64>, code: u32, msg: &str) -> String {
    json!({"id": id, "type": "error", "msg": {"code": code, "msg": msg}}).to_string()
}

fn tickers_of(params: &Value) -> Vec<String> {
    let mut out: Vec<String> = params
        .get("market_tickers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if let Some(t) = params.get("market_ticker").and_then(Value::as_str) {
        out.push(t.to_string());
    }
    out
}

impl Session {
    fn new(shared: Arc<Shared>) -> Self {
        Session {
            shared,
            subs: BTreeMap::new(),
            next_sid: 1,
            uuids: HashMap::new(),
        }
    }

    fn uuid(&mut self, ticker: &str) -> String {
        if let Some(u) = self.uuids.get(ticker) {
            return u.clone();
        }
        let u = self
            .shared
            .model()
            .market(A, ticker)
            .map(|m| m.wire_uuid.clone())
            .unwrap_or_default();
        self.uuids.insert(ticker.to_string(), u.clone());
        u
    }

    fn next_seq(&mut self, sid: u64, delta: bool) -> u64 {
        let skip = delta && self.shared.faults.take_skip_seq();
        let sub = self.subs.get_mut(&sid).expect("subscription exists");
        sub.seq += if skip { 2 } else { 1 };
        sub.seq
    }

    /// The `orderbook_snapshot` frame of `ticker` on `sid` (sides omitted when empty).
    fn snapshot(&mut self, sid: u64, ticker: &str, id: Option<u64>) -> String {
        let uuid = self.uuid(ticker);
        let (version, yes, no) = {
            let model = self.shared.model();
            let book = model.yes_book(A, ticker).cloned().unwrap_or_default();
            (model.version(), book.venue_a_yes(), book.venue_a_no())
        };
        let use_yes = self.subs[&sid].use_yes_price;
        let no = if use_yes { on_yes_scale(&no) } else { no };
        self.subs
            .get_mut(&sid)
            .expect("subscription exists")
            .snap
            .insert(ticker.to_string(), version);
        let seq = self.next_seq(sid, false);
        let mut msg = json!({"market_ticker": ticker, "market_id": uuid});
        if !yes.is_empty() {
            msg["yes_dollars_fp"] = wire::ladder(&yes);
        }
        if !no.is_empty() {
            msg["no_dollars_fp"] = wire::ladder(&no);
        }
        let mut frame = json!({"type": "orderbook_snapshot", "sid": sid, "seq": seq, "msg": msg});
        if let Some(id) = id {
            frame["id"] = json!(id);
        }
        frame.to_string()
    }

    /// Error 26 when subscribing `tickers` would take the connection past its market limit (the venue
    /// caps the markets one connection follows; a client shards beyond it).
    fn over_limit(&self, id: Option<u64>, tickers: &[String]) -> Option<String> {
        let mut markets: BTreeSet<&str> = self
            .subs
            .values()
            .flat_map(|s| s.tickers.iter().map(String::as_str))
            .collect();
        markets.extend(tickers.iter().map(String::as_str));
        let limit = self.shared.faults.ws_limit(A);
        (markets.len() > limit).then(|| error(id, 26, &format!("Market limit of {limit} per connection exceeded")))
    }

    fn subscribe(&mut self, id: Option<u64>, params: &Value) -> Vec<String> {
        if !params.is_object() {
            return vec![error(id, 2, "Params required")];
        }
        let channels: Vec<&str> = params
            .get("channels")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if channels.is_empty() {
            return vec![error(id, 3, "Channels required")];
        }
        let tickers = tickers_of(params);
        if let Some(refused) = self.over_limit(id, &tickers) {
            return vec![refused];
        }
        let use_yes_price = params.get("use_yes_price").and_then(Value::as_bool).unwrap_or(false);
        let initial = params
            .get("send_initial_snapshot")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut out = Vec::new();
        for name in channels {
            let Some(channel) = Channel::parse(name) else {
                out.push(error(id, 8, "Unknown channel name"));
                continue;
            };
            if channel == Channel::OrderbookDelta && tickers.is_empty() {
                out.push(error(id, 14, "Market ticker required"));
                continue;
            }
            let sid = self.next_sid;
            self.next_sid += 1;
            self.subs.insert(
                sid,
                Sub {
                    channel,
                    tickers: tickers.iter().cloned().collect(),
                    seq: 0,
                    snap: HashMap::new(),
                    use_yes_price,
                },
            );
            out.push(
                json!({"id": id, "type": "subscribed", "msg": {"channel": channel.name(), "sid": sid}}).to_string(),
            );
            match channel {
                Channel::OrderbookDelta => {
                    for t in &tickers {
                        out.push(self.snapshot(sid, t, None));
                    }
                }
                Channel::Ticker if initial => {
                    for t in &tickers {
                        let (top, now) = {
                            let model = self.shared.model();
                            (model.top(A, t), model.now())
                        };
                        out.push(self.ticker_frame(sid, t, &top, now));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn unsubscribe(&mut self, id: Option<u64>, params: &Value) -> Vec<String> {
        let sids: Vec<u64> = params
            .get("sids")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        if sids.is_empty() {
            return vec![error(id, 2, "Params required")];
        }
        sids.into_iter()
            .map(|sid| match self.subs.remove(&sid) {
                Some(sub) => json!({"id": id, "type": "unsubscribed", "sid": sid, "seq": sub.seq}).to_string(),
                None => error(id, 7, "Unknown subscription ID"),
            })
            .collect()
    }

    fn update(&mut self, id: Option<u64>, params: &Value) -> Vec<String> {
        let sid = params.get("sid").and_then(Value::as_u64).or_else(|| {
            let sids = params.get("sids")?.as_array()?;
            if sids.len() == 1 { sids[0].as_u64() } else { None }
        });
        let Some(sid) = sid.filter(|s| self.subs.contains_key(s)) else {
            return vec![error(id, 7, "Unknown subscription ID")];
        };
        let tickers = tickers_of(params);
        let action = params.get("action").and_then(Value::as_str).unwrap_or("");
        let mut out = Vec::new();
        match action {
            "add_markets" => {
                if tickers.is_empty() {
                    return vec![error(id, 14, "Market ticker required")];
                }
                if let Some(refused) = self.over_limit(id, &tickers) {
                    return vec![refused];
                }
                for t in &tickers {
                    let sub = self.subs.get_mut(&sid).expect("checked above");
                    if sub.tickers.insert(t.clone()) && sub.channel == Channel::OrderbookDelta {
                        out.push(self.snapshot(sid, t, None));
                    }
                }
            }
            "delete_markets" => {
                if tickers.is_empty() {
                    return vec![error(id, 14, "Market ticker required")];
                }
                let sub = self.subs.get_mut(&sid).expect("checked above");
                for t in &tickers {
                    sub.tickers.remove(t);
                    sub.snap.remove(t);
                }
            }
            "get_snapshot" => {
                let sub = &self.subs[&sid];
                if sub.channel != Channel::OrderbookDelta {
                    return vec![error(id, 2, "get_snapshot needs an orderbook_delta subscription")];
                }
                let list: Vec<String> = if tickers.is_empty() {
                    sub.tickers.iter().cloned().collect()
                } else {
                    tickers.into_iter().filter(|t| sub.tickers.contains(t)).collect()
                };
                return list.iter().map(|t| self.snapshot(sid, t, id)).collect();
            }
            _ => return vec![error(id, 2, "Unknown update_subscription action")],
        }
        let sub = &self.subs[&sid];
        let tickers: Vec<&String> = sub.tickers.iter().collect();
        out.push(
            json!({"id": id, "type": "ok", "sid": sid, "seq": sub.seq, "msg": {"market_tickers": tickers}}).to_string(),
        );
        out
    }

    fn delta_frame(&mut self, sid: u64, ticker: &str, change: &LevelChange, now: Timestamp) -> String {
        let uuid = self.uuid(ticker);
        let (mut price, side) = venue_a_level(change);
        if side == "no" && self.subs[&sid].use_yes_price {
            price = price.complement();
        }
        let seq = self.next_seq(sid, true);
        json!({
            "type": "orderbook_delta",
            "sid": sid,
            "seq": seq,
            "msg": {
                "market_ticker": ticker,
                "market_id": uuid,
                "price_dollars": dollars(price),
                "delta_fp": count(change.delta()),
                "side": side,
                "ts": iso_millis(now),
                "ts_ms": now.millis(),
            },
        })
        .to_string()
    }

    fn trade_frame(&mut self, sid: u64, t: &SimTrade) -> String {
        let seq = self.next_seq(sid, false);
        let side = wire::outcome_side(t);
        json!({
            "type": "trade",
            "sid": sid,
            "seq": seq,
            "msg": {
                "trade_id": t.trade_id,
                "market_ticker": t.market_id,
                "yes_price_dollars": dollars(t.yes_price()),
                "no_price_dollars": dollars(t.yes_price().complement()),
                "count_fp": count(t.size),
                "taker_side": side,
                "taker_outcome_side": side,
                "taker_book_side": if side == "yes" { "bid" } else { "ask" },
                "is_block_trade": false,
                "ts": t.at.secs(),
                "ts_ms": t.at.millis(),
            },
        })
        .to_string()
    }

    fn ticker_frame(&mut self, sid: u64, ticker: &str, top: &Top, now: Timestamp) -> String {
        let uuid = self.uuid(ticker);
        json!({"type": "ticker", "sid": sid, "msg": wire::ticker_msg(ticker, &uuid, top, now)}).to_string()
    }
}

/// NO bids re-expressed on the YES scale (`use_yes_price: true`), ascending.
fn on_yes_scale(no: &Ladder) -> Ladder {
    let mut l: Ladder = no.iter().map(|(p, s)| (p.complement(), *s)).collect();
    l.sort_by_key(|(p, _)| *p);
    l
}

impl Protocol for Session {
    const EXCHANGE: Exchange = A;

    fn carries(&self, id: &str) -> bool {
        self.subs.values().any(|s| s.tickers.contains(id))
    }

    const MALFORMED: &'static str = "{\"type\":\"orderbook_delta\",\"sid\":1,\"seq\":";
    const PING: Option<(Duration, &'static [u8])> = Some((Duration::from_secs(10), b"heartbeat"));

    fn on_text(&mut self, text: &str) -> Reply {
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => {
                return Reply {
                    frames: vec![error(None, 1, "Unable to process message")],
                    ..Reply::default()
                };
            }
        };
        let id = v.get("id").and_then(Value::as_u64);
        let params = v.get("params").cloned().unwrap_or(Value::Null);
        let frames = match v.get("cmd").and_then(Value::as_str) {
            Some("subscribe") => self.subscribe(id, &params),
            Some("unsubscribe") => self.unsubscribe(id, &params),
            Some("update_subscription") => self.update(id, &params),
            Some("list_subscriptions") => {
                let list: Vec<Value> = self
                    .subs
                    .iter()
                    .map(|(sid, s)| json!({"channel": s.channel.name(), "sid": sid}))
                    .collect();
                vec![json!({"id": id, "type": "ok", "msg": list}).to_string()]
            }
            _ => vec![error(id, 5, "Unknown command")],
        };
        Reply {
            frames,
            ..Reply::default()
        }
    }

    fn on_batch(&mut self, batch: &Batch) -> Vec<String> {
        let mut out = Vec::new();
        let sids: Vec<u64> = self.subs.keys().copied().collect();
        for u in &batch.updates {
            let (ticker, changes, trade, top): (&str, &[LevelChange], Option<&SimTrade>, &Top) = match u {
                Update::Book {
                    exchange: A,
                    market_id,
                    changes,
                    top,
                } => (market_id, changes, None, top),
                Update::Trade { trade, change, top, .. } if trade.exchange == A => {
                    (&trade.market_id, std::slice::from_ref(change), Some(trade), top)
                }
                _ => continue,
            };
            for &sid in &sids {
                let sub = &self.subs[&sid];
                if !sub.covers(ticker) {
                    continue;
                }
                match sub.channel {
                    Channel::OrderbookDelta => {
                        // Only markets whose snapshot predates this batch; older batches are in the snapshot.
                        if sub.snap.get(ticker).is_some_and(|v| *v < batch.version) {
                            for c in changes {
                                out.push(self.delta_frame(sid, ticker, c, batch.now));
                            }
                        }
                    }
                    Channel::Trade => {
                        if let Some(t) = trade {
                            out.push(self.trade_frame(sid, t));
                        }
                    }
                    Channel::Ticker => out.push(self.ticker_frame(sid, ticker, top, batch.now)),
                }
            }
        }
        out
    }
}
