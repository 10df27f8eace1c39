//! Roles on a shared PostgreSQL (contracts §11): two real `crossbook serve --role ingest --simulate`
//! processes on one database; exactly one ingests (holds the ingest lock); when it is killed, the other takes
//! over within a deadline and its venues become fresh.
//!
//! Observed through each process's `/readyz` (`ingest.leader`, per-venue status) and its standard output
//! (the demo keys are printed by exactly one process).

use std::time::{Duration, Instant};

use crate::common::{Proc, until};
use crossbook_store::testing::postgres_database;
use serde_json::Value;

async fn readyz(http: &reqwest::Client, addr: &str) -> Option<Value> {
    let r = http.get(format!("http://{addr}/readyz")).send().await.ok()?;
    r.json().await.ok()
}

async fn leader(http: &reqwest::Client, addr: &str) -> Option<bool> {
    readyz(http, addr).await.and_then(|v| v["ingest"]["leader"].as_bool())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_process_ingests_and_the_other_takes_over() {
    let Some(db) = postgres_database().await else {
        return;
    };
    db.store.migrate().await.unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();

    let mut first = Proc::serve("first", &db.url, &["--role", "ingest"]);
    let first_addr = first.addr(Duration::from_secs(60)).await;
    until("the first process leads", 30, &[&first], async || {
        leader(&http, &first_addr).await == Some(true)
    })
    .await;

    let mut second = Proc::serve("second", &db.url, &["--role", "ingest"]);
    let second_addr = second.addr(Duration::from_secs(60)).await;
    // The second one serves, but waits for the lock: it is not the leader, and does not become one while the
    // first lives (several of its retries pass).
    until("the second process answers", 30, &[&second], async || {
        leader(&http, &second_addr).await == Some(false)
    })
    .await;
    // Not a wait but an observation: for 5 s, re-read both processes and see the roles never change.
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(5) {
        assert_eq!(leader(&http, &first_addr).await, Some(true), "{}", first.log());
        assert_eq!(leader(&http, &second_addr).await, Some(false), "{}", second.log());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let standby = readyz(&http, &second_addr).await.unwrap();
    assert_eq!(standby["venues"]["venue_a"]["status"], "not_configured", "{standby}");
    assert_eq!(standby["status"], "ready", "a standby is ready to serve: {standby}");

    // The leader ingests: both venues fresh.
    until("the leader's venues are fresh", 60, &[&first], async || {
        readyz(&http, &first_addr)
            .await
            .is_some_and(|v| v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh")
    })
    .await;

    // Demo keys: created and printed once, by the first process only.
    assert!(first.printed("Demo API keys"), "{}", first.log());
    assert!(!second.printed("Demo API keys"), "{}", second.log());
    // The other one says where it listens and how to find the keys the first one created.
    assert!(second.printed("crossbook keys list --database-url"), "{}", second.log());
    assert_eq!(db.store.list_keys().await.unwrap().len(), 3);

    // Kill the leader (no graceful shutdown: its session ends with it) and time the takeover.
    first.kill();
    let took = until("the second process takes over", 20, &[&second], async || {
        leader(&http, &second_addr).await == Some(true)
    })
    .await;
    eprintln!("takeover after {took:?}");
    until("the new leader's venues are fresh", 60, &[&second], async || {
        readyz(&http, &second_addr)
            .await
            .is_some_and(|v| v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh")
    })
    .await;

    drop(second);
    db.cleanup().await;
}
