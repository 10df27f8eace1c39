//! Leader failover over the bus, with a real `nats-server` and a shared PostgreSQL database: one leader and
//! one standby over the simulator, two `--role api` processes mirroring the leader. Stream clients on both api
//! processes get book changes and current arbitrage agrees with the leader's; when the leader stops, the
//! standby takes the ingest lock and publishes a new term, the clients get a continuity event for their book
//! and then fresh data within seconds, and the recorded history shows the hand-over as a gap.

use std::time::Duration;

use crossbook_core::Timestamp;
use crossbook_live::testing::{NatsServer, nats_binary};
use crossbook_server::config::{Config, Role};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_tungstenite::{
    MaybeTlsStream, WebSocketStream, connect_async,
    tungstenite::{Message, client::IntoClientRequest},
};

use crate::{
    bus::{live_venue_a_market, mirroring_api_processes, priced, readyz},
    util::*,
};

/// A stream client whose reads wait until a deadline rather than per message (the stream may be quiet for a
/// while during the hand-over).
struct Client(WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>);

impl Client {
    async fn subscribe(server: &Server, key: &str, market: &str) -> Client {
        let mut req = format!("ws://{}/v1/stream", server.addr).into_client_request().unwrap();
        req.headers_mut().insert("x-api-key", key.parse().unwrap());
        let (mut ws, _) = connect_async(req).await.expect("upgrade");
        let sub = json!({"op": "subscribe", "channel": "book", "markets": [market]});
        ws.send(Message::text(sub.to_string())).await.unwrap();
        Client(ws)
    }

    /// The next book message (`snapshot`, `change` or `stale`) before `deadline`.
    async fn next_book(&mut self, deadline: Instant) -> Value {
        loop {
            let m = tokio::time::timeout_at(deadline, self.0.next())
                .await
                .expect("a book message within the deadline");
            let Some(Ok(Message::Text(t))) = m else {
                assert!(matches!(m, Some(Ok(_))), "the stream ended: {m:?}");
                continue;
            };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if matches!(v["type"].as_str(), Some("snapshot" | "change" | "stale")) {
                return v;
            }
        }
    }

    /// Reads until a snapshot and then a change of the book, before `deadline`; returns the snapshot's number.
    async fn live_data(&mut self, deadline: Instant) -> u64 {
        let mut snapshot = None;
        loop {
            let m = self.next_book(deadline).await;
            match m["type"].as_str() {
                Some("snapshot") => snapshot = m["book_seq"].as_u64(),
                Some("change") if snapshot.is_some() => return snapshot.unwrap(),
                _ => {}
            }
        }
    }
}

fn simulated(db_url: &str, bus_url: &str) -> Config {
    Config {
        simulate: true,
        sim_seed: 11,
        bus_url: bus_url.to_string(),
        ..Config::for_tests(db_url)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_takes_over_and_api_clients_see_the_hand_over() {
    let Some(bin) = nats_binary() else { return };
    let Some(db) = crossbook_store::testing::postgres_database().await else {
        return; // roles need a shared PostgreSQL
    };
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let nats = NatsServer::start(bin);

    let leader = Server::start_simulated(simulated(&db.url, &nats.url())).await;
    let v = eventually("the first process leads and publishes", 60, async || {
        let v = readyz(&leader).await?;
        let p = &v["live"]["publish"];
        (v["ingest"]["leader"] == true
            && p["publishing"] == true
            && p["connected"] == true
            && p["published"].as_u64() > Some(0))
        .then_some(v.clone())
        .ok_or(format!("{v}"))
    })
    .await;
    let first_term = v["live"]["publish"]["term"].as_u64().expect("a term");
    assert!(v["live"]["publish"]["last_error"].is_null(), "{v}");

    let standby = Server::start_simulated(simulated(&db.url, &nats.url())).await;
    let v = eventually("the second process waits", 60, async || {
        let v = readyz(&standby).await?;
        (v["ingest"]["leader"] == false && v["live"]["publish"]["publishing"] == false)
            .then_some(v.clone())
            .ok_or(format!("{v}"))
    })
    .await;
    assert_eq!(v["live"]["status"], "unavailable", "a standby serves no live data: {v}");

    let apis = mirroring_api_processes(&db.url, &nats.url()).await;

    // A stream client on each api process gets the book's snapshot and changes.
    let market = live_venue_a_market(&leader, &keys.free).await;
    let mut clients = Vec::new();
    for api in &apis {
        let mut c = Client::subscribe(api, &keys.free, &market).await;
        c.live_data(Instant::now() + Duration::from_secs(60)).await;
        clients.push(c);
    }

    // Current arbitrage on both api processes agrees with the leader's, apart from changes in flight.
    eventually("the same opportunities on the three processes", 90, async || {
        let a = priced(&get_json_key(&leader.url("/v1/arbitrage/current"), &keys.trader).await?);
        let b = priced(&get_json_key(&apis[0].url("/v1/arbitrage/current"), &keys.trader).await?);
        let c = priced(&get_json_key(&apis[1].url("/v1/arbitrage/current"), &keys.trader).await?);
        (!a.is_empty() && a == b && a == c)
            .then_some(())
            .ok_or(format!("leader {a:?} api {b:?} api {c:?}"))
    })
    .await;

    // The leader stops. Every client gets a continuity event for its book, then its data again.
    let stopped_at = Timestamp::now();
    leader.stop().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(45);
    let mut resumed_at = Vec::new();
    for c in &mut clients {
        let stale = loop {
            let m = c.next_book(deadline).await;
            if m["type"] == "stale" {
                break m;
            }
        };
        assert!(
            matches!(stale["cause"].as_str(), Some("restart" | "disconnect")),
            "the hand-over's cause: {stale}"
        );
        let snapshot = c.live_data(deadline).await;
        assert!(
            snapshot > stale["book_seq"].as_u64().unwrap(),
            "the new leader's book numbers on: {snapshot} after {stale}"
        );
        resumed_at.push(snapshot);
    }
    let v = readyz(&standby).await.unwrap();
    assert_eq!(v["ingest"]["leader"], true, "{v}");
    assert_eq!(v["live"]["publish"]["publishing"], true, "{v}");
    assert!(
        v["live"]["publish"]["term"].as_u64() > Some(first_term),
        "a new term: {v}"
    );
    for api in &apis {
        let v = readyz(api).await.unwrap();
        assert_eq!(v["live"]["status"], "serving", "{v}");
    }

    // The recorded history of the book shows the hand-over as a gap, before the new leader's data.
    let first_after = resumed_at.iter().copied().min().unwrap();
    eventually("the hand-over's gap in the log", 60, async || {
        let url = standby.url(&format!(
            "/v1/replay?market_id=venue_a:{market}&start_time={}&end_time={}",
            stopped_at.millis() - 60_000,
            Timestamp::now().millis()
        ));
        let r = client().get(url).header("x-api-key", &keys.free).send().await.unwrap();
        let text = r.text().await.unwrap();
        let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let gaps: Vec<&Value> = lines.iter().filter(|m| m["type"] == "gap").collect();
        gaps.iter()
            .any(|m| m["cause"] == "restart" && m["seq"].as_u64().is_some_and(|n| n < first_after))
            .then_some(())
            .ok_or(format!(
                "no restart gap before {first_after} in {} lines; gaps {gaps:?}",
                lines.len()
            ))
    })
    .await;

    for api in apis {
        api.stop().await.unwrap();
    }
    standby.stop().await.unwrap();
    db.cleanup().await;
}

/// NATS down at start: the process that ingests starts and captures, and its `/readyz` says the bus is down
/// (without turning it unready: capture goes on); a `--role api` process stops with an error naming the bus.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_down_at_start_by_role() {
    // A port nobody listens on.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("nats://{}", l.local_addr().unwrap())
    };
    let Some(db) = crossbook_store::testing::postgres_database().await else {
        return; // roles need a shared PostgreSQL
    };
    db.store.migrate().await.unwrap();
    let leader = Server::start_simulated(simulated(&db.url, &dead)).await;
    let v = eventually("the leader captures without its bus", 60, async || {
        let v = readyz(&leader).await?;
        let fresh = v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh";
        (fresh && v["live"]["publish"]["publishing"] == true)
            .then_some(v.clone())
            .ok_or(format!("{v}"))
    })
    .await;
    let p = &v["live"]["publish"];
    assert_eq!(p["connected"], false, "{v}");
    assert!(
        p["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot reach the bus")),
        "{v}"
    );
    assert_eq!(v["status"], "ready", "a bus that is down does not stop capture: {v}");
    assert_eq!(
        v["live"]["status"], "serving",
        "this process serves its own live data: {v}"
    );

    let api = Server::start(Config {
        role: Role::Api,
        bus_url: dead.clone(),
        ..Config::for_tests(&db.url)
    });
    let err = tokio::time::timeout(Duration::from_secs(30), async { api.await.stop().await })
        .await
        .expect("the api process stops by itself")
        .expect_err("an api process without its bus does not start");
    let msg = format!("{err:#}");
    assert!(msg.contains("bus_url") && msg.contains(&dead), "{msg}");

    leader.stop().await.unwrap();
    db.cleanup().await;
}

/// A process that may ingest serves live data only while it ingests: while its attempts at the ingest lock fail
/// it does not know whether it leads, so its live routes answer 503 and `/readyz` says why; once it takes the
/// lock and ingests, it serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_cannot_try_the_ingest_lock_serves_no_live_data() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    // A folder where the lock file goes: every attempt at the lock fails.
    let lock = format!("{}-leader.lock", db.url.trim_start_matches("sqlite://"));
    std::fs::create_dir(&lock).unwrap();

    let server = Server::start(Config::for_tests(&db.url)).await;
    // `serve` answers once it has tried the lock, so the first answer is already honest.
    let (status, v) = get_json(&server.url("/readyz")).await.unwrap();
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["ingest"]["leader"], false, "{v}");
    assert_eq!(v["live"]["status"], "unavailable", "{v}");
    assert!(
        v["live"]["reason"].as_str().is_some_and(|r| r.contains("ingest lock")),
        "{v}"
    );
    let r = client()
        .get(server.url("/v1/arbitrage/current"))
        .header("x-api-key", &keys.trader)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 503);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["code"], "unavailable", "{e}");
    assert!(e["detail"].as_str().is_some_and(|d| d.contains("ingest lock")), "{e}");

    // The lock can be taken again: the process ingests and serves its live data.
    std::fs::remove_dir(&lock).unwrap();
    eventually("the process leads and serves live data", 30, async || {
        let v = readyz(&server).await?;
        (v["ingest"]["leader"] == true && v["live"]["status"] == "serving")
            .then_some(())
            .ok_or(format!("{v}"))
    })
    .await;
    get_json_key(&server.url("/v1/arbitrage/current"), &keys.trader)
        .await
        .unwrap()
        .as_array()
        .expect("current arbitrage answers");
    server.stop().await.unwrap();
    let _ = std::fs::remove_file(&lock);
    db.cleanup().await;
}
