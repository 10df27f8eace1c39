//! venue_a WebSocket protocol state (PROTOCOLS A.6): subscriptions by `sid`, the per-subscription `seq`
//! check, local books that `orderbook_delta` frames apply to, and the `trade` channel.
//!
//! ```text
//! → {"id":1,"cmd":"subscribe","params":{"channels":["orderbook_delta","trade"],
//!                                       "market_tickers":[…],"use_yes_price":false}}
//! ← {"id":1,"type":"subscribed","msg":{"channel":"orderbook_delta","sid":2}}
//! ← {"type":"orderbook_snapshot","sid":2,"seq":1,"msg":{"market_ticker":…,"yes_dollars_fp":[…],…}}
//! ← {"type":"orderbook_delta","sid":2,"seq":2,"msg":{"price_dollars":"0.4700","delta_fp":"-12.00",…}}
//! ```
//!
//! `seq` counts every sequenced frame of one subscription across all of its markets, so a gap means *some*
//! market of that subscription lost a delta: every book of the subscription is marked stale, the
//! subscription is dropped (`unsubscribe`) and its markets are subscribed again, which brings fresh
//! snapshots under a new `sid`. Deltas for a stale book, or for a book never snapshotted, are discarded.
//! `use_yes_price` is pinned to `false`: NO levels are in NO-leg prices, as on REST.

use std::collections::{BTreeSet, HashMap, HashSet};

use crossbook_core::{
    Amount, BookSnapshot, Exchange, Price, Timestamp,
    book::{GapCause, LevelChange, Side},
};
use serde_json::json;
use tracing::{debug, warn};

use super::{model, normalise};
use crate::{
    classify::{Ladder, levels},
    error::VenueError,
    venue::{BookUpdate, FeedSession, FeedUpdate, MarketSet},
};
use crossbook_live::BookKey;

const EX: Exchange = Exchange::VenueA;
const BOOK_CHANNEL: &str = "orderbook_delta";
const TRADE_CHANNEL: &str = "trade";
/// Markets per subscribe command; the venue caps markets per subscription (error 26).
const TICKERS_PER_SUBSCRIPTION: usize = 100;
/// The venue's error code for a command that would take the connection past its market limit.
const MARKET_LIMIT: i64 = 26;
/// Markets dropped from the followed set but still inside live subscriptions; beyond this many the
/// session starts over with a clean set of subscriptions.
const MAX_DEAD_TICKERS: usize = 200;
/// How long a requested snapshot may take before it is requested again; doubles per attempt up to
/// [`RESNAPSHOT_MAX_MS`].
const RESNAPSHOT_AFTER_MS: i64 = 2_000;
const RESNAPSHOT_MAX_MS: i64 = 60_000;

/// One subscription (`sid`).
#[derive(Debug, Default)]
struct Subscription {
    channel: String,
    /// Markets it covers: from our subscribe command, or learned from its frames.
    tickers: BTreeSet<String>,
    last_seq: Option<u64>,
    /// We saw its `subscribed` reply (else it is an orphan whose reply was lost).
    confirmed: bool,
}

/// A local book.
#[derive(Debug, Default)]
struct LocalBook {
    yes: Ladder,
    no: Ladder,
    /// The subscription whose snapshot built this book: only its deltas apply. A market covered by two
    /// subscriptions (a resubscription racing the old one) is thus never updated twice.
    owner: u64,
    /// The owner lost frames: deltas are discarded until a new snapshot.
    stale: bool,
}

/// A snapshot requested and not yet received.
#[derive(Debug, Clone, Copy)]
struct Awaiting {
    since: Timestamp,
    attempts: u32,
}

/// What a sequence number means for its subscription.
#[derive(Debug, PartialEq, Eq)]
enum SeqCheck {
    /// The first frame seen: it sets the baseline.
    First,
    /// The next frame: apply it.
    Next,
    /// Seen already: drop it.
    Duplicate,
    /// Frames were lost in between.
    Gap { expected: u64, got: u64 },
}

/// The protocol state of one venue_a connection.
#[derive(Debug, Default)]
pub struct Session {
    /// Followed markets: ticker → event ticker (trades carry only the market).
    events: HashMap<String, String>,
    subscribed: HashSet<String>,
    next_id: u64,
    /// Subscribe command id → its tickers, to learn which markets a `sid` covers.
    commands: HashMap<u64, Vec<String>>,
    /// `add_markets` command id → the subscription and the tickers it adds, to take them back if the venue
    /// refuses them.
    adds: HashMap<u64, (u64, Vec<String>)>,
    subs: HashMap<u64, Subscription>,
    /// `sid`s we unsubscribed: their late frames are dropped.
    retired: HashSet<u64>,
    books: HashMap<String, LocalBook>,
    awaiting: HashMap<String, Awaiting>,
    dead_tickers: usize,
}

impl Session {
    pub fn new() -> Self {
        Session {
            next_id: 1,
            ..Default::default()
        }
    }

    fn command_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn subscribe_cmd(&mut self, channels: &[&str], tickers: Vec<String>) -> String {
        let id = self.command_id();
        let msg = json!({
            "id": id,
            "cmd": "subscribe",
            "params": {"channels": channels, "market_tickers": tickers, "use_yes_price": false},
        })
        .to_string();
        self.commands.insert(id, tickers);
        msg
    }

    fn unsubscribe_cmd(&mut self, sids: Vec<u64>) -> String {
        let id = self.command_id();
        json!({"id": id, "cmd": "unsubscribe", "params": {"sids": sids}}).to_string()
    }

    /// Subscribe commands for `tickers`; their snapshots are awaited from `now`.
    fn subscribe_all(&mut self, tickers: Vec<String>, channels: &[&str], now: Timestamp) -> Vec<String> {
        for t in &tickers {
            let attempts = self.awaiting.get(t).map_or(0, |a| a.attempts + 1);
            self.awaiting.insert(t.clone(), Awaiting { since: now, attempts });
        }
        tickers
            .chunks(TICKERS_PER_SUBSCRIPTION)
            .map(|chunk| self.subscribe_cmd(channels, chunk.to_vec()))
            .collect()
    }

    fn update_cmd(&mut self, sid: u64, action: &str, tickers: Vec<String>) -> String {
        let id = self.command_id();
        json!({
            "id": id,
            "cmd": "update_subscription",
            "params": {"sid": sid, "action": action, "market_tickers": tickers},
        })
        .to_string()
    }

    /// A confirmed subscription of `channel` with room for more markets: `(sid, room)`.
    fn with_room(&self, channel: &str) -> Option<(u64, usize)> {
        let mut subs: Vec<(u64, usize)> = self
            .subs
            .iter()
            .filter(|(_, s)| s.confirmed && s.channel == channel && s.tickers.len() < TICKERS_PER_SUBSCRIPTION)
            .map(|(sid, s)| (*sid, TICKERS_PER_SUBSCRIPTION - s.tickers.len()))
            .collect();
        subs.sort_unstable();
        subs.into_iter().next()
    }

    /// Commands that follow `tickers` on this connection: `add_markets` on the book and trade
    /// subscriptions that have room (the book's snapshot comes on its `sid`), then new subscriptions for
    /// the rest.
    fn add_markets(&mut self, mut tickers: Vec<String>, now: Timestamp) -> Vec<String> {
        let mut send = Vec::new();
        while !tickers.is_empty() {
            let (Some((book_sid, book_room)), Some((trade_sid, trade_room))) =
                (self.with_room(BOOK_CHANNEL), self.with_room(TRADE_CHANNEL))
            else {
                break;
            };
            let take: Vec<String> = tickers.drain(..book_room.min(trade_room).min(tickers.len())).collect();
            for t in &take {
                let attempts = self.awaiting.get(t).map_or(0, |a| a.attempts + 1);
                self.awaiting.insert(t.clone(), Awaiting { since: now, attempts });
            }
            for sid in [book_sid, trade_sid] {
                if let Some(sub) = self.subs.get_mut(&sid) {
                    sub.tickers.extend(take.iter().cloned());
                }
                send.push(self.update_cmd(sid, "add_markets", take.clone()));
                self.adds.insert(self.next_id - 1, (sid, take.clone()));
            }
        }
        send.extend(self.subscribe_all(tickers, &[BOOK_CHANNEL, TRADE_CHANNEL], now));
        send
    }

    /// Commands that stop `gone` on this connection: `delete_markets` on every subscription carrying them.
    /// Markets whose subscription is not known yet stay in it until the session starts over
    /// ([`MAX_DEAD_TICKERS`]).
    fn delete_markets(&mut self, gone: &[String]) -> Vec<String> {
        let mut send = Vec::new();
        let mut deleted: HashSet<&String> = HashSet::new();
        let mut sids: Vec<u64> = self.subs.keys().copied().collect();
        sids.sort_unstable();
        for sid in sids {
            let Some(sub) = self.subs.get_mut(&sid) else { continue };
            if !sub.confirmed {
                continue;
            }
            let carried: Vec<String> = gone.iter().filter(|t| sub.tickers.remove(*t)).cloned().collect();
            if carried.is_empty() {
                continue;
            }
            deleted.extend(gone.iter().filter(|t| carried.contains(t)));
            send.push(self.update_cmd(sid, "delete_markets", carried));
        }
        self.dead_tickers += gone.len() - deleted.len();
        send
    }

    fn book_is_fresh(&self, ticker: &str) -> bool {
        self.books.get(ticker).is_some_and(|b| !b.stale)
    }

    /// Requests a snapshot (a new book subscription) for every followed market without a fresh book whose
    /// last request is older than its backoff. The safety net for snapshots lost to a silent feed or an
    /// orphaned subscription.
    fn request_missing(&mut self, now: Timestamp) -> Vec<String> {
        let mut due: Vec<String> = self
            .events
            .keys()
            .filter(|t| !self.book_is_fresh(t))
            .filter(|t| {
                self.awaiting.get(*t).is_none_or(|a| {
                    let wait = (RESNAPSHOT_AFTER_MS << a.attempts.min(5)).min(RESNAPSHOT_MAX_MS);
                    now.millis() - a.since.millis() >= wait
                })
            })
            .cloned()
            .collect();
        if due.is_empty() {
            return Vec::new();
        }
        due.sort();
        debug!(venue = %EX, markets = due.len(), "requesting missing snapshots");
        self.subscribe_all(due, &[BOOK_CHANNEL], now)
    }

    fn check_seq(&mut self, sid: u64, seq: Option<u64>) -> SeqCheck {
        let sub = self.subs.entry(sid).or_default();
        let Some(seq) = seq else {
            return if sub.last_seq.is_none() {
                SeqCheck::First
            } else {
                SeqCheck::Next
            };
        };
        match sub.last_seq {
            None => {
                // The first frame sets the baseline (usually 1; the spec's own example starts at 2).
                sub.last_seq = Some(seq);
                SeqCheck::First
            }
            Some(last) if seq <= last => SeqCheck::Duplicate,
            Some(last) if seq == last + 1 => {
                sub.last_seq = Some(seq);
                SeqCheck::Next
            }
            Some(last) => SeqCheck::Gap {
                expected: last + 1,
                got: seq,
            },
        }
    }

    /// Drops a subscription: late frames are ignored, the venue is told to stop sending.
    fn retire(&mut self, sid: u64, update: &mut FeedUpdate) -> Subscription {
        let sub = self.subs.remove(&sid).unwrap_or_default();
        self.retired.insert(sid);
        update.send.push(self.unsubscribe_cmd(vec![sid]));
        sub
    }

    /// A gap on a book subscription: every book it owns becomes stale, the subscription is dropped and its
    /// markets are subscribed again at once (fresh snapshots under a new `sid`).
    fn book_gap(&mut self, sid: u64, expected: u64, got: u64, now: Timestamp) -> FeedUpdate {
        let mut update = FeedUpdate::default();
        let sub = self.retire(sid, &mut update);
        warn!(
            venue = %EX,
            sid,
            expected,
            got,
            markets = sub.tickers.len(),
            "sequence gap; marking the subscription's books stale and resnapshotting"
        );
        metrics::counter!("crossbook_venue_seq_gaps_total", "venue" => EX.as_str()).increment(1);
        let mut owned: Vec<String> = Vec::new();
        for (t, b) in &mut self.books {
            if b.owner == sid && !b.stale {
                b.stale = true;
                owned.push(t.clone());
            }
        }
        owned.sort();
        update
            .stale
            .extend(owned.iter().map(|t| (BookKey::venue_a(t), GapCause::SequenceGap)));
        let resubscribe: Vec<String> = sub
            .tickers
            .iter()
            .chain(owned.iter())
            .filter(|t| self.events.contains_key(*t))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        update
            .send
            .extend(self.subscribe_all(resubscribe, &[BOOK_CHANNEL], now));
        update.send.extend(self.request_missing(now));
        update
    }

    /// The venue refused command `id` (a `subscribe` or an `add_markets`) because it would take the
    /// connection past its market limit. The refused markets leave this connection (no book of theirs ever
    /// came, so none is lost) and are reported with the number the connection follows, for the feed to
    /// put them on other sockets; asking again here would only be refused again.
    fn market_limit(&mut self, id: Option<u64>) -> FeedUpdate {
        let mut refused: Vec<String> = match id {
            Some(id) => match self.commands.remove(&id) {
                Some(tickers) => tickers,
                None => self.adds.remove(&id).map(|(_, t)| t).unwrap_or_default(),
            },
            None => Vec::new(),
        };
        // A market with a book was accepted earlier; the others are new to the connection, refused on every
        // subscription that was to carry them (the book's and the trades').
        refused.retain(|t| !self.books.contains_key(t));
        for sub in self.subs.values_mut() {
            for t in &refused {
                sub.tickers.remove(t);
            }
        }
        let held = self
            .subs
            .values()
            .flat_map(|s| s.tickers.iter())
            .collect::<HashSet<_>>()
            .len();
        for t in &refused {
            self.subscribed.remove(t);
            self.awaiting.remove(t);
            self.events.remove(t);
        }
        warn!(venue = %EX, held, refused = refused.len(), "the venue refused markets past its per-connection limit; moving them to other sockets");
        FeedUpdate {
            refused: Some(crate::venue::Refused { held, markets: refused }),
            ..FeedUpdate::default()
        }
    }

    fn snapshot_of(&self, ticker: &str, timestamp: Timestamp) -> Option<BookSnapshot> {
        let b = self.books.get(ticker)?;
        Some(BookSnapshot {
            exchange: EX,
            market_id: ticker.to_string(),
            asset_id: None,
            timestamp,
            bids: levels(&b.yes, true),
            asks: Vec::new(),
            no_bids: levels(&b.no, true),
        })
    }

    fn on_snapshot(
        &mut self,
        sid: u64,
        seq: Option<u64>,
        msg: model::SnapshotMsg,
        now: Timestamp,
    ) -> Result<FeedUpdate, String> {
        let mut update = FeedUpdate {
            data: true,
            ..Default::default()
        };
        if self.retired.contains(&sid) {
            return Ok(update);
        }
        if let SeqCheck::Gap { expected, got } = self.check_seq(sid, seq) {
            update.absorb(self.book_gap(sid, expected, got, now));
            return Ok(update);
        }
        let (yes, no, unit) = if !msg.yes_dollars_fp.is_empty() || !msg.no_dollars_fp.is_empty() {
            (msg.yes_dollars_fp, msg.no_dollars_fp, normalise::PriceUnit::Dollars)
        } else if msg.yes_dollars.is_some() || msg.no_dollars.is_some() {
            (
                msg.yes_dollars.unwrap_or_default(),
                msg.no_dollars.unwrap_or_default(),
                normalise::PriceUnit::Dollars,
            )
        } else {
            (
                msg.yes.unwrap_or_default(),
                msg.no.unwrap_or_default(),
                normalise::PriceUnit::Cents,
            )
        };
        let book = normalise::book(&msg.market_ticker, &yes, &no, unit, now)?;
        let sub = self.subs.entry(sid).or_default();
        if sub.channel.is_empty() {
            sub.channel = BOOK_CHANNEL.to_string();
        }
        sub.tickers.insert(msg.market_ticker.clone());
        if !self.events.contains_key(&msg.market_ticker) {
            // No longer followed.
            return Ok(update);
        }
        self.awaiting.remove(&msg.market_ticker);
        let local = LocalBook {
            yes: book.bids.iter().map(|l| (l.price, l.size)).collect(),
            no: book.no_bids.iter().map(|l| (l.price, l.size)).collect(),
            owner: sid,
            stale: false,
        };
        self.books.insert(msg.market_ticker, local);
        update
            .books
            .push(BookUpdate::snapshot(book, seq.map(|s| s as i64), None));
        Ok(update)
    }

    fn on_delta(
        &mut self,
        sid: u64,
        seq: Option<u64>,
        msg: model::DeltaMsg,
        now: Timestamp,
    ) -> Result<FeedUpdate, String> {
        let mut update = FeedUpdate {
            data: true,
            ..Default::default()
        };
        if self.retired.contains(&sid) {
            return Ok(update);
        }
        let check = self.check_seq(sid, seq);
        let sub = self.subs.entry(sid).or_default();
        sub.tickers.insert(msg.market_ticker.clone());
        let orphan = !sub.confirmed;
        match check {
            SeqCheck::Next => {}
            SeqCheck::Duplicate => return Ok(update),
            SeqCheck::Gap { expected, got } => {
                update.absorb(self.book_gap(sid, expected, got, now));
                return Ok(update);
            }
            SeqCheck::First if orphan => {
                // A subscription we never heard of (its `subscribed` reply and snapshots were lost, e.g. to
                // a silent feed): it owns no book; drop it and ask for what is missing.
                debug!(venue = %EX, sid, "frames on an unknown subscription; dropping it");
                self.retire(sid, &mut update);
                update.send.extend(self.request_missing(now));
                return Ok(update);
            }
            // A delta first on a known subscription: its snapshot was lost; handled below.
            SeqCheck::First => {}
        }
        let price = match (&msg.price_dollars, &msg.price) {
            (Some(d), _) => d.price_exact().map_err(|e| format!("price_dollars: {e}"))?,
            (None, Some(c)) => Price::from_cents(c.integer().ok_or_else(|| format!("price: not integer cents: {c}"))?),
            (None, None) => return Err("delta without a price".into()),
        };
        let delta = match (&msg.delta_fp, &msg.delta) {
            (Some(d), _) | (None, Some(d)) => d.amount().map_err(|e| format!("delta: {e}"))?,
            (None, None) => return Err("delta without a size change".into()),
        };
        let side = msg.side.to_ascii_lowercase();
        if side != "yes" && side != "no" {
            return Err(format!("unknown side {:?}", msg.side));
        }
        let applies = self
            .books
            .get(&msg.market_ticker)
            .is_some_and(|b| b.owner == sid && !b.stale);
        if !applies {
            // Before the snapshot of this market on this subscription (dropped, not buffered: A.6 rule 3),
            // or a market owned by another subscription. Make sure a snapshot is on its way.
            if self.events.contains_key(&msg.market_ticker) && !self.book_is_fresh(&msg.market_ticker) {
                update.send.extend(self.request_missing(now));
            }
            return Ok(update);
        }
        let Some(book) = self.books.get_mut(&msg.market_ticker) else {
            return Ok(update);
        };
        let (ladder, side) = if side == "yes" {
            (&mut book.yes, Side::Bid)
        } else {
            (&mut book.no, Side::NoBid)
        };
        // A change that cannot be applied means our book and the venue's differ: a price outside (0, 1), or
        // more taken from a level than it holds. The book is not guessed at: it turns stale (a `bad_message`
        // gap in the log) until a fresh snapshot replaces it.
        let held = ladder.get(&price).copied().unwrap_or(Amount::ZERO);
        let left = Amount::from_micros(held.micros().saturating_add(delta.micros()));
        if let Err(e) = crossbook_core::book::check_level(price, left) {
            warn!(venue = %EX, ticker = %msg.market_ticker, %price, delta = %delta, held = %held, error = %e, "a delta that does not apply to our book; resnapshotting it");
            metrics::counter!("crossbook_venue_bad_deltas_total", "venue" => EX.as_str()).increment(1);
            book.stale = true;
            update
                .stale
                .push((BookKey::venue_a(&msg.market_ticker), GapCause::BadMessage));
            update.send.extend(self.request_missing(now));
            return Ok(update);
        }
        let level = ladder.entry(price).or_insert(Amount::ZERO);
        *level = Amount::from_micros(level.micros().saturating_add(delta.micros()));
        // The log records the level's new size (what the venue's change left), 0 when it emptied.
        let size = Amount::from_micros(level.micros().max(0));
        if level.micros() <= 0 {
            ladder.remove(&price);
        }
        let venue_ts = msg.ts_ms.map(Timestamp::from_millis);
        let change = LevelChange { side, price, size };
        if let Some(book) = self.snapshot_of(&msg.market_ticker, venue_ts.unwrap_or(now)) {
            update
                .books
                .push(BookUpdate::delta(book, vec![change], seq.map(|s| s as i64), venue_ts));
        }
        Ok(update)
    }

    fn on_trade(&mut self, sid: u64, seq: Option<u64>, msg: model::Trade) -> FeedUpdate {
        let mut update = FeedUpdate {
            data: true,
            ..Default::default()
        };
        if self.retired.contains(&sid) {
            return update;
        }
        match self.check_seq(sid, seq) {
            SeqCheck::Next | SeqCheck::First => {}
            SeqCheck::Duplicate => return update,
            SeqCheck::Gap { expected, got } => {
                // Lost trades are fetched over REST; the store drops the ones seen twice.
                debug!(venue = %EX, sid, expected, got, "trade sequence gap; backfilling over REST");
                if let Some(sub) = self.subs.get_mut(&sid) {
                    sub.last_seq = Some(got);
                }
                update.backfill_trades = true;
            }
        }
        if msg.is_block_trade == Some(true) {
            return update;
        }
        let event = self
            .events
            .get(&msg.ticker)
            .cloned()
            .unwrap_or_else(|| normalise::event_of_market_ticker(&msg.ticker).to_string());
        match normalise::trade(&msg, &event) {
            Ok(t) => update.trades.push(t),
            Err(e) => update.malformed.push(e),
        }
        update
    }

    fn handle(&mut self, msg: model::WsMessage, now: Timestamp) -> Result<FeedUpdate, String> {
        use model::WsMessage as M;
        Ok(match msg {
            M::Subscribed { id, msg } => {
                let tickers = id.and_then(|id| self.commands.get(&id)).cloned().unwrap_or_default();
                let sub = self.subs.entry(msg.sid).or_default();
                sub.channel = msg.channel.unwrap_or_default();
                sub.tickers.extend(tickers);
                sub.confirmed = true;
                FeedUpdate::default()
            }
            M::OrderbookSnapshot { sid, seq, msg } => self.on_snapshot(sid, seq, msg, now)?,
            M::OrderbookDelta { sid, seq, msg } => self.on_delta(sid, seq, msg, now)?,
            M::Trade { sid, seq, msg } => self.on_trade(sid, seq, msg),
            M::Error { id, sid, msg } => {
                let code = msg.code.unwrap_or_default();
                warn!(venue = %EX, ?id, ?sid, code, message = ?msg.msg, "venue rejected a command");
                // 10 (channel error) and 25 (buffer overflow) end the subscription: start over.
                if code == 10 || code == 25 {
                    self.resubscribe(GapCause::Disconnect)
                } else if code == MARKET_LIMIT {
                    self.market_limit(id)
                } else {
                    FeedUpdate::default()
                }
            }
            M::Unsubscribed { sid } => {
                if let Some(sid) = sid {
                    self.subs.remove(&sid);
                }
                FeedUpdate::default()
            }
            M::Ok { .. } | M::Other => FeedUpdate::default(),
        })
    }
}

impl FeedSession for Session {
    /// Markets that leave are deleted from the subscriptions that carry them and markets that join are
    /// added to subscriptions with room (`update_subscription`), so the connection's other markets keep
    /// their books and `seq` runs; markets beyond that room get new subscriptions.
    fn sync_markets(&mut self, markets: &MarketSet) -> FeedUpdate {
        self.events = markets
            .values()
            .map(|m| (m.market_id.clone(), m.event_id.clone()))
            .collect();
        let gone: Vec<String> = self
            .subscribed
            .iter()
            .filter(|t| !self.events.contains_key(*t))
            .cloned()
            .collect();
        for t in &gone {
            self.subscribed.remove(t);
            self.books.remove(t);
            self.awaiting.remove(t);
        }
        let mut send = self.delete_markets(&gone);
        if self.dead_tickers > MAX_DEAD_TICKERS {
            return self.resubscribe(GapCause::Disconnect);
        }
        let mut new: Vec<String> = self
            .events
            .keys()
            .filter(|t| !self.subscribed.contains(*t))
            .cloned()
            .collect();
        new.sort();
        self.subscribed.extend(new.iter().cloned());
        send.extend(self.add_markets(new, Timestamp::now()));
        FeedUpdate::sending(send)
    }

    fn resubscribe(&mut self, cause: GapCause) -> FeedUpdate {
        let mut update = FeedUpdate {
            stale: self.books.keys().map(|t| (BookKey::venue_a(t), cause)).collect(),
            ..Default::default()
        };
        let mut sids: Vec<u64> = self.subs.keys().copied().collect();
        sids.sort_unstable();
        self.retired.extend(sids.iter().copied());
        self.subs.clear();
        self.commands.clear();
        self.adds.clear();
        self.books.clear();
        self.awaiting.clear();
        self.dead_tickers = 0;
        if !sids.is_empty() {
            update.send.push(self.unsubscribe_cmd(sids));
        }
        let mut tickers: Vec<String> = self.events.keys().cloned().collect();
        tickers.sort();
        self.subscribed = tickers.iter().cloned().collect();
        update
            .send
            .extend(self.subscribe_all(tickers, &[BOOK_CHANNEL, TRADE_CHANNEL], Timestamp::now()));
        update
    }

    fn on_tick(&mut self, now: Timestamp) -> FeedUpdate {
        FeedUpdate::sending(self.request_missing(now))
    }

    fn on_text(&mut self, text: &str, now: Timestamp) -> FeedUpdate {
        let parsed = serde_json::from_str::<model::WsMessage>(text)
            .map_err(|e| e.to_string())
            .and_then(|msg| self.handle(msg, now));
        match parsed {
            Ok(update) => update,
            Err(reason) => FeedUpdate {
                malformed: vec![VenueError::malformed(EX, "websocket frame", reason, text)],
                ..Default::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::{Level, Market, Outcome};
    use serde_json::Value;

    use crossbook_core::book::BookChange;

    use super::*;

    const WS_DELTA: &str = include_str!("../../tests/fixtures/kalshi_ws_orderbook_delta.json");
    const WS_SNAPSHOT: &str = include_str!("../../tests/fixtures/variants/kalshi_ws_orderbook_snapshot.json");
    const A: &str = "KXBTC15M-26MAY120715-15";
    const B: &str = "KXBTC15M-26MAY120730-30";

    fn now() -> Timestamp {
        Timestamp::from_millis(1_778_584_000_000)
    }

    fn markets(tickers: &[&str]) -> MarketSet {
        tickers
            .iter()
            .map(|t| {
                let event = normalise::event_of_market_ticker(t);
                (t.to_string(), Market::new(EX, t, event, "KXBTC15M", "BTC up?"))
            })
            .collect()
    }

    fn json(frames: &[String]) -> Vec<Value> {
        frames.iter().map(|f| serde_json::from_str(f).unwrap()).collect()
    }

    fn lv(price: &str, size: &str) -> Level {
        Level {
            price: price.parse().unwrap(),
            size: size.parse().unwrap(),
        }
    }

    fn delta(sid: u64, seq: u64, ticker: &str, price: &str, change: &str, side: &str) -> String {
        format!(
            r#"{{"type":"orderbook_delta","sid":{sid},"seq":{seq},"msg":{{"market_ticker":"{ticker}",
            "price_dollars":"{price}","delta_fp":"{change}","side":"{side}","ts_ms":1778584051412}}}}"#
        )
    }

    fn snapshot(sid: u64, seq: u64, ticker: &str) -> String {
        WS_SNAPSHOT
            .replace(r#""sid": 2"#, &format!(r#""sid": {sid}"#))
            .replace(r#""seq": 1"#, &format!(r#""seq": {seq}"#))
            .replace(A, ticker)
    }

    /// A session subscribed to A and B on sid 2 (books) and sid 3 (trades), with A snapshotted at seq 1.
    fn subscribed_session() -> Session {
        let mut s = Session::new();
        let sub = s.sync_markets(&markets(&[A, B]));
        let cmds = json(&sub.send);
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0]["cmd"], "subscribe");
        assert_eq!(
            cmds[0]["params"]["channels"],
            serde_json::json!(["orderbook_delta", "trade"])
        );
        assert_eq!(cmds[0]["params"]["market_tickers"], serde_json::json!([A, B]));
        assert_eq!(cmds[0]["params"]["use_yes_price"], false);
        let id = cmds[0]["id"].as_u64().unwrap();
        for (sid, channel) in [(2, "orderbook_delta"), (3, "trade")] {
            let u = s.on_text(
                &format!(r#"{{"id":{id},"type":"subscribed","msg":{{"channel":"{channel}","sid":{sid}}}}}"#),
                now(),
            );
            assert!(u.malformed.is_empty() && !u.data);
        }
        let u = s.on_text(WS_SNAPSHOT, now());
        assert_eq!(u.books.len(), 1);
        assert!(u.data);
        let BookChange::Snapshot { bids, asks, no_bids } = &u.books[0].change else {
            panic!("a venue snapshot is logged as a keyframe: {:?}", u.books[0].change);
        };
        assert_eq!(
            (bids, asks, no_bids),
            (&u.books[0].bids, &u.books[0].asks, &u.books[0].no_bids)
        );
        s
    }

    #[test]
    fn snapshot_then_delta_updates_the_book() {
        let mut s = subscribed_session();
        let u = s.on_text(WS_DELTA, now());
        assert!(u.malformed.is_empty(), "{:?}", u.malformed);
        let b = &u.books[0];
        assert_eq!(b.market_id, A);
        assert_eq!(b.timestamp.millis(), 1_778_584_051_412);
        assert_eq!(b.bids[0], lv("0.47", "300"), "312 − 12");
        assert_eq!(b.no_bids[0], lv("0.52", "95.5"));
        assert!(b.asks.is_empty());
        // The log gets the level's new size, not the venue's difference, with the venue's seq and time.
        let level = |side, price: &str, size: &str| LevelChange {
            side,
            price: price.parse().unwrap(),
            size: size.parse().unwrap(),
        };
        assert_eq!(b.change, BookChange::Delta(vec![level(Side::Bid, "0.47", "300")]));
        assert_eq!(b.venue_seq, Some(2));
        assert_eq!(b.venue_ts, Some(Timestamp::from_millis(1_778_584_051_412)));
        // A level that reaches zero disappears (a change to size 0); a new level appears.
        let u = s.on_text(&delta(2, 3, A, "0.4700", "-300.00", "yes"), now());
        assert_eq!(u.books[0].bids[0], lv("0.46", "88"));
        assert_eq!(
            u.books[0].change,
            BookChange::Delta(vec![level(Side::Bid, "0.47", "0")])
        );
        assert_eq!(u.books[0].venue_seq, Some(3));
        let u = s.on_text(&delta(2, 4, A, "0.4800", "5.00", "no"), now());
        assert_eq!(u.books[0].no_bids[0], lv("0.52", "95.5"));
        assert!(u.books[0].no_bids.contains(&lv("0.48", "5")));
        // Duplicates (seq ≤ last) are dropped.
        let u = s.on_text(&delta(2, 4, A, "0.4800", "5.00", "no"), now());
        assert!(u.books.is_empty() && u.stale.is_empty());
    }

    #[test]
    fn a_delta_that_does_not_apply_turns_the_book_stale_and_asks_for_a_snapshot() {
        for bad in [
            delta(2, 2, A, "0.4700", "-312.01", "yes"), // more than the level holds (312)
            delta(2, 2, A, "0.4000", "-1.00", "no"),    // taken from a level that is not there
            delta(2, 2, A, "1.0000", "5.00", "yes"),    // a price outside (0, 1)
        ] {
            let mut s = subscribed_session();
            let u = s.on_text(&bad, now());
            assert!(u.malformed.is_empty(), "{:?}", u.malformed);
            assert!(u.books.is_empty(), "nothing applied: {bad}");
            assert_eq!(u.stale, vec![(BookKey::venue_a(A), GapCause::BadMessage)]);
            let cmds = json(&u.send);
            assert_eq!(cmds.len(), 1, "{cmds:?}");
            assert_eq!(cmds[0]["cmd"], "subscribe");
            // Only A: B's first snapshot was asked for a moment ago and is still awaited.
            assert_eq!(cmds[0]["params"]["market_tickers"], serde_json::json!([A]));
            // Further deltas wait for the snapshot.
            let u = s.on_text(&delta(2, 3, A, "0.4700", "1.00", "yes"), now());
            assert!(u.books.is_empty() && u.stale.is_empty());
        }
    }

    #[test]
    fn seq_gap_marks_every_book_of_the_subscription_stale_and_resubscribes() {
        let mut s = subscribed_session();
        let u = s.on_text(&snapshot(2, 2, B), now());
        assert_eq!(u.books.len(), 1);
        // seq 3 is lost.
        let u = s.on_text(&delta(2, 4, A, "0.4700", "1.00", "yes"), now());
        assert!(u.books.is_empty(), "the delta after a gap is not applied");
        let mut stale: Vec<&str> = u.stale.iter().map(|(k, _)| k.market_id.as_str()).collect();
        stale.sort();
        assert_eq!(stale, vec![A, B], "every book of sid 2, not only the delta's");
        assert!(u.stale.iter().all(|(_, cause)| *cause == GapCause::SequenceGap));
        let cmds = json(&u.send);
        assert_eq!(cmds[0]["cmd"], "unsubscribe");
        assert_eq!(cmds[0]["params"]["sids"], serde_json::json!([2]));
        assert_eq!(cmds[1]["cmd"], "subscribe");
        assert_eq!(cmds[1]["params"]["channels"], serde_json::json!(["orderbook_delta"]));
        assert_eq!(cmds[1]["params"]["market_tickers"], serde_json::json!([A, B]));
        // Late frames of the old subscription are dropped.
        let u = s.on_text(&delta(2, 5, A, "0.4700", "1.00", "yes"), now());
        assert!(u.books.is_empty() && u.stale.is_empty() && u.send.is_empty());
        // Deltas on the new subscription before its snapshot are dropped (the book is stale).
        let id = cmds[1]["id"].as_u64().unwrap();
        s.on_text(
            &format!(r#"{{"id":{id},"type":"subscribed","msg":{{"channel":"orderbook_delta","sid":9}}}}"#),
            now(),
        );
        let u = s.on_text(&delta(9, 1, A, "0.4700", "1.00", "yes"), now());
        assert!(u.books.is_empty());
        assert!(u.send.is_empty(), "its snapshot was just requested: no second request");
        // The fresh snapshot makes the book usable again, and deltas apply on top of it.
        let u = s.on_text(&snapshot(9, 2, A), now());
        assert_eq!(u.books.len(), 1);
        assert_eq!(u.books[0].bids[0], lv("0.47", "312"));
        let u = s.on_text(&delta(9, 3, A, "0.4700", "1.00", "yes"), now());
        assert_eq!(u.books[0].bids[0], lv("0.47", "313"));
    }

    #[test]
    fn deltas_before_any_snapshot_are_dropped() {
        let mut s = Session::new();
        s.sync_markets(&markets(&[A]));
        s.on_text(
            r#"{"id":1,"type":"subscribed","msg":{"channel":"orderbook_delta","sid":2}}"#,
            now(),
        );
        let u = s.on_text(WS_DELTA, now());
        assert!(u.books.is_empty() && u.malformed.is_empty() && u.stale.is_empty());
        // The first sequence number seen is the baseline; the snapshot that follows is the next frame.
        let u = s.on_text(&snapshot(2, 3, A), now());
        assert_eq!(u.books.len(), 1);
        assert!(u.stale.is_empty());
    }

    #[test]
    fn trades_on_the_socket() {
        let mut s = subscribed_session();
        let trade = |seq: u64, id: &str| {
            format!(
                r#"{{"type":"trade","sid":3,"seq":{seq},"msg":{{"trade_id":"{id}","market_ticker":"{A}",
                "yes_price_dollars":"0.4800","no_price_dollars":"0.5200","count_fp":"12.00",
                "taker_outcome_side":"yes","taker_book_side":"bid","is_block_trade":false,"ts_ms":1778584051412}}}}"#
            )
        };
        let u = s.on_text(&trade(1, "t1"), now());
        assert_eq!(u.trades.len(), 1);
        let t = &u.trades[0];
        assert_eq!(
            (t.source_trade_id.as_str(), t.event_id.as_str()),
            ("t1", "KXBTC15M-26MAY120715")
        );
        assert_eq!((t.outcome, t.price), (Outcome::Yes, Price::from_micros(480_000)));
        assert!(!u.backfill_trades);
        // A gap on the trade channel asks for a REST backfill; the trade itself is kept.
        let u = s.on_text(&trade(5, "t5"), now());
        assert!(u.backfill_trades);
        assert_eq!(u.trades.len(), 1);
        assert!(u.stale.is_empty(), "trade gaps do not touch books");
    }

    #[test]
    fn malformed_frames_are_reported_with_their_payload_and_the_feed_goes_on() {
        let mut s = subscribed_session();
        for bad in [
            "{not json",
            r#"{"type":"orderbook_delta","sid":2,"seq":2}"#,
            r#"{"type":"orderbook_delta","sid":2,"seq":2,"msg":{"market_ticker":"X","price_dollars":"abc","delta_fp":"1","side":"yes"}}"#,
        ] {
            let u = s.on_text(bad, now());
            assert_eq!(u.malformed.len(), 1, "{bad}");
            match &u.malformed[0] {
                VenueError::Malformed { payload, exchange, .. } => {
                    assert_eq!(*exchange, EX);
                    assert!(payload.contains("orderbook_delta") || payload.contains("not json"));
                }
                other => panic!("{other:?}"),
            }
        }
        // The third frame consumed seq 2 (it was in sequence, only its price was bad): seq 3 applies.
        let u = s.on_text(&delta(2, 3, A, "0.4700", "-12.00", "yes"), now());
        assert_eq!(u.books[0].bids[0], lv("0.47", "300"));
    }

    #[test]
    fn legacy_cent_frames() {
        let mut s = Session::new();
        s.sync_markets(&markets(&[A]));
        let u = s.on_text(
            &format!(r#"{{"type":"orderbook_snapshot","sid":1,"seq":1,"msg":{{"market_ticker":"{A}","yes":[[47,10]],"no":[[52,5]]}}}}"#),
            now(),
        );
        assert_eq!(u.books[0].bids, vec![lv("0.47", "10")]);
        let u = s.on_text(
            &format!(r#"{{"type":"orderbook_delta","sid":1,"seq":2,"msg":{{"market_ticker":"{A}","price":52,"delta":-5,"side":"no"}}}}"#),
            now(),
        );
        assert!(u.books[0].no_bids.is_empty());
    }

    #[test]
    fn terminal_errors_and_resubscribe_start_over() {
        let mut s = subscribed_session();
        let u = s.on_text(
            r#"{"id":1,"type":"error","msg":{"code":9,"msg":"Authentication required"}}"#,
            now(),
        );
        assert!(
            u.send.is_empty() && u.stale.is_empty(),
            "non-terminal errors are only logged"
        );
        let u = s.on_text(
            r#"{"type":"error","sid":2,"msg":{"code":25,"msg":"buffer overflow"}}"#,
            now(),
        );
        assert_eq!(u.stale, vec![(BookKey::venue_a(A), GapCause::Disconnect)]);
        let cmds = json(&u.send);
        assert_eq!(cmds[0]["cmd"], "unsubscribe");
        assert_eq!(cmds[0]["params"]["sids"], serde_json::json!([2, 3]));
        assert_eq!(cmds[1]["params"]["market_tickers"], serde_json::json!([A, B]));
        assert_eq!(
            cmds[1]["params"]["channels"],
            serde_json::json!(["orderbook_delta", "trade"])
        );
    }

    #[test]
    fn frames_of_an_unknown_subscription_retire_it() {
        // After a silent spell the `subscribed` replies and snapshots of our subscriptions were lost; their
        // deltas start arriving on sids we never heard of.
        let mut s = Session::new();
        s.sync_markets(&markets(&[A]));
        let u = s.on_text(WS_DELTA, now());
        assert!(u.books.is_empty());
        let cmds = json(&u.send);
        assert_eq!(cmds[0]["cmd"], "unsubscribe");
        assert_eq!(cmds[0]["params"]["sids"], serde_json::json!([2]));
        // Its later frames are ignored, its snapshot included.
        assert!(s.on_text(&snapshot(2, 3, A), now()).books.is_empty());
    }

    #[test]
    fn a_market_covered_twice_takes_deltas_only_from_its_owner() {
        let mut s = subscribed_session();
        // A second subscription (a resnapshot racing the first) snapshots A: it becomes the owner.
        s.on_text(
            r#"{"id":1,"type":"subscribed","msg":{"channel":"orderbook_delta","sid":9}}"#,
            now(),
        );
        assert_eq!(s.on_text(&snapshot(9, 1, A), now()).books.len(), 1);
        // The same change arriving on both subscriptions applies once.
        let u = s.on_text(&delta(2, 2, A, "0.4700", "-12.00", "yes"), now());
        assert!(u.books.is_empty() && u.send.is_empty());
        let u = s.on_text(&delta(9, 2, A, "0.4700", "-12.00", "yes"), now());
        assert_eq!(u.books[0].bids[0], lv("0.47", "300"));
    }

    #[test]
    fn missing_snapshots_are_requested_again_with_backoff() {
        let t0 = Timestamp::now();
        let at = |ms: i64| Timestamp::from_millis(t0.millis() + ms);
        let mut s = Session::new();
        s.sync_markets(&markets(&[A, B]));
        s.on_text(
            r#"{"id":1,"type":"subscribed","msg":{"channel":"orderbook_delta","sid":2}}"#,
            at(10),
        );
        s.on_text(WS_SNAPSHOT, at(20));
        assert!(s.on_tick(at(1_000)).send.is_empty(), "B's snapshot may still come");
        let cmds = json(&s.on_tick(at(3_000)).send);
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0]["params"]["market_tickers"], serde_json::json!([B]));
        assert_eq!(cmds[0]["params"]["channels"], serde_json::json!(["orderbook_delta"]));
        assert!(s.on_tick(at(5_000)).send.is_empty(), "the wait doubles");
        assert_eq!(json(&s.on_tick(at(7_500)).send).len(), 1);
        // Once B's snapshot arrives nothing more is requested.
        s.on_text(
            r#"{"id":3,"type":"subscribed","msg":{"channel":"orderbook_delta","sid":7}}"#,
            at(7_600),
        );
        assert_eq!(s.on_text(&snapshot(7, 1, B), at(7_700)).books.len(), 1);
        assert!(s.on_tick(at(60_000)).send.is_empty());
    }

    /// A market that leaves is deleted from the subscriptions carrying it and a market that joins is added
    /// to them (`update_subscription` on their `sid`s), so the other market's book and the `seq` run go on;
    /// the new market's snapshot arrives on the book `sid` as its next frame.
    #[test]
    fn market_set_changes() {
        const C: &str = "KXBTC15M-26MAY120745-45";
        let mut s = subscribed_session();
        let u = s.sync_markets(&markets(&[A, B]));
        assert!(u.send.is_empty(), "nothing new");
        let u = s.sync_markets(&markets(&[B, C]));
        assert!(u.stale.is_empty(), "no book is lost");
        let cmds = json(&u.send);
        let summary: Vec<(String, u64, String, Value)> = cmds
            .iter()
            .map(|c| {
                (
                    c["cmd"].as_str().unwrap().to_string(),
                    c["params"]["sid"].as_u64().unwrap_or(0),
                    c["params"]["action"].as_str().unwrap_or("").to_string(),
                    c["params"]["market_tickers"].clone(),
                )
            })
            .collect();
        let upd = |sid: u64, action: &str, t: &str| {
            (
                "update_subscription".to_string(),
                sid,
                action.to_string(),
                serde_json::json!([t]),
            )
        };
        assert_eq!(
            summary,
            vec![
                upd(2, "delete_markets", A),
                upd(3, "delete_markets", A),
                upd(2, "add_markets", C),
                upd(3, "add_markets", C),
            ]
        );
        // A is no longer followed: its deltas are dropped.
        let u = s.on_text(WS_DELTA, now());
        assert!(u.books.is_empty());
        // C's snapshot comes on the same subscription, next in its `seq` run.
        let u = s.on_text(&snapshot(2, 3, C), now());
        assert!(u.stale.is_empty() && u.send.is_empty(), "{u:?}");
        assert_eq!(u.books.len(), 1);
        assert_eq!(u.books[0].market_id, C);
    }

    /// Error 26 (market limit per connection) on an `add_markets`: the markets it added leave the
    /// connection and are reported, with the markets the connection still follows, for the feed to move;
    /// the session does not ask for them again itself.
    #[test]
    fn markets_refused_for_the_connection_limit_are_reported_not_retried() {
        const C: &str = "KXBTC15M-26MAY120745-45";
        let mut s = subscribed_session();
        let u = s.sync_markets(&markets(&[A, B, C]));
        let ids: Vec<u64> = json(&u.send).iter().map(|c| c["id"].as_u64().unwrap()).collect();
        assert_eq!(ids.len(), 2, "add_markets on the book and the trade subscription");
        let refuse = |id: u64| {
            format!(
                r#"{{"id":{id},"type":"error","msg":{{"code":26,"msg":"Market limit of 2 per connection exceeded"}}}}"#
            )
        };
        let u = s.on_text(&refuse(ids[0]), now());
        assert_eq!(
            u.refused,
            Some(crate::venue::Refused {
                held: 2,
                markets: vec![C.to_string()]
            })
        );
        assert!(u.send.is_empty() && u.stale.is_empty(), "{u:?}");
        let u = s.on_text(&refuse(ids[1]), now());
        assert_eq!(u.refused.map(|r| r.held), Some(2));
        // Later ticks do not ask for C on this connection.
        let later = Timestamp::from_millis(now().millis() + 600_000);
        let u = s.on_tick(later);
        assert!(json(&u.send).iter().all(|c| !c.to_string().contains(C)), "{:?}", u.send);
        // The feed takes C elsewhere: the next market set leaves it out and nothing is sent for it.
        let u = s.sync_markets(&markets(&[A, B]));
        assert!(u.send.is_empty(), "{:?}", u.send);
    }
}
