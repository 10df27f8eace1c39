//! The background workers of `crossbook serve`: venue ingestion, the arbitrage scanner, snapshot retention,
//! the whale tracker and webhook delivery. One module per worker, each with a `spawn` function.
//!
//! Contract for a worker: spawn it on `tracker`; return promptly once `cancel` is cancelled (select on
//! `cancel.cancelled()` next to the work and timers); cancel `cancel` itself only on a fatal error, which
//! shuts the whole process down. Workers share state through [`AppState`] (`live`, `bus`, `health`,
//! `ingest`). Workers run for [`Role::All`] and [`Role::Ingest`], never for [`Role::Api`].
//!
//! Ingestion and everything it feeds run in exactly one process at a time (the leader, see
//! [`start_leader_workers`]); with a shared PostgreSQL the leader is whoever holds the ingest lock.

pub mod ingest;
pub mod leader;
pub mod retention;
pub mod scanner;
pub mod webhooks;
pub mod whales;

use tokio::task::JoinHandle;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{AppState, config::Role};

/// Starts every worker this process's role runs: for [`Role::All`] and [`Role::Ingest`], the [`leader`] task,
/// which runs [`start_leader_workers`] while this process holds the ingest lock; returns once it made its
/// first attempt at the lock. Fails (before the server starts listening) on unusable worker configuration.
/// The returned task ends with an error when the leader workers failed; `serve` reports it.
pub async fn spawn_workers(
    state: &AppState,
    tracker: &TaskTracker,
    cancel: &CancellationToken,
) -> anyhow::Result<Option<JoinHandle<anyhow::Result<()>>>> {
    if state.config.role == Role::Api {
        return Ok(None);
    }
    ingest::check(&state.config)?;
    Ok(Some(leader::spawn(state.clone(), tracker, cancel.clone()).await))
}

/// The workers of the one ingesting process: ingestion first (it fills `live`, `bus` and `health`), then the
/// workers that consume them. Each worker module adds its `spawn` call here.
pub fn start_leader_workers(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) -> anyhow::Result<()> {
    spawn_bus_publisher(state, tracker, cancel);
    ingest::spawn(state, tracker, cancel)?;
    retention::spawn(state, tracker, cancel);
    scanner::spawn(state, tracker, cancel);
    webhooks::spawn(state, tracker, cancel);
    whales::spawn(state, tracker, cancel);
    Ok(())
}

/// With a `bus_url`, publishes every event of the in-process bus on NATS for the api processes. Subscribed
/// before ingestion starts, so the first books are published too. The connection is made in the background
/// and retried forever: capture to the store never waits for the bus.
fn spawn_bus_publisher(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    let (Some(settings), Some(status)) = (state.config.bus_settings(), state.publisher.clone()) else {
        return;
    };
    let rx = state.bus.subscribe();
    let live = state.live.clone();
    let cancel = cancel.clone();
    tracker.spawn(async move {
        match crossbook_live::nats::connect(&settings, "crossbook-leader", false).await {
            Ok(conn) => crossbook_live::nats::publisher::run(settings, conn, live, rx, status, cancel).await,
            Err(e) => {
                status.failed(e.to_string());
                tracing::error!(error = %e, "cannot use the bus; live events stay in this process");
            }
        }
    });
}
