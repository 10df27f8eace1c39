//! The leader's side: every event of the in-process bus goes out on NATS.
//!
//! The queue between ingestion and NATS is the publisher's bus receiver: bounded ([`crate::bus`]'s capacity),
//! and ingestion never waits for it. When NATS is slow or away, the publisher falls behind, the receiver
//! skips the oldest events, and the publisher counts them (`crossbook_bus_dropped_total`) and sends a
//! keyframe of every book at once: readers see the hole in the message count and repair their books from the
//! keyframes. While the connection is down the client keeps what it can and the rest is dropped the same way;
//! capture to the store goes on regardless.

use std::{collections::HashMap, time::Duration};

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
    wire::{Body, Envelope, Keyframe, VERSION},
};
use crate::{DomainEvent, LiveBooks};

/// The least time between two keyframes of every book asked by readers.
const RESYNC_MIN_INTERVAL: Duration = Duration::from_secs(1);

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
}

impl Publisher {
    async fn send(&mut self, body: Body) {
        let keyframe = matches!(body, Body::Keyframe(_));
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
            Ok(()) => metrics::counter!("crossbook_bus_published_total").increment(1),
            Err(e) => {
                metrics::counter!("crossbook_bus_dropped_total").increment(1);
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

    async fn event(&mut self, ev: DomainEvent) {
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
    cancel: CancellationToken,
) {
    let Connection { client, mut connected } = conn;
    let term = Timestamp::now().millis() as u64;
    info!(term, url = %settings.url, "publishing the bus's events");
    let mut p = Publisher {
        client: client.clone(),
        live,
        term,
        seq: 0,
        keyframe_seq: 0,
        policy: KeyframePolicy::DEFAULT,
        seen: HashMap::new(),
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
    let mut last_resync: Option<tokio::time::Instant> = None;
    let mut resync_pending = false;
    // The streams are (re)created at every connection: a NATS server started afresh has none.
    let mut need_streams = true;
    let mut retry_streams = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            r = rx.recv() => match r {
                Ok(ev) => p.event(ev).await,
                Err(RecvError::Lagged(n)) => {
                    metrics::counter!("crossbook_bus_dropped_total").increment(n);
                    warn!(dropped = n, "the bus publisher fell behind and dropped events; sending every book again");
                    p.keyframe_all().await;
                }
                Err(RecvError::Closed) => break,
            },
            Ok(()) = connected.changed() => {
                if *connected.borrow_and_update() {
                    need_streams = true;
                    // Messages may have been lost while away: readers repair their books from these.
                    p.keyframe_all().await;
                }
            }
            _ = retry_streams.tick(), if need_streams && *connected.borrow() => {
                match ensure_streams(&client, settings.window).await {
                    Ok(()) => {
                        need_streams = false;
                        // Books published before the streams existed are not stored yet.
                        p.keyframe_all().await;
                    }
                    Err(e) => warn!(error = %e, "cannot create the bus's streams; retrying"),
                }
            }
            _ = sweep.tick() => p.keyframe_all().await,
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
        }
    }
    let _ = client.flush().await;
}
