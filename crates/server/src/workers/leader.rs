//! Leadership: the workers of [`super::start_leader_workers`] run in exactly one process at a time, the one
//! holding the store's ingest lock ([`crossbook_store::LeaderLock`]: a PostgreSQL session advisory lock on a
//! dedicated connection, or a lock file next to a SQLite database).
//!
//! ```text
//!   waiting ──(lock taken)──> leading: start_leader_workers on a term's own token and tracker
//!      ^                          │
//!      └──(lock lost: connection died; the term's workers are cancelled and awaited)
//! ```
//!
//! A process that cannot take the lock retries every [`RETRY`] and takes over once the holder dies (its
//! PostgreSQL session ends with it). A worker cancelling its token (a fatal error) stops the whole process,
//! as it would without leadership. `crossbook_ingest_leader` (gauge) is 1 while this process leads.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{error, info, warn};

use crate::AppState;

/// How often a waiting process tries to take the lock.
pub const RETRY: Duration = Duration::from_secs(2);

/// Spawns the leader task on `tracker`. Its result is an error when the leader workers could not start or a
/// worker stopped the process; `serve` reports it.
pub fn spawn(state: AppState, tracker: &TaskTracker, cancel: CancellationToken) -> JoinHandle<anyhow::Result<()>> {
    tracker.spawn(run(state, cancel))
}

async fn run(state: AppState, cancel: CancellationToken) -> anyhow::Result<()> {
    let gauge = metrics::gauge!("crossbook_ingest_leader");
    gauge.set(0.0);
    let mut said_waiting = false;
    loop {
        let attempt = tokio::select! {
            () = cancel.cancelled() => return Ok(()),
            r = state.store.try_leader_lock() => r,
        };
        let mut guard = match attempt {
            Ok(Some(g)) => g,
            Ok(None) => {
                state.ingest.set_standby(true);
                if !said_waiting {
                    info!(
                        retry_seconds = RETRY.as_secs(),
                        "another process holds the ingest lock; this process serves without ingesting and takes \
                         over when that one stops"
                    );
                    said_waiting = true;
                }
                if sleep_or_cancel(&cancel, RETRY).await {
                    return Ok(());
                }
                continue;
            }
            Err(e) => {
                warn!(error = %e, "cannot try the ingest lock; retrying");
                if sleep_or_cancel(&cancel, RETRY).await {
                    return Ok(());
                }
                continue;
            }
        };
        said_waiting = false;
        state.ingest.set_standby(false);
        info!("took the ingest lock: this process ingests");
        let term = cancel.child_token();
        let term_tracker = TaskTracker::new();
        if let Err(e) = super::start_leader_workers(&state, &term_tracker, &term) {
            error!(error = format!("{e:#}"), "cannot start the ingest workers; stopping");
            stop_term(&state, &term, &term_tracker).await;
            guard.release().await;
            cancel.cancel();
            return Err(e);
        }
        gauge.set(1.0);
        term_tracker.close();
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Outcome::Shutdown,
            // The term's token is a child of `cancel`: only a worker cancelling it is fatal.
            () = term.cancelled() => if cancel.is_cancelled() { Outcome::Shutdown } else { Outcome::Fatal },
            reason = guard.lost() => Outcome::Lost(reason),
        };
        // No longer leading from this moment (`/readyz`, the gauge), even while the workers finish.
        gauge.set(0.0);
        stop_term(&state, &term, &term_tracker).await;
        guard.release().await;
        match outcome {
            Outcome::Shutdown => return Ok(()),
            Outcome::Fatal => {
                cancel.cancel();
                anyhow::bail!("a worker stopped the service (see the log above)");
            }
            Outcome::Lost(reason) => {
                warn!(%reason, "lost the ingest lock: stopped ingesting; trying to take it back");
            }
        }
    }
}

enum Outcome {
    Shutdown,
    Fatal,
    Lost(String),
}

/// Cancels one leadership term, waits for its workers and forgets what it held in memory, so a process that
/// no longer ingests serves no stale live books.
async fn stop_term(state: &AppState, term: &CancellationToken, tracker: &TaskTracker) {
    term.cancel();
    state.ingest.clear();
    tracker.close();
    tracker.wait().await;
    for ex in [crossbook_core::Exchange::VenueA, crossbook_core::Exchange::VenueB] {
        state.live.retain_markets(ex, |_| false);
    }
}

/// Sleeps `d`; `true` when cancelled first.
async fn sleep_or_cancel(cancel: &CancellationToken, d: Duration) -> bool {
    tokio::select! {
        () = cancel.cancelled() => true,
        () = tokio::time::sleep(d) => false,
    }
}
