//! The hub: the sessions, who follows what, and the task that turns bus events into channel messages.
//!
//! One task reads the bus and renders each event once; each message goes to the sessions that follow its
//! channel (and market) through a non-blocking push (see [`Session::push_locked`]), so a slow client is
//! cut, never waited for, and never slows the bus, ingestion or another client.
//!
//! Lock order: the delivery lock, then a session's lock, then the index. The delivery task never holds the
//! index while it takes a session's lock (it copies the targets out first), so the two cannot deadlock.
//!
//! In an api process, the bus carries the positions of the leader's messages ([`DomainEvent::Position`]):
//! every channel message carries the `pos` of the event it was rendered from (a snapshot or answer, the position
//! delivered when it was sent), and a session of another process joins delivery at a known position
//! ([`Hub::adopt`]).

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, RwLock, atomic::AtomicU64},
    time::Duration,
};

use crossbook_live::{DomainEvent, LiveBooks};
use crossbook_venues::VenueHealth;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::{
    protocol::Frag,
    session::{Out, Owner, Pushed, Session, Subscriptions},
    settings::StreamSettings,
    shared::{Record, SharedSessions},
};
use crate::slots::{OpenCounts, Slot};

mod adopt;
mod deliver;
mod subscribe;

pub use adopt::Adopted;

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
