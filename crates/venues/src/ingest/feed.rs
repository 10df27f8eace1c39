//! The feed: the venue's followed markets spread over WebSocket connections (shards) within the venue's
//! per-connection limit, each socket with its own reconnect backoff, continuity and silence watchdog (or the
//! REST polling fallback). Every update a socket reads goes through [`publish`].

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::Duration,
};

use crossbook_core::{Exchange, Timestamp, book::GapCause};
use futures_util::{SinkExt, StreamExt};
use tokio::{
    sync::{mpsc, watch},
    time::Instant,
};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{debug, error, info, warn};

use crate::{
    backoff::Backoff,
    error::VenueError,
    health::Part,
    venue::{FeedSession, FeedUpdate, MarketSet, Refused, Venue},
};
use crossbook_live::BookKey;

use super::polling::poll_books_worker;
use super::publish::{lose, publish};
use super::{Ctx, Runtime};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Seeds the live numbering with the log's heads of the venue's books, so numbers continue from what is
/// stored. Until the heads are read no book is ingested: numbering from 0 would hand out numbers the log
/// already holds. A failure shows on the venue's books part (`/readyz`) and is retried with the reconnect
/// backoff. `false` when cancelled first.
async fn seed_numbering(ctx: &Ctx, ex: Exchange) -> bool {
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    loop {
        match ctx.store.log_heads(ex).await {
            Ok(heads) => {
                let n = heads.len();
                ctx.live.seed(heads.into_iter().map(|h| (h.book, h.last_seq)));
                debug!(venue = %ex, books = n, "book numbering continues from the log");
                return true;
            }
            Err(e) => {
                let delay = backoff.next_delay();
                let reason = format!("cannot read the book log's last numbers, books wait for them: {e}");
                error!(venue = %ex, error = %e, delay_ms = delay.as_millis() as u64, "reading the book log's heads failed; retrying");
                ctx.health
                    .update(ex, |h| h.part_failed(Part::Books, reason.clone(), Timestamp::now()));
                tokio::select! {
                    _ = ctx.cancel.cancelled() => return false,
                    _ = tokio::time::sleep(delay) => {}
                }
            }
        }
    }
}

/// How a WebSocket session ended.
enum SessionEnd {
    /// Shutdown requested, or the socket's markets all left.
    Cancelled,
    /// The connection ended (closed by the venue, silent feed): reconnect.
    Ended(String, GapCause),
}

/// A venue's followed markets spread over sockets (shards) of at most `capacity` books each (venue_a: one
/// per market; venue_b: one per token, both tokens of a market on the same socket). A market stays on the
/// socket it was first put on until it leaves, so markets that come and go never move the others; a new
/// market goes to the first socket with room, or to a new socket when every one is full.
#[derive(Debug)]
pub(super) struct ShardPlan {
    capacity: usize,
    next_id: u64,
    /// Market id → the socket carrying it and its number of books.
    placed: HashMap<String, (u64, usize)>,
    /// Socket id → books it carries.
    load: BTreeMap<u64, usize>,
}

impl ShardPlan {
    pub(super) fn new(capacity: usize) -> Self {
        ShardPlan {
            capacity: capacity.max(1),
            next_id: 0,
            placed: HashMap::new(),
            load: BTreeMap::new(),
        }
    }

    /// Places the markets of `set` (those already placed stay where they are) and returns each socket's
    /// markets. Sockets left empty close, except one when nothing is followed, so that the venue still
    /// shows a connection. A market with more books than `capacity` gets a socket of its own.
    pub(super) fn assign(&mut self, set: &MarketSet) -> BTreeMap<u64, MarketSet> {
        let load = &mut self.load;
        self.placed.retain(|id, (shard, books)| {
            let keep = set.contains_key(id);
            if !keep && let Some(l) = load.get_mut(shard) {
                *l = l.saturating_sub(*books);
            }
            keep
        });
        for (id, m) in set {
            if self.placed.contains_key(id) {
                continue;
            }
            let books = BookKey::of_market(m).len().max(1);
            let room = self
                .load
                .iter()
                .find(|(_, l)| **l == 0 || **l + books <= self.capacity)
                .map(|(s, _)| *s);
            let shard = room.unwrap_or_else(|| {
                self.next_id += 1;
                self.next_id - 1
            });
            *self.load.entry(shard).or_default() += books;
            self.placed.insert(id.clone(), (shard, books));
        }
        let first = self.load.keys().next().copied();
        self.load.retain(|_, l| *l > 0);
        if self.load.is_empty() {
            let id = first.unwrap_or_else(|| {
                self.next_id += 1;
                self.next_id - 1
            });
            self.load.insert(id, 0);
        }
        let mut out: BTreeMap<u64, MarketSet> = self.load.keys().map(|s| (*s, MarketSet::new())).collect();
        for (id, (shard, _)) in &self.placed {
            if let (Some(shard), Some(m)) = (out.get_mut(shard), set.get(id)) {
                shard.insert(id.clone(), m.clone());
            }
        }
        out
    }
}

impl ShardPlan {
    /// The venue refused `markets` on socket `shard`, which follows `held` books: no socket gets more than
    /// that from now on (half the refused markets when it follows none, since the venue's limit is then
    /// below what one command asked for), and the refused markets leave the socket, to be placed again by
    /// the next [`ShardPlan::assign`] on sockets with room under the lower limit, or on new ones. The socket
    /// keeps at least as many books as it holds, so they never come back to it.
    pub(super) fn refused(&mut self, shard: u64, held: usize, markets: &[String]) {
        let limit = if held > 0 { held } else { markets.len() / 2 };
        self.capacity = self.capacity.min(limit.max(1));
        for id in markets {
            if let Some((s, books)) = self.placed.get(id).copied()
                && s == shard
            {
                self.placed.remove(id);
                if let Some(l) = self.load.get_mut(&s) {
                    *l = l.saturating_sub(books);
                }
            }
        }
    }

    /// Books one socket carries at most now.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }
}

/// One running socket: its markets and how to stop it.
struct Shard {
    markets: watch::Sender<Arc<MarketSet>>,
    cancel: CancellationToken,
}

/// The books a venue's WebSocket carries per connection, from the settings.
fn per_connection(ex: Exchange, ctx: &Ctx) -> usize {
    match ex {
        Exchange::VenueA => ctx.settings.venue_a_per_connection,
        Exchange::VenueB => ctx.settings.venue_b_per_connection,
    }
}

/// The venue's feed: spreads the followed markets over sockets ([`ShardPlan`]) and runs each socket as its
/// own task ([`shard_worker`]), opening, updating and closing them as markets come and go. Without a
/// WebSocket it polls REST instead.
pub(super) async fn feed_worker<V: Venue>(rt: Arc<Runtime<V>>, ctx: Ctx) {
    let ex = V::EXCHANGE;
    if !seed_numbering(&ctx, ex).await {
        return;
    }
    match rt.venue.ws_request() {
        Ok(Some(_)) => {}
        Ok(None) => return poll_books_worker(rt, ctx).await,
        Err(e) => {
            error!(venue = %ex, error = %e, "cannot build the WebSocket request; books will not be ingested");
            ctx.health
                .update(ex, |h| h.part_failed(Part::Books, e.to_string(), Timestamp::now()));
            return;
        }
    }
    let mut plan = ShardPlan::new(per_connection(ex, &ctx));
    let mut shards: BTreeMap<u64, Shard> = BTreeMap::new();
    let tasks = TaskTracker::new();
    let mut markets_rx = rt.markets.subscribe();
    // Markets a socket's venue refused (its per-connection limit), for the plan to move.
    let (refusals, mut refused_rx) = mpsc::unbounded_channel::<(u64, Refused)>();
    loop {
        let set = markets_rx.borrow_and_update().clone();
        let wanted = plan.assign(&set);
        let before = shards.len();
        shards.retain(|id, shard| {
            let keep = wanted.contains_key(id);
            if !keep {
                shard.cancel.cancel();
            }
            keep
        });
        for (id, markets) in wanted {
            match shards.get(&id) {
                // Only a socket whose markets changed hears of it: the others are not resubscribed.
                Some(shard) => {
                    shard.markets.send_if_modified(|current| {
                        let changed = **current != markets;
                        if changed {
                            *current = Arc::new(markets);
                        }
                        changed
                    });
                }
                None => {
                    let (tx, rx) = watch::channel(Arc::new(markets));
                    let cancel = ctx.cancel.child_token();
                    tasks.spawn(shard_worker(
                        rt.clone(),
                        ctx.clone(),
                        id,
                        rx,
                        refusals.clone(),
                        cancel.clone(),
                    ));
                    shards.insert(id, Shard { markets: tx, cancel });
                }
            }
        }
        if shards.len() != before {
            info!(venue = %ex, sockets = shards.len(), markets = set.len(), "feed sockets");
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => break,
            changed = markets_rx.changed() => if changed.is_err() { break },
            Some((shard, r)) = refused_rx.recv() => {
                plan.refused(shard, r.held, &r.markets);
                metrics::counter!("crossbook_venue_market_limit_refusals_total", "venue" => ex.as_str()).increment(1);
                warn!(venue = %ex, socket = shard, held = r.held, refused = r.markets.len(), per_socket = plan.capacity(),
                    "the venue refused markets past its per-connection limit; spreading them over more sockets");
            }
        }
    }
    for shard in shards.values() {
        shard.cancel.cancel();
    }
    tasks.close();
    tasks.wait().await;
    ctx.health.update(ex, |h| h.connected = false);
}

/// One socket of a venue: connects, subscribes its markets, follows their changes, and reconnects with its
/// own backoff. A drop makes only its own books stale, with a gap for each.
async fn shard_worker<V: Venue>(
    rt: Arc<Runtime<V>>,
    ctx: Ctx,
    id: u64,
    mut markets_rx: watch::Receiver<Arc<MarketSet>>,
    refusals: mpsc::UnboundedSender<(u64, Refused)>,
    cancel: CancellationToken,
) {
    let ex = V::EXCHANGE;
    ctx.health.socket_opening(ex, id);
    let mut backoff = Backoff::new(ctx.settings.reconnect);
    loop {
        let session = ws_session(&rt, &ctx, id, &mut markets_rx, &refusals, &mut backoff, &cancel);
        let (reason, cause) = match session.await {
            Ok(SessionEnd::Cancelled) => break,
            Ok(SessionEnd::Ended(reason, cause)) => (reason, cause),
            Err(e) => (e.to_string(), GapCause::Disconnect),
        };
        if cancel.is_cancelled() {
            break;
        }
        // This socket's books are marked before it shows disconnected, so a reader that sees it
        // disconnected also sees its books stale. The venue's other sockets and their books go on.
        let keys: Vec<BookKey> = markets_rx.borrow().values().flat_map(BookKey::of_market).collect();
        let stale = ctx.live.mark_stale(keys.iter());
        ctx.health.socket_down(ex, id, reason.clone(), Timestamp::now());
        lose(&ctx, ex, stale, cause, Timestamp::now()).await;
        metrics::counter!("crossbook_venue_reconnects_total", "venue" => ex.as_str()).increment(1);
        let delay = backoff.next_delay();
        warn!(venue = %ex, socket = id, attempt = backoff.failures(), delay_ms = delay.as_millis() as u64, reason = %reason, "feed socket disconnected; reconnecting");
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(delay) => {}
        }
    }
    ctx.health.socket_closed(ex, id);
}

/// How often the watchdog looks: a quarter of the silence limit, between 100 ms and 5 s.
fn watchdog_period(silence: Duration) -> Duration {
    (silence / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
}

async fn ws_session<V: Venue>(
    rt: &Runtime<V>,
    ctx: &Ctx,
    socket: u64,
    markets_rx: &mut watch::Receiver<Arc<MarketSet>>,
    refusals: &mpsc::UnboundedSender<(u64, Refused)>,
    backoff: &mut Backoff,
    cancel: &CancellationToken,
) -> Result<SessionEnd, VenueError> {
    let ex = V::EXCHANGE;
    let ws_err = |reason: String| VenueError::WebSocket { exchange: ex, reason };
    let Some(request) = rt.venue.ws_request()? else {
        return Err(ws_err("no WebSocket request".into()));
    };
    let url = request.uri().to_string();
    let connect = tokio::time::timeout(CONNECT_TIMEOUT, tokio_tungstenite::connect_async(request));
    let (ws, _) = tokio::select! {
        _ = cancel.cancelled() => return Ok(SessionEnd::Cancelled),
        r = connect => r
            .map_err(|_| ws_err(format!("connect to {url} timed out")))?
            .map_err(|e| ws_err(format!("connect to {url}: {e}")))?,
    };
    let (mut sink, mut stream) = ws.split();
    let mut session = rt.venue.new_session();

    let set = markets_rx.borrow_and_update().clone();
    let mut update = session.sync_markets(&set);
    for frame in update.send.drain(..) {
        sink.send(Message::Text(frame.into()))
            .await
            .map_err(|e| ws_err(format!("send: {e}")))?;
    }
    publish(rt, ctx, &mut update).await;
    ctx.health.socket_up(ex, socket);
    info!(venue = %ex, socket, url = %url, markets = set.len(), "feed socket connected and subscribed");
    // Trades executed while we were away come from the REST tape.
    rt.trades_now.notify_one();

    let silence = ctx.settings.feed_silence;
    let period = watchdog_period(silence);
    let mut watchdog = tokio::time::interval_at(Instant::now() + period, period);
    let keepalive_every = rt.venue.keepalive_interval();
    let ka_period = keepalive_every.unwrap_or(Duration::from_secs(3600));
    let mut keepalive = tokio::time::interval_at(Instant::now() + ka_period, ka_period);
    // Data or a keepalive: what the watchdog waits for. A quiet market sends only keepalives (venue_b's
    // `PONG`, venue_a's heartbeat pings) and is not silent; its books stay valid.
    let mut last_alive = Instant::now();
    let mut resubscribed = false;
    let mut got_data = false;
    // Market data only: keepalives prove the socket, not its subscriptions.
    let data_silence = ctx.settings.data_silence;
    let mut last_data = Instant::now();

    loop {
        let mut update = tokio::select! {
            _ = cancel.cancelled() => {
                let _ = sink.send(Message::Close(None)).await;
                return Ok(SessionEnd::Cancelled);
            }
            frame = stream.next() => {
                let text = match frame {
                    Some(Ok(Message::Text(t))) => t.to_string(),
                    Some(Ok(Message::Binary(b))) => String::from_utf8_lossy(&b).into_owned(),
                    Some(Ok(Message::Close(f))) => {
                        return Ok(SessionEnd::Ended(format!("closed by the venue ({f:?})"), GapCause::Disconnect));
                    }
                    // The venue's heartbeat pings (answered by tungstenite itself) and pongs: alive.
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {
                        last_alive = Instant::now();
                        ctx.health.alive(ex, Timestamp::now());
                        continue;
                    }
                    // Raw frames carry nothing.
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(ws_err(format!("read: {e}"))),
                    None => return Ok(SessionEnd::Ended("connection ended".into(), GapCause::Disconnect)),
                };
                let update = session.on_text(&text, Timestamp::now());
                if update.data {
                    last_alive = Instant::now();
                    last_data = last_alive;
                    resubscribed = false;
                    ctx.health.touch(ex, Timestamp::now());
                    if !got_data {
                        // Connected and receiving: the next failure starts the schedule over.
                        got_data = true;
                        backoff.reset();
                    }
                } else if update.alive {
                    last_alive = Instant::now();
                    ctx.health.alive(ex, Timestamp::now());
                }
                update
            }
            changed = markets_rx.changed() => {
                if changed.is_err() {
                    return Ok(SessionEnd::Cancelled);
                }
                let set = markets_rx.borrow_and_update().clone();
                session.sync_markets(&set)
            }
            _ = keepalive.tick(), if keepalive_every.is_some() => {
                match session.keepalive() {
                    Some(ping) => FeedUpdate::sending(vec![ping]),
                    None => FeedUpdate::default(),
                }
            }
            _ = watchdog.tick() => {
                let data_silent = data_silence
                    .filter(|limit| last_data.elapsed() >= *limit && !markets_rx.borrow().is_empty());
                if let (true, Some(limit)) = (last_alive.elapsed() < silence, data_silent) {
                    // Keepalives come but the subscriptions bring nothing: a dead subscription on a live
                    // socket. Its books cannot be vouched for; subscribing again brings fresh snapshots.
                    warn!(venue = %ex, socket, limit_s = limit.as_secs(), "no market data on a live socket; resubscribing");
                    metrics::counter!("crossbook_venue_data_silence_resubscribes_total", "venue" => ex.as_str())
                        .increment(1);
                    last_data = Instant::now();
                    session.resubscribe(GapCause::Silence)
                } else if last_alive.elapsed() < silence {
                    session.on_tick(Timestamp::now())
                } else if resubscribed {
                    return Ok(SessionEnd::Ended(
                        format!(
                            "no data or keepalive for {} ms even after resubscribing",
                            last_alive.elapsed().as_millis()
                        ),
                        GapCause::Silence,
                    ));
                } else {
                    warn!(venue = %ex, socket, silent_ms = last_alive.elapsed().as_millis() as u64, "feed silent (no data, no keepalive); resubscribing");
                    metrics::counter!("crossbook_venue_watchdog_resubscribes_total", "venue" => ex.as_str())
                        .increment(1);
                    resubscribed = true;
                    last_alive = Instant::now();
                    session.resubscribe(GapCause::Silence)
                }
            }
        };
        for frame in update.send.drain(..) {
            sink.send(Message::Text(frame.into()))
                .await
                .map_err(|e| ws_err(format!("send: {e}")))?;
        }
        if let Some(r) = update.refused.take() {
            let _ = refusals.send((socket, r));
        }
        if let Some(n) = update.missing.take() {
            let before = ctx.health.books_missing(ex, socket, n);
            if before == 0 && n > 0 {
                // The venue says nothing about subscriptions past its per-connection limit; this is the
                // only sign of one.
                warn!(venue = %ex, socket, books = n, "the venue has sent no book for some books this connection follows, though asked several times; if the count stays, the connection may follow more than the venue allows (lower the per-connection setting)");
            }
        }
        publish(rt, ctx, &mut update).await;
    }
}

#[cfg(test)]
mod tests {
    use crossbook_core::Market;

    use super::*;

    fn a(ids: &[&str]) -> MarketSet {
        ids.iter()
            .map(|id| (id.to_string(), Market::new(Exchange::VenueA, id, "E", "S", "?")))
            .collect()
    }

    fn b(ids: &[&str]) -> MarketSet {
        ids.iter()
            .map(|id| {
                let mut m = Market::new(Exchange::VenueB, id, "E", "S", "?");
                m.yes_token_id = Some(format!("{id}-yes"));
                m.no_token_id = Some(format!("{id}-no"));
                (id.to_string(), m)
            })
            .collect()
    }

    fn layout(plan: &BTreeMap<u64, MarketSet>) -> Vec<(u64, Vec<&str>)> {
        plan.iter()
            .map(|(id, set)| (*id, set.keys().map(String::as_str).collect()))
            .collect()
    }

    /// Markets fill sockets up to the limit in order; a market stays on its socket while others come and
    /// go; a new market takes free room before a new socket opens; a socket left empty closes.
    #[test]
    fn markets_keep_their_socket_and_fill_free_room_first() {
        let mut plan = ShardPlan::new(2);
        let got = plan.assign(&a(&["m1", "m2", "m3", "m4", "m5"]));
        assert_eq!(
            layout(&got),
            vec![(0, vec!["m1", "m2"]), (1, vec!["m3", "m4"]), (2, vec!["m5"])]
        );
        // m1 and m4 leave, m0 and m6 come: they take the freed room; nothing else moves.
        let got = plan.assign(&a(&["m0", "m2", "m3", "m5", "m6"]));
        assert_eq!(
            layout(&got),
            vec![(0, vec!["m0", "m2"]), (1, vec!["m3", "m6"]), (2, vec!["m5"])]
        );
        // Every market of socket 1 leaves while two come: the open socket takes them.
        let got = plan.assign(&a(&["m0", "m2", "m5", "m7", "m8"]));
        assert_eq!(
            layout(&got),
            vec![(0, vec!["m0", "m2"]), (1, vec!["m7", "m8"]), (2, vec!["m5"])]
        );
        // Socket 1's markets leave with nothing coming: it closes; the next market takes socket 2's room,
        // the one after a new socket.
        let got = plan.assign(&a(&["m0", "m2", "m5"]));
        assert_eq!(layout(&got), vec![(0, vec!["m0", "m2"]), (2, vec!["m5"])]);
        let got = plan.assign(&a(&["m0", "m2", "m5", "m7", "m8"]));
        assert_eq!(
            layout(&got),
            vec![(0, vec!["m0", "m2"]), (2, vec!["m5", "m7"]), (3, vec!["m8"])]
        );
        // Nothing followed: one socket stays.
        assert_eq!(layout(&plan.assign(&MarketSet::new())), vec![(0, vec![])]);
        assert_eq!(layout(&plan.assign(&a(&["m9"]))), vec![(0, vec!["m9"])]);
    }

    /// venue_b's limit counts tokens: both tokens of a market share a socket, and a limit smaller than a
    /// market's tokens still gives it a socket of its own.
    #[test]
    fn venue_b_counts_tokens_and_keeps_a_market_together() {
        let mut plan = ShardPlan::new(5);
        let got = plan.assign(&b(&["c1", "c2", "c3", "c4", "c5"]));
        assert_eq!(
            layout(&got),
            vec![(0, vec!["c1", "c2"]), (1, vec!["c3", "c4"]), (2, vec!["c5"])]
        );
        let mut plan = ShardPlan::new(1);
        assert_eq!(
            layout(&plan.assign(&b(&["c1", "c2"]))),
            vec![(0, vec!["c1"]), (1, vec!["c2"])]
        );
    }
}
