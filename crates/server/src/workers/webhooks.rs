//! The webhook dispatcher (spec 6, contracts §8): delivers `whale.entry` and `arbitrage.opportunity` events
//! from the bus to every enabled registration of the matching type, and logs every attempt.
//!
//! - **Registrations** are held in memory ([`Webhooks::targets`](crate::webhooks::Webhooks::targets)), never
//!   read per event. They are reloaded from the store every [`Settings::refresh`] (so registrations made
//!   through the API of another process, in a split deployment, arrive within that period) and at once when
//!   this process's API changes one.
//! - **Fan-out**: the body of an event is rendered once; each registration's delivery is its own task, and at
//!   most `webhook_concurrency` of them are in flight. A receiver that hangs holds one slot for at most the
//!   5 s timeout, so it never delays another customer's delivery unless every slot is taken by hanging
//!   receivers at once. At most [`MAX_PENDING`] deliveries wait for a slot; beyond that new ones are logged as
//!   dropped instead of growing memory without bound.
//! - **Log**: attempts go through a queue to one writer task that stores them in batches (whatever has queued
//!   up while the previous batch was written).
//!
//! One attempt per delivery, never retried (spec 6.4). On shutdown, deliveries in flight finish (bounded by
//! their timeouts) and the log is flushed.

use std::{sync::Arc, time::Duration};

use crossbook_core::Timestamp;
use crossbook_live::DomainEvent;
use crossbook_store::{NewDelivery, Store, WebhookKind, WriteKind};
use tokio::{
    sync::{Semaphore, broadcast::error::RecvError, mpsc},
    time::MissedTickBehavior,
};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    AppState, arbitrage,
    webhooks::{self, Webhooks},
    whales::whale_entry_data,
};

/// Most deliveries waiting for a concurrency slot.
pub const MAX_PENDING: usize = 200_000;
/// Most attempts queued for the log writer.
const LOG_QUEUE: usize = 100_000;
/// Most attempts stored in one batch.
const LOG_BATCH: usize = 2_000;
/// How often a delivery-log batch that could not be stored is tried again.
const LOG_RETRY: Duration = Duration::from_secs(1);
/// The most delivery attempts held while the log cannot be stored.
const LOG_HELD: usize = 50_000;

/// How the dispatcher runs.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Period of the reload of registrations from the store.
    pub refresh: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            refresh: Duration::from_secs(2),
        }
    }
}

/// Starts the dispatcher with the default settings.
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    spawn_with(state, Settings::default(), tracker, cancel);
}

/// Starts the dispatcher. It subscribes to the bus before returning, so no event published afterwards is
/// missed.
pub fn spawn_with(state: &AppState, settings: Settings, tracker: &TaskTracker, cancel: &CancellationToken) {
    // Whale entries and opportunities only: book changes would make it fall behind and skip them.
    let rx = state.bus.subscribe_except_books();
    let state = state.clone();
    let cancel = cancel.clone();
    tracker.spawn(async move { run(state, rx, settings, cancel).await });
}

/// The registrations a bus event is delivered to, for the events that are delivered.
fn webhook_kind(ev: &DomainEvent) -> Option<WebhookKind> {
    match ev {
        DomainEvent::WhaleEntry(_) => Some(WebhookKind::Whale),
        DomainEvent::ArbitrageOpportunity(_) => Some(WebhookKind::Arbitrage),
        _ => None,
    }
}

/// The webhook `data` of a delivered event: the bus carries domain types, and this edge renders them.
fn webhook_data(ev: &DomainEvent) -> Option<serde_json::Value> {
    match ev {
        DomainEvent::WhaleEntry(e) => Some(whale_entry_data(e)),
        DomainEvent::ArbitrageOpportunity(o) => Some(arbitrage::render::webhook_data(o)),
        _ => None,
    }
}

async fn run(
    state: AppState,
    mut rx: tokio::sync::broadcast::Receiver<DomainEvent>,
    settings: Settings,
    cancel: CancellationToken,
) {
    let hub = state.webhooks.clone();
    let slots = Arc::new(Semaphore::new(hub.concurrency));
    let (log_tx, log_rx) = mpsc::channel(LOG_QUEUE);
    let writer = tokio::spawn(write_log(state.store.clone(), log_rx));
    let deliveries = TaskTracker::new();

    let mut refresh = tokio::time::interval(settings.refresh);
    refresh.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            ev = rx.recv() => match ev {
                Ok(ev) => {
                    if let Some(kind) = webhook_kind(&ev) {
                        fan_out(&hub, &slots, &deliveries, &log_tx, kind, &ev);
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(skipped = n, "the webhook dispatcher fell behind the bus; events were skipped");
                }
                Err(RecvError::Closed) => break,
            },
            _ = refresh.tick() => reload(&state).await,
            () = hub.changed() => reload(&state).await,
        }
    }
    deliveries.close();
    deliveries.wait().await;
    drop(log_tx);
    let _ = writer.await;
}

/// Reloads the enabled registrations; on a store error the previous ones stay in use.
async fn reload(state: &AppState) {
    match state.store.enabled_webhooks().await {
        Ok(hooks) => state.webhooks.set_registrations(&hooks),
        Err(e) => tracing::warn!(error = %e, "cannot reload webhook registrations; keeping the previous ones"),
    }
}

/// Starts one delivery per enabled registration of `kind`. The event is rendered only when someone is
/// registered, and once for all of them.
fn fan_out(
    hub: &Arc<Webhooks>,
    slots: &Arc<Semaphore>,
    deliveries: &TaskTracker,
    log_tx: &mpsc::Sender<NewDelivery>,
    kind: WebhookKind,
    ev: &DomainEvent,
) {
    let targets = hub.targets(kind);
    if targets.is_empty() {
        return;
    }
    let Some(data) = webhook_data(ev) else {
        return;
    };
    let event_type = kind.event_type();
    let body: Arc<[u8]> = Arc::from(webhooks::payload(event_type, &data));
    for target in targets.iter() {
        if deliveries.len() >= MAX_PENDING {
            log(
                log_tx,
                NewDelivery {
                    webhook_id: target.webhook_id,
                    message_id: webhooks::new_message_id(),
                    event_type: event_type.to_string(),
                    status_code: None,
                    latency_ms: 0,
                    error: Some("dropped: too many deliveries pending".to_string()),
                    blocked: false,
                    created_at: Timestamp::now(),
                },
            );
            continue;
        }
        let (hub, slots, log_tx, body, target) =
            (hub.clone(), slots.clone(), log_tx.clone(), body.clone(), target.clone());
        deliveries.spawn(async move {
            let Ok(_slot) = slots.acquire_owned().await else {
                return;
            };
            let attempt = hub.sender.send(&target, event_type, body.to_vec()).await;
            log(&log_tx, attempt);
        });
    }
}

/// The `outcome` label of `crossbook_webhook_deliveries_total`: blocked, delivered, failed.
pub const DELIVERY_OUTCOMES: [&str; 3] = ["blocked", "delivered", "failed"];

/// Queues an attempt for the log and counts it.
fn log(log_tx: &mpsc::Sender<NewDelivery>, attempt: NewDelivery) {
    let [blocked, delivered, failed] = DELIVERY_OUTCOMES;
    let outcome = if attempt.blocked {
        blocked
    } else if attempt.error.is_none() {
        delivered
    } else {
        failed
    };
    metrics::counter!("crossbook_webhook_deliveries_total", "outcome" => outcome).increment(1);
    if attempt.blocked {
        tracing::warn!(webhook_id = attempt.webhook_id, error = ?attempt.error, "webhook delivery blocked");
    }
    if log_tx.try_send(attempt).is_err() {
        tracing::warn!("the webhook delivery log is full; an attempt was not logged");
    }
}

/// Stores queued attempts in batches until the queue closes. A batch that cannot be stored is tried again
/// (with what arrived meanwhile) every [`LOG_RETRY`], up to [`LOG_HELD`] attempts held; past that the oldest
/// are dropped and counted in `crossbook_writes_dropped_total{kind="deliveries"}`.
async fn write_log(store: Arc<dyn Store>, mut rx: mpsc::Receiver<NewDelivery>) {
    let health = store.write_health();
    let mut batch = Vec::with_capacity(LOG_BATCH);
    while rx.recv_many(&mut batch, LOG_BATCH).await > 0 {
        loop {
            match store.record_deliveries(&batch).await {
                Ok(_) => {
                    health.ok(WriteKind::Deliveries);
                    break;
                }
                Err(e) => {
                    health.failed(WriteKind::Deliveries, &e);
                    tracing::warn!(error = %e, attempts = batch.len(), "cannot store webhook delivery attempts; retrying");
                    let closed = tokio::time::timeout(LOG_RETRY, async {
                        // Whatever arrives while waiting joins the next try.
                        while rx.recv_many(&mut batch, LOG_BATCH).await > 0 {}
                    })
                    .await
                    .is_ok();
                    if batch.len() > LOG_HELD {
                        let n = batch.len() - LOG_HELD;
                        batch.drain(..n);
                        health.dropped(WriteKind::Deliveries, n as u64);
                    }
                    if closed {
                        if store.record_deliveries(&batch).await.is_err() {
                            health.dropped(WriteKind::Deliveries, batch.len() as u64);
                        }
                        return;
                    }
                }
            }
        }
        batch.clear();
    }
}
