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
//! `serve` answers requests only after the first attempt, and the process serves live data only while its
//! ingestion runs ([`crate::state::IngestSlot`]): waiting, an attempt that failed (nobody knows who leads
//! then) or the time between losing the lock and taking it back answer 503 with the reason.
//!
//! A process that cannot take the lock retries every [`RETRY`] and takes over once the holder dies (its
//! PostgreSQL session ends with it). A worker cancelling its token (a fatal error) stops the whole process,
//! as it would without leadership. `crossbook_ingest_leader` (gauge) is 1 while this process leads.

use std::time::Duration;

use tokio::{sync::oneshot, task::JoinHandle};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::{error, info, warn};

use crate::{AppState, state::LockStance};

/// How often a waiting process tries to take the lock.
pub const RETRY: Duration = Duration::from_secs(2);

/// The longest `serve` waits for the first attempt at the lock before it starts answering.
const FIRST_ATTEMPT_WAIT: Duration = Duration::from_secs(15);

/// Spawns the leader task on `tracker` and waits for its first attempt at the lock (ingestion started, the
/// lock found held, or the attempt failed), so that a process starts serving knowing whether it leads. Its
/// result is an error when the leader workers could not start or a worker stopped the process; `serve`
/// reports it.
pub async fn spawn(
    state: AppState,
    tracker: &TaskTracker,
    cancel: CancellationToken,
) -> JoinHandle<anyhow::Result<()>> {
    // Until the task has found where it stands, this process serves no live data.
    state.ingest.set_stance(LockStance::Trying);
    let (tried, first) = oneshot::channel();
    let task = tracker.spawn(run(state, cancel, tried));
    // An error here means the task ended before it tried (cancelled): its result says why. A database that
    // does not answer the attempt holds the start no longer than FIRST_ATTEMPT_WAIT: the process then serves
    // as one that does not ingest yet, which is what it is.
    let _ = tokio::time::timeout(FIRST_ATTEMPT_WAIT, first).await;
    task
}

async fn run(state: AppState, cancel: CancellationToken, tried: oneshot::Sender<()>) -> anyhow::Result<()> {
    let gauge = metrics::gauge!("crossbook_ingest_leader");
    gauge.set(0.0);
    let mut said_waiting = false;
    let mut tried = Some(tried);
    let mut first_tried = move || {
        if let Some(t) = tried.take() {
            let _ = t.send(());
        }
    };
    loop {
        let attempt = tokio::select! {
            () = cancel.cancelled() => return Ok(()),
            r = state.store.try_leader_lock() => r,
        };
        let mut guard = match attempt {
            Ok(Some(g)) => g,
            Ok(None) => {
                state.ingest.set_stance(LockStance::Standby);
                first_tried();
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
                // Whether another process leads is unknown now: not a standby, not a leader.
                state.ingest.set_stance(LockStance::Unreachable);
                first_tried();
                warn!(error = %e, "cannot try the ingest lock; retrying");
                if sleep_or_cancel(&cancel, RETRY).await {
                    return Ok(());
                }
                continue;
            }
        };
        said_waiting = false;
        state.ingest.set_stance(LockStance::Trying);
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
        first_tried();
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
