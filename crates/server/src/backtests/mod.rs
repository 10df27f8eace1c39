//! Backtests over the recorded log: the catalog of the range paired as the scanner pairs it, both venues'
//! books replayed in receive-time order by the replay reader ([`crate::export`]), and the core engine
//! ([`crossbook_core::backtest`]) pricing and trading on them. `crossbook backtest` runs one in the
//! foreground; `POST /v1/backtests` ([`spawn`]) runs one in the background and stores its report
//! ([`render`]) in one write when it ends.

pub mod render;
pub mod trades;

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use crossbook_core::{
    Exchange, Price, Status, Timestamp,
    arb::{Listing, PairOverride, pair_markets, scan::DEFAULT_WINDOW_TOLERANCE_SECONDS},
    backtest::{Backtest, BacktestParams, Report, Settlement, Settlements, Update},
};
use crossbook_store::{Store, StoreError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::export::{self, Encoder, Ended, Include, Message, ReplayMarket, ReplayPlan};

/// Why a backtest could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the database failed: {0}")]
    Store(#[from] StoreError),
    #[error("the database failed part-way through the replay")]
    ReplayFailed,
}

/// What a run reads besides the books: the markets open in the range, their recorded outcomes and the
/// operator's pair decisions.
pub struct Catalog {
    /// Each market as it stood in the range: open (the pairing pairs open markets only).
    pub listings: Vec<Listing>,
    pub settlements: Settlements,
    pub overrides: Vec<PairOverride>,
    pub rejected: Vec<PairOverride>,
}

impl Catalog {
    /// The markets open at some time of `[from, to]`, with the operator's overrides and rejections.
    pub async fn load(store: &dyn Store, from: Timestamp, to: Timestamp) -> Result<Catalog, StoreError> {
        let mut listings = store.listings_between(from, to).await?;
        let settlements = settlements(&listings);
        for l in &mut listings {
            l.market.status = Status::Active;
        }
        Ok(Catalog {
            listings,
            settlements,
            overrides: store.pair_overrides().await?.into_iter().map(|o| o.pair).collect(),
            rejected: store.pair_rejections().await?.into_iter().map(|r| r.pair).collect(),
        })
    }
}

/// The recorded outcomes: a closed market whose last price is its payout (1 for the side that won).
fn settlements(listings: &[Listing]) -> Settlements {
    listings
        .iter()
        .filter_map(|l| {
            let m = &l.market;
            let yes_won = match m.last_yes_price {
                Some(p) if p == Price::ONE => true,
                Some(p) if p == Price::ZERO => false,
                _ => return None,
            };
            (m.status == Status::Closed).then_some(())?;
            Some((
                (m.exchange, m.market_id.clone()),
                Settlement {
                    yes_won,
                    at: m.settled_at?,
                },
            ))
        })
        .collect()
}

/// Feeds the replay reader's messages to the engine; it writes no bytes.
struct Feed<'a, 'l> {
    engine: &'a mut Backtest<'l>,
}

impl Encoder for Feed<'_, '_> {
    fn message(&mut self, m: &Message<'_>) {
        match m {
            Message::Snapshot { key, at, ladders, .. } => self.engine.apply(key, *at, Update::Snapshot(ladders)),
            // The reader holds each book whole: the engine takes it as it stands rather than applying changes again.
            Message::Change { key, at, book, .. } => self.engine.apply(key, *at, Update::Snapshot(book)),
            Message::Gap { key, start, .. } => self.engine.apply(key, *start, Update::Gap),
            Message::Trade { .. } => {}
        }
    }
    fn ready(&self) -> usize {
        0
    }
    fn take(&mut self) -> Vec<u8> {
        Vec::new()
    }
    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        Ok(Vec::new())
    }
    fn failed(&mut self, _detail: &str) -> Option<Vec<u8>> {
        None
    }
}

/// Runs one backtest over the store. `progress` gets the time the replay has reached.
pub async fn run(
    store: Arc<dyn Store>,
    params: BacktestParams,
    progress: Option<Arc<AtomicI64>>,
) -> Result<Report, RunError> {
    let catalog = Catalog::load(store.as_ref(), params.from, params.to).await?;
    let settlements = catalog.settlements.clone();
    let pairs: Vec<_> = pair_markets(&catalog.listings, &catalog.overrides, DEFAULT_WINDOW_TOLERANCE_SECONDS)
        .into_iter()
        // As the scanner: a rejected pair, or one whose YES outcomes differ, is not traded.
        .filter(|p| p.skip_reason(|k| catalog.rejected.contains(k)).is_none())
        .collect();
    // The reader breaks ties between books by their order here; a fixed order keeps the report the same.
    let mut markets: BTreeMap<(Exchange, &str), ReplayMarket> = BTreeMap::new();
    for p in &pairs {
        for l in [p.venue_a, p.venue_b] {
            markets
                .entry((l.market.exchange, l.market.market_id.as_str()))
                .or_insert_with(|| ReplayMarket::of(l.market.clone()));
        }
    }
    let markets: Vec<ReplayMarket> = markets.into_values().collect();
    let mut engine = Backtest::new(pairs, settlements, params);
    let plan = ReplayPlan {
        markets,
        from: params.from,
        to: params.to,
        include: Include::BOOKS,
    };
    // The feed writes nothing; the channel only has to stay open.
    let (tx, _rx) = mpsc::channel(1);
    let (ended, _) = export::run_observed(store, plan, Feed { engine: &mut engine }, tx, progress).await;
    match ended {
        Ended::Complete => Ok(engine.finish()),
        Ended::ClientGone | Ended::Failed => Err(RunError::ReplayFailed),
    }
}

/// How often a background run records that it is alive and how far it has come.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Runs a stored backtest in the background: the report (or why it failed) is written in one statement when
/// it ends, and its progress every [`PROGRESS_EVERY`] until then. A run whose row is deleted meanwhile
/// (`DELETE /v1/backtests/{id}`) stops at its next progress write and writes nothing more.
pub fn spawn(store: Arc<dyn Store>, id: String, params: BacktestParams) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let progress = Arc::new(AtomicI64::new(params.from.millis()));
        let stop = CancellationToken::new();
        let beat = {
            let (store, id, progress, stop) = (store.clone(), id.clone(), progress.clone(), stop.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(PROGRESS_EVERY);
                loop {
                    tick.tick().await;
                    let at = Timestamp::from_millis(progress.load(Ordering::Relaxed));
                    match store.backtest_progress(&id, at, Timestamp::now()).await {
                        Ok(true) => {}
                        Ok(false) => {
                            stop.cancel();
                            return;
                        }
                        Err(e) => tracing::warn!(backtest = %id, error = %e, "cannot record a backtest's progress"),
                    }
                }
            })
        };
        let started = std::time::Instant::now();
        let result = tokio::select! {
            r = run(store.clone(), params, Some(progress)) => Some(r),
            () = stop.cancelled() => None,
        };
        beat.abort();
        let Some(result) = result else {
            metrics::counter!("crossbook_backtests_total", "status" => "deleted").increment(1);
            tracing::info!(backtest = %id, "backtest deleted while it ran; stopped");
            return;
        };
        let outcome = match &result {
            Ok(report) => Ok(render::report_bytes(report)),
            Err(e) => Err(e.to_string()),
        };
        let events = result.as_ref().map_or(0, |r| r.events);
        let ending = match &outcome {
            Ok(bytes) => Ok(bytes.as_slice()),
            Err(e) => Err(e.as_str()),
        };
        let status = match (&outcome, store.finish_backtest(&id, ending, Timestamp::now()).await) {
            (_, Err(e)) => {
                tracing::warn!(backtest = %id, error = %e, "cannot store a backtest's end");
                "failed"
            }
            // Deleted as it ended: nothing was written.
            (_, Ok(false)) => "deleted",
            (Ok(_), Ok(true)) => {
                tracing::info!(backtest = %id, events, seconds = started.elapsed().as_secs_f64(), "backtest done");
                "done"
            }
            (Err(e), Ok(true)) => {
                tracing::warn!(backtest = %id, error = %e, "backtest failed");
                "failed"
            }
        };
        metrics::counter!("crossbook_backtests_total", "status" => status).increment(1);
    })
}
