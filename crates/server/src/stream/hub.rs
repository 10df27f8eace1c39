//! The hub: the sessions, who follows what, and the task that turns bus events into channel messages.
//!
//! One task reads the bus and renders each event once; each message goes to the sessions that follow its
//! channel (and market) through a non-blocking push (see [`Session::push_locked`]), so a slow client is
//! cut, never waited for, and never slows the bus, ingestion or another client.
//!
//! Lock order: the delivery lock, then a session's lock, then the index. The delivery task never holds the
//! index while it takes a session's lock (it copies the targets out first), so the two cannot deadlock.
//!
//! In an api process, the bus carries the event stream's positions ([`DomainEvent::Position`]): every
//! channel message carries the `pos` of the event it was rendered from (a snapshot or answer, the position
//! delivered when it was sent), and a session of another process joins delivery at a known position
//! ([`Hub::adopt`]).

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use crossbook_core::{Exchange, Plan, Timestamp};
use crossbook_live::{BookChanged, DomainEvent, LiveBooks};
use crossbook_venues::{FeedMode, Freshness, VenueHealth};
use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::{
    frames,
    protocol::{Channel, Frag, OpError, control},
    session::{Attached, Out, Owner, Pushed, Session, State, Subscriptions},
    settings::StreamSettings,
    shared::{Record, SharedSessions},
};
use crate::{
    slots::{OpenCounts, Slot},
    state::FRESHNESS_LIMIT,
};

mod adopt;

/// The `result` label of `crossbook_stream_resumes_total`: the missed messages replayed, or the session reset.
pub const RESUME_RESULTS: [&str; 2] = ["resumed", "reset"];

/// Most bus events the delivery task takes at once, and at most a quarter of a connection's queue
/// (`stream_queue`): a batch is pushed to a session back to back, so it must not fill the queue alone, and it
/// stays short so that the last session of a batch waits little longer than the first.
const DELIVERY_BATCH: usize = 64;

/// Who follows one channel: every market, or by market id.
#[derive(Debug, Default)]
struct ChannelIndex {
    all: Vec<Arc<Session>>,
    markets: HashMap<String, Vec<Arc<Session>>>,
}

impl ChannelIndex {
    fn remove_from(v: &mut Vec<Arc<Session>>, s: &Arc<Session>) {
        v.retain(|x| !Arc::ptr_eq(x, s));
    }

    fn remove_market(&mut self, market: &str, s: &Arc<Session>) {
        if let Some(v) = self.markets.get_mut(market) {
            Self::remove_from(v, s);
            if v.is_empty() {
                self.markets.remove(market);
            }
        }
    }

    /// Sessions following every market, then those following any of `markets`, each once. A session is
    /// never in both `all` and a market's list (a subscription to every market replaces the market list),
    /// and once at most in each list, so only several markets can repeat a session.
    fn targets(&self, markets: &[&str], out: &mut Vec<Arc<Session>>) {
        out.extend(self.all.iter().cloned());
        let from = out.len();
        for m in markets {
            if let Some(v) = self.markets.get(*m) {
                out.extend(v.iter().cloned());
            }
        }
        if markets.len() > 1 {
            // Sorting by address keeps this linear-logarithmic: a thousand sessions on one market must not
            // cost a million comparisons per event.
            let tail = &mut out[from..];
            tail.sort_unstable_by_key(|s| Arc::as_ptr(s) as usize);
            let mut kept: Vec<Arc<Session>> = Vec::with_capacity(tail.len());
            for s in out.drain(from..) {
                if kept.last().is_none_or(|k| !Arc::ptr_eq(k, &s)) {
                    kept.push(s);
                }
            }
            out.extend(kept);
        }
    }
}

/// A connection attached to its session.
#[derive(Debug)]
pub struct Attachment {
    /// The connection's number (see [`Hub::detach`]).
    pub id: u64,
    /// The session's messages from now on.
    pub rx: mpsc::Receiver<Out>,
    /// For a resume: the messages after `resume_from`, to send before anything from `rx`; `None` when
    /// the buffer no longer holds them all.
    pub missed: Option<Vec<Out>>,
}

/// The stream hub. One per process, shared by the connections and its delivery task.
#[derive(Debug)]
pub struct Hub {
    settings: StreamSettings,
    live: LiveBooks,
    health: VenueHealth,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    index: RwLock<[ChannelIndex; 5]>,
    /// Open streams per customer.
    connections: Arc<OpenCounts<i64>>,
    /// Streams opened without a key, per client address.
    anonymous: Arc<OpenCounts<std::net::IpAddr>>,
    next_connection: AtomicU64,
    closing: CancellationToken,
    /// Held while a batch of bus events is delivered (and while a session of another process joins).
    delivery: Mutex<Delivery>,
    /// The event stream's position up to which every event has been delivered (0: no position known); a
    /// watch, so that a session of another process can wait for this process to reach its client.
    position: tokio::sync::watch::Sender<u64>,
    /// The session records shared with the other api processes, in a process that mirrors over a bus.
    shared: std::sync::OnceLock<Arc<SharedSessions>>,
}

/// Where delivery stands in the event stream.
#[derive(Debug, Default)]
struct Delivery {
    /// The last position on the bus: the `pos` of the events delivered now.
    at: u64,
    /// The event of position `at` has not been delivered yet.
    pending: bool,
}

impl Delivery {
    /// The position up to which every event has been delivered, and after which none has.
    fn complete(&self) -> u64 {
        if self.pending {
            self.at.saturating_sub(1)
        } else {
            self.at
        }
    }
}

/// A message with its position in front: `"pos":N,` then the fragment (no position known: as it is).
pub fn at_pos(pos: u64, f: Frag) -> Frag {
    if pos == 0 {
        return f;
    }
    Arc::from(format!("\"pos\":{pos},{f}"))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts a cut slow consumer.
fn pushed(p: Pushed) {
    if p == Pushed::CutSlow {
        metrics::counter!("crossbook_stream_slow_consumers_total").increment(1);
        tracing::info!("stream client too slow; disconnected (it may resume)");
    }
}

/// One stream opened without a key, counted against its client address until dropped.
pub type AnonymousSlot = Slot<std::net::IpAddr>;

/// One open connection of a customer, counted against its plan's limit until dropped.
#[derive(Debug)]
pub struct ConnectionSlot {
    _slot: Slot<i64>,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        metrics::gauge!("crossbook_stream_connections").decrement(1.0);
    }
}

impl Hub {
    pub fn new(settings: StreamSettings, live: LiveBooks, health: VenueHealth) -> Arc<Hub> {
        Arc::new(Hub {
            settings,
            live,
            health,
            sessions: Mutex::new(HashMap::new()),
            index: RwLock::new(Default::default()),
            connections: Arc::default(),
            anonymous: Arc::default(),
            next_connection: AtomicU64::new(1),
            closing: CancellationToken::new(),
            delivery: Mutex::default(),
            position: tokio::sync::watch::Sender::new(0),
            shared: std::sync::OnceLock::new(),
        })
    }

    /// Shares this process's sessions with the other api processes (once, at start).
    pub fn share(&self, shared: Arc<SharedSessions>) {
        let _ = self.shared.set(shared);
    }

    /// The shared session records, in an api process with a bus.
    pub fn shared(&self) -> Option<&Arc<SharedSessions>> {
        self.shared.get()
    }

    /// The event stream's position up to which every event has been delivered (0: none known).
    pub fn position(&self) -> u64 {
        *self.position.borrow()
    }

    /// Waits until every event up to `pos` has been delivered; `false` when `deadline` came first.
    pub async fn reached(&self, pos: u64, deadline: tokio::time::Instant) -> bool {
        let mut rx = self.position.subscribe();
        matches!(
            tokio::time::timeout_at(deadline, rx.wait_for(|at| *at >= pos)).await,
            Ok(Ok(_))
        )
    }

    /// The records of the sessions attached now that have an owner and a subscription.
    pub fn attached_records(&self) -> Vec<(String, Record)> {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        sessions
            .iter()
            .filter_map(|s| {
                let st = s.lock();
                let owner = st.owner?;
                (st.attached.is_some() && !st.subs.is_empty())
                    .then(|| (s.id.clone(), Record::new(owner.customer_id, &st.subs)))
            })
            .collect()
    }

    /// The session's record as it stands, if it has an owner.
    pub fn record(&self, s: &Session) -> Option<Record> {
        let st = s.lock();
        st.owner.map(|o| Record::new(o.customer_id, &st.subs))
    }

    /// The session's subscriptions and owner.
    pub fn subscriptions(&self, s: &Session) -> (Subscriptions, Option<Owner>) {
        let st = s.lock();
        (st.subs.clone(), st.owner)
    }

    pub fn settings(&self) -> &StreamSettings {
        &self.settings
    }

    /// Cancelled when the server shuts down: every connection then closes with `going away`.
    pub fn closing(&self) -> &CancellationToken {
        &self.closing
    }

    /// Closes every stream (server shutdown).
    pub fn close(&self) {
        self.closing.cancel();
    }

    /// Sessions with a connection attached now.
    pub fn attached_count(&self) -> usize {
        lock(&self.sessions)
            .values()
            .filter(|s| s.lock().attached.is_some())
            .count()
    }

    /// A new session.
    pub fn open_session(&self) -> Arc<Session> {
        let id = format!("s_{}", uuid::Uuid::new_v4().simple());
        let s = Session::new(id.clone(), self.settings.buffer);
        let mut sessions = lock(&self.sessions);
        sessions.insert(id, s.clone());
        metrics::gauge!("crossbook_stream_sessions").set(sessions.len() as f64);
        s
    }

    /// Takes up a stream without a key from `ip`, or `Err(limit)` when that address already has as many open
    /// as allowed. Such a stream holds a connection until it authenticates or is closed (10 s), so without a
    /// bound one address could take every connection the server has.
    pub fn connect_anonymous(&self, ip: std::net::IpAddr) -> Result<AnonymousSlot, usize> {
        let limit = self.settings.anonymous_per_address;
        self.anonymous.take(ip, limit).ok_or(limit)
    }

    /// Takes up a connection of the owner's plan, or refuses when the plan's limit is reached.
    pub fn connect(&self, owner: Owner) -> Result<ConnectionSlot, OpError> {
        let limit = self.settings.limits(owner.plan).connections;
        let Some(slot) = self.connections.take(owner.customer_id, limit) else {
            return Err(OpError {
                code: "limit_exceeded",
                detail: format!(
                    "the {} plan allows {limit} open streams per customer; close one first",
                    owner.plan.display_name()
                ),
                param: None,
                channel: None,
            });
        };
        metrics::gauge!("crossbook_stream_connections").increment(1.0);
        Ok(ConnectionSlot { _slot: slot })
    }

    /// The session `id`, if it is held and is not another customer's.
    pub fn find(&self, id: &str, owner: Option<Owner>) -> Option<Arc<Session>> {
        let s = lock(&self.sessions).get(id).cloned()?;
        let theirs = s.lock().owner.map(|o| o.customer_id);
        (theirs.is_none() || theirs == owner.map(|o| o.customer_id)).then_some(s)
    }

    /// Attaches a connection's queue to a session (an older connection of the session is closed). With
    /// `resume_from`, also returns what the session sent after it; both are taken under one lock, so no
    /// message falls between the two.
    pub fn attach(&self, s: &Session, slow: CancellationToken, resume_from: Option<u64>) -> Attachment {
        let (tx, rx) = mpsc::channel(self.settings.queue.max(1));
        let id = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let mut st = s.lock();
        let missed = resume_from.and_then(|after| Session::since(&st, after));
        if let Some(old) = st.attached.replace(Attached { tx, slow, id }) {
            old.slow.cancel();
        }
        st.detached_at = None;
        Attachment { id, rx, missed }
    }

    /// Detaches connection `id` from its session (if it is still the attached one); the session then waits
    /// a resume window for its client.
    pub fn detach(&self, s: &Session, id: u64) {
        let mut st = s.lock();
        if st.attached.as_ref().is_some_and(|a| a.id == id) {
            st.attached = None;
            st.detached_at = Some(Instant::now());
        }
    }

    /// Numbers and sends a message to one session.
    pub fn push(&self, s: &Session, frag: Frag) {
        pushed(s.push(frag));
    }

    /// Sets the session's owner (a key given at connect or by `auth`), then holds the owner to its plan's
    /// bound of sessions.
    pub fn set_owner(&self, s: &Session, owner: Owner) {
        s.lock().owner = Some(owner);
        self.bound_sessions(owner, &s.id);
    }

    /// Drops the oldest detached sessions of `owner`'s customer while it holds more than its plan allows
    /// ([`StreamSettings::sessions_bound`]). Each detached session keeps its resume buffer for the resume
    /// window, so without a bound a client reconnecting without `session` could pile them up; a dropped
    /// session's resume answers `reset`. Attached sessions are never dropped: the plan's connection limit
    /// already bounds them, and neither is `keep`: the session being opened or resumed, which is not attached
    /// yet.
    fn bound_sessions(&self, owner: Owner, keep: &str) {
        let Some(bound) = self.settings.sessions_bound(owner.plan) else {
            return;
        };
        let evicted: Vec<Arc<Session>> = {
            let mut sessions = lock(&self.sessions);
            let mut held = 0usize;
            let mut detached: Vec<(Instant, String)> = Vec::new();
            for (id, s) in sessions.iter() {
                let st = s.lock();
                if st.owner.map(|o| o.customer_id) != Some(owner.customer_id) {
                    continue;
                }
                held += 1;
                if st.attached.is_none()
                    && id != keep
                    && let Some(at) = st.detached_at
                {
                    detached.push((at, id.clone()));
                }
            }
            if held <= bound {
                return;
            }
            detached.sort();
            detached
                .iter()
                .take(held - bound)
                .filter_map(|(_, id)| sessions.remove(id))
                .collect()
        };
        if evicted.is_empty() {
            return;
        }
        metrics::counter!("crossbook_stream_sessions_evicted_total").increment(evicted.len() as u64);
        tracing::info!(
            customer = owner.customer_id,
            evicted = evicted.len(),
            bound,
            "stream sessions over the customer's bound; the oldest detached ones were dropped"
        );
        self.forget(&evicted);
    }

    /// Removes dropped sessions from the channel index and updates the sessions gauge.
    fn forget(&self, gone: &[Arc<Session>]) {
        {
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            for ci in index.iter_mut() {
                ci.all.retain(|s| !gone.iter().any(|e| Arc::ptr_eq(s, e)));
                ci.markets.retain(|_, v| {
                    v.retain(|s| !gone.iter().any(|e| Arc::ptr_eq(s, e)));
                    !v.is_empty()
                });
            }
        }
        metrics::gauge!("crossbook_stream_sessions").set(lock(&self.sessions).len() as f64);
    }

    /// Subscribes a session: checks the key, the plan and the market limit, records the subscription, and
    /// sends `subscribed` followed by the channel's current state (a snapshot of each book; the venues'
    /// status). `markets` are already known to exist.
    /// Whether a `subscribe` would be accepted: the key, the plan and the market limit.
    pub fn check_subscribe(
        &self,
        s: &Session,
        channel: Channel,
        markets: &[String],
    ) -> Result<(), (OpError, Option<Plan>)> {
        self.check_locked(&s.lock(), channel, markets)
    }

    fn check_locked(&self, st: &State, channel: Channel, markets: &[String]) -> Result<(), (OpError, Option<Plan>)> {
        let Some(owner) = st.owner else {
            return Err((
                OpError {
                    code: "unauthorized",
                    detail: "subscribing needs an API key: send it in the X-API-Key header or as {\"op\": \"auth\", \"key\": …}".into(),
                    param: None,
                    channel: Some(channel),
                },
                None,
            ));
        };
        let required = channel.plan();
        if owner.plan < required {
            return Err((
                OpError {
                    code: "entitlement_required",
                    detail: format!(
                        "the {} channel requires the {} plan",
                        channel.as_str(),
                        required.display_name()
                    ),
                    param: None,
                    channel: Some(channel),
                },
                Some(required),
            ));
        }
        let limit = self.settings.limits(owner.plan).markets;
        if limit > 0 {
            let mut all: std::collections::BTreeSet<&str> = st
                .subs
                .values()
                .flat_map(|m| m.iter().flatten().map(String::as_str))
                .collect();
            all.extend(markets.iter().map(String::as_str));
            if all.len() > limit {
                return Err((
                    OpError {
                        code: "limit_exceeded",
                        detail: format!(
                            "the {} plan allows {limit} markets per stream; this would make {}",
                            owner.plan.display_name(),
                            all.len()
                        ),
                        param: Some("markets"),
                        channel: Some(channel),
                    },
                    None,
                ));
            }
        }
        Ok(())
    }

    pub fn subscribe(
        &self,
        s: &Arc<Session>,
        channel: Channel,
        markets: Vec<String>,
    ) -> Result<(), (OpError, Option<Plan>)> {
        let mut st = s.lock();
        self.check_locked(&st, channel, &markets)?;
        let added: Vec<String> = {
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            let ci = &mut index[channel as usize];
            let entry = st.subs.entry(channel);
            match entry {
                std::collections::btree_map::Entry::Vacant(v) if markets.is_empty() => {
                    v.insert(None);
                    ci.all.push(s.clone());
                    Vec::new()
                }
                std::collections::btree_map::Entry::Vacant(v) => {
                    for m in &markets {
                        ci.markets.entry(m.clone()).or_default().push(s.clone());
                    }
                    v.insert(Some(markets.iter().cloned().collect()));
                    markets.clone()
                }
                std::collections::btree_map::Entry::Occupied(mut o) => match o.get_mut() {
                    // Already every market.
                    None => Vec::new(),
                    Some(held) if markets.is_empty() => {
                        for m in held.iter() {
                            ci.remove_market(m, s);
                        }
                        ci.all.push(s.clone());
                        *o.get_mut() = None;
                        Vec::new()
                    }
                    Some(held) => {
                        let mut added = Vec::new();
                        for m in &markets {
                            if held.insert(m.clone()) {
                                ci.markets.entry(m.clone()).or_default().push(s.clone());
                                added.push(m.clone());
                            }
                        }
                        added
                    }
                },
            }
        };
        let reply = json!({ "markets": markets, "all_markets": markets.is_empty() });
        pushed(s.push_locked(&mut st, at_pos(self.position(), frames::subscribed(channel, reply))));
        match channel {
            Channel::Book => {
                for m in &added {
                    self.snapshot_market(s, &mut st, m);
                }
            }
            Channel::Status => {
                for (ex, h) in self.health.snapshot() {
                    let freshness = h.freshness(Timestamp::now(), FRESHNESS_LIMIT);
                    pushed(s.push_locked(&mut st, at_pos(self.position(), frames::venue(ex, &h, &freshness))));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Unsubscribes a session from a channel's markets, or from the whole channel when `markets` is empty.
    pub fn unsubscribe(&self, s: &Arc<Session>, channel: Channel, markets: Vec<String>) {
        let mut st = s.lock();
        {
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            let ci = &mut index[channel as usize];
            if markets.is_empty() {
                match st.subs.remove(&channel) {
                    Some(None) => ChannelIndex::remove_from(&mut ci.all, s),
                    Some(Some(held)) => {
                        for m in &held {
                            ci.remove_market(m, s);
                        }
                    }
                    None => {}
                }
                if channel == Channel::Book {
                    st.books.clear();
                    st.assumed.clear();
                }
            } else if let Some(Some(held)) = st.subs.get_mut(&channel) {
                for m in &markets {
                    if held.remove(m) {
                        ci.remove_market(m, s);
                    }
                }
                if held.is_empty() {
                    st.subs.remove(&channel);
                }
                if channel == Channel::Book {
                    st.books.retain(|k, _| !markets.contains(&k.market_id));
                    st.assumed.retain(|k| !markets.contains(&k.market_id));
                }
            }
        }
        let reply = json!({ "markets": markets, "all_markets": markets.is_empty() });
        pushed(s.push_locked(&mut st, at_pos(self.position(), frames::unsubscribed(channel, reply))));
    }

    /// Sends a fresh snapshot of every book the session follows (after a `reset` or a bus lag).
    pub fn resnapshot(&self, s: &Arc<Session>) {
        let mut st = s.lock();
        st.books.clear();
        st.assumed.clear();
        let markets: Vec<String> = match st.subs.get(&Channel::Book) {
            Some(Some(m)) => m.iter().cloned().collect(),
            _ => Vec::new(),
        };
        for m in &markets {
            self.snapshot_market(s, &mut st, m);
        }
    }

    /// Pushes a snapshot of each book of `market` held now, and records its `book_seq` so that only later
    /// changes follow. A book that is not trusted gets a `stale` and no record: its next change comes as a
    /// snapshot.
    fn snapshot_market(&self, s: &Session, st: &mut State, market: &str) {
        let pos = self.position();
        for (key, e) in self.live.market_books(market) {
            st.assumed.remove(&key);
            let frag = if e.stale {
                st.books.remove(&key);
                at_pos(pos, frames::book_stale(&key, None, e.updated_at, e.seq))
            } else {
                let f = at_pos(pos, frames::book_snapshot(&key, &e));
                st.books.insert(key, e.seq);
                f
            };
            pushed(s.push_locked(st, frag));
        }
    }

    fn targets(&self, channel: Channel, markets: &[&str]) -> Vec<Arc<Session>> {
        let index = self.index.read().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        index[channel as usize].targets(markets, &mut out);
        out
    }

    fn send_all(&self, channel: Channel, markets: &[&str], frag: &Frag) {
        for s in self.targets(channel, markets) {
            pushed(s.push(frag.clone()));
        }
    }

    /// Book changes to the sessions following their markets: for each session, the change when it follows
    /// the last `book_seq` the session got, nothing when the session's snapshot already holds it, else a fresh
    /// snapshot. A gap takes a number too, so the change after a `stale` never follows and comes as a snapshot.
    ///
    /// Each message is rendered once for all its sessions. The batch is delivered session by session: each
    /// session takes all of its messages under one lock, back to back, so its connection wakes once and writes
    /// them with one flush, rather than once per change (a write per message is what costs a thousand
    /// connections their latency).
    fn deliver_books(&self, changes: &[(&BookChanged, u64)]) {
        // Who follows each change, copied out of the index (no session lock is taken while it is held), then
        // grouped by session in the order first seen.
        let mut sessions: Vec<(Arc<Session>, Vec<usize>)> = Vec::new();
        {
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            let ci = &index[Channel::Book as usize];
            let mut targets = Vec::new();
            if let [(c, _)] = changes {
                ci.targets(&[c.key.market_id.as_str()], &mut targets);
                sessions.extend(targets.into_iter().map(|s| (s, vec![0])));
            } else {
                let mut at: HashMap<usize, usize, foldhash::fast::RandomState> = HashMap::default();
                for (i, (c, _)) in changes.iter().enumerate() {
                    ci.targets(&[c.key.market_id.as_str()], &mut targets);
                    for s in targets.drain(..) {
                        let n = *at.entry(Arc::as_ptr(&s) as usize).or_insert_with(|| {
                            sessions.push((s, Vec::new()));
                            sessions.len() - 1
                        });
                        sessions[n].1.push(i);
                    }
                }
            }
        }
        if sessions.is_empty() {
            return;
        }
        // Per change, rendered on first need: the change (`None` inside: nothing to show), and the book's
        // snapshot with its `book_seq` (`None` inside: the book is no longer held).
        let mut change: Vec<Option<Option<Frag>>> = vec![None; changes.len()];
        let mut snapshot: Vec<Option<Option<(Frag, u64)>>> = vec![None; changes.len()];
        for (s, mine) in sessions {
            let mut st = s.lock();
            for i in mine {
                let (c, pos) = changes[i];
                match st.books.get(&c.key).copied() {
                    Some(l) if c.book_seq <= l => {}
                    Some(l) if c.book_seq == l + 1 => {
                        // In place: a thousand sessions following a book must not clone its key each change.
                        if let Some(seq) = st.books.get_mut(&c.key) {
                            *seq = c.book_seq;
                        }
                        if let Some(f) = change[i].get_or_insert_with(|| frames::book_change(c).map(|f| at_pos(pos, f)))
                        {
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                    // A session taken over from another process: its client holds the book up to this change.
                    None if !st.assumed.is_empty() && st.assumed.remove(&c.key) => {
                        st.books.insert(c.key.clone(), c.book_seq);
                        if let Some(f) = change[i].get_or_insert_with(|| frames::book_change(c).map(|f| at_pos(pos, f)))
                        {
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                    _ => {
                        let snap = snapshot[i].get_or_insert_with(|| {
                            self.live
                                .entry(&c.key)
                                .map(|e| (at_pos(pos, frames::book_snapshot(&c.key, &e)), e.seq))
                        });
                        if let Some((f, seq)) = snap {
                            st.books.insert(c.key.clone(), *seq);
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                }
            }
        }
    }

    /// Delivers bus events in order; runs of book changes go out together ([`Hub::deliver_books`]). Each
    /// message carries the position of its event, when the bus carries positions.
    pub fn deliver_all(&self, events: &[DomainEvent]) {
        let mut delivery = lock(&self.delivery);
        let mut rest = events;
        while let Some(first) = rest.first() {
            // A run of book changes, with the positions between them.
            let mut books: Vec<(&BookChanged, u64)> = Vec::new();
            let mut run = 0;
            let mut at = delivery.at;
            for e in rest {
                match e {
                    DomainEvent::BookUpdated(c) => books.push((&**c, at)),
                    DomainEvent::Position { seq, .. } => at = *seq,
                    _ => break,
                }
                run += 1;
            }
            if books.is_empty() {
                match first {
                    DomainEvent::Position { seq, event_follows } => {
                        delivery.at = *seq;
                        delivery.pending = *event_follows;
                    }
                    ev => {
                        self.deliver_at(ev, delivery.at);
                        delivery.pending = false;
                    }
                }
                rest = &rest[1..];
            } else {
                self.deliver_books(&books);
                // The run ends with a change or with the position of an event still to come.
                if let Some(DomainEvent::Position { seq, event_follows }) = rest[..run].last() {
                    delivery.at = *seq;
                    delivery.pending = *event_follows;
                } else {
                    delivery.at = at;
                    delivery.pending = false;
                }
                rest = &rest[run..];
            }
            self.position.send_replace(delivery.complete());
        }
    }

    /// Delivers one bus event.
    pub fn deliver(&self, ev: &DomainEvent) {
        self.deliver_all(std::slice::from_ref(ev));
    }

    /// Delivers one event that is not a book change, its messages at position `pos`.
    fn deliver_at(&self, ev: &DomainEvent, pos: u64) {
        let now = Timestamp::now();
        match ev {
            DomainEvent::BookUpdated(c) => self.deliver_books(&[(&**c, pos)]),
            DomainEvent::BooksStale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            } => {
                self.send_all(
                    Channel::Status,
                    &[],
                    &at_pos(pos, frames::gap(*exchange, keys, book_seqs, *cause, *at)),
                );
                for (key, &seq) in keys.iter().zip(book_seqs) {
                    let targets = self.targets(Channel::Book, &[key.market_id.as_str()]);
                    if !targets.is_empty() {
                        let f = at_pos(pos, frames::book_stale(key, Some(*cause), *at, seq));
                        for s in targets {
                            let mut st = s.lock();
                            // A session already sent a later number (a snapshot taken after the gap, as a
                            // failed write's gap is numbered apart from the feed) has nothing to learn.
                            if st.books.get(key).is_some_and(|&l| l >= seq) {
                                continue;
                            }
                            // A stale book is followed by a whole one, whatever its sequence: a mirror of the
                            // leader's books can get the book back at the sequence it lost it at.
                            st.books.remove(key);
                            st.assumed.remove(key);
                            pushed(s.push_locked(&mut st, f.clone()));
                        }
                    }
                }
            }
            DomainEvent::TradeIngested(t) => {
                let targets = self.targets(Channel::Trades, &[t.market_id.as_str()]);
                if !targets.is_empty() {
                    let f = at_pos(pos, frames::trade(t, now));
                    for s in targets {
                        pushed(s.push(f.clone()));
                    }
                }
            }
            DomainEvent::WhaleEntry(w) => {
                let targets = self.targets(Channel::Whales, &[]);
                if !targets.is_empty() {
                    let f = at_pos(pos, frames::whale(w, now));
                    for s in targets {
                        pushed(s.push(f.clone()));
                    }
                }
            }
            DomainEvent::ArbitrageChanged(c) => {
                let o = &c.opportunity;
                let targets = self.targets(
                    Channel::Arbitrage,
                    &[o.venue_a.market_ticker.as_str(), o.venue_b.condition_id.as_str()],
                );
                if !targets.is_empty() {
                    let f = at_pos(pos, frames::opportunity(c, now));
                    for s in targets {
                        pushed(s.push(f.clone()));
                    }
                }
            }
            _ => {}
        }
    }

    /// The bus lost `missed` events for the hub: every session is told, and books are sent afresh.
    fn lagged(&self, missed: u64) {
        // No session of another process joins meanwhile: every session held gets the notice.
        let _delivery = lock(&self.delivery);
        tracing::warn!(
            missed,
            "the stream fell behind the bus; sessions get a lagged notice and fresh snapshots"
        );
        metrics::counter!("crossbook_stream_lagged_total").increment(1);
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        let f = control("lagged", json!({ "missed": missed }));
        for s in sessions {
            pushed(s.push(f.clone()));
            self.resnapshot(&s);
        }
    }

    /// Sends a `venue` message for each venue whose connection, mode or freshness changed.
    fn status_tick(&self, last: &mut BTreeMap<Exchange, (bool, FeedMode, bool)>) {
        let now = Timestamp::now();
        for (ex, h) in self.health.snapshot() {
            let freshness = h.freshness(now, FRESHNESS_LIMIT);
            let state = (h.connected, h.mode, freshness == Freshness::Fresh);
            if last.insert(ex, state) != Some(state) {
                self.send_all(
                    Channel::Status,
                    &[],
                    &at_pos(self.position(), frames::venue(ex, &h, &freshness)),
                );
            }
        }
    }

    /// Drops the sessions whose client did not come back within the resume window.
    fn expire(&self) {
        let window = self.settings.resume;
        let expired: Vec<Arc<Session>> = {
            let mut sessions = lock(&self.sessions);
            let gone: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.lock().detached_at.is_some_and(|t| t.elapsed() >= window))
                .map(|(id, _)| id.clone())
                .collect();
            gone.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        if expired.is_empty() {
            return;
        }
        self.forget(&expired);
    }

    /// The delivery task: bus events to sessions, the venues' status every second, expired sessions
    /// dropped. Ends when `cancel` fires or the bus closes.
    pub async fn run(self: Arc<Self>, mut rx: broadcast::Receiver<DomainEvent>, cancel: CancellationToken) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut status = BTreeMap::new();
        let most = (self.settings.queue / 4).clamp(1, DELIVERY_BATCH);
        let mut batch: Vec<DomainEvent> = Vec::with_capacity(most);
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                ev = rx.recv() => match ev {
                    Ok(ev) => {
                        // The events already waiting go out with this one: the slower delivery runs, the more
                        // each connection gets per write.
                        batch.push(ev);
                        let mut lagged = None;
                        while batch.len() < most {
                            match rx.try_recv() {
                                Ok(ev) => batch.push(ev),
                                Err(broadcast::error::TryRecvError::Lagged(n)) => {
                                    lagged = Some(n);
                                    break;
                                }
                                // Closed is seen by the next `recv`.
                                Err(_) => break,
                            }
                        }
                        self.deliver_all(&batch);
                        batch.clear();
                        if let Some(n) = lagged {
                            self.lagged(n);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => self.lagged(n),
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = tick.tick() => {
                    self.status_tick(&mut status);
                    self.expire();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crossbook_core::{
        Amount, BookSnapshot, Exchange, Plan, Price, Timestamp,
        book::{BookChange, BookKey, Level},
    };
    use crossbook_live::{BookChanged, DomainEvent, LiveBooks};
    use crossbook_venues::VenueHealth;
    use serde_json::Value;
    use tokio_util::sync::CancellationToken;

    use super::{Hub, StreamSettings};
    use crate::stream::{protocol::Channel, session::Owner};

    /// A venue_a book with one YES bid (also the fixture of [`super::adopt`]'s tests).
    pub(super) fn book(market: &str, bid_cents: i64) -> BookSnapshot {
        BookSnapshot {
            exchange: Exchange::VenueA,
            market_id: market.into(),
            asset_id: None,
            timestamp: Timestamp(1),
            bids: vec![Level {
                price: Price::from_cents(bid_cents),
                size: Amount::from_units(10),
            }],
            asks: vec![],
            no_bids: vec![],
        }
    }

    /// What ingestion does: the live map first, then the event.
    fn ingest(live: &LiveBooks, b: BookSnapshot) -> DomainEvent {
        let seq = live.upsert(b.clone()).expect("a change");
        DomainEvent::BookUpdated(Arc::new(BookChanged {
            key: BookKey::of(&b),
            book_seq: seq,
            timestamp: b.timestamp,
            change: BookChange::Snapshot {
                bids: b.bids.clone(),
                asks: vec![],
                no_bids: vec![],
            },
            venue_ts: None,
            received_at: b.timestamp,
        }))
    }

    /// (seq, type, market, book_seq) of every message queued for a connection now.
    fn drain(rx: &mut tokio::sync::mpsc::Receiver<super::Out>) -> Vec<(u64, String, String, u64)> {
        let mut got = Vec::new();
        while let Ok((seq, frag)) = rx.try_recv() {
            let v: Value = serde_json::from_str(&format!("{{{frag}")).unwrap();
            got.push((
                seq,
                v["type"].as_str().unwrap_or_default().to_string(),
                v["market_id"].as_str().unwrap_or_default().to_string(),
                v["book_seq"].as_u64().unwrap_or(0),
            ));
        }
        got
    }

    #[test]
    fn a_batch_of_book_changes_reaches_each_session_in_order_once_rendered() {
        let live = LiveBooks::new();
        let hub = Hub::new(
            StreamSettings::from_config(&crate::config::Config::default()),
            live.clone(),
            VenueHealth::new(&live),
        );
        let owner = Owner {
            customer_id: 1,
            plan: Plan::Trader,
        };
        let _ = ingest(&live, book("A", 40));
        let _ = ingest(&live, book("B", 40));
        // One session follows A and B, another only B.
        let (both, only_b) = (hub.open_session(), hub.open_session());
        hub.set_owner(&both, owner);
        hub.set_owner(&only_b, owner);
        let mut rx_both = hub.attach(&both, CancellationToken::new(), None).rx;
        let mut rx_b = hub.attach(&only_b, CancellationToken::new(), None).rx;
        hub.subscribe(&both, Channel::Book, vec!["A".into(), "B".into()])
            .unwrap();
        hub.subscribe(&only_b, Channel::Book, vec!["B".into()]).unwrap();
        let subscribed = |got: &[(u64, String, String, u64)]| got.iter().map(|m| m.1.clone()).collect::<Vec<_>>();
        assert_eq!(subscribed(&drain(&mut rx_both)), ["subscribed", "snapshot", "snapshot"]);
        assert_eq!(subscribed(&drain(&mut rx_b)), ["subscribed", "snapshot"]);

        // A batch: A, B, then A again. Each session gets its books' changes, and only those.
        let batch = vec![
            ingest(&live, book("A", 41)),
            ingest(&live, book("B", 41)),
            ingest(&live, book("A", 42)),
        ];
        hub.deliver_all(&batch);
        assert_eq!(
            drain(&mut rx_both),
            [
                (4, "snapshot".to_string(), "A".to_string(), 2),
                (5, "snapshot".to_string(), "B".to_string(), 2),
                (6, "snapshot".to_string(), "A".to_string(), 3),
            ],
            "every change of both books, in the bus's order, numbered on"
        );
        assert_eq!(drain(&mut rx_b), [(3, "snapshot".to_string(), "B".to_string(), 2)]);

        // A change whose predecessor the sessions never got (a gap's number) comes as the book's snapshot,
        // rendered from the live map at its latest number; a change already held by it is not sent again.
        let _ = live.mark_stale([&BookKey::venue_a("B")]);
        let after_gap = ingest(&live, book("B", 43));
        let b_seq = live.entry(&BookKey::venue_a("B")).unwrap().seq;
        let later = ingest(&live, book("B", 44));
        hub.deliver_all(&[after_gap, later]);
        let got = drain(&mut rx_b);
        assert_eq!(got.len(), 1, "the snapshot already holds the later change: {got:?}");
        assert_eq!(got[0].1, "snapshot");
        assert_eq!(got[0].3, b_seq + 1, "taken from the live map after both changes");
    }
}
