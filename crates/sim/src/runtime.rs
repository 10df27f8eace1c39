//! Starting, driving and stopping the simulated venues.

use std::{
    fmt,
    future::Future,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use anyhow::Context;
use axum::Router;
use crossbook_core::{Amount, BookSnapshot, Exchange, IntervalCode, Outcome, TakerSide, Timestamp};
use tokio::{net::TcpListener, time::MissedTickBehavior};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    faults::Faults,
    http::Shared,
    model::{
        Model, STEP_MS, SimRates, SimScale,
        types::{Phase, SimEvent, SimMarket, SimSeries, SimTrade},
    },
    venue_a::{
        self,
        auth::{DEMO_KEY_ID, DEMO_PRIVATE_KEY_PEM, Verifier},
    },
    venue_b,
};

/// How model time advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimClock {
    /// Model time is the wall clock, stepped every `tick` (the data looks live).
    Wall { tick: Duration },
    /// Model time starts at `start` and moves only when [`SimHandle::advance`] is called: tests drive
    /// minutes of market activity without waiting.
    Manual { start: Timestamp },
}

impl Default for SimClock {
    fn default() -> Self {
        SimClock::Wall {
            tick: Duration::from_millis(STEP_MS as u64),
        }
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Seed of the market model: the same seed lists the same markets under the same ids.
    pub seed: u64,
    /// Listening address of venue_a (port 0 = any free port).
    pub venue_a_addr: SocketAddr,
    /// Listening address of venue_b (port 0 = any free port).
    pub venue_b_addr: SocketAddr,
    pub clock: SimClock,
    /// How much the venues list (`demo` by default).
    pub scale: SimScale,
    /// Book-change rates of the full scale (unused at the demo scale).
    pub rates: SimRates,
}

impl Default for SimConfig {
    fn default() -> Self {
        let any: SocketAddr = ([127, 0, 0, 1], 0).into();
        SimConfig {
            seed: 42,
            venue_a_addr: any,
            venue_b_addr: any,
            clock: SimClock::default(),
            scale: SimScale::Demo,
            rates: SimRates::default(),
        }
    }
}

impl SimConfig {
    /// Ephemeral loopback ports with the given seed and clock.
    pub fn new(seed: u64, clock: SimClock) -> Self {
        SimConfig {
            seed,
            clock,
            ..SimConfig::default()
        }
    }
}

/// Base URLs of the simulated venues, named like the `crossbook` configuration keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimUrls {
    /// `http://HOST:PORT/trade-api/v2`
    pub venue_a_rest_url: String,
    /// `ws://HOST:PORT/trade-api/ws/v2`
    pub venue_a_ws_url: String,
    /// `http://HOST:PORT/gamma`
    pub venue_b_gamma_url: String,
    /// `http://HOST:PORT/clob`
    pub venue_b_clob_url: String,
    /// `http://HOST:PORT/data`
    pub venue_b_data_url: String,
    /// `ws://HOST:PORT/ws/market` (the market channel itself, like the live URL)
    pub venue_b_ws_url: String,
    /// Key id the venue_a handshake accepts.
    pub venue_a_key_id: String,
    /// PEM file of the matching private key.
    pub venue_a_private_key_file: PathBuf,
}

impl SimUrls {
    fn new(a: SocketAddr, b: SocketAddr, key_file: PathBuf) -> Self {
        SimUrls {
            venue_a_rest_url: format!("http://{a}/trade-api/v2"),
            venue_a_ws_url: format!("ws://{a}{}", venue_a::auth::WS_PATH),
            venue_b_gamma_url: format!("http://{b}/gamma"),
            venue_b_clob_url: format!("http://{b}/clob"),
            venue_b_data_url: format!("http://{b}/data"),
            venue_b_ws_url: format!("ws://{b}/ws/market"),
            venue_a_key_id: DEMO_KEY_ID.to_string(),
            venue_a_private_key_file: key_file,
        }
    }
}

impl SimUrls {
    /// The settings that make `crossbook serve` ingest everything these venues list: their URLs and demo key
    /// (the [`Display`](fmt::Display) lines) with the series filters cleared. `crossbook simulate` prints it and
    /// `serve --simulate` merges it into its configuration.
    pub fn config_toml(&self) -> String {
        format!("{self}venue_a_series = \"\"\nvenue_b_series = \"\"\n")
    }
}

/// One `key = "value"` line per setting: valid TOML for `crossbook --config`.
impl fmt::Display for SimUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key_file = self.venue_a_private_key_file.display().to_string();
        let lines = [
            ("venue_a_rest_url", self.venue_a_rest_url.as_str()),
            ("venue_a_ws_url", &self.venue_a_ws_url),
            ("venue_a_key_id", &self.venue_a_key_id),
            ("venue_a_private_key_file", &key_file),
            ("venue_b_gamma_url", &self.venue_b_gamma_url),
            ("venue_b_clob_url", &self.venue_b_clob_url),
            ("venue_b_data_url", &self.venue_b_data_url),
            ("venue_b_ws_url", &self.venue_b_ws_url),
        ];
        for (k, v) in lines {
            writeln!(f, "{k} = {}", serde_json::Value::from(v))?;
        }
        Ok(())
    }
}

/// Entry point.
pub struct Simulator;

impl Simulator {
    /// Binds both venues, starts serving, and (with the wall clock) starts the tick task. Must be called
    /// inside a Tokio runtime.
    pub async fn start(cfg: SimConfig) -> anyhow::Result<SimHandle> {
        let now = match cfg.clock {
            SimClock::Wall { .. } => Timestamp::now(),
            SimClock::Manual { start } => start,
        };
        cfg.rates
            .validate()
            .map_err(|e| anyhow::anyhow!("simulator rates: {e}"))?;
        let cancel = CancellationToken::new();
        let shared = Shared::new(
            Model::with_scale(cfg.seed, now, cfg.scale, cfg.rates),
            Faults::default(),
            cancel.clone(),
            Verifier::demo()?,
        );
        let la = TcpListener::bind(cfg.venue_a_addr)
            .await
            .with_context(|| format!("binding venue_a on {}", cfg.venue_a_addr))?;
        let lb = TcpListener::bind(cfg.venue_b_addr)
            .await
            .with_context(|| format!("binding venue_b on {}", cfg.venue_b_addr))?;
        let urls = SimUrls::new(la.local_addr()?, lb.local_addr()?, private_key_file()?);
        let tasks = TaskTracker::new();
        tasks.spawn(serve(la, venue_a::router(shared.clone()), cancel.clone()));
        tasks.spawn(serve(lb, venue_b::router(shared.clone()), cancel.clone()));
        if let SimClock::Wall { tick } = cfg.clock {
            tasks.spawn(tick_task(shared.clone(), tick));
        }
        tasks.close();
        tracing::info!(seed = cfg.seed, scale = %cfg.scale, venue_a = %urls.venue_a_rest_url, venue_b = %urls.venue_b_gamma_url,
            "simulated venues started");
        Ok(SimHandle {
            shared,
            urls,
            tasks,
            cancel,
            manual: matches!(cfg.clock, SimClock::Manual { .. }),
        })
    }
}

async fn serve(listener: TcpListener, router: Router, cancel: CancellationToken) {
    if let Err(e) = axum::serve(listener, router)
        .with_graceful_shutdown(cancel.cancelled_owned())
        .await
    {
        tracing::error!(error = %e, "simulated venue server failed");
    }
}

/// Steps the model with the wall clock until cancelled.
async fn tick_task(shared: Arc<Shared>, tick: Duration) {
    let mut every = tokio::time::interval(tick);
    every.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = shared.cancel.cancelled() => return,
            _ = every.tick() => shared.step(Timestamp::now()),
        }
    }
}

/// The demo private key as a file: the fixture in the source tree when present, otherwise a copy of the
/// compiled-in PEM in the temporary directory (so an installed binary works anywhere).
fn private_key_file() -> anyhow::Result<PathBuf> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/venue_a_demo_key.pem");
    if fixture.is_file() {
        return Ok(fixture);
    }
    let path = std::env::temp_dir().join(format!("crossbook-sim-{}-venue_a_demo_key.pem", std::process::id()));
    std::fs::write(&path, DEMO_PRIVATE_KEY_PEM).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Ids of the simulated catalog that a start-up banner can show (each `None` when the catalog has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TourIds {
    /// An open venue_a market ticker (the 24 h BTC window when there is one).
    pub venue_a_market: Option<String>,
    /// Its event ticker.
    pub venue_a_event: Option<String>,
    /// An open venue_b condition id (the 24 h BTC window when there is one).
    pub venue_b_market: Option<String>,
    /// A game listed on both venues: venue_a ticker, venue_b condition id, and a team name that finds both
    /// in search.
    pub pair: Option<(String, String, String)>,
}

/// A running simulator. Dropping it stops the venues (without waiting); [`SimHandle::shutdown`] stops them
/// and waits until every task has finished.
pub struct SimHandle {
    shared: Arc<Shared>,
    urls: SimUrls,
    tasks: TaskTracker,
    cancel: CancellationToken,
    manual: bool,
}

impl SimHandle {
    /// Every base URL and the venue_a demo credentials.
    pub fn urls(&self) -> &SimUrls {
        &self.urls
    }
    pub fn venue_a_rest_url(&self) -> &str {
        &self.urls.venue_a_rest_url
    }
    pub fn venue_a_ws_url(&self) -> &str {
        &self.urls.venue_a_ws_url
    }
    pub fn venue_b_gamma_url(&self) -> &str {
        &self.urls.venue_b_gamma_url
    }
    pub fn venue_b_clob_url(&self) -> &str {
        &self.urls.venue_b_clob_url
    }
    pub fn venue_b_data_url(&self) -> &str {
        &self.urls.venue_b_data_url
    }
    pub fn venue_b_ws_url(&self) -> &str {
        &self.urls.venue_b_ws_url
    }
    /// Key id the venue_a WebSocket handshake accepts.
    pub fn venue_a_key_id(&self) -> &str {
        &self.urls.venue_a_key_id
    }
    /// PEM file (PKCS#8) of the private key the venue_a handshake must be signed with.
    pub fn venue_a_private_key_file(&self) -> &Path {
        &self.urls.venue_a_private_key_file
    }
    /// The same private key as PEM text.
    pub fn venue_a_private_key_pem(&self) -> &'static str {
        DEMO_PRIVATE_KEY_PEM
    }
    /// Series ids the simulator lists on a venue (venue_a tickers, venue_b series slugs), for the
    /// connectors' series filters.
    pub fn series_ids(&self, ex: Exchange) -> Vec<String> {
        self.shared.model().series_of(ex).map(|s| s.series_id.clone()).collect()
    }

    /// The fault switches.
    pub fn faults(&self) -> Faults {
        self.shared.faults.clone()
    }

    /// Runs `f` with read access to the model (keep it short: the venues wait for the lock).
    pub fn with_model<T>(&self, f: impl FnOnce(&Model) -> T) -> T {
        f(&self.shared.model())
    }
    /// The book a venue would send now: venue_a by ticker, venue_b by token id (or condition id for the
    /// first token). Ladders best first; see [`Model::book_snapshot`].
    pub fn book(&self, ex: Exchange, id: &str) -> Option<BookSnapshot> {
        self.shared.model().book_snapshot(ex, id)
    }
    /// Real ids of the current catalog for a start-up tour: see [`TourIds`].
    pub fn tour_ids(&self) -> TourIds {
        let model = self.shared.model();
        let open = |ex| model.markets(ex).filter(|m| m.phase == Phase::Open).collect::<Vec<_>>();
        let (a, b) = (open(Exchange::VenueA), open(Exchange::VenueB));
        // The 24 h BTC window stays open longest, so the examples keep working for a while.
        let day_window = |ms: &[&SimMarket]| {
            ms.iter()
                .find(|m| m.interval == Some(IntervalCode::H24))
                .or_else(|| ms.first())
                .map(|m| (m.market_id.clone(), m.event_id.clone()))
        };
        let venue_a = day_window(&a);
        // A game listed on both venues: venue_a's market whose YES is the venue_b market's YES (the away
        // team's), both open, so the service pairs them (and `crossbook pairs add` accepts them).
        let pair = a
            .iter()
            .filter(|m| m.category == crossbook_core::Category::Sports && !m.inverted)
            .find_map(|ma| {
                let mb = b.iter().find(|mb| mb.pair == ma.pair)?;
                Some((ma.market_id.clone(), mb.market_id.clone(), ma.yes_label.clone()))
            });
        TourIds {
            venue_a_market: venue_a.as_ref().map(|(m, _)| m.clone()),
            venue_a_event: venue_a.map(|(_, e)| e),
            venue_b_market: day_window(&b).map(|(m, _)| m),
            pair,
        }
    }
    pub fn markets(&self, ex: Exchange) -> Vec<SimMarket> {
        self.shared.model().markets(ex).cloned().collect()
    }
    pub fn events(&self, ex: Exchange) -> Vec<SimEvent> {
        self.shared.model().events(ex).cloned().collect()
    }
    pub fn series(&self, ex: Exchange) -> Vec<SimSeries> {
        self.shared.model().series_of(ex).cloned().collect()
    }
    /// Trades of a venue, newest first.
    pub fn trades(&self, ex: Exchange) -> Vec<SimTrade> {
        self.shared.model().trades(ex).iter().cloned().collect()
    }
    /// Whether every change published so far has been written to every socket that follows it (a client
    /// may still be reading it): with the model held, a capture is complete once its reader has caught up
    /// after this.
    pub fn idle(&self) -> bool {
        self.shared.idle()
    }
    /// Model time of the last step.
    pub fn now(&self) -> Timestamp {
        self.shared.model().now()
    }

    /// Executes and publishes a taker trade now (see [`Model::inject_trade`]); `None` when the market does
    /// not trade or the side it needs is empty.
    pub fn inject_trade(
        &self,
        ex: Exchange,
        market_id: &str,
        outcome: Outcome,
        side: TakerSide,
        size: Amount,
    ) -> Option<SimTrade> {
        self.shared
            .mutate(|m| match m.inject_trade(ex, market_id, outcome, side, size) {
                Some(updates) => (m.trades(ex).front().cloned(), updates),
                None => (None, Vec::new()),
            })
    }

    /// Pushes the current BTC `code` window pair apart for `duration` so that YES on `cheap` plus NO on the
    /// other venue nets several cents after fees (see [`Model::force_cross`]). Visible from the next step.
    pub fn force_cross(&self, code: IntervalCode, cheap: Exchange, duration: Duration) -> Option<(String, String)> {
        self.shared
            .mutate(|m| (m.force_cross(code, cheap, duration.as_millis() as i64), Vec::new()))
    }

    /// Moves model time forward by `by` in 200 ms steps, publishing every step, and returns the new model
    /// time. Meant for [`SimClock::Manual`]; with the wall clock the tick task ignores time that the model
    /// is already past, so model time would pause until the wall clock catches up.
    pub fn advance(&self, by: Duration) -> Timestamp {
        if !self.manual {
            tracing::warn!("SimHandle::advance with the wall clock: model time runs ahead of the clock");
        }
        let target = self.now().millis() + by.as_millis() as i64;
        loop {
            let t = (self.now().millis() + STEP_MS).min(target);
            self.shared.step(Timestamp::from_millis(t));
            if t >= target {
                return Timestamp::from_millis(t);
            }
        }
    }

    /// A token that is cancelled when the simulator stops.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Stops both venues (open sockets get a close frame) and waits for every task.
    pub async fn shutdown(self) {
        self.cancel.cancel();
        self.tasks.wait().await;
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Runs the simulated venues until `shutdown` completes, for `crossbook simulate`. Prints the base URLs and
/// the venue_a demo credentials to standard output first, one `key = "value"` line each (TOML the service
/// reads with `--config`), so the caller need not print them.
///
/// ```no_run
/// # async fn demo() -> anyhow::Result<()> {
/// let cfg = crossbook_sim::SimConfig { venue_a_addr: "127.0.0.1:9001".parse()?, ..Default::default() };
/// crossbook_sim::run_standalone(cfg, async {
///     let _ = tokio::signal::ctrl_c().await;
/// })
/// .await
/// # }
/// ```
pub async fn run_standalone(cfg: SimConfig, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    let handle = Simulator::start(cfg).await?;
    print!("{}", handle.urls());
    shutdown.await;
    handle.shutdown().await;
    Ok(())
}
