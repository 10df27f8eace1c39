//! Snapshot retention: removes order-book snapshots older than `retention_days` (default 30; 0 keeps them
//! forever), in the background, without holding up ingestion or reads.
//!
//! A pass runs at start and then every [`Settings::period`]:
//!
//! 1. PostgreSQL: creates the daily snapshot partitions of today and the next [`PARTITIONS_AHEAD_DAYS`] days,
//!    so that inserts never wait for one (a no-op on SQLite).
//! 2. Calls [`BookStore::prune_snapshots`] until it reports `done`. SQLite deletes at most
//!    [`Settings::batch_rows`] of the oldest rows per call, each call its own short transaction on the single
//!    writer, with a pause between calls so that ingestion's inserts interleave. PostgreSQL detaches
//!    (`CONCURRENTLY`) and drops the daily partitions that ended before the cutoff in one call.
//!
//! Reads never wait: SQLite readers use WAL snapshots, PostgreSQL readers are not blocked by
//! `DETACH … CONCURRENTLY`. A failed pass is logged and retried at the next period.

use std::{sync::Arc, time::Duration};

use crossbook_core::Timestamp;
use crossbook_store::{BookStore, StoreResult, books::DAY_MS};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::AppState;

/// Days after today whose PostgreSQL partitions a pass creates ahead of time.
pub const PARTITIONS_AHEAD_DAYS: i64 = 2;

/// How the worker runs.
#[derive(Clone)]
pub struct Settings {
    /// Snapshots older than this are removed.
    pub retention: Duration,
    /// Time between two passes.
    pub period: Duration,
    /// Rows per delete on SQLite.
    pub batch_rows: u32,
    /// Pause between two deletes of one pass.
    pub pause: Duration,
    /// The current time (a parameter so tests control it).
    pub clock: Arc<dyn Fn() -> Timestamp + Send + Sync>,
}

impl Settings {
    /// The service's settings for `retention_days`; `None` when retention is off (0 days).
    pub fn from_days(days: u32) -> Option<Settings> {
        (days > 0).then(|| Settings {
            retention: Duration::from_secs(u64::from(days) * 86_400),
            period: Duration::from_secs(3_600),
            batch_rows: 5_000,
            pause: Duration::from_millis(20),
            clock: Arc::new(Timestamp::now),
        })
    }
}

/// What one pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    pub rows: u64,
    pub partitions: u64,
    /// Prune calls made.
    pub steps: u32,
}

/// Starts the worker for the service's configuration (nothing when `retention_days` is 0).
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    match Settings::from_days(state.config.retention_days) {
        Some(settings) => spawn_with(state.store.clone(), settings, tracker, cancel),
        None => tracing::info!("snapshot retention is off (retention_days = 0)"),
    }
}

/// Starts the worker over any snapshot store.
pub fn spawn_with<S: BookStore + ?Sized + 'static>(
    store: Arc<S>,
    settings: Settings,
    tracker: &TaskTracker,
    cancel: &CancellationToken,
) {
    let cancel = cancel.clone();
    tracker.spawn(async move { run(store.as_ref(), &settings, &cancel).await });
}

async fn run<S: BookStore + ?Sized>(store: &S, settings: &Settings, cancel: &CancellationToken) {
    loop {
        match pass(store, settings, cancel).await {
            Ok(r) if r.rows > 0 || r.partitions > 0 => {
                tracing::info!(
                    rows = r.rows,
                    partitions = r.partitions,
                    "removed expired order-book snapshots"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "snapshot retention pass failed; retrying at the next period"),
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(settings.period) => {}
        }
    }
}

/// One pass: prepares the coming days' storage, then prunes until done (or cancelled).
pub async fn pass<S: BookStore + ?Sized>(
    store: &S,
    settings: &Settings,
    cancel: &CancellationToken,
) -> StoreResult<PassReport> {
    let now = (settings.clock)();
    store
        .prepare_snapshots(
            now,
            Timestamp::from_millis(now.millis().saturating_add(PARTITIONS_AHEAD_DAYS * DAY_MS)),
        )
        .await?;
    let retention_ms = i64::try_from(settings.retention.as_millis()).unwrap_or(i64::MAX);
    let cutoff = Timestamp::from_millis(now.millis().saturating_sub(retention_ms));
    let mut report = PassReport::default();
    while !cancel.is_cancelled() {
        let step = store.prune_snapshots(cutoff, settings.batch_rows).await?;
        report.rows += step.rows;
        report.partitions += step.partitions;
        report.steps += 1;
        if step.done {
            break;
        }
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(settings.pause) => {}
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use crossbook_core::BookSnapshot;
    use crossbook_store::{Pruned, SnapshotQuery, StoreError};
    use tokio::time::Instant;

    use super::*;

    const NOW: i64 = 1_763_000_000_000;

    /// Records what the worker asks for, and when (in the paused clock).
    #[derive(Default)]
    struct Fake {
        calls: Mutex<Vec<(Instant, String)>>,
        /// Prune steps left before `done`, per pass.
        steps_per_pass: u32,
        left: Mutex<u32>,
        fail_next_prepare: Mutex<bool>,
    }

    impl Fake {
        fn new(steps_per_pass: u32) -> Self {
            Fake {
                steps_per_pass,
                left: Mutex::new(steps_per_pass),
                ..Fake::default()
            }
        }
        fn log(&self) -> Vec<String> {
            self.calls.lock().unwrap().iter().map(|(_, c)| c.clone()).collect()
        }
        fn record(&self, what: String) {
            self.calls.lock().unwrap().push((Instant::now(), what));
        }
    }

    #[async_trait::async_trait]
    impl BookStore for Fake {
        async fn insert_snapshots(&self, _: &[BookSnapshot]) -> StoreResult<()> {
            Ok(())
        }
        async fn snapshots(&self, _: &SnapshotQuery) -> StoreResult<Vec<BookSnapshot>> {
            Ok(Vec::new())
        }
        async fn delete_snapshots_before(&self, _: Timestamp) -> StoreResult<u64> {
            unreachable!("the worker prunes in steps")
        }
        async fn prune_snapshots(&self, cutoff: Timestamp, max_rows: u32) -> StoreResult<Pruned> {
            self.record(format!("prune {} {max_rows}", cutoff.millis()));
            let mut left = self.left.lock().unwrap();
            *left -= 1;
            let done = *left == 0;
            if done {
                *left = self.steps_per_pass;
            }
            Ok(Pruned {
                rows: u64::from(max_rows),
                partitions: 0,
                done,
            })
        }
        async fn prepare_snapshots(&self, from: Timestamp, until: Timestamp) -> StoreResult<()> {
            self.record(format!("prepare {} {}", from.millis(), until.millis()));
            let mut fail = self.fail_next_prepare.lock().unwrap();
            if *fail {
                *fail = false;
                return Err(StoreError::Unavailable("down".into()));
            }
            Ok(())
        }
    }

    fn settings() -> Settings {
        Settings {
            retention: Duration::from_secs(30 * 86_400),
            period: Duration::from_secs(3_600),
            batch_rows: 100,
            pause: Duration::from_millis(20),
            clock: Arc::new(|| Timestamp::from_millis(NOW)),
        }
    }

    /// Lets the worker run until `n` calls are recorded (the clock is paused, so waiting costs no time
    /// unless a timer is due).
    async fn until_calls(fake: &Fake, n: usize) {
        for _ in 0..100_000 {
            if fake.calls.lock().unwrap().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        panic!("only {:?}", fake.log());
    }

    #[tokio::test(start_paused = true)]
    async fn passes_run_at_start_and_every_period_in_small_steps() {
        let fake = Arc::new(Fake::new(3));
        let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
        let started = Instant::now();
        spawn_with(fake.clone(), settings(), &tracker, &cancel);

        // First pass at once: partitions ahead, then steps with a pause between them until done.
        until_calls(&fake, 4).await;
        let cutoff = NOW - 30 * DAY_MS;
        let pass = [
            format!("prepare {NOW} {}", NOW + 2 * DAY_MS),
            format!("prune {cutoff} 100"),
            format!("prune {cutoff} 100"),
            format!("prune {cutoff} 100"),
        ];
        assert_eq!(fake.log(), pass);
        {
            let calls = fake.calls.lock().unwrap();
            assert_eq!(calls[0].0, started);
            assert_eq!(calls[2].0 - calls[1].0, Duration::from_millis(20));
            assert_eq!(calls[3].0 - calls[2].0, Duration::from_millis(20));
        }

        // Nothing more until the period has passed; then the same pass again.
        tokio::time::advance(Duration::from_secs(3_000)).await;
        tokio::task::yield_now().await;
        assert_eq!(fake.log().len(), 4);
        tokio::time::advance(Duration::from_secs(600)).await;
        until_calls(&fake, 8).await;
        assert_eq!(fake.log()[4..], pass);
        // One period after the end of the first pass (the manual advance may overshoot by a tick).
        let second = fake.calls.lock().unwrap()[4].0 - started;
        let due = Duration::from_secs(3_600) + Duration::from_millis(40);
        assert!(second >= due && second <= due + Duration::from_millis(5), "{second:?}");

        cancel.cancel();
        tracker.close();
        tracker.wait().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_pass_is_retried_at_the_next_period() {
        let fake = Arc::new(Fake::new(1));
        *fake.fail_next_prepare.lock().unwrap() = true;
        let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
        spawn_with(fake.clone(), settings(), &tracker, &cancel);
        until_calls(&fake, 1).await;
        tokio::task::yield_now().await;
        assert_eq!(fake.log().len(), 1, "the failed pass stops before pruning");
        tokio::time::advance(Duration::from_secs(3_600)).await;
        until_calls(&fake, 3).await;
        assert!(fake.log()[2].starts_with("prune"));
        cancel.cancel();
        tracker.close();
        tracker.wait().await;
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_stops_a_pass_between_steps() {
        let fake = Arc::new(Fake::new(1_000));
        let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
        spawn_with(fake.clone(), settings(), &tracker, &cancel);
        until_calls(&fake, 3).await;
        cancel.cancel();
        tracker.close();
        tokio::time::timeout(Duration::from_secs(1), tracker.wait())
            .await
            .expect("the worker stops promptly");
        let n = fake.log().len();
        assert!(n < 10, "{n} calls");
    }

    #[test]
    fn zero_days_turns_retention_off() {
        assert!(Settings::from_days(0).is_none());
        let s = Settings::from_days(30).unwrap();
        assert_eq!(s.retention, Duration::from_secs(30 * 86_400));
    }
}
