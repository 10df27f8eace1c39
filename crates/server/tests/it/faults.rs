//! Faults the service must survive (a full disk, a database outage), on the real server with the simulated
//! venues: readiness says what is wrong, losses are counted and recorded, API writes answer 503, and writes
//! resume by themselves once the cause goes away.

use std::{sync::Arc, time::Duration};

use crossbook_core::{Plan, Timestamp};
use crossbook_server::config::Config;
use crossbook_store::{Store, StoreError, WebhookKind, sqlite::SqliteStore, testing};
use serde_json::{Value, json};

use crate::util::*;

async fn eventually<T>(what: &str, secs: u64, f: impl AsyncFnMut() -> Result<T, String>) -> T {
    testing::eventually_seen(what, Duration::from_secs(secs), f).await
}

async fn get_json(url: &str) -> Result<(u16, Value), String> {
    let r = client().get(url).send().await.map_err(|e| e.to_string())?;
    let status = r.status().as_u16();
    let v = r.json::<Value>().await.map_err(|e| e.to_string())?;
    Ok((status, v))
}

/// The sum of a counter's series in `/metrics` whose line starts with `series` (a name, with labels if
/// given).
async fn metric(server: &Server, series: &str) -> Result<f64, String> {
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
    eventually("/readyz 200 while ingesting", 60, async || {
        let (status, v) = get_json(&readyz).await?;
        let written = metric(&server, "crossbook_book_events_written_total").await?;
        if status == 200 && written > 0.0 {
            Ok(())
        } else {
            Err(format!("{status} written={written} {v}"))
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
            .create_webhook(*c, WebhookKind::Whale, "http://127.0.0.1:9/hook", "s", Timestamp::now())
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
    let (_, found) = get_json(&server.url("/v1/search/markets?q=15m&exchange=venue_a&limit=100"))
        .await
        .unwrap();
    let markets: Vec<String> = found
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["market_id"].as_str().map(str::to_string))
        .collect();
    eventually("a write_failed gap in the history", 30, async || {
        for m in &markets {
            let url = server.url(&format!("/v1/historical/gaps?exchange=venue_a&market_id={m}"));
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
        Err(format!("no write_failed gap on {} books", markets.len()))
    })
    .await;

    server.stop().await.unwrap();
    db.cleanup().await;
}
