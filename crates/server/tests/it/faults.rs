//! Faults the service must survive (a full disk, a database outage), on the real server with the simulated
//! venues: readiness says what is wrong, losses are counted and recorded, API writes answer 503, and writes
//! resume by themselves once the cause goes away.

use std::{sync::Arc, time::Duration};

use futures_util::{SinkExt, StreamExt};

use crossbook_core::{Plan, Timestamp};
use crossbook_server::config::Config;
use crossbook_store::{Store, StoreError, WebhookKind, sqlite::SqliteStore, testing};
use serde_json::{Value, json};

use crate::util::*;

/// SQLite capped at its size while `serve --simulate` ingests: `/readyz` turns 503 with the store
/// `degraded`, what had to be dropped is counted, an API write answers 503 `unavailable`; once the cap is
/// lifted, writes resume without a restart, `/readyz` is 200 again, and the book history holds a
/// `write_failed` gap where events were lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_degrades_readiness_and_writes_resume_once_there_is_room() {
    let db = testing::sqlite_database().await;
    let sqlite = SqliteStore::open(&db.url).await.unwrap();
    let store: Arc<dyn Store> = Arc::new(sqlite.clone());
    store.migrate().await.unwrap();
    let keys = create_keys(&store).await;
    // Customers whose registrations fill the webhook table once the disk is full.
    let mut fillers = Vec::new();
    for i in 0..300 {
        fillers.push(
            store
                .create_key(&format!("filler-{i}"), Plan::Trader)
                .await
                .unwrap()
                .info
                .customer_id,
        );
    }
    let config = Config {
        simulate: true,
        sim_seed: 11,
        catalog_sync_seconds: 5,
        // A small buffer, so the outage outlasts it and events are dropped (and a gap recorded).
        write_buffer_events: 200,
        allow_private_webhook_targets: true,
        ..Config::for_tests(&db.url)
    };
    let server = Server::start_simulated_on(config, store.clone()).await;
    let readyz = server.url("/readyz");
    // Leading ingestion, both venues fresh, books held (and so written to the log).
    eventually("/readyz 200 while ingesting", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        let fresh = v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh";
        let books = v["venues"]["venue_a"]["books"].as_u64().unwrap_or(0);
        if status == 200 && v["ingest"]["leader"] == true && fresh && books > 0 {
            Ok(())
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;

    // The disk is full.
    let full_at = Timestamp::now();
    sqlite
        .set_page_limit(Some(sqlite.page_count().await.unwrap()))
        .await
        .unwrap();
    let degraded = eventually("/readyz 503 with the store degraded", 30, async || {
        let (status, v) = get_json(&readyz).await?;
        let failing = v["store"]["failing"].as_array().cloned().unwrap_or_default();
        if status == 503
            && v["status"] == "not_ready"
            && v["store"]["status"] == "degraded"
            && failing.contains(&json!("book_events"))
        {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    let since = Timestamp::parse_iso(degraded["store"]["since"].as_str().unwrap()).unwrap();
    assert!(since.millis() >= full_at.millis() - 1, "{degraded}");
    let last_error = degraded["store"]["last_error"].as_str().unwrap();
    assert!(last_error.contains("full"), "{last_error}");
    eventually("dropped book events counted", 30, async || {
        let n = metric(&server, "crossbook_writes_dropped_total{kind=\"book_events\"}").await?;
        if n > 0.0 { Ok(n) } else { Err(format!("{n}")) }
    })
    .await;

    // An API write that finds no room answers 503, not 500. (Fill the webhook table first: a small row can
    // still fit in a page with room left.)
    let mut filled = false;
    for c in &fillers {
        match store
            .create_webhook(
                *c,
                WebhookKind::Whale,
                "http://127.0.0.1:9/hook",
                "s",
                true,
                Timestamp::now(),
            )
            .await
        {
            Ok(_) => {}
            Err(StoreError::Unavailable(_)) => {
                filled = true;
                break;
            }
            Err(e) => panic!("unexpected error filling the webhook table: {e:?}"),
        }
    }
    assert!(filled, "the webhook table never filled");
    let hooks = server.url("/v1/webhooks/whale");
    let post = |key: String| {
        let hooks = hooks.clone();
        async move {
            client()
                .post(hooks)
                .header("X-API-Key", key)
                .json(&json!({"url": "http://127.0.0.1:9/mine"}))
                .send()
                .await
                .unwrap()
        }
    };
    let r = post(keys.trader.clone()).await;
    assert_eq!(r.status().as_u16(), 503);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["success"], false, "{body}");

    // Room again: no restart.
    sqlite.set_page_limit(None).await.unwrap();
    let lifted = std::time::Instant::now();
    let ready = eventually("/readyz 200 again", 30, async || {
        let (status, v) = get_json(&readyz).await?;
        if status == 200 && v["store"]["status"] == "ok" {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    eprintln!(
        "writes resumed {} ms after the cap was lifted",
        lifted.elapsed().as_millis()
    );
    assert_eq!(ready["store"]["failing"], json!([]));
    assert_eq!(ready["store"]["since"], Value::Null);
    let r = post(keys.trader.clone()).await;
    assert_eq!(r.status().as_u16(), 201);

    // History says where events were lost: a `write_failed` gap on some venue_a book since the disk filled.
    // Every market of both venues, newest first: the books held when the buffer overflowed may be any of them.
    let (_, found) = get_json(&server.url("/v1/search/recent/markets?limit=100"))
        .await
        .unwrap();
    let markets: Vec<(String, String)> = found
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            Some((
                m["exchange"].as_str()?.to_string(),
                m["market_id"].as_str()?.to_string(),
            ))
        })
        .collect();
    eventually("a write_failed gap in the history", 30, async || {
        for (exchange, market) in &markets {
            let url = server.url(&format!("/v1/historical/gaps?exchange={exchange}&market_id={market}"));
            let r = client()
                .get(url)
                .header("X-API-Key", &keys.free)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let v: Value = r.json().await.map_err(|e| e.to_string())?;
            let found = v["gaps"].as_array().into_iter().flatten().any(|g| {
                g["cause"] == "write_failed" && g["start_time"].as_i64().is_some_and(|t| t >= full_at.millis() - 1)
            });
            if found {
                return Ok(());
            }
        }
        Err(format!("no write_failed gap on the books of {} markets", markets.len()))
    })
    .await;

    server.stop().await.unwrap();
    db.cleanup().await;
}

/// The simulated venues stop under a running server (their sockets closed, their ports refusing): within the
/// silence limit `/readyz` answers 503 with both venues `stale`, disconnected with the error, every book
/// counted stale; and the stream's status channel says the same (not fresh, the same counts and reason).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_venue_outage_turns_readiness_stale_within_the_silence_limit() {
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::new(17, crossbook_sim::SimClock::default()))
        .await
        .unwrap();
    let mut config = Config::for_tests(&db.url);
    point_at(&mut config, &sim);
    let silence = config.feed_silence_seconds;
    let server = Server::start(config).await;
    let readyz = server.url("/readyz");
    let held = eventually("/readyz 200 with books on both venues", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        let books = |ex: &str| v["venues"][ex]["books"].as_u64().unwrap_or(0);
        if status == 200 && books("venue_a") > 0 && books("venue_b") > 0 {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    for ex in ["venue_a", "venue_b"] {
        assert_eq!(
            (&held["venues"][ex]["status"], &held["venues"][ex]["reason"]),
            (&json!("fresh"), &Value::Null)
        );
    }

    let url = format!("ws://{}/v1/stream", server.addr);
    let mut req = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url).unwrap();
    req.headers_mut().insert("x-api-key", keys.free.parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        json!({"op": "subscribe", "channel": "status"}).to_string().into(),
    ))
    .await
    .unwrap();

    let stopped = std::time::Instant::now();
    sim.shutdown().await;
    let down = eventually("/readyz 503 with both venues stale", silence, async || {
        let (status, v) = get_json(&readyz).await?;
        let venue_down = |ex: &str| {
            let h = &v["venues"][ex];
            h["status"] == "stale"
                && h["connected"] == false
                && h["books"] == 0
                && h["stale_books"].as_u64().unwrap_or(0) > 0
                && h["last_error"].is_string()
                && h["reason"].as_str().is_some_and(|r| r.starts_with("disconnected"))
        };
        if status == 503 && v["status"] == "not_ready" && venue_down("venue_a") && venue_down("venue_b") {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    let took = stopped.elapsed();
    assert!(took < Duration::from_secs(silence), "took {took:?}");
    eprintln!("readiness turned stale {took:?} after the venues stopped");

    // The stream's last `venue` message of each venue agrees with /readyz.
    let mut last = std::collections::BTreeMap::<String, Value>::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(silence);
    while last.len() < 2 || last.values().any(|m| m["fresh"] != false) {
        let m = tokio::time::timeout_at(deadline, ws.next())
            .await
            .unwrap_or_else(|_| panic!("no venue message saying stale: {last:?}"))
            .unwrap()
            .unwrap();
        let Ok(m) = serde_json::from_str::<Value>(m.to_text().unwrap_or("null")) else {
            continue;
        };
        if m["type"] == "venue" {
            last.insert(m["exchange"].as_str().unwrap().to_string(), m);
        }
    }
    for (ex, m) in &last {
        let h = &down["venues"][ex];
        // (The reason's error may differ: each failed reconnect records its own.)
        assert!(
            m["reason"].as_str().is_some_and(|r| r.starts_with("disconnected")),
            "{m}"
        );
        assert_eq!(
            (&m["connected"], &m["books"], &m["stale_books"]),
            (&h["connected"], &h["books"], &h["stale_books"]),
            "{m} / {h}"
        );
    }

    server.stop().await.unwrap();
    db.cleanup().await;
}

/// A TCP proxy in front of PostgreSQL that the test can cut and restore: a database outage as the service
/// sees it. Cut, its open connections are closed and its port refuses connections, as a stopped server's does.
struct Proxy {
    addr: std::net::SocketAddr,
    upstream: String,
    accept: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    links: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy {
            addr: listener.local_addr().unwrap(),
            upstream,
            accept: std::sync::Mutex::new(None),
            links: Arc::default(),
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&self, listener: tokio::net::TcpListener) {
        let (upstream, links) = (self.upstream.clone(), self.links.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                links.lock().unwrap().push(link.abort_handle());
            }
        });
        *self.accept.lock().unwrap() = Some(task);
    }

    /// The outage begins: the port closes and every open connection with it.
    fn cut(&self) {
        if let Some(t) = self.accept.lock().unwrap().take() {
            t.abort();
        }
        for l in self.links.lock().unwrap().drain(..) {
            l.abort();
        }
    }

    /// The database is back on the same port.
    async fn restore(&self) {
        // The aborted accept task drops its listener when it is next polled; retry until the port is free.
        let listener = loop {
            match tokio::net::TcpListener::bind(self.addr).await {
                Ok(l) => break l,
                Err(_) => tokio::task::yield_now().await,
            }
        };
        self.serve(listener);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
    }
}

/// PostgreSQL goes away under a running `serve --simulate` (through a proxy the test cuts): requests answer
/// 503 within a second instead of waiting on the pool, `/readyz` says the store is unavailable, the ingest
/// role notices within 2 s and steps down; when the database is back, everything resumes without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_answers_503_fast_and_the_service_recovers_by_itself() {
    let Some(db) = testing::postgres_database().await else {
        return;
    };
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let mut url = reqwest::Url::parse(&db.url).unwrap();
    let upstream = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
    let proxy = Proxy::start(upstream).await;
    url.set_host(Some("127.0.0.1")).unwrap();
    url.set_port(Some(proxy.addr.port())).unwrap();
    let config = Config {
        simulate: true,
        sim_seed: 11,
        catalog_sync_seconds: 5,
        // Keys are looked up in the store on every request, so an outage shows on every keyed route.
        key_cache_seconds: 0,
        allow_private_webhook_targets: true,
        ..Config::for_tests(url.as_str())
    };
    let server = Server::start_simulated(config).await;
    let readyz = server.url("/readyz");
    let search = server.url("/v1/search/markets?q=15m&limit=5");
    eventually("/readyz 200 with this process leading ingestion", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        if status == 200 && v["ingest"]["leader"] == true {
            Ok(())
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    assert_eq!(get_json(&search).await.unwrap().0, 200);

    proxy.cut();
    let cut_at = std::time::Instant::now();
    // The ingest role notices within 2 s (plus the time to stop its workers) and steps down.
    // The ingest role notices within 2 s (plus the time to stop its workers) and steps down: watched while
    // the requests below run.
    let watch = async {
        let mut interval = tokio::time::interval(Duration::from_millis(50));
        loop {
            interval.tick().await;
            // Each `/readyz` takes up to the acquire timeout while the store is down: the time measured is when
            // the answer that says so arrived, an upper bound.
            if let Ok((_, v)) = get_json(&readyz).await
                && v["ingest"]["leader"] == false
            {
                return cut_at.elapsed();
            }
            assert!(
                cut_at.elapsed() < Duration::from_secs(10),
                "ingestion did not step down"
            );
        }
    };
    // Reads, keyed reads and writes answer 503 `unavailable`, each within a second.
    let requests = async {
        for _ in 0..3 {
            for (what, req) in [
                ("search", client().get(&search)),
                (
                    "keyed read",
                    client()
                        .get(server.url("/v1/webhooks"))
                        .header("X-API-Key", &keys.trader),
                ),
                (
                    "write",
                    client()
                        .post(server.url("/v1/webhooks/whale"))
                        .header("X-API-Key", &keys.trader)
                        .json(&json!({"url": "http://127.0.0.1:9/hook"})),
                ),
            ] {
                let started = std::time::Instant::now();
                let r = req.send().await.unwrap();
                let took = started.elapsed();
                let status = r.status().as_u16();
                assert_eq!(status, 503, "{what}: {}", r.text().await.unwrap_or_default());
                assert!(took < Duration::from_secs(1), "{what} took {took:?}");
            }
        }
        let (status, v) = get_json(&readyz).await.unwrap();
        assert_eq!(status, 503, "{v}");
        assert_eq!(v["store"]["status"], "unavailable", "{v}");
        assert!(
            v["store"]["last_error"].is_string() && v["store"]["since"].is_string(),
            "{v}"
        );
    };
    let (stepped_down, ()) = tokio::join!(watch, requests);
    eprintln!(
        "stepped down {} ms after the database went away",
        stepped_down.as_millis()
    );
    assert!(stepped_down < Duration::from_secs(3), "{stepped_down:?}");
    let (_, v) = get_json(&readyz).await.unwrap();
    assert_eq!(v["ingest"]["leader"], false, "{v}");

    // The database is back: no restart.
    proxy.restore().await;
    let back = std::time::Instant::now();
    eventually("/readyz 200 and leading again", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        if status == 200 && v["ingest"]["leader"] == true && v["store"]["status"] == "ok" {
            Ok(())
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    eprintln!(
        "ready and leading again {} ms after the database came back",
        back.elapsed().as_millis()
    );
    assert_eq!(get_json(&search).await.unwrap().0, 200);
    let r = client()
        .post(server.url("/v1/webhooks/whale"))
        .header("X-API-Key", &keys.trader)
        .json(&json!({"url": "http://127.0.0.1:9/hook"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);

    server.stop().await.unwrap();
    drop(proxy);
    db.cleanup().await;
}

/// A venue whose trade tape keeps failing while its books are fine is not `fresh` with no error: `/readyz`
/// answers 503 with the venue `degraded`, naming the trades part and its error (the books part still ok,
/// the other venue still fresh); once the tape answers again the venue is fresh and the answer 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_trade_tape_degrades_its_venue_in_readiness() {
    let db = testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::new(19, crossbook_sim::SimClock::default()))
        .await
        .unwrap();
    let mut config = Config::for_tests(&db.url);
    point_at(&mut config, &sim);
    let server = Server::start(config).await;
    let readyz = server.url("/readyz");
    let fresh =
        |v: &Value, ex: &str| v["venues"][ex]["status"] == "fresh" && v["venues"][ex]["books"].as_u64() > Some(0);
    eventually("/readyz 200 with both venues fresh", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        if status == 200 && fresh(&v, "venue_a") && fresh(&v, "venue_b") {
            Ok(())
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;

    sim.faults().fail_trades(crossbook_core::Exchange::VenueB, Some(500));
    let down = eventually("/readyz 503 with venue_b degraded by its trade tape", 90, async || {
        let (status, v) = get_json(&readyz).await?;
        if status == 503 && v["venues"]["venue_b"]["status"] == "degraded" {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    let b = &down["venues"]["venue_b"];
    assert!(
        b["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("trades failing") && r.contains("500")),
        "{b}"
    );
    let trades = &b["parts"]["trades"];
    assert_eq!(trades["status"], "failing", "{b}");
    assert!(trades["failures"].as_u64() >= Some(3), "{b}");
    assert!(trades["last_error"].as_str().is_some_and(|e| e.contains("500")), "{b}");
    assert_eq!(b["last_error"], trades["last_error"], "{b}");
    assert_eq!(b["parts"]["books"]["status"], "ok", "{b}");
    assert_eq!(b["parts"]["catalog"]["status"], "ok", "{b}");
    assert!(b["connected"] == true && b["books"].as_u64() > Some(0), "{b}");
    assert_eq!(down["venues"]["venue_a"]["status"], "fresh", "{down}");

    sim.faults().fail_trades(crossbook_core::Exchange::VenueB, None);
    let up = eventually("/readyz 200 again once the tape answers", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        if status == 200 && fresh(&v, "venue_b") {
            Ok(v)
        } else {
            Err(format!("{status} {v}"))
        }
    })
    .await;
    let trades = &up["venues"]["venue_b"]["parts"]["trades"];
    assert_eq!(
        (&trades["status"], &trades["failures"]),
        (&json!("ok"), &json!(0)),
        "{up}"
    );
    assert!(
        trades["last_error"].is_string(),
        "the last error is kept for the record: {up}"
    );

    server.stop().await.unwrap();
    sim.shutdown().await;
    db.cleanup().await;
}
