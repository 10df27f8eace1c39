//! The crossbook server: the HTTP API over the store, and the background workers of `crossbook serve`.
//!
//! [`serve`] opens and migrates the store, builds the [`AppState`], starts the workers and serves the
//! [`app`] until the shutdown future resolves, then drains requests and waits for the workers.
//!
//! # Layout
//! - [`config`]: every setting, with defaults from `config.default.toml`.
//! - [`state`]: [`AppState`] (the handles every handler gets).
//! - [`error`]: [`ApiError`], the one error type, mapped to HTTP and the error body of contracts §2.
//! - [`cache`]: the short-lived cache of rendered JSON responses (search, current arbitrage) in the state.
//! - [`json`]: JSON bodies in and out with our content type and rejections.
//! - [`params`]: strict query and path parameters shared by every route area.
//! - [`auth`]: API keys, the gating table of contracts §3 and the extractors that apply it.
//! - [`rate_limit`]: token buckets per plan, per key or per client IP.
//! - [`metrics`]: the Prometheus recorder and the request metrics middleware.
//! - [`arbitrage`]: the arbitrage service (pair catalog, live scan, rendering) the routes and the scanner
//!   share.
//! - [`whales`]: the whale service (daily pool, watchlist rules, whale-entry data) the routes and the
//!   tracker share.
//! - [`workers`]: the background tasks of `serve` (ingestion, scanner, retention, webhook delivery), run by the
//!   one process holding the ingest lock.
//! - [`webhooks`]: outbound webhooks without HTTP-framework code: the SSRF guard, signing, one delivery.
//! - [`simulate`]: `serve --simulate` (simulated venues in-process, demo keys).
//! - [`api`]: the routers, one module per spec area (`search`, `service`, ...), the common layers and the
//!   OpenAPI document and `/docs` page built from them.
#![forbid(unsafe_code)]

pub mod api;
pub mod arbitrage;
pub mod auth;
pub mod cache;
pub mod config;
pub mod error;
pub mod json;
pub mod metrics;
pub mod params;
pub mod rate_limit;
pub mod simulate;
pub mod state;
pub mod webhooks;
pub mod whales;
pub mod workers;

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context;
use crossbook_store::{Store, redact_url};
use tokio::{net::TcpListener, time::MissedTickBehavior};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

pub use api::app;
use config::{Config, Role};
pub use error::{ApiError, ApiResult};
pub use state::AppState;

/// Largest accepted request body (contracts §2: 413 above it); the API's body limit layers and the 413
/// error message both read it.
pub const BODY_LIMIT: usize = 64 * 1024;

/// Runs the service on `listener` until `shutdown` resolves (or a worker cancels), then stops accepting,
/// finishes in-flight requests, stops the workers and closes the store.
///
/// With `simulate` (and a role that ingests), both simulated venues start in-process first and ingestion
/// follows them; on a database without keys, one demo key per plan is created and printed to standard output
/// with `curl` examples.
pub async fn serve(
    mut config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let url = redact_url(&config.database_url);
    let store: Arc<dyn Store> = crossbook_store::open(&config.database_url)
        .await
        .with_context(|| format!("cannot open database {url}"))?;
    store
        .migrate()
        .await
        .with_context(|| format!("cannot migrate database {url}"))?;
    if config.allow_private_webhook_targets {
        tracing::warn!(
            "allow_private_webhook_targets is on: webhooks may target private and loopback hosts (development only)"
        );
    }

    let sim = match (config.simulate, config.role) {
        (true, Role::Api) => {
            tracing::warn!("simulate is ignored with role api: this process does not ingest");
            None
        }
        (true, _) => Some(simulate::start(&mut config).await?),
        (false, _) => None,
    };
    if let Some(sim) = &sim {
        print_demo_keys(store.as_ref(), &listener, sim).await?;
    }

    let state = AppState::new(config, store.clone());
    let tracker = TaskTracker::new();
    let cancel = CancellationToken::new();
    spawn_maintenance(&state, &tracker, cancel.clone());
    let leader = workers::spawn_workers(&state, &tracker, &cancel)?;

    let server_cancel = cancel.clone();
    let result = axum::serve(listener, app(state).into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            tokio::select! {
                () = shutdown => {}
                () = server_cancel.cancelled() => {}
            }
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
    if let Some(sim) = sim {
        sim.shutdown().await;
    }
    store.close().await;
    result.context("the HTTP server failed")?;
    workers
}

/// Creates and prints the demo keys when the database has none. Runs under the ingest lock so that of two
/// processes starting together on one empty database only one creates them; when another process holds the
/// lock, it is the one that did.
async fn print_demo_keys(
    store: &dyn Store,
    listener: &TcpListener,
    sim: &crossbook_sim::SimHandle,
) -> anyhow::Result<()> {
    let Some(guard) = store.try_leader_lock().await.context("cannot take the ingest lock")? else {
        return Ok(());
    };
    let created = simulate::create_demo_keys(store).await;
    guard.release().await;
    if let Some(keys) = created? {
        let mut addr = listener.local_addr()?;
        if addr.ip().is_unspecified() {
            addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let banner = simulate::demo_banner(
            &keys,
            &format!("http://{addr}"),
            simulate::example_market(sim).as_deref(),
        );
        println!("{banner}");
    }
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
