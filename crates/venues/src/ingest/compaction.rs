//! Compaction of the book log: the book writer appends one small chunk per book per flush; this worker
//! merges a book's small chunks, once they are [`COMPACT_AFTER`] old, into chunks as large as the log allows
//! (see `crossbook_store::books`). It runs in the ingesting process only, beside the log's one writer, so two
//! compactors never merge the same chunks.

use std::{sync::Arc, time::Duration};

use crossbook_core::Timestamp;
use crossbook_store::Store;
use tokio_util::sync::CancellationToken;
use tracing::warn;

/// Time between two compaction passes.
pub(crate) const COMPACT_EVERY: Duration = Duration::from_secs(30);
/// How old a small chunk's last event must be before it is merged (late chunks of the same span still come).
pub(crate) const COMPACT_AFTER: Duration = Duration::from_secs(120);
/// Small chunks merged per step (one short write transaction each).
const STEP_CHUNKS: u32 = 2_000;
/// Pause between two steps of a pass, so the writer's appends interleave.
const STEP_PAUSE: Duration = Duration::from_millis(20);

/// The worker: a pass every [`COMPACT_EVERY`] until `cancel`.
pub(super) async fn compactor(store: Arc<dyn Store>, cancel: CancellationToken) {
    compactor_with_clock(store, Timestamp::now, cancel).await
}

/// The worker with the time it reads from `clock` (receive times, as the log's events carry): the benchmark
/// runs it beside a writer fed with generated times, as the service runs it beside the live one.
pub async fn compactor_with_clock(
    store: Arc<dyn Store>,
    clock: impl Fn() -> Timestamp + Send,
    cancel: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(COMPACT_EVERY) => {}
        }
        let older_than = Timestamp::from_millis(clock().millis() - COMPACT_AFTER.as_millis() as i64);
        let mut after = 0;
        loop {
            match store.compact_log(older_than, after, STEP_CHUNKS).await {
                Ok(step) => {
                    metrics::counter!("crossbook_book_log_chunks_compacted_total").increment(step.chunks_in);
                    metrics::counter!("crossbook_book_log_chunks_corrupt_total").increment(step.corrupt);
                    match step.next {
                        Some(next) => after = next,
                        None => break,
                    }
                }
                Err(e) => {
                    warn!(error = %e, "compacting the book log failed; retrying at the next pass");
                    break;
                }
            }
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(STEP_PAUSE) => {}
            }
        }
    }
}
