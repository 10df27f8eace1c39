//! The leader's side: every event of the in-process bus goes out on NATS.
//!
//! The queue between ingestion and NATS is the publisher's bus receiver: bounded ([`crate::bus`]'s capacity),
//! and ingestion never waits for it. When NATS is slow or away, the publisher falls behind, the receiver
//! skips the oldest events, and the publisher counts them (`crossbook_bus_dropped_total`) and sends a
//! keyframe of every book at once: readers see the hole in the message count and repair their books from the
//! keyframes. While the connection is down the client keeps what it can and the rest is dropped the same way;
//! capture to the store goes on regardless.
//!
//! A book the leader no longer holds (its market closed, resolved or was unfollowed) gets a `removed` message
//! on its keyframe subject, at the next catalog sync or within [`PRUNE_INTERVAL`], so mirrors drop it too.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use crossbook_core::{
    Timestamp,
    book::{BookChange, BookKey, KeyframePolicy},
};
use futures_util::StreamExt;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    BusSettings, Connection, ensure_streams, subject,
    wire::{self, Body, Envelope, Keyframe, VERSION},
};
use crate::{DomainEvent, LiveBooks};

/// The least time between two keyframes of every book asked by readers.
const RESYNC_MIN_INTERVAL: Duration = Duration::from_secs(1);

/// How long a stopping publisher waits for NATS to take what the client still holds.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// How often the publisher looks for books the leader no longer holds, besides at each catalog sync.
const PRUNE_INTERVAL: Duration = Duration::from_secs(5);

/// What `/readyz` of the leader shows of its publisher. Cheap to clone; shared by the terms of one process.
#[derive(Debug, Clone, Default)]
pub struct PublisherStatus(Arc<PublisherInner>);

#[derive(Debug, Default)]
struct PublisherInner {
    publishing: AtomicBool,
    connected: AtomicBool,
    term: AtomicU64,
    published: AtomicU64,
    dropped: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// A reading of [`PublisherStatus`].
#[derive(Debug, Clone, PartialEq)]
pub struct PublisherReading {
    /// This process leads and its publisher runs.
    pub publishing: bool,
    /// Connected to NATS now.
    pub connected: bool,
    /// The term of the running (or last) publisher; 0 before the first.
    pub term: u64,
    /// Messages handed to NATS, and events lost on the way (NATS slow or away, or the publisher behind).
    pub published: u64,
    pub dropped: u64,
    /// What is wrong with the bus now; `None` once it is connected and its streams exist.
    pub last_error: Option<String>,
}

impl PublisherStatus {
    pub fn read(&self) -> PublisherReading {
        let s = &self.0;
        PublisherReading {
            publishing: s.publishing.load(Ordering::Relaxed),
            connected: s.connected.load(Ordering::Relaxed),
            term: s.term.load(Ordering::Relaxed),
            published: s.published.load(Ordering::Relaxed),
            dropped: s.dropped.load(Ordering::Relaxed),
            last_error: s.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }

    /// Records that the bus cannot be used (also from outside the publisher: a connection refused at once).
    pub fn failed(&self, error: impl Into<String>) {
        *self.0.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error.into());
    }

    fn dropped(&self, n: u64) {
        self.0.dropped.fetch_add(n, Ordering::Relaxed);
        metrics::counter!("crossbook_bus_dropped_total").increment(n);
    }
}

/// Per-book keyframe bookkeeping.
struct Seen {
    deltas_since: u32,
    last_keyframe: Timestamp,
}

/// The publisher of one leadership term.
struct Publisher {
    client: async_nats::Client,
    live: LiveBooks,
    term: u64,
    seq: u64,
    keyframe_seq: u64,
    policy: KeyframePolicy,
    seen: HashMap<BookKey, Seen>,
    status: PublisherStatus,
}

impl Publisher {
    async fn send(&mut self, body: Body) {
        // Removals travel on the keyframe subjects, so they are numbered with the keyframes: the event
        // numbers stay without holes for readers of the event subjects.
        let keyframe = matches!(body, Body::Keyframe(_) | Body::Removed { .. });
        let seq = if keyframe {
            self.keyframe_seq += 1;
            self.keyframe_seq
        } else {
            self.seq += 1;
            self.seq
        };
        let env = Envelope {
            v: VERSION,
            term: self.term,
            seq,
            sent_at: Timestamp::now(),
            body,
        };
        let subject = subject::of(&env.body);
        // Fails only once the client is closed (shutdown); the message is then lost like any other.
        match self.client.publish(subject, env.encode().into()).await {
            Ok(()) => {
                self.status.0.published.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("crossbook_bus_published_total").increment(1);
            }
            Err(e) => {
                self.status.dropped(1);
                self.status.failed(format!("publish: {e}"));
                debug!(error = %e, "bus publish failed");
            }
        }
    }

    /// A keyframe of `key` as the live map holds it now.
    async fn keyframe(&mut self, key: &BookKey) {
        let Some(e) = self.live.entry(key) else { return };
        let now = Timestamp::now();
        self.seen.insert(
            key.clone(),
            Seen {
                deltas_since: 0,
                last_keyframe: now,
            },
        );
        self.send(Body::Keyframe(Keyframe {
            key: key.clone(),
            book_seq: e.seq,
            stale: e.stale,
            book: e.book,
        }))
        .await;
    }

    async fn keyframe_all(&mut self) {
        let keys: Vec<BookKey> = self.live.with_books(|v| v.iter().map(|(k, _)| k.clone()).collect());
        for k in &keys {
            self.keyframe(k).await;
        }
    }

    /// Tells readers about the books the leader dropped since the last look (markets closed, resolved or
    /// unfollowed): a `removed` message on each one's keyframe subject.
    async fn prune(&mut self) {
        if self.seen.is_empty() {
            return;
        }
        let held: HashSet<BookKey> = self.live.with_books(|v| v.iter().map(|(k, _)| k.clone()).collect());
        let gone: Vec<BookKey> = self.seen.keys().filter(|k| !held.contains(*k)).cloned().collect();
        for key in gone {
            self.seen.remove(&key);
            self.send(Body::Removed { key }).await;
        }
    }

    async fn event(&mut self, ev: DomainEvent) {
        // The books a sync dropped go before the sync itself, so a reader's catalog never names a book that
        // it still holds but the leader does not.
        if matches!(ev, DomainEvent::CatalogSynced { .. }) {
            self.prune().await;
        }
        let Some(body) = Body::of(&ev) else { return };
        self.send(body).await;
        match &ev {
            DomainEvent::BookUpdated(c) => {
                let now = Timestamp::now();
                let due = match self.seen.get_mut(&c.key) {
                    // First sight, or a whole book (after a gap): readers start or restart the book here.
                    None => true,
                    Some(_) if matches!(c.change, BookChange::Snapshot { .. }) => true,
                    Some(s) => {
                        s.deltas_since += 1;
                        self.policy.due(s.deltas_since, s.last_keyframe, now)
                    }
                };
                if due {
                    self.keyframe(&c.key).await;
                }
            }
            // The stored keyframe says stale too, so a reader starting now does not trust the old book.
            DomainEvent::BooksStale { keys, .. } => {
                for k in keys {
                    self.keyframe(k).await;
                }
            }
            _ => {}
        }
    }
}

/// Publishes the events of `rx` (subscribed before ingestion starts, so none is missed) until `cancel`.
pub async fn run(
    settings: BusSettings,
    conn: Connection,
    live: LiveBooks,
    mut rx: Receiver<DomainEvent>,
    status: PublisherStatus,
    cancel: CancellationToken,
) {
    let Connection {
        client, mut connected, ..
    } = conn;
    let term = Timestamp::now().millis() as u64;
    info!(term, url = %settings.url, "publishing the bus's events");
    status.0.term.store(term, Ordering::Relaxed);
    status.0.publishing.store(true, Ordering::Relaxed);
    status.0.connected.store(*connected.borrow(), Ordering::Relaxed);
    if !*connected.borrow() {
        status.failed(format!("cannot reach the bus at {} yet; retrying", settings.url));
    }
    let mut p = Publisher {
        client: client.clone(),
        live,
        term,
        seq: wire::first_seq(term),
        keyframe_seq: 0,
        policy: KeyframePolicy::DEFAULT,
        seen: HashMap::new(),
        status: status.clone(),
    };
    let mut control = match client.subscribe(subject::CONTROL_KEYFRAMES).await {
        Ok(s) => Some(s),
        Err(e) => {
            warn!(error = %e, "cannot listen for keyframe requests; readers recover at the periodic keyframes");
            None
        }
    };
    let mut sweep = tokio::time::interval(Duration::from_millis(p.policy.max_age_ms as u64));
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut prune = tokio::time::interval(PRUNE_INTERVAL);
    prune.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_resync: Option<tokio::time::Instant> = None;
    let mut resync_pending = false;
    // The streams are (re)created at every connection: a NATS server started afresh has none.
    let mut need_streams = true;
    let mut retry_streams = tokio::time::interval(Duration::from_secs(2));
    // Awaited only until `cancel`: a publish waits while the client's buffer is full (NATS away), and
    // shutting down must not wait for the bus.
    let work = async {
        loop {
            // The bus's events last: a leader that always has events waiting must still answer keyframe
            // requests, send its periodic keyframes and notice the connection.
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                Ok(()) = connected.changed() => {
                    let up = *connected.borrow_and_update();
                    status.0.connected.store(up, Ordering::Relaxed);
                    if !up {
                        status.failed("the connection to the bus was lost; reconnecting");
                    }
                    if up {
                        need_streams = true;
                        // Messages may have been lost while away: readers repair their books from these.
                        p.keyframe_all().await;
                    }
                }
                _ = retry_streams.tick(), if need_streams && *connected.borrow() => {
                    match ensure_streams(&client, settings.window).await {
                        Ok(()) => {
                            need_streams = false;
                            *status.0.last_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                            // Books published before the streams existed are not stored yet.
                            p.keyframe_all().await;
                        }
                        Err(e) => {
                            status.failed(e.to_string());
                            warn!(error = %e, "cannot create the bus's streams; retrying");
                        }
                    }
                }
                _ = sweep.tick() => p.keyframe_all().await,
                _ = prune.tick() => p.prune().await,
                Some(_) = async { match control.as_mut() { Some(c) => c.next().await, None => None } } => {
                    resync_pending = true;
                }
                () = async {
                    if let Some(t) = last_resync {
                        tokio::time::sleep_until(t + RESYNC_MIN_INTERVAL).await;
                    }
                }, if resync_pending => {
                    resync_pending = false;
                    last_resync = Some(tokio::time::Instant::now());
                    p.keyframe_all().await;
                }
                r = rx.recv() => match r {
                    Ok(ev) => p.event(ev).await,
                    Err(RecvError::Lagged(n)) => {
                        p.status.dropped(n);
                        warn!(dropped = n, "the bus publisher fell behind and dropped events; sending every book again");
                        p.keyframe_all().await;
                    }
                    Err(RecvError::Closed) => break,
                },
            }
        }
    };
    tokio::select! {
        () = cancel.cancelled() => {}
        () = work => {}
    }
    // What the client still holds goes out if NATS answers; a bus that is away does not hold the shutdown.
    let _ = tokio::time::timeout(FLUSH_TIMEOUT, client.flush()).await;
    status.0.publishing.store(false, Ordering::Relaxed);
}
