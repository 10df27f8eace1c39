//! An api process's side: a mirror of the leader's live books and events.
//!
//! The leader is a venue to the mirror, followed with the connectors' continuity rules:
//! - a book starts at its keyframe (loaded from the keyframe stream at each connection, then as the leader
//!   publishes them) or at a change carrying the whole book;
//! - a change applies when its `book_seq` follows the book's; an older one is skipped; a later one is a
//!   hole: the book turns stale (a `BooksStale` on the local bus), the changes after it are held, and the next
//!   keyframe repairs it (the held changes newer than the keyframe are then applied);
//! - a hole in the leader's message count (messages lost on the way) makes every book stale, and the mirror
//!   asks the leader for fresh keyframes;
//! - losing NATS makes every book stale (cause `disconnect`) until the connection is back and the books are
//!   loaded again;
//! - a new leader term (a standby took over, or the leader restarted) makes every book stale (cause
//!   `restart`) until the new leader's keyframe; messages of an older term are skipped, and a book the new
//!   leader has not sent within [`OLD_TERM_GRACE`] is dropped (the new leader does not hold it);
//! - a `removed` message drops the book (the leader no longer holds it);
//! - a message that cannot be read is logged, counted (`crossbook_bus_malformed_total`) and skipped.
//!
//! Every event is put on the local bus after the books are updated, so the stream hub and the arbitrage
//! routes of the api process work as in the leader.
//!
//! Events and keyframes are read live, through one plain subscription to every subject of the bus, so they
//! arrive in the order the leader published them, at the speed of the connection; the event stream is read
//! only to resume a stream client. Each event message is preceded on the local bus by a
//! [`DomainEvent::Position`] with the leader's number of the message (`seq`): the position every api process
//! shares. A keyframe loaded at the start may be older than changes already received; the held changes and
//! the keyframe's sequence check put them back in order.

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
    },
    time::Duration,
};

use crossbook_core::{
    BookSnapshot, Exchange, Timestamp,
    book::{BookChange, BookKey, BookState, GapCause},
};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    Connection, KEYFRAMES_STREAM, events_stream_config, subject,
    wire::{Body, Envelope, Keyframe},
};
use crate::{BookChanged, Bus, DomainEvent, LiveBooks};

/// Changes held per stale book while it waits for its keyframe.
const HELD_PER_BOOK: usize = 1_024;

/// How long after a new term the books only the old leader sent are kept (stale): the new leader sends a
/// keyframe of every book it holds within a minute (its periodic keyframes), so one still missing after this
/// is a book it no longer holds.
pub const OLD_TERM_GRACE: Duration = Duration::from_secs(150);

/// What `/readyz` shows of the mirror. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct MirrorStatus(Arc<StatusInner>);

#[derive(Debug, Default)]
struct StatusInner {
    connected: AtomicBool,
    loaded: AtomicBool,
    /// `sent_at` of the last message from the leader (0: none yet).
    last_sent_at: AtomicI64,
    received: AtomicU64,
    malformed: AtomicU64,
    holes: AtomicU64,
}

/// A reading of [`MirrorStatus`].
#[derive(Debug, Clone, PartialEq)]
pub struct MirrorReading {
    /// Connected to NATS now.
    pub connected: bool,
    /// The books were loaded since the last connection.
    pub loaded: bool,
    /// When the leader sent the last message received.
    pub last_event_at: Option<Timestamp>,
    pub received: u64,
    pub malformed: u64,
    /// Holes seen in book sequences or in the leader's message count.
    pub holes: u64,
}

impl MirrorStatus {
    pub fn read(&self) -> MirrorReading {
        let s = &self.0;
        let last = s.last_sent_at.load(Ordering::Relaxed);
        MirrorReading {
            connected: s.connected.load(Ordering::Relaxed),
            loaded: s.loaded.load(Ordering::Relaxed),
            last_event_at: (last > 0).then_some(Timestamp(last)),
            received: s.received.load(Ordering::Relaxed),
            malformed: s.malformed.load(Ordering::Relaxed),
            holes: s.holes.load(Ordering::Relaxed),
        }
    }

    /// Connected and loaded: the mirrored books can be served.
    pub fn serving(&self) -> bool {
        let r = self.read();
        r.connected && r.loaded
    }
}

/// One mirrored book.
struct Mirrored {
    seq: u64,
    /// The leader term that last sent this book.
    term: u64,
    state: BookState,
    stale: bool,
    /// Changes received while stale, oldest first.
    held: Vec<BookChanged>,
}

struct Mirror {
    live: LiveBooks,
    bus: Bus,
    status: MirrorStatus,
    client: async_nats::Client,
    books: HashMap<BookKey, Mirrored>,
    /// The leader's term and the last message number seen in it (0: none yet in this term).
    term: u64,
    seq: u64,
    /// Event messages numbered up to here were published before this connection's reading began: they are
    /// not this process's to deliver (the stream hub's position starts here).
    floor: u64,
    /// When this process saw the current term first.
    term_since: Option<tokio::time::Instant>,
}

fn snapshot_of(key: &BookKey, state: &BookState, timestamp: Timestamp) -> BookSnapshot {
    let l = state.ladders().cloned().unwrap_or_default();
    BookSnapshot {
        exchange: key.exchange,
        market_id: key.market_id.clone(),
        asset_id: key.asset_id.clone(),
        timestamp,
        bids: l.bids,
        asks: l.asks,
        no_bids: l.no_bids,
    }
}

impl Mirror {
    /// Asks the leader for keyframes of every book. Only a book turning stale asks, and the leader answers
    /// many requests with one round of keyframes a second at most.
    async fn request_keyframes(&mut self) {
        if let Err(e) = self.client.publish(subject::CONTROL_KEYFRAMES, "{}".into()).await {
            warn!(error = %e, "cannot ask the leader for keyframes");
        }
    }

    fn stale(&mut self, keys: Vec<BookKey>, cause: GapCause) {
        if keys.is_empty() {
            return;
        }
        // This process lost the leader's messages, so the leader numbered no gap: the book's next number here
        // marks it, and the leader's keyframe that repairs the book brings the leader's numbering back.
        let marked = self.live.mark_stale(keys.iter());
        let at = Timestamp::now();
        for ex in [Exchange::VenueA, Exchange::VenueB] {
            let (keys, book_seqs): (Vec<BookKey>, Vec<u64>) =
                marked.iter().filter(|(k, _)| k.exchange == ex).cloned().unzip();
            if !keys.is_empty() {
                self.bus.publish(DomainEvent::BooksStale {
                    exchange: ex,
                    keys,
                    book_seqs,
                    cause,
                    at,
                });
            }
        }
    }

    /// Every fresh book turns stale (NATS lost, or messages lost on the way).
    fn all_stale(&mut self, cause: GapCause) {
        let mut keys = Vec::new();
        for (k, m) in &mut self.books {
            if !m.stale {
                m.stale = true;
                keys.push(k.clone());
            }
        }
        self.stale(keys, cause);
    }

    /// Applies a keyframe; returns whether it changed the book.
    fn keyframe(&mut self, k: Keyframe) -> bool {
        let term = self.term;
        let m = self.books.entry(k.key.clone()).or_insert_with(|| Mirrored {
            seq: 0,
            term,
            state: BookState::default(),
            stale: true,
            held: Vec::new(),
        });
        // A fresh book needs no keyframe: the changes it has not seen yet were published after the change it
        // holds, and come in order on the same subscription. Keyframes only start and repair books, so the
        // clients of this process get the same changes as a replay of the event stream gives.
        if !m.stale {
            return false;
        }
        let mut state = BookState::default();
        let whole = BookChange::Snapshot {
            bids: k.book.bids.clone(),
            asks: k.book.asks.clone(),
            no_bids: k.book.no_bids.clone(),
        };
        let ok = state.apply(&whole).is_ok();
        m.term = term;
        m.state = state;
        m.seq = k.book_seq;
        m.stale = k.stale || !ok;
        let mut timestamp = k.book.timestamp;
        // The changes held while stale that follow the keyframe, in order.
        let held = std::mem::take(&mut m.held);
        if !m.stale {
            for c in held.into_iter().filter(|c| c.book_seq > k.book_seq) {
                if c.book_seq != m.seq + 1 || m.state.apply(&c.change).is_err() {
                    m.stale = true;
                    break;
                }
                m.seq = c.book_seq;
                timestamp = c.timestamp;
            }
        }
        self.live
            .install(snapshot_of(&k.key, &m.state, timestamp), m.seq, m.stale);
        if !m.stale {
            // A whole book at its sequence: stream sessions behind it get a snapshot.
            let l = m.state.ladders().cloned().unwrap_or_default();
            self.bus.publish(DomainEvent::BookUpdated(Arc::new(BookChanged {
                key: k.key.clone(),
                book_seq: m.seq,
                timestamp,
                change: BookChange::Snapshot {
                    bids: l.bids,
                    asks: l.asks,
                    no_bids: l.no_bids,
                },
                venue_ts: None,
                received_at: Timestamp::now(),
            })));
        }
        true
    }

    /// Drops a book the leader no longer holds.
    fn remove(&mut self, key: &BookKey) {
        if self.books.remove(key).is_some() {
            self.live.remove([key]);
        }
    }

    /// Drops the books no leader has sent since [`OLD_TERM_GRACE`] into the current term.
    fn drop_old_term(&mut self) {
        if self.term_since.is_none_or(|t| t.elapsed() < OLD_TERM_GRACE) {
            return;
        }
        let term = self.term;
        let old: Vec<BookKey> = self
            .books
            .iter()
            .filter(|(_, m)| m.term < term)
            .map(|(k, _)| k.clone())
            .collect();
        if !old.is_empty() {
            info!(books = old.len(), "dropped books the new leader no longer holds");
            for k in &old {
                self.remove(k);
            }
        }
    }

    /// Applies one change; returns the event to put on the local bus, if the book took it.
    fn change(&mut self, c: BookChanged) -> Option<BookChanged> {
        let term = self.term;
        let m = self.books.entry(c.key.clone()).or_insert_with(|| Mirrored {
            seq: 0,
            term,
            state: BookState::default(),
            stale: true,
            held: Vec::new(),
        });
        let whole = matches!(c.change, BookChange::Snapshot { .. });
        if !m.stale && c.book_seq <= m.seq {
            return None;
        }
        let follows = !m.stale && c.book_seq == m.seq + 1;
        if whole || follows {
            if m.state.apply(&c.change).is_ok() {
                m.term = term;
                m.seq = c.book_seq;
                m.stale = false;
                self.live
                    .install(snapshot_of(&c.key, &m.state, c.timestamp), m.seq, false);
                return Some(c);
            }
            warn!(book = ?c.key, "a bus change does not apply to the mirrored book; stale until its keyframe");
        }
        // A hole (or a book not started): held until the keyframe.
        let was_fresh = !m.stale;
        m.stale = true;
        if m.held.len() >= HELD_PER_BOOK {
            m.held.clear();
        }
        m.held.push(c.clone());
        if was_fresh {
            self.status.0.holes.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("crossbook_bus_holes_total").increment(1);
            self.stale(vec![c.key], GapCause::SequenceGap);
        }
        None
    }

    /// Puts the event of the bus message numbered `pos` on the local bus, right after its position (nothing
    /// may come between the two: the stream hub takes the event after a position as that message's).
    fn publish_at(&self, pos: Option<u64>, ev: DomainEvent) {
        if let Some(seq) = pos {
            self.bus.publish(DomainEvent::Position {
                seq,
                event_follows: true,
            });
        }
        self.bus.publish(ev);
    }

    /// One message from the bus.
    async fn message(&mut self, payload: &[u8], subject: &str) {
        let env = match Envelope::decode(payload) {
            Ok(e) => e,
            Err(e) => {
                self.status.0.malformed.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("crossbook_bus_malformed_total").increment(1);
                warn!(subject, error = %e, "skipped a bus message that cannot be read");
                return;
            }
        };
        self.status.0.received.fetch_add(1, Ordering::Relaxed);
        self.status
            .0
            .last_sent_at
            .fetch_max(env.sent_at.millis(), Ordering::Relaxed);
        let event = !matches!(env.body, Body::Keyframe(_) | Body::Removed { .. });
        if event && env.seq <= self.floor {
            return;
        }
        // An event's position is its number, the same on every api process; keyframes have none.
        let pos = event.then_some(env.seq);
        if env.term < self.term {
            // A message of a leader that has been replaced (late, or its last keyframes in the stream).
            debug!(
                term = env.term,
                current = self.term,
                "skipped a message of an earlier leader term"
            );
            return;
        }
        if env.term > self.term {
            let first = self.term == 0;
            self.term = env.term;
            self.seq = 0;
            self.term_since = Some(tokio::time::Instant::now());
            if !first {
                // A new leader, or the leader restarted: nothing says its books continue the old ones.
                info!(
                    term = env.term,
                    "a new leader term on the bus: every book is stale until the new leader's keyframe"
                );
                self.all_stale(GapCause::Restart);
                self.request_keyframes().await;
            }
        }
        match env.body {
            Body::Keyframe(k) => {
                self.keyframe(k);
                return;
            }
            Body::Removed { key } => {
                self.remove(&key);
                return;
            }
            _ => {}
        }
        // The count is known from the second event message of a term this process saw.
        if self.seq != 0 && env.seq > self.seq + 1 {
            self.status.0.holes.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("crossbook_bus_holes_total").increment(1);
            warn!(
                lost = env.seq - self.seq - 1,
                "messages from the leader were lost; every book is stale until its keyframe"
            );
            self.all_stale(GapCause::SequenceGap);
            self.request_keyframes().await;
        }
        self.seq = self.seq.max(env.seq);
        match env.body {
            Body::Book(c) => {
                let stale_before = self.books.get(&c.key).is_none_or(|m| m.stale);
                if let Some(c) = self.change(c) {
                    self.publish_at(pos, DomainEvent::BookUpdated(Arc::new(c)));
                } else if !stale_before {
                    self.request_keyframes().await;
                }
            }
            Body::Stale {
                exchange,
                keys,
                book_seqs,
                cause,
                at,
            } => {
                for (k, &seq) in keys.iter().zip(&book_seqs) {
                    if let Some(m) = self.books.get_mut(k) {
                        m.stale = true;
                        m.seq = m.seq.max(seq);
                    }
                }
                let (keys, book_seqs): (Vec<BookKey>, Vec<u64>) = self
                    .live
                    .mark_stale_numbered(keys.iter().zip(book_seqs))
                    .into_iter()
                    .unzip();
                if !keys.is_empty() {
                    self.publish_at(
                        pos,
                        DomainEvent::BooksStale {
                            exchange,
                            keys,
                            book_seqs,
                            cause,
                            at,
                        },
                    );
                }
            }
            other => {
                if let Some(ev) = other.into_event() {
                    self.publish_at(pos, ev);
                }
            }
        }
    }

    /// Loads the last keyframe of every book from the keyframe stream (those stored when the load starts).
    async fn load(&mut self) -> Result<usize, String> {
        use async_nats::jetstream::consumer::{DeliverPolicy, pull::OrderedConfig};
        let js = async_nats::jetstream::new(self.client.clone());
        let mut stream = match js.get_stream(KEYFRAMES_STREAM).await {
            Ok(s) => s,
            // No leader has published yet: books start at their first keyframe.
            Err(e)
                if matches!(
                    e.kind(),
                    async_nats::jetstream::context::GetStreamErrorKind::JetStream(_)
                ) =>
            {
                return Ok(0);
            }
            Err(e) => return Err(e.to_string()),
        };
        let last = stream.info().await.map_err(|e| e.to_string())?.state.last_sequence;
        if last == 0 {
            return Ok(0);
        }
        let consumer = stream
            .create_consumer(OrderedConfig {
                filter_subject: subject::keyframe_subjects(),
                deliver_policy: DeliverPolicy::LastPerSubject,
                ..Default::default()
            })
            .await
            .map_err(|e| e.to_string())?;
        let mut messages = consumer.messages().await.map_err(|e| e.to_string())?;
        let mut n = 0;
        loop {
            let next = tokio::time::timeout(Duration::from_secs(5), messages.next()).await;
            let msg = match next {
                Ok(Some(Ok(m))) => m,
                Ok(Some(Err(e))) => return Err(e.to_string()),
                Ok(None) => break,
                Err(_) => return Err("the keyframe stream stopped answering".into()),
            };
            let (seq, pending) = msg.info().map(|i| (i.stream_sequence, i.pending)).unwrap_or((last, 0));
            self.message(&msg.payload, msg.subject.as_str()).await;
            n += 1;
            if seq >= last || pending == 0 {
                break;
            }
        }
        Ok(n)
    }
}

/// The leader's term and number of the event stream's last message now (zeros when it holds none). Creates
/// the stream when no leader has yet (with the window configured here; the leader's settings replace it), so
/// that stream clients can resume from it.
async fn events_last(client: &async_nats::Client, window: Duration) -> Result<(u64, u64), String> {
    let js = async_nats::jetstream::new(client.clone());
    let mut stream = js
        .get_or_create_stream(events_stream_config(window))
        .await
        .map_err(|e| e.to_string())?;
    let last = stream.info().await.map_err(|e| e.to_string())?.state.last_sequence;
    if last == 0 {
        return Ok((0, 0));
    }
    let msg = stream.get_raw_message(last).await.map_err(|e| e.to_string())?;
    // A message that cannot be read numbers nothing: reading starts with whatever comes.
    Ok(Envelope::decode(&msg.payload).map_or((0, 0), |env| (env.term, env.seq)))
}

/// Mirrors the leader's books into `live` and its events onto `bus` until `cancel`.
pub async fn run(conn: Connection, live: LiveBooks, bus: Bus, status: MirrorStatus, cancel: CancellationToken) {
    let Connection {
        client,
        mut connected,
        window,
    } = conn;
    let mut m = Mirror {
        live,
        bus,
        status: status.clone(),
        client: client.clone(),
        books: HashMap::new(),
        term: 0,
        seq: 0,
        floor: 0,
        term_since: None,
    };
    let mut housekeeping = tokio::time::interval(Duration::from_secs(30));
    housekeeping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // Wait for a connection.
        while !*connected.borrow_and_update() {
            tokio::select! {
                () = cancel.cancelled() => return,
                r = connected.changed() => if r.is_err() { return },
            }
        }
        status.0.connected.store(true, Ordering::Relaxed);
        // Subscribe first, then load: messages published during the load are held by the subscription and
        // applied after it, in order, by the sequence rules. Events the event stream held before are not
        // delivered here: reading starts after its last one.
        let subscribed = async {
            let sub = client.subscribe(subject::all()).await.map_err(|e| e.to_string())?;
            let last = events_last(&client, window).await?;
            Ok::<_, String>((sub, last))
        };
        let (mut sub, (last_term, last)) = match subscribed.await {
            Ok(s) => s,
            Err(e) => {
                warn!(error = %e, "cannot subscribe to the bus; retrying");
                tokio::select! {
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        // Reading starts after `last`: the stream hub's position, before any event arrives. The numbers from
        // there on are checked for holes; a jump to here from before a loss is no hole (every book is stale).
        m.floor = last;
        if last_term >= m.term && last_term != 0 {
            if last_term > m.term {
                m.term_since = Some(tokio::time::Instant::now());
            }
            m.term = last_term;
            m.seq = last;
        }
        m.bus.publish(DomainEvent::Position {
            seq: last,
            event_follows: false,
        });
        match m.load().await {
            Ok(n) => info!(books = n, "mirror loaded the leader's books"),
            Err(e) => warn!(error = %e, "cannot load the leader's books; asking the leader for keyframes"),
        }
        m.request_keyframes().await;
        status.0.loaded.store(true, Ordering::Relaxed);
        let lost = loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                r = connected.changed() => {
                    if r.is_err() || !*connected.borrow_and_update() { break true; }
                }
                _ = housekeeping.tick() => m.drop_old_term(),
                msg = sub.next() => match msg {
                    Some(msg) if msg.subject.as_str() == subject::CONTROL_KEYFRAMES => {}
                    Some(msg) => m.message(&msg.payload, msg.subject.as_str()).await,
                    None => break true,
                },
            }
        };
        if lost {
            status.0.connected.store(false, Ordering::Relaxed);
            status.0.loaded.store(false, Ordering::Relaxed);
            warn!("lost the bus: every mirrored book is stale until it is back");
            m.all_stale(GapCause::Disconnect);
            let _ = sub.unsubscribe().await;
        }
    }
}
