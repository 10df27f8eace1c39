//! Backtests: one row per run, with the caller's parameters, its status and, once done, its report.
//!
//! A run is created `running`, moves its `updated_at` (and the replay position, `progress_at`) while it works,
//! and ends in one statement that writes its status with its report or its error: a run that fails or is
//! stopped part-way never leaves half a report. Deleting a running run stops it: its next move finds no row,
//! and its end writes nothing. A `running` row whose `updated_at` is older than
//! [`STALLED_AFTER_MS`] belongs to a process that stopped; readers report it as failed.

use crossbook_core::Timestamp;

use crate::{
    StoreError, StoreResult,
    backend::{Backend, Exec},
    codec::Cols,
    sql::Sql,
};

/// A running backtest that has not moved for this long is reported failed: its process stopped.
pub const STALLED_AFTER_MS: i64 = 30_000;

/// Where a backtest stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BacktestStatus {
    Running,
    Done,
    Failed,
}

impl BacktestStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            BacktestStatus::Running => "running",
            BacktestStatus::Done => "done",
            BacktestStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> StoreResult<Self> {
        [BacktestStatus::Running, BacktestStatus::Done, BacktestStatus::Failed]
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| StoreError::Config(format!("unknown backtest status {s:?} in the database")))
    }
}

/// A stored backtest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBacktest {
    pub id: String,
    pub customer_id: i64,
    /// The parameters as the run read them (JSON).
    pub params: String,
    /// As stored; see [`StoredBacktest::status_at`] for what a reader reports.
    pub status: BacktestStatus,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    /// How far the replay has gone.
    pub progress_at: Option<Timestamp>,
    pub error: Option<String>,
    /// The report (JSON), once done; left out of lists.
    pub report: Option<Vec<u8>>,
}

impl StoredBacktest {
    /// The status at `now`: a running row that stopped moving is failed.
    pub fn status_at(&self, now: Timestamp) -> BacktestStatus {
        match self.status {
            BacktestStatus::Running if now.millis() - self.updated_at.millis() > STALLED_AFTER_MS => {
                BacktestStatus::Failed
            }
            s => s,
        }
    }
}

/// The backtests concern.
#[async_trait::async_trait]
pub trait BacktestStore: Send + Sync {
    /// Records a new run, `running`.
    async fn create_backtest(&self, id: &str, customer_id: i64, params: &str, at: Timestamp) -> StoreResult<()>;

    /// One run (with its report); `None` when there is no such run.
    async fn backtest(&self, id: &str) -> StoreResult<Option<StoredBacktest>>;

    /// A customer's runs, newest first, without their reports.
    async fn customer_backtests(&self, customer_id: i64, limit: u32) -> StoreResult<Vec<StoredBacktest>>;

    /// A customer's runs that are running and moved after `since`.
    async fn running_backtests(&self, customer_id: i64, since: Timestamp) -> StoreResult<u64>;

    /// Moves a running run on: it is alive at `at` and its replay has reached `progress_at`. `false` when the
    /// run is no longer there to move (deleted, or already ended): the run should stop.
    async fn backtest_progress(&self, id: &str, progress_at: Timestamp, at: Timestamp) -> StoreResult<bool>;

    /// Ends a running run in one statement: `done` with its report, or `failed` with why. `false` when there was
    /// no running run to end (it was deleted, or had ended): nothing is written.
    async fn finish_backtest(&self, id: &str, outcome: Result<&[u8], &str>, at: Timestamp) -> StoreResult<bool>;

    /// Deletes a run, running or not; `false` when there was none. A running run then writes nothing more.
    async fn delete_backtest(&self, id: &str) -> StoreResult<bool>;
}

const COLS: &str = "id, customer_id, params, status, created_at, updated_at, finished_at, progress_at, error";

fn row(r: &impl Cols, with_report: bool) -> StoreResult<StoredBacktest> {
    Ok(StoredBacktest {
        id: r.text("id")?,
        customer_id: r.int("customer_id")?,
        params: r.text("params")?,
        status: BacktestStatus::parse(&r.text("status")?)?,
        created_at: Timestamp::from_millis(r.int("created_at")?),
        updated_at: Timestamp::from_millis(r.int("updated_at")?),
        finished_at: r.opt_int("finished_at")?.map(Timestamp::from_millis),
        progress_at: r.opt_int("progress_at")?.map(Timestamp::from_millis),
        error: r.opt_text("error")?,
        report: if with_report { r.opt_bytes("report")? } else { None },
    })
}

async fn create_backtest<E: Exec>(ex: &E, id: &str, customer_id: i64, params: &str, at: Timestamp) -> StoreResult<()> {
    let mut s = Sql::new("INSERT INTO backtests (id, customer_id, params, status, created_at, updated_at) VALUES (");
    s.text(id)
        .push(", ")
        .int(customer_id)
        .push(", ")
        .text(params)
        .push(", ")
        .text(BacktestStatus::Running.as_str())
        .push(", ")
        .int(at.millis())
        .push(", ")
        .int(at.millis())
        .push(")");
    ex.exec(&s).await.map(|_| ())
}

async fn backtest<E: Exec>(ex: &E, id: &str) -> StoreResult<Option<StoredBacktest>> {
    let mut s = Sql::new(&format!("SELECT {COLS}, report FROM backtests WHERE id = "));
    s.text(id);
    ex.rows(&s).await?.iter().map(|r| row(r, true)).next().transpose()
}

async fn customer_backtests<E: Exec>(ex: &E, customer_id: i64, limit: u32) -> StoreResult<Vec<StoredBacktest>> {
    let mut s = Sql::new(&format!("SELECT {COLS} FROM backtests WHERE customer_id = "));
    s.int(customer_id)
        .push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .int(i64::from(limit));
    ex.rows(&s).await?.iter().map(|r| row(r, false)).collect()
}

async fn running_backtests<E: Exec>(ex: &E, customer_id: i64, since: Timestamp) -> StoreResult<u64> {
    let mut s = Sql::new("SELECT count(*) AS n FROM backtests WHERE customer_id = ");
    s.int(customer_id)
        .push(" AND status = ")
        .text(BacktestStatus::Running.as_str())
        .push(" AND updated_at > ")
        .int(since.millis());
    let n = ex.rows(&s).await?.first().map(|r| r.int("n")).transpose()?.unwrap_or(0);
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The `WHERE` of a write to a run that only applies while it runs: a finished run is never changed again.
fn while_running(s: &mut Sql, id: &str) {
    s.push("WHERE id = ")
        .text(id)
        .push(" AND status = ")
        .text(BacktestStatus::Running.as_str());
}

async fn backtest_progress<E: Exec>(ex: &E, id: &str, progress_at: Timestamp, at: Timestamp) -> StoreResult<bool> {
    let mut s = Sql::new("UPDATE backtests SET progress_at = ");
    s.int(progress_at.millis())
        .push(", updated_at = ")
        .int(at.millis())
        .push(" ");
    while_running(&mut s, id);
    Ok(ex.exec(&s).await? > 0)
}

async fn finish_backtest<E: Exec>(ex: &E, id: &str, outcome: Result<&[u8], &str>, at: Timestamp) -> StoreResult<bool> {
    let (status, report, error) = match outcome {
        Ok(r) => (BacktestStatus::Done, Some(r), None),
        Err(e) => (BacktestStatus::Failed, None, Some(e)),
    };
    let mut s = Sql::new("UPDATE backtests SET status = ");
    s.text(status.as_str())
        .push(", report = ")
        .opt_bytes(report)
        .push(", error = ");
    match error {
        Some(e) => s.text(e),
        None => s.push("NULL"),
    };
    s.push(", finished_at = ")
        .int(at.millis())
        .push(", updated_at = ")
        .int(at.millis())
        .push(" ");
    while_running(&mut s, id);
    Ok(ex.exec(&s).await? > 0)
}

async fn delete_backtest<E: Exec>(ex: &E, id: &str) -> StoreResult<bool> {
    let mut s = Sql::new("DELETE FROM backtests WHERE id = ");
    s.text(id);
    Ok(ex.exec(&s).await? > 0)
}

/// Reads on the reader pool, writes on the writer.
#[async_trait::async_trait]
impl<B: Backend> BacktestStore for B {
    async fn create_backtest(&self, id: &str, customer_id: i64, params: &str, at: Timestamp) -> StoreResult<()> {
        create_backtest(self.writer(), id, customer_id, params, at).await
    }

    async fn backtest(&self, id: &str) -> StoreResult<Option<StoredBacktest>> {
        backtest(self.reader(), id).await
    }

    async fn customer_backtests(&self, customer_id: i64, limit: u32) -> StoreResult<Vec<StoredBacktest>> {
        customer_backtests(self.reader(), customer_id, limit).await
    }

    async fn running_backtests(&self, customer_id: i64, since: Timestamp) -> StoreResult<u64> {
        // On the writer, where the run a request just created is already visible.
        running_backtests(self.writer(), customer_id, since).await
    }

    async fn backtest_progress(&self, id: &str, progress_at: Timestamp, at: Timestamp) -> StoreResult<bool> {
        backtest_progress(self.writer(), id, progress_at, at).await
    }

    async fn finish_backtest(&self, id: &str, outcome: Result<&[u8], &str>, at: Timestamp) -> StoreResult<bool> {
        finish_backtest(self.writer(), id, outcome, at).await
    }

    async fn delete_backtest(&self, id: &str) -> StoreResult<bool> {
        delete_backtest(self.writer(), id).await
    }
}
