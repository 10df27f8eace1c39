//! Shared helpers: an in-process app over a real store, a real server on `127.0.0.1:0`, a response type
//! with error-body assertions, the search fixtures, and a probe router built from the server's own
//! extractors and layers for the route groups that have no routes yet.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    Router,
    body::Body,
    http::{HeaderMap, Method, Request, StatusCode},
    routing::{get, post},
};
use crossbook_core::{Amount, Event, Exchange, IntervalCode, Market, Plan, Price, Series, Status, Timestamp};
use crossbook_server::{
    AppState,
    access::{Gate, OptionalKey, RequireKey, RequirePlan, View, groups, plans},
    api::{with_auth, with_common_layers},
    config::Config,
    json::Json,
};
use crossbook_store::{Store, testing::TestDb};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Resp {
    /// The body as JSON (panics with the body when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts a 200 JSON answer and returns the body.
    #[track_caller]
    pub fn ok(&self) -> Value {
        assert_eq!(self.status, StatusCode::OK, "{}", self.text);
        self.json()
    }

    /// Asserts the error body of contracts §2: status, `code`, `param` (or its absence), JSON content type,
    /// a non-empty `detail`, no other fields but `required_plan`; returns the body.
    #[track_caller]
    pub fn error(&self, status: u16, code: &str, param: Option<&str>) -> Value {
        assert_eq!(self.status.as_u16(), status, "{}", self.text);
        assert_eq!(
            self.header("content-type"),
            Some("application/json; charset=utf-8"),
            "{}",
            self.text
        );
        let body = self.json();
        assert_eq!(body["code"], code, "{body}");
        assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
        match param {
            Some(p) => assert_eq!(body["param"], p, "{body}"),
            None => assert!(body.get("param").is_none(), "{body}"),
        }
        for key in body.as_object().unwrap().keys() {
            assert!(
                ["detail", "code", "param", "required_plan"].contains(&key.as_str()),
                "unexpected field {key}: {body}"
            );
        }
        assert!(self.header("x-request-id").is_some(), "no X-Request-Id on an error");
        body
    }
}

/// The application in process, over a test database.
pub struct TestApp {
    pub state: AppState,
    pub router: Router,
}

impl TestApp {
    /// The app with `Config::for_tests` (no rate limits) adjusted by `tune`.
    pub fn new(db: &TestDb, tune: impl FnOnce(&mut Config)) -> Self {
        let mut config = Config::for_tests(&db.url);
        tune(&mut config);
        let state = AppState::new(config, db.store.clone());
        let router = crossbook_server::app(state.clone());
        TestApp { state, router }
    }

    /// The probe router (see [`probe_router`]) over the same state.
    pub fn probe(&self) -> TestApp {
        TestApp {
            state: self.state.clone(),
            router: probe_router(&self.state),
        }
    }

    pub async fn get(&self, uri: &str) -> Resp {
        self.send(Method::GET, uri, &[], Body::empty()).await
    }

    pub async fn get_with(&self, uri: &str, headers: &[(&str, &str)]) -> Resp {
        self.send(Method::GET, uri, headers, Body::empty()).await
    }

    pub async fn get_key(&self, uri: &str, key: &str) -> Resp {
        self.get_with(uri, &[("x-api-key", key)]).await
    }

    pub async fn send(&self, method: Method, uri: &str, headers: &[(&str, &str)], body: Body) -> Resp {
        let mut req = Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = self.router.clone().oneshot(req.body(body).unwrap()).await.unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        Resp {
            status,
            headers,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}

/// A real server (`crossbook_server::serve`) on `127.0.0.1:0`.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Server {
    pub async fn start(config: Config) -> Server {
        Server::start_with(config, None, None).await
    }

    /// As `crossbook serve --simulate`: the simulated venues (seed `config.sim_seed`) start in-process once
    /// the store is migrated, ingestion follows them and demo keys are created on a database without keys.
    pub async fn start_simulated(config: Config) -> Server {
        Server::start_simulated_with(config, None).await
    }

    /// [`Server::start_simulated`] on a store the test opened (and keeps a handle on).
    pub async fn start_simulated_on(config: Config, store: Arc<dyn Store>) -> Server {
        Server::start_simulated_with(config, Some(store)).await
    }

    async fn start_simulated_with(config: Config, store: Option<Arc<dyn Store>>) -> Server {
        let step: crossbook_server::BeforeIngest = Box::new(|mut config: Config| {
            Box::pin(async move {
                let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::new(
                    config.sim_seed,
                    crossbook_sim::SimClock::default(),
                ))
                .await?;
                point_at(&mut config, &sim);
                let ids = sim.tour_ids();
                let tour = crossbook_server::demo::Tour {
                    venue_a_market: ids.venue_a_market,
                    venue_a_event: ids.venue_a_event,
                    venue_b_market: ids.venue_b_market,
                    pair: ids.pair,
                };
                let startup = crossbook_server::Startup {
                    demo_keys: Some(crossbook_server::DemoKeys { tour }),
                    on_shutdown: Some(Box::pin(sim.shutdown())),
                };
                Ok((config, startup))
            })
        });
        Server::start_with(config, Some(step), store).await
    }

    async fn start_with(
        config: Config,
        before_ingest: Option<crossbook_server::BeforeIngest>,
        store: Option<Arc<dyn Store>>,
    ) -> Server {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            let _ = rx.await;
        };
        let task = match store {
            Some(store) => tokio::spawn(crossbook_server::serve_on(
                config,
                store,
                listener,
                shutdown,
                before_ingest,
            )),
            None => tokio::spawn(crossbook_server::serve_with(config, listener, shutdown, before_ingest)),
        };
        Server {
            addr,
            stop: Some(tx),
            task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Asks for a graceful shutdown and waits for `serve` to return.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        (&mut self.task).await.unwrap()
    }
}

/// Points `config` at the simulator, with the settings `crossbook serve --simulate` merges.
pub fn point_at(config: &mut Config, sim: &crossbook_sim::SimHandle) {
    *config = config.merged_with_toml(&sim.urls().config_toml()).unwrap();
}

/// Polls `f` until it returns `Ok`, failing after `secs` with the last value seen.
pub async fn eventually<T>(what: &str, secs: u64, f: impl AsyncFnMut() -> Result<T, String>) -> T {
    crossbook_store::testing::eventually_seen(what, std::time::Duration::from_secs(secs), f).await
}

/// `GET url`: the status and the JSON body.
pub async fn get_json(url: &str) -> Result<(u16, Value), String> {
    let r = client().get(url).send().await.map_err(|e| e.to_string())?;
    let status = r.status().as_u16();
    let v = r.json::<Value>().await.map_err(|e| e.to_string())?;
    Ok((status, v))
}

/// `GET url` with an API key: the JSON body.
pub async fn get_json_key(url: &str, key: &str) -> Result<Value, String> {
    let r = client()
        .get(url)
        .header("x-api-key", key)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    r.json::<Value>().await.map_err(|e| e.to_string())
}

/// Waits (at most `secs`) until the array at `pointer` (`""` for the whole body) of `GET url` with `key` has a
/// row.
pub async fn eventually_rows(what: &str, secs: u64, url: &str, key: &str, pointer: &str) {
    eventually(what, secs, async || {
        let v = get_json_key(url, key).await?;
        v.pointer(pointer)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .map(|_| ())
            .ok_or(format!("{v}"))
    })
    .await
}

/// The sum of a counter's series in `/metrics` whose line starts with `series` (a name, with labels if
/// given).
pub async fn metric(server: &Server, series: &str) -> Result<f64, String> {
    let text = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .text()
        .await
        .map_err(|e| e.to_string())?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with(series))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

/// A migrated SQLite database with a key per plan, and `serve --simulate` on it (seed `seed`, the config then
/// adjusted by `tune`).
pub async fn simulated_on_sqlite(seed: u64, tune: impl FnOnce(&mut Config)) -> (TestDb, Keys, Server) {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let mut config = Config {
        simulate: true,
        sim_seed: seed,
        ..Config::for_tests(&db.url)
    };
    tune(&mut config);
    let server = Server::start_simulated_on(config, db.store.clone()).await;
    (db, keys, server)
}

/// The series of a BTC up/down window of `exchange` that the simulator keeps open for the rest of a test:
/// the weekly window, or the daily one in the hour before the weekly window rolls over (Friday 21:00 UTC).
/// Shorter windows close within minutes, and a test that follows a market that closed under it waits for
/// changes that never come. venue_b series are named by their Gamma ids.
pub fn long_btc_series(exchange: &str) -> &'static str {
    const WEEK: i64 = 7 * 86_400;
    // The first Friday 21:00 UTC after the Unix epoch (a Thursday), where the simulator anchors its weeks.
    const WEEK_ANCHOR: i64 = 86_400 + 21 * 3_600;
    let into_week = (Timestamp::now().secs() - WEEK_ANCHOR).rem_euclid(WEEK);
    let weekly = into_week < WEEK - 3_600;
    match (exchange, weekly) {
        ("venue_a", true) => "KXBTCW",
        ("venue_a", false) => "KXBTC24H",
        (_, true) => "10231",
        (_, false) => "10117",
    }
}

/// The trading market of [`long_btc_series`] of `exchange`: of the current and the next window, both
/// listed, the one with a recorded bid (waiting, at most 60 s, for the catalog and the book).
pub async fn long_btc_market(server: &Server, exchange: &str, key: &str) -> Value {
    let search = server.url(&format!(
        "/v1/search/markets?series_id={}&exchange={exchange}&status=active&limit=5",
        long_btc_series(exchange)
    ));
    eventually(&format!("a trading {exchange} market"), 60, async || {
        let (_, listed) = get_json(&search).await?;
        for m in listed.as_array().into_iter().flatten() {
            let id = m["market_id"].as_str().unwrap_or_default();
            let top = server.url(&format!("/v1/historical/{exchange}/top-of-book?market_id={id}&limit=1"));
            let v = get_json_key(&top, key).await?;
            // The next window's book is recorded too, empty until it trades.
            if v["rows"][0]["best_bid"].is_number() {
                return Ok(m.clone());
            }
        }
        Err(format!(
            "no {exchange} market of the series has a recorded book: {listed}"
        ))
    })
    .await
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Keys of every plan, created through the store.
pub struct Keys {
    pub free: String,
    pub builder: String,
    pub trader: String,
}

pub async fn create_keys(store: &Arc<dyn Store>) -> Keys {
    Keys {
        free: store.create_key("free-customer", Plan::Free).await.unwrap().key,
        builder: store.create_key("builder-customer", Plan::Builder).await.unwrap().key,
        trader: store.create_key("trader-customer", Plan::Trader).await.unwrap().key,
    }
}

/// A well-formed key that no customer has.
pub const UNKNOWN_KEY: &str = "cbk_0000000000000000000000000000Zzzz";

fn ts(iso: &str) -> Timestamp {
    Timestamp::parse_iso(iso).unwrap()
}

fn amount(s: &str) -> Amount {
    s.parse().unwrap()
}

fn price(s: &str) -> Price {
    s.parse().unwrap()
}

/// Discovery times of the fixtures, one apart so `newest` orders are unambiguous.
pub const T0: &str = "2026-11-21T10:00:00Z";

/// Seeds the search fixtures; each item is discovered at its own time (`T0` + n minutes, n as listed).
///
/// Series (discovered 0..3): KXBTC15M (a, crypto), KXNBA (a, sports), btc-up-or-down-15m (b, crypto),
/// KXOLD (a, closed).
/// Events (10..13): E_BTC_A (a, KXBTC15M, 15m window), E_BTC_B (b), E_NBA (a, KXNBA, two markets),
/// E_OLD (a, KXBTC15M, closed).
/// Markets (20..24): M_BTC_A, M_BTC_B, M_LAL, M_BOS, M_OLD (closed, settled 2026-11-20T19:15Z).
pub async fn seed_catalog(store: &Arc<dyn Store>) {
    let at = |minutes: i64| Timestamp::from_millis(ts(T0).millis() + minutes * 60_000);

    let mut s1 = Series::new(Exchange::VenueA, "KXBTC15M", "Bitcoin 15 minute up or down");
    s1.slug = Some("kxbtc15m".into());
    s1.url = Some("https://venue-a.example/series/kxbtc15m".into());
    s1.category = Some("crypto".into());
    let mut s2 = Series::new(Exchange::VenueA, "KXNBA", "NBA games");
    s2.category = Some("sports".into());
    let mut s3 = Series::new(Exchange::VenueB, "btc-up-or-down-15m", "Crypto BTC Up or Down 15m");
    s3.category = Some("crypto".into());
    let mut s4 = Series::new(Exchange::VenueA, "KXOLD", "Old closed series");
    s4.status = Status::Closed;
    for (i, s) in [s1, s2, s3, s4].into_iter().enumerate() {
        store.upsert_series(&[s], at(i as i64)).await.unwrap();
    }

    let mut e1 = Event::new(Exchange::VenueA, E_BTC_A, "KXBTC15M", "BTC price up in next 15 mins?");
    e1.category = Some("crypto".into());
    e1.interval_code = Some(IntervalCode::M15);
    e1.window_start = Some(ts("2026-11-21T19:00:00Z"));
    e1.window_end = Some(ts("2026-11-21T19:15:00Z"));
    e1.url = Some("https://venue-a.example/events/x".into());
    let mut e2 = Event::new(
        Exchange::VenueB,
        E_BTC_B,
        "btc-up-or-down-15m",
        "Bitcoin Up or Down - November 21, 7:00PM-7:15PM ET",
    );
    e2.category = Some("crypto".into());
    e2.interval_code = Some(IntervalCode::M15);
    e2.image_url = Some("https://venue-b.example/btc.png".into());
    let mut e3 = Event::new(Exchange::VenueA, E_NBA, "KXNBA", "Lakers at Celtics");
    e3.category = Some("sports".into());
    let mut e4 = Event::new(Exchange::VenueA, E_OLD, "KXBTC15M", "BTC price up yesterday?");
    e4.category = Some("crypto".into());
    e4.status = Status::Closed;
    e4.window_start = Some(ts("2026-11-20T19:00:00Z"));
    e4.window_end = Some(ts("2026-11-20T19:15:00Z"));
    for (i, e) in [e1, e2, e3, e4].into_iter().enumerate() {
        store.upsert_events(&[e], at(10 + i as i64)).await.unwrap();
    }

    let mut m1 = Market::new(
        Exchange::VenueA,
        M_BTC_A,
        E_BTC_A,
        "KXBTC15M",
        "Will BTC be up at 7:15 PM?",
    );
    m1.title = Some("BTC up at 7:15 PM".into());
    m1.subtitle = Some("7:15 PM ET".into());
    m1.category = Some("crypto".into());
    m1.interval_code = Some(IntervalCode::M15);
    m1.volume = amount("1500");
    m1.liquidity = amount("1000");
    m1.last_yes_price = Some(price("0.53"));
    m1.last_no_price = Some(price("0.47"));
    let mut m2 = Market::new(
        Exchange::VenueB,
        M_BTC_B,
        E_BTC_B,
        "btc-up-or-down-15m",
        "Bitcoin Up or Down - November 21, 7:00PM-7:15PM ET",
    );
    m2.category = Some("crypto".into());
    m2.interval_code = Some(IntervalCode::M15);
    m2.volume = amount("2500.505");
    m2.liquidity = amount("800.25");
    m2.last_yes_price = Some(price("0.55555"));
    m2.last_no_price = Some(price("0.44445"));
    let mut m3 = Market::new(Exchange::VenueA, M_LAL, E_NBA, "KXNBA", "Will the Lakers win?");
    m3.category = Some("sports".into());
    m3.volume = amount("100");
    m3.liquidity = amount("50");
    let mut m4 = Market::new(Exchange::VenueA, M_BOS, E_NBA, "KXNBA", "Will the Celtics win?");
    m4.category = Some("sports".into());
    m4.volume = amount("300");
    m4.liquidity = amount("20");
    let mut m5 = Market::new(
        Exchange::VenueA,
        M_OLD,
        E_OLD,
        "KXBTC15M",
        "Was BTC up at 7:15 PM yesterday?",
    );
    m5.category = Some("crypto".into());
    m5.status = Status::Closed;
    m5.interval_code = Some(IntervalCode::M15);
    m5.volume = amount("900");
    m5.settled_at = Some(ts("2026-11-20T19:15:00Z"));
    for (i, m) in [m1, m2, m3, m4, m5].into_iter().enumerate() {
        store.upsert_markets(&[m], at(20 + i as i64)).await.unwrap();
    }
}

pub const E_BTC_A: &str = "KXBTC15M-26NOV211915";
pub const E_BTC_B: &str = "btc-updown-15m-1763752500";
pub const E_NBA: &str = "KXNBA-26NOV21LALBOS";
pub const E_OLD: &str = "KXBTC15M-26NOV201915";
pub const M_BTC_A: &str = "KXBTC15M-26NOV211915-15";
pub const M_BTC_B: &str = "0x5f1c2e9a7b3d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a";
pub const M_LAL: &str = "KXNBA-26NOV21LALBOS-LAL";
pub const M_BOS: &str = "KXNBA-26NOV21LALBOS-BOS";
pub const M_OLD: &str = "KXBTC15M-26NOV201915-15";

/// The ids of a JSON array of objects, by `field`.
pub fn ids(v: &Value, field: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| {
            x[field]
                .as_str()
                .unwrap_or_else(|| panic!("no {field} in {x}"))
                .to_string()
        })
        .collect()
}

fn view_name(view: View) -> &'static str {
    match view {
        View::Full => "full",
        View::Preview => "preview",
    }
}

/// A router made of the server's own extractors and layers, for what no real route exercises yet: one
/// probe per route group of contracts §3 (answering the view the caller got), the lower-level extractors, a
/// JSON POST route (413/415/400 bodies) and a panicking route (500). The probes sit behind the same
/// authentication and rate-limit middleware as the API.
pub fn probe_router(state: &AppState) -> Router {
    async fn probe<G: groups::Group>(gate: Gate<G>) -> Json<Value> {
        Json(json!({"view": view_name(gate.view)}))
    }
    let groups = Router::new()
        .route("/probe/search", get(probe::<groups::Search>))
        .route("/probe/public_whales", get(probe::<groups::PublicWhales>))
        .route("/probe/arbitrage_history", get(probe::<groups::ArbitrageHistory>))
        .route("/probe/historical", get(probe::<groups::Historical>))
        .route("/probe/arbitrage_current", get(probe::<groups::ArbitrageCurrent>))
        .route("/probe/price_spread", get(probe::<groups::PriceSpread>))
        .route("/probe/personal_whales", get(probe::<groups::PersonalWhales>))
        .route("/probe/webhooks_read", get(probe::<groups::WebhooksRead>))
        .route("/probe/webhooks_write_whale", get(probe::<groups::WebhooksWriteWhale>))
        .route(
            "/probe/webhooks_write_arbitrage",
            get(probe::<groups::WebhooksWriteArbitrage>),
        )
        .route(
            "/probe/optional_key",
            get(|OptionalKey(o): OptionalKey| async move { Json(json!({"customer": o.map(|o| o.customer_id)})) }),
        )
        .route(
            "/probe/require_key",
            get(|RequireKey(o): RequireKey| async move { Json(json!({"customer": o.customer_id})) }),
        )
        .route(
            "/probe/require_trader",
            get(|RequirePlan { owner, .. }: RequirePlan<plans::Trader>| async move {
                Json(json!({"customer": owner.customer_id}))
            }),
        )
        .route("/probe/echo", post(|Json(v): Json<Value>| async move { Json(v) }))
        .route(
            "/probe/panic",
            get(|| async {
                if std::hint::black_box(true) {
                    panic!("secret internal detail");
                }
                "unreachable"
            }),
        );
    with_common_layers(with_auth(groups, state), state.clone())
}

/// Whether python3 with `module` is here, for a check that runs Python (`why`: what it is for). Missing, the
/// check is skipped with the reason printed, except under CI (`CI` set), where it fails: `.ci/run` installs
/// the module.
pub fn python_with(module: &str, why: &str) -> bool {
    let missing = match std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
    {
        Ok(o) if o.status.success() => return true,
        Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
        Err(e) => format!("python3: {e}"),
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "{why}: install python3 and `pip install {module}` ({missing})"
    );
    eprintln!("skipped: {why}, which needs python3 and `pip install {module}`: {missing}");
    false
}

/// The user documentation as shipped: the README and every guide of `docs/`, each as (path, text), in name
/// order. Tests that check what the documentation names read it all, wherever a section lives.
pub fn user_docs() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut guides: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("the docs folder")
        .map(|e| e.expect("a docs entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guides.sort();
    let mut paths = vec![root.join("README.md")];
    paths.extend(guides);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
            (name, text)
        })
        .collect()
}
