//! The bus between processes over a real `nats-server` (started per test on a free port) and a shared
//! PostgreSQL database: an ingesting leader over the simulator publishes, a `--role api` process mirrors it
//! and serves the live stream and current arbitrage; garbage on the bus is counted and skipped; a NATS outage
//! turns the api process's live plane unavailable until NATS is back.

use crossbook_live::testing::{NatsServer, nats_binary};
use crossbook_server::config::{Config, Role};
use serde_json::{Value, json};

use crate::{stream::Ws, util::*};

pub(crate) async fn readyz(server: &Server) -> Result<Value, String> {
    Ok(get_json(&server.url("/readyz")).await?.1)
}

/// A `--role api` process on the database at `db_url` and the bus at `bus_url`, once it serves live data from
/// a mirror that holds books.
pub(crate) async fn mirroring_api_process(db_url: &str, bus_url: &str) -> Server {
    let api = Server::start(Config {
        role: Role::Api,
        bus_url: bus_url.to_string(),
        ..Config::for_tests(db_url)
    })
    .await;
    eventually("an api process mirrors books", 60, async || {
        let v = readyz(&api).await?;
        (v["live"]["status"] == "serving" && v["live"]["bus"]["books"].as_u64() > Some(0))
            .then_some(())
            .ok_or(format!("{v}"))
    })
    .await;
    api
}

/// Two of [`mirroring_api_process`].
pub(crate) async fn mirroring_api_processes(db_url: &str, bus_url: &str) -> [Server; 2] {
    [
        mirroring_api_process(db_url, bus_url).await,
        mirroring_api_process(db_url, bus_url).await,
    ]
}

/// A venue_a market the leader lists as active.
pub(crate) async fn live_venue_a_market(leader: &Server, key: &str) -> String {
    let m = long_btc_market(leader, "venue_a", key).await;
    m["market_id"].as_str().expect("a market id").to_string()
}

/// The opportunities of `/v1/arbitrage/current` as (pair, net) pairs, sorted.
pub(crate) fn priced(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| (o["pair_id"].to_string(), o["net_cents"].to_string()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_process_mirrors_the_leader_over_nats() {
    let Some(bin) = nats_binary() else { return };
    let Some(db) = crossbook_store::testing::postgres_database().await else {
        return; // roles need a shared PostgreSQL
    };
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let mut nats = NatsServer::start(bin);

    let leader = Server::start_simulated_on(
        Config {
            simulate: true,
            sim_seed: 11,
            bus_url: nats.url(),
            ..Config::for_tests(&db.url)
        },
        db.store.clone(),
    )
    .await;
    let api = Server::start(Config {
        role: Role::Api,
        bus_url: nats.url(),
        ..Config::for_tests(&db.url)
    })
    .await;

    // The api process serves the live plane once it mirrors the leader's books.
    let v = eventually("the api process mirrors books", 60, async || {
        let v = readyz(&api).await?;
        let books = v["live"]["bus"]["books"].as_u64().unwrap_or(0);
        if v["live"]["status"] == "serving" && books > 0 && v["live"]["bus"]["connected"] == true {
            Ok(v)
        } else {
            Err(format!("{v}"))
        }
    })
    .await;
    assert!(v["live"]["bus"]["lag_ms"].is_u64(), "{v}");

    // A stream client on the api process gets a book's snapshot, then its changes in order.
    let market = live_venue_a_market(&leader, &keys.free).await;
    let mut ws = Ws::connect(api.addr, "", Some(&keys.free)).await;
    ws.next().await;
    ws.send(json!({"op": "subscribe", "channel": "book", "markets": [market]}))
        .await;
    ws.next_of("subscribed").await;
    let snap = ws.next_of("snapshot").await;
    let mut book_seq = snap["book_seq"].as_u64().unwrap();
    let mut changes = 0;
    while changes < 3 {
        let m = ws.next().await;
        match m["type"].as_str() {
            Some("change") => {
                assert_eq!(m["book_seq"], book_seq + 1, "changes follow each other: {m}");
                book_seq += 1;
                changes += 1;
            }
            Some("snapshot") => book_seq = m["book_seq"].as_u64().unwrap(),
            _ => {}
        }
    }

    // Current arbitrage on the api process agrees with the leader's, apart from changes in flight.
    eventually("the same opportunities on both processes", 90, async || {
        let a = get_json_key(&leader.url("/v1/arbitrage/current"), &keys.trader).await?;
        let b = get_json_key(&api.url("/v1/arbitrage/current"), &keys.trader).await?;
        let (a, b) = (priced(&a), priced(&b));
        if !a.is_empty() && a == b {
            Ok(())
        } else {
            Err(format!("leader {a:?} api {b:?}"))
        }
    })
    .await;

    // Garbage on a subject is counted and skipped.
    let raw = async_nats::connect(nats.url()).await.unwrap();
    raw.publish("crossbook.book.venue_a.NOPE._", "{not json".into())
        .await
        .unwrap();
    raw.flush().await.unwrap();
    eventually("the malformed message counted", 30, async || {
        let v = readyz(&api).await?;
        if v["live"]["bus"]["malformed"].as_u64() >= Some(1) {
            Ok(())
        } else {
            Err(format!("{v}"))
        }
    })
    .await;
    assert_eq!(readyz(&api).await.unwrap()["live"]["status"], "serving");

    // NATS stops: the api process says its live plane is unavailable, and its stream shows the books stale.
    nats.stop();
    eventually("live unavailable without the bus", 30, async || {
        let v = readyz(&api).await?;
        if v["live"]["status"] == "unavailable" && v["live"]["bus"]["connected"] == false {
            Ok(())
        } else {
            Err(format!("{v}"))
        }
    })
    .await;
    let stale = ws.next_of("stale").await;
    assert_eq!(stale["cause"], "disconnect", "{stale}");
    let r = client()
        .get(api.url("/v1/arbitrage/current"))
        .header("x-api-key", &keys.trader)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);

    // NATS is back: the api process recovers alone, and the client gets fresh books.
    nats.run();
    eventually("serving again", 60, async || {
        let v = readyz(&api).await?;
        let (books, stale) = (
            v["live"]["bus"]["books"].as_u64().unwrap_or(0),
            v["live"]["bus"]["stale_books"].as_u64().unwrap_or(u64::MAX),
        );
        if v["live"]["status"] == "serving" && books > 0 && stale < books {
            Ok(())
        } else {
            Err(format!("{v}"))
        }
    })
    .await;
    ws.next_of("snapshot").await;

    api.stop().await.unwrap();
    leader.stop().await.unwrap();
    db.cleanup().await;
}
