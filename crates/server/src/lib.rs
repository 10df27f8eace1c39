//! The crossbook server: the HTTP API over the store, and the background workers of `crossbook serve`.
//!
//! [`serve`] opens and migrates the store, builds the [`AppState`], starts the workers and serves the
//! [`app`] until the shutdown future resolves, then drains requests and waits for the workers.
//!
//! # Layout
//! - [`config`]: every setting, with defaults from `config.default.toml`.
//! - [`state`]: [`AppState`] (the handles every handler gets).
//! - [`error`]: [`ApiError`], the one error type, mapped to HTTP and the error body of contracts §2.
//! - [`http`]: the HTTP listener: header, keep-alive and body timeouts, the connection cap, the file limit.
//! - [`cache`]: the short-lived cache of rendered JSON responses (search, current arbitrage) in the state.
//! - [`json`]: JSON bodies in and out with our content type and rejections.
//! - [`params`]: strict query and path parameters shared by every route area.
//! - [`access`]: who may call what and how often: the plans table, API keys, the gate and its extractors,
//!   rate limits per key or per client IP.
//! - [`metrics`]: the Prometheus recorder and the request metrics middleware.
//! - [`arbitrage`]: the arbitrage service (pair catalog, live scan, rendering) the routes and the scanner
//!   share.
//! - [`whales`]: the whale service (daily pool, watchlist rules, view thresholds, whale-entry data) the routes
//!   and the tracker share.
//! - [`workers`]: the background tasks of `serve` (ingestion, scanner, retention, webhook delivery), run by the
//!   one process holding the ingest lock.
//! - [`stream`]: the live stream (`/v1/stream`): sessions, subscriptions, resume buffers and the delivery task
//!   that renders bus events for them.
//! - [`webhooks`]: outbound webhooks without HTTP-framework code: the SSRF guard, signing, one delivery.
//! - [`demo`]: the demo keys and banner of `serve --simulate` (the binary starts the simulated venues).
//! - [`api`]: the routers, one module per spec area (`search`, `service`, ...), the common layers, and in
//!   [`api::openapi`] the OpenAPI document and `/docs` page built from them.
#![forbid(unsafe_code)]

pub mod access;
pub mod api;
pub mod arbitrage;
pub mod backtests;
pub mod cache;
pub mod config;
pub mod dashboard;
pub mod demo;
pub mod error;
pub mod export;
pub mod http;
pub mod json;
pub mod metrics;
pub mod params;
pub mod slots;
pub mod state;
pub mod stream;
pub mod webhooks;
pub mod whales;
pub mod workers;

use std::{future::Future, sync::Arc, time::Duration};

use futures_util::future::BoxFuture;

use anyhow::Context;
use crossbook_store::{Store, redact_url};
use tokio::{net::TcpListener, time::MissedTickBehavior};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

pub use api::app;
use config::Config;
pub use error::{ApiError, ApiResult};
pub use state::AppState;

/// Largest accepted request body; the API's body limit layers and the 413
/// error message both read it.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A step [`serve_with`] runs once the store is migrated and before the workers start: it may rewrite the
/// configuration (`serve --simulate` points ingestion at the simulated venues it starts) and returns what the
/// server does with it.
pub type BeforeIngest = Box<dyn FnOnce(Config) -> BoxFuture<'static, anyhow::Result<(Config, Startup)>> + Send>;

/// What a [`BeforeIngest`] step asks of the server.
#[derive(Default)]
pub struct Startup {
    /// Create and print the demo keys when the database has none ([`demo`]).
    pub demo_keys: Option<DemoKeys>,
    /// Awaited once the workers have stopped, before the store closes (e.g. stopping the simulated venues).
    pub on_shutdown: Option<BoxFuture<'static, ()>>,
}

/// The demo keys of `serve --simulate`.
#[derive(Debug, Default)]
pub struct DemoKeys {
    /// Real ids of the simulated catalog for the banner's examples.
    pub tour: demo::Tour,
}

/// Runs the service on `listener` until `shutdown` resolves (or a worker cancels), then stops accepting,
/// finishes in-flight requests, stops the workers and closes the store.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with(config, listener, shutdown, None).await
}

/// [`serve`], with `before_ingest` run after the store is migrated and before the workers start; on a
/// database without keys, the demo keys it asks for are created and printed to standard output with `curl`
/// examples.
pub async fn serve_with(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    before_ingest: Option<BeforeIngest>,
) -> anyhow::Result<()> {
    let url = redact_url(&config.database_url);
    let store: Arc<dyn Store> = crossbook_store::open_with(&config.database_url, &config.store_options())
        .await
        .with_context(|| format!("cannot open database {url}"))?;
    serve_on(config, store, listener, shutdown, before_ingest).await
}

/// [`serve_with`] on a store the caller opened (for `config.database_url`), for embedding the service, and
/// for tests that act on the store under a running server (a full disk, say).
pub async fn serve_on(
    mut config: Config,
    store: Arc<dyn Store>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    before_ingest: Option<BeforeIngest>,
) -> anyhow::Result<()> {
    let url = redact_url(&config.database_url);
    store
        .migrate()
        .await
        .with_context(|| format!("cannot migrate database {url}"))?;
    if config.snapshot_interval_ms.is_some() {
        tracing::warn!("snapshot_interval_ms is no longer used and is ignored: every book change is recorded");
    }
    if config.allow_private_webhook_targets {
        tracing::warn!(
            "allow_private_webhook_targets is on: webhooks may target private and loopback hosts (development only)"
        );
    }

    let mut startup = Startup::default();
    if let Some(step) = before_ingest {
        (config, startup) = step(config).await?;
    }
    if let Some(demo) = &startup.demo_keys {
        print_demo_keys(store.as_ref(), &listener, &demo.tour, &url).await?;
    }

    // Before anything opens sockets: the connection cap is derived from the raised limit.
    let file_limit = http::raise_file_limit();
    let limits = http::Limits::new(&config, file_limit);
    let state = AppState::new(config, store.clone());
    let tracker = TaskTracker::new();
    let cancel = CancellationToken::new();
    spawn_maintenance(&state, &tracker, cancel.clone());
    tracker.spawn(state.stream.clone().run(state.bus.subscribe(), cancel.clone()));
    start_mirror(&state, &tracker, &cancel).await?;
    let leader = workers::spawn_workers(&state, &tracker, &cancel).await?;

    let server_cancel = cancel.clone();
    let hub = state.stream.clone();
    let result = http::serve(listener, app(state), limits, async move {
        tokio::select! {
            () = shutdown => {}
            () = server_cancel.cancelled() => {}
        }
        // Open streams would keep the graceful shutdown waiting: each gets its close frame now.
        hub.close();
    })
    .await;

    cancel.cancel();
    tracker.close();
    tracker.wait().await;
    let workers = match leader {
        Some(task) => task
            .await
            .unwrap_or_else(|e| Err(anyhow::anyhow!("the leader task panicked: {e}"))),
        None => Ok(()),
    };
    if let Some(stop) = startup.on_shutdown {
        stop.await;
    }
    store.close().await;
    result.context("the HTTP server failed")?;
    workers
}

/// In a `--role api` process with a bus: connects to it (a bus that cannot be reached at start stops the
/// start with an error naming it, as a database does: this process would serve nothing live) and mirrors
/// the ingesting process's live plane into `state.live` and `state.bus`; shares its stream sessions with the
/// other api processes. Once started, losing the bus makes
/// the live routes answer 503 and `/readyz` say so until it is back; the mirror reconnects alone.
async fn start_mirror(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) -> anyhow::Result<()> {
    let (Some(status), Some(settings)) = (state.mirror.clone(), state.config.bus_settings()) else {
        return Ok(());
    };
    let conn = crossbook_live::nats::connect(&settings, "crossbook-api", true)
        .await
        .context("cannot start the live mirror (bus_url)")?;
    // Stream sessions are shared with the other api processes, so a client resumes on any of them.
    let shared = crate::stream::shared::SharedSessions::new(conn.client.clone(), state.stream.settings().resume);
    state.stream.share(shared.clone());
    tracker.spawn(state.stream.clone().refresh_records(shared, cancel.clone()));
    tracker.spawn(crossbook_live::nats::mirror::run(
        conn,
        state.live.clone(),
        state.bus.clone(),
        status,
        cancel.clone(),
    ));
    Ok(())
}

/// Creates the demo keys when the database has none and prints the banner: with the new keys, or (a restart,
/// or another process holds the lock) where the service listens and how to list the keys in `database`.
/// Runs under the ingest lock so that of two processes starting together on one empty database only one
/// creates them; when another process holds the lock, it is the one that did.
async fn print_demo_keys(
    store: &dyn Store,
    listener: &TcpListener,
    tour: &demo::Tour,
    database: &str,
) -> anyhow::Result<()> {
    let keys = match store.try_leader_lock().await.context("cannot take the ingest lock")? {
        Some(guard) => {
            let created = demo::create_demo_keys(store).await;
            guard.release().await;
            created?.unwrap_or_default()
        }
        None => Vec::new(),
    };
    let base = demo::base_url(listener.local_addr()?);
    println!("{}", demo::demo_banner(&keys, &base, tour, database));
    Ok(())
}

/// Housekeeping of the server itself: Prometheus upkeep every 5 s; every minute, rate-limit buckets that
/// are full again and expired key-cache entries are dropped.
fn spawn_maintenance(state: &AppState, tracker: &TaskTracker, cancel: CancellationToken) {
    let state = state.clone();
    tracker.spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut ticks: u64 = 0;
        loop {
            tokio::select! {
                () = cancel.cancelled() => break,
                _ = tick.tick() => {}
            }
            state.metrics.run_upkeep();
            ticks += 1;
            if ticks.is_multiple_of(12) {
                state.limits.retain_recent();
                state.keys.purge_expired();
            }
        }
    });
}
