//! Retention, in the background, without holding up ingestion or reads:
//!
//! - order-book snapshots and book-log chunks older than `retention_days` (default 30; 0 keeps them) are
//!   removed;
//! - the webhook delivery log is bounded: per registration, the newest [`DELIVERY_LOG_KEEP`] (100) attempts
//!   and nothing older than `webhook_delivery_log_days` (default 30; 0 keeps them). Each batch the dispatcher
//!   logs already trims its registrations to the newest 100 (see [`crossbook_store::webhooks`]); this pass
//!   adds the age bound and catches registrations no batch touched.
//!
//! A pass runs at start and then every [`Settings::period`]:
//!
//! 1. Snapshots (unless `retention_days` is 0). PostgreSQL: creates the daily snapshot partitions of today and
//!    the next [`PARTITIONS_AHEAD_DAYS`] days, so that inserts never wait for one (a no-op on SQLite). Then
//!    calls [`SnapshotStore::prune_snapshots`] until it reports `done`. SQLite deletes at most
//!    [`Settings::batch_rows`] of the oldest rows per call, each call its own short transaction on the single
//!    writer, with a pause between calls so that ingestion's inserts interleave. PostgreSQL detaches
//!    (`CONCURRENTLY`) and drops the daily partitions that ended before the cutoff in one call. The book log's
//!    chunks follow, the same way ([`BookLogStore::prepare_log`], [`BookLogStore::prune_log`]).
//! 2. Delivery log (unless both of its bounds are 0). Calls [`WebhookStore::prune_deliveries`] until it reports
//!    `done`, the same way on both backends: at most [`Settings::batch_rows`] rows per call, one short indexed
//!    delete per registration, a pause between calls.
//!
//! Reads never wait: SQLite readers use WAL snapshots, PostgreSQL readers are not blocked by
//! `DETACH … CONCURRENTLY` or row deletes. A failed part is logged and retried at the next period; the other
//! part still runs.

use std::{sync::Arc, time::Duration};

use crossbook_core::Timestamp;
use crossbook_store::{BookLogStore, DAY_MS, SnapshotStore, StoreResult, WebhookStore, webhooks::DELIVERY_LOG_KEEP};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{AppState, config::Config};

/// Days after today whose PostgreSQL partitions a pass creates ahead of time.
pub const PARTITIONS_AHEAD_DAYS: i64 = 2;

/// How the worker runs.
#[derive(Clone)]
pub struct Settings {
    /// Snapshots older than this are removed; `None` keeps them.
    pub retention: Option<Duration>,
    /// Delivery-log attempts kept per registration, newest first (0: no count limit).
    pub delivery_log_keep: u32,
    /// Delivery-log attempts older than this are removed; `None` keeps them.
    pub delivery_log_age: Option<Duration>,
    /// Time between two passes.
    pub period: Duration,
    /// Rows per delete (SQLite snapshots; the delivery log on both backends).
    pub batch_rows: u32,
    /// Pause between two deletes of one pass.
    pub pause: Duration,
    /// The current time (a parameter so tests control it).
    pub clock: Arc<dyn Fn() -> Timestamp + Send + Sync>,
}

fn days(d: u32) -> Option<Duration> {
    (d > 0).then(|| Duration::from_secs(u64::from(d) * 86_400))
}

impl Settings {
    /// The service's settings: snapshots kept `retention_days`, delivery logs bounded to `delivery_log_keep`
    /// attempts and `delivery_log_days`; `None` when all three are 0 (nothing to remove).
    pub fn new(retention_days: u32, delivery_log_keep: u32, delivery_log_days: u32) -> Option<Settings> {
        let s = Settings {
            retention: days(retention_days),
            delivery_log_keep,
            delivery_log_age: days(delivery_log_days),
            period: Duration::from_secs(3_600),
            batch_rows: 5_000,
            pause: Duration::from_millis(20),
            clock: Arc::new(Timestamp::now),
        };
        (s.prunes_snapshots() || s.prunes_delivery_log()).then_some(s)
    }

    /// [`Settings::new`] from the configuration: the delivery log is always bounded to [`DELIVERY_LOG_KEEP`]
    /// attempts per registration, so there is always something to do.
    pub fn from_config(c: &Config) -> Settings {
        Settings::new(c.retention_days, DELIVERY_LOG_KEEP as u32, c.webhook_delivery_log_days)
            .expect("a count bound is always set")
    }

    /// Snapshot retention of `days` only (the delivery log is left alone); `None` when `days` is 0.
    pub fn from_days(days: u32) -> Option<Settings> {
        Settings::new(days, 0, 0)
    }

    fn prunes_snapshots(&self) -> bool {
        self.retention.is_some()
    }

    fn prunes_delivery_log(&self) -> bool {
        self.delivery_log_keep > 0 || self.delivery_log_age.is_some()
    }
}

/// What one pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Snapshot rows deleted one by one (SQLite).
    pub rows: u64,
    /// Snapshot partitions dropped (PostgreSQL).
    pub partitions: u64,
    /// Snapshot prune calls made.
    pub steps: u32,
    /// Book-log chunks deleted one by one (SQLite).
    pub log_rows: u64,
    /// Book-log partitions dropped (PostgreSQL).
    pub log_partitions: u64,
    /// Delivery-log attempts deleted.
    pub delivery_rows: u64,
    /// Delivery-log prune calls made.
    pub delivery_steps: u32,
}

/// Starts the worker for the service's configuration. It always runs: the delivery log is always bounded.
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) {
    let settings = Settings::from_config(&state.config);
    if !settings.prunes_snapshots() {
        tracing::info!("snapshot retention is off (retention_days = 0)");
    }
    spawn_with(state.store.clone(), settings, tracker, cancel);
}

/// Starts the worker over any store of snapshots and webhooks.
pub fn spawn_with<S: SnapshotStore + BookLogStore + WebhookStore + ?Sized + 'static>(
    store: Arc<S>,
    settings: Settings,
    tracker: &TaskTracker,
    cancel: &CancellationToken,
) {
    let cancel = cancel.clone();
    tracker.spawn(async move { run(store.as_ref(), &settings, &cancel).await });
}

async fn run<S: SnapshotStore + BookLogStore + WebhookStore + ?Sized>(
    store: &S,
    settings: &Settings,
    cancel: &CancellationToken,
) {
    loop {
        let mut r = PassReport::default();
        if let Err(e) = snapshot_pass(store, settings, cancel, &mut r).await {
            tracing::warn!(error = %e, "snapshot retention pass failed; retrying at the next period");
        }
        if r.rows > 0 || r.partitions > 0 || r.log_rows > 0 || r.log_partitions > 0 {
            tracing::info!(
                rows = r.rows,
                partitions = r.partitions,
                log_chunks = r.log_rows,
                log_partitions = r.log_partitions,
                "removed expired order-book history"
            );
        }
        if let Err(e) = delivery_log_pass(store, settings, cancel, &mut r).await {
            tracing::warn!(error = %e, "webhook delivery-log pruning failed; retrying at the next period");
        }
        if r.delivery_rows > 0 {
            tracing::info!(rows = r.delivery_rows, "pruned the webhook delivery log");
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(settings.period) => {}
        }
    }
}

/// One pass: snapshots, then the delivery log (each only when configured). Both parts run; the first error is
/// returned.
pub async fn pass<S: SnapshotStore + BookLogStore + WebhookStore + ?Sized>(
    store: &S,
    settings: &Settings,
    cancel: &CancellationToken,
) -> StoreResult<PassReport> {
    let mut report = PassReport::default();
    let snapshots = snapshot_pass(store, settings, cancel, &mut report).await;
    let deliveries = delivery_log_pass(store, settings, cancel, &mut report).await;
    snapshots.and(deliveries).map(|()| report)
}

/// The cutoff `age` before now.
fn cutoff(now: Timestamp, age: Duration) -> Timestamp {
    let ms = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
    Timestamp::from_millis(now.millis().saturating_sub(ms))
}

/// Prepares the coming days' snapshot and book-log storage, then prunes both until done (or cancelled).
async fn snapshot_pass<S: SnapshotStore + BookLogStore + ?Sized>(
    store: &S,
    settings: &Settings,
    cancel: &CancellationToken,
    report: &mut PassReport,
) -> StoreResult<()> {
    let Some(retention) = settings.retention else {
        return Ok(());
    };
    let now = (settings.clock)();
    let ahead = Timestamp::from_millis(now.millis().saturating_add(PARTITIONS_AHEAD_DAYS * DAY_MS));
    store.prepare_snapshots(now, ahead).await?;
    let cutoff = cutoff(now, retention);
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
    store.prepare_log(now, ahead).await?;
    while !cancel.is_cancelled() {
        let step = store.prune_log(cutoff, settings.batch_rows).await?;
        report.log_rows += step.rows;
        report.log_partitions += step.partitions;
        if step.done {
            break;
        }
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(settings.pause) => {}
        }
    }
    Ok(())
}

/// Prunes the webhook delivery log until done (or cancelled).
async fn delivery_log_pass<S: WebhookStore + ?Sized>(
    store: &S,
    settings: &Settings,
    cancel: &CancellationToken,
    report: &mut PassReport,
) -> StoreResult<()> {
    if !settings.prunes_delivery_log() {
        return Ok(());
    }
    let before = settings.delivery_log_age.map(|age| cutoff((settings.clock)(), age));
    while !cancel.is_cancelled() {
        let step = store
            .prune_deliveries(settings.delivery_log_keep, before, settings.batch_rows)
            .await?;
        report.delivery_rows += step.rows;
        report.delivery_steps += 1;
        if step.done {
            break;
        }
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(settings.pause) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use crossbook_core::BookSnapshot;
    use crossbook_store::{
        BookHistoryQuery, Compacted, Delivery, LogHead, LogRead, LogRun, NewDelivery, Pruned, StoreError, Webhook,
        WebhookKind,
    };
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
        /// Delivery-log prune steps left before `done`, per pass.
        delivery_steps_per_pass: u32,
        delivery_left: Mutex<u32>,
    }

    impl Fake {
        fn new(steps_per_pass: u32) -> Self {
            Fake::with_delivery_steps(steps_per_pass, 1)
        }
        fn with_delivery_steps(steps_per_pass: u32, delivery_steps_per_pass: u32) -> Self {
            Fake {
                steps_per_pass,
                left: Mutex::new(steps_per_pass),
                delivery_steps_per_pass,
                delivery_left: Mutex::new(delivery_steps_per_pass),
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
    impl SnapshotStore for Fake {
        async fn insert_snapshots(&self, _: &[BookSnapshot]) -> StoreResult<()> {
            Ok(())
        }
        async fn snapshots(&self, _: &BookHistoryQuery) -> StoreResult<Vec<BookSnapshot>> {
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

    /// The book log has nothing to remove here: its retention is tested in the store, on both backends.
    #[async_trait::async_trait]
    impl BookLogStore for Fake {
        async fn register_log_books(&self, _: &[crossbook_core::book::BookKey]) -> StoreResult<Vec<LogHead>> {
            unreachable!("retention never writes the log")
        }
        async fn log_heads(&self, _: crossbook_core::Exchange) -> StoreResult<Vec<LogHead>> {
            unreachable!("retention never reads the log's heads")
        }
        async fn append_log(&self, _: &[LogRun]) -> StoreResult<()> {
            unreachable!("retention never writes the log")
        }
        async fn log_events(
            &self,
            _: &crossbook_core::book::BookKey,
            _: Timestamp,
            _: Timestamp,
        ) -> StoreResult<LogRead> {
            unreachable!("retention never reads the log")
        }
        async fn log_after(
            &self,
            _: &crossbook_core::book::BookKey,
            _: u64,
            _: Timestamp,
            _: Timestamp,
            _: u32,
        ) -> StoreResult<crossbook_store::LogPage> {
            unreachable!("retention never reads the log")
        }
        async fn log_gaps(
            &self,
            _: &crossbook_core::book::BookKey,
            _: Timestamp,
            _: Timestamp,
        ) -> StoreResult<Vec<crossbook_store::StoredGap>> {
            unreachable!("retention never reads the log")
        }
        async fn log_outline(
            &self,
            _: &crossbook_core::book::BookKey,
            _: Timestamp,
            _: Timestamp,
            _: bool,
        ) -> StoreResult<crossbook_store::LogOutline> {
            unreachable!("retention never reads the log")
        }
        async fn log_ends(
            &self,
            _: &crossbook_core::book::BookKey,
            _: &[Timestamp],
        ) -> StoreResult<Vec<crossbook_store::ChunkEnd>> {
            unreachable!("retention never reads the log")
        }
        async fn log_first(&self, _: &crossbook_core::book::BookKey) -> StoreResult<Option<Timestamp>> {
            unreachable!("retention never reads the log")
        }
        async fn compact_log(&self, _: Timestamp, _: i64, _: u32) -> StoreResult<Compacted> {
            unreachable!("compaction is the ingest side's")
        }
        async fn prune_log(&self, _: Timestamp, _: u32) -> StoreResult<Pruned> {
            Ok(Pruned {
                done: true,
                ..Pruned::default()
            })
        }
        async fn prepare_log(&self, _: Timestamp, _: Timestamp) -> StoreResult<()> {
            Ok(())
        }
    }

    #[async_trait::async_trait]
    impl WebhookStore for Fake {
        async fn create_webhook(
            &self,
            _: i64,
            _: WebhookKind,
            _: &str,
            _: &str,
            _: bool,
            _: Timestamp,
        ) -> StoreResult<Option<Webhook>> {
            unreachable!()
        }
        async fn webhook(&self, _: i64, _: WebhookKind) -> StoreResult<Option<Webhook>> {
            unreachable!()
        }
        async fn customer_webhooks(&self, _: i64) -> StoreResult<Vec<Webhook>> {
            unreachable!()
        }
        async fn update_webhook(
            &self,
            _: i64,
            _: WebhookKind,
            _: &str,
            _: Option<bool>,
            _: Timestamp,
        ) -> StoreResult<Option<Webhook>> {
            unreachable!()
        }
        async fn delete_webhook(&self, _: i64, _: WebhookKind) -> StoreResult<bool> {
            unreachable!()
        }
        async fn enabled_webhooks(&self) -> StoreResult<Vec<Webhook>> {
            unreachable!()
        }
        async fn record_deliveries(&self, _: &[NewDelivery]) -> StoreResult<()> {
            unreachable!()
        }
        async fn deliveries(&self, _: i64, _: u32) -> StoreResult<Vec<Delivery>> {
            unreachable!()
        }
        async fn prune_deliveries(&self, keep: u32, before: Option<Timestamp>, max_rows: u32) -> StoreResult<Pruned> {
            self.record(format!(
                "deliveries {keep} {} {max_rows}",
                before.map_or("-".to_string(), |t| t.millis().to_string())
            ));
            let mut left = self.delivery_left.lock().unwrap();
            *left -= 1;
            let done = *left == 0;
            if done {
                *left = self.delivery_steps_per_pass;
            }
            Ok(Pruned {
                rows: u64::from(max_rows),
                partitions: 0,
                done,
            })
        }
    }

    /// Snapshot retention only (the delivery log is left alone).
    fn settings() -> Settings {
        Settings {
            retention: Some(Duration::from_secs(30 * 86_400)),
            delivery_log_keep: 0,
            delivery_log_age: None,
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

    /// The delivery log only: the newest 1000 per registration, 30 days.
    fn delivery_log_settings() -> Settings {
        Settings {
            retention: None,
            delivery_log_keep: 1_000,
            delivery_log_age: Some(Duration::from_secs(30 * 86_400)),
            ..settings()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_delivery_log_is_pruned_in_steps_every_period_without_snapshot_retention() {
        let fake = Arc::new(Fake::with_delivery_steps(1, 3));
        let (tracker, cancel) = (TaskTracker::new(), CancellationToken::new());
        let started = Instant::now();
        spawn_with(fake.clone(), delivery_log_settings(), &tracker, &cancel);

        until_calls(&fake, 3).await;
        let step = format!("deliveries 1000 {} 100", NOW - 30 * DAY_MS);
        let pass = [step.clone(), step.clone(), step];
        assert_eq!(fake.log(), pass, "no snapshot calls when retention_days = 0");
        {
            let calls = fake.calls.lock().unwrap();
            assert_eq!(calls[0].0, started);
            assert_eq!(calls[1].0 - calls[0].0, Duration::from_millis(20));
            assert_eq!(calls[2].0 - calls[1].0, Duration::from_millis(20));
        }

        // The next pass one period later.
        tokio::time::advance(Duration::from_secs(3_000)).await;
        tokio::task::yield_now().await;
        assert_eq!(fake.log().len(), 3);
        tokio::time::advance(Duration::from_secs(600)).await;
        until_calls(&fake, 6).await;
        assert_eq!(fake.log()[3..], pass);

        cancel.cancel();
        tracker.close();
        tracker.wait().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_pass_prunes_snapshots_then_the_delivery_log_even_after_a_snapshot_failure() {
        let fake = Arc::new(Fake::with_delivery_steps(2, 2));
        let both = Settings {
            retention: Some(Duration::from_secs(30 * 86_400)),
            delivery_log_age: None,
            ..delivery_log_settings()
        };
        let report = pass(fake.as_ref(), &both, &CancellationToken::new()).await.unwrap();
        let cutoff = NOW - 30 * DAY_MS;
        assert_eq!(
            fake.log(),
            [
                format!("prepare {NOW} {}", NOW + 2 * DAY_MS),
                format!("prune {cutoff} 100"),
                format!("prune {cutoff} 100"),
                "deliveries 1000 - 100".to_string(),
                "deliveries 1000 - 100".to_string(),
            ]
        );
        assert_eq!(
            report,
            PassReport {
                rows: 200,
                partitions: 0,
                steps: 2,
                delivery_rows: 200,
                delivery_steps: 2,
                ..PassReport::default()
            }
        );

        // A failed snapshot part does not stop the delivery log's; the pass reports the failure.
        *fake.fail_next_prepare.lock().unwrap() = true;
        assert!(pass(fake.as_ref(), &both, &CancellationToken::new()).await.is_err());
        assert_eq!(
            fake.log()[5..],
            [
                format!("prepare {NOW} {}", NOW + 2 * DAY_MS),
                "deliveries 1000 - 100".to_string(),
                "deliveries 1000 - 100".to_string(),
            ]
        );
    }

    #[test]
    fn zero_days_turns_retention_off() {
        assert!(Settings::from_days(0).is_none());
        let s = Settings::from_days(30).unwrap();
        assert_eq!(s.retention, Some(Duration::from_secs(30 * 86_400)));
        assert_eq!((s.delivery_log_keep, s.delivery_log_age), (0, None));
    }

    #[test]
    fn settings_follow_the_configuration() {
        let mut c = Config::default();
        let s = Settings::from_config(&c);
        assert_eq!(s.retention, Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(
            (s.delivery_log_keep, s.delivery_log_age),
            (100, Some(Duration::from_secs(30 * 86_400)))
        );
        // Snapshots kept forever: the worker still bounds the delivery log.
        c.retention_days = 0;
        let s = Settings::from_config(&c);
        assert!(s.retention.is_none() && s.prunes_delivery_log());
        c.webhook_delivery_log_days = 0;
        let s = Settings::from_config(&c);
        assert_eq!(
            (s.delivery_log_keep, s.delivery_log_age),
            (100, None),
            "the count bound always holds"
        );
    }
}
