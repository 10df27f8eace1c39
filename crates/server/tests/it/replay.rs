//! `GET /v1/replay` over real sockets: books rebuilt from a replay of the simulated venues alone equal the
//! historical route's rows at every bucket; bad requests are refused before the stream starts; a client that
//! goes away ends the replay.

use std::{collections::BTreeMap, time::Duration};

use crossbook_core::{
    Amount, Price, Timestamp,
    book::{BookChange, BookEvent, BookKey, Level, LevelChange, Side},
};
use crossbook_server::config::Config;
use crossbook_store::{LogRun, testing::sqlite_database};
use serde_json::Value;

use crate::util::{
    M_BTC_A, Server, client, create_keys, eventually, get_json_key, long_btc_market, metric, seed_catalog,
    simulated_on_sqlite,
};

/// A ladder as `(price, size in cents)`, comparable across the replay (6 decimals) and history (2 decimals).
type Ladder = Vec<(String, i64)>;

fn ladder(v: &Value) -> Ladder {
    v.as_array()
        .unwrap_or_else(|| panic!("not a ladder: {v}"))
        .iter()
        .map(|l| {
            let size = l["size"].as_f64().unwrap();
            (l["price"].as_str().unwrap().to_string(), (size * 100.0).round() as i64)
        })
        .collect()
}

fn millis(iso: &Value) -> i64 {
    Timestamp::parse_iso(iso.as_str().unwrap()).unwrap().millis()
}

/// A book's bids, asks and NO bids, price → size in cents.
type Sides = [BTreeMap<String, i64>; 3];

/// One book rebuilt from replay messages: its three ladders after each message, by receive time.
#[derive(Default)]
struct Rebuilt {
    /// (received_at, the book after the message, or `None` in a gap).
    timeline: Vec<(i64, Option<Sides>)>,
}

impl Rebuilt {
    fn apply(&mut self, m: &Value) {
        let at = millis(&m["received_at"]);
        let current = self.timeline.last().and_then(|(_, b)| b.clone());
        let next = match m["type"].as_str().unwrap() {
            "book_snapshot" => Some(["bids", "asks", "no_bids"].map(|side| ladder(&m[side]).into_iter().collect())),
            "book_change" => {
                let mut book = current.expect("a change to a book the replay never gave in full");
                for c in m["changes"].as_array().unwrap() {
                    let i = match c["side"].as_str().unwrap() {
                        "bid" => 0,
                        "ask" => 1,
                        _ => 2,
                    };
                    let price = c["price"].as_str().unwrap().to_string();
                    let size = (c["size"].as_f64().unwrap() * 100.0).round() as i64;
                    if size == 0 {
                        book[i].remove(&price);
                    } else {
                        book[i].insert(price, size);
                    }
                }
                Some(book)
            }
            "gap" => None,
            other => panic!("not a book message: {other}"),
        };
        self.timeline.push((at, next));
    }

    /// The book as of `at` (its last message at or before it).
    fn at(&self, at: i64) -> Option<&Sides> {
        self.timeline
            .iter()
            .rev()
            .find(|(t, _)| *t <= at)
            .and_then(|(_, b)| b.as_ref())
    }
}

/// Best first, as the history rows list them: bids and NO bids descending, asks ascending.
fn ordered(side: &BTreeMap<String, i64>, descending: bool) -> Ladder {
    let mut l: Ladder = side.iter().map(|(p, s)| (p.clone(), *s)).collect();
    if descending {
        l.reverse();
    }
    l
}

async fn replay_lines(url: &str, key: &str) -> (u16, String, Vec<Value>) {
    let r = client().get(url).header("x-api-key", key).send().await.unwrap();
    let status = r.status().as_u16();
    let ctype = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = r.text().await.unwrap();
    let lines = if status == 200 {
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    } else {
        vec![serde_json::from_str(&text).unwrap()]
    };
    (status, ctype, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn books_rebuilt_from_a_replay_equal_the_history_at_every_bucket() {
    let (db, keys, server) = simulated_on_sqlite(11, |_| {}).await;
    let id = |m: Value| m["market_id"].as_str().unwrap().to_string();
    let a = id(long_btc_market(&server, "venue_a", &keys.free).await);
    let b = id(long_btc_market(&server, "venue_b", &keys.free).await);

    // A window of 8 s that starts once both books are recorded, replayed once the history holds rows past it.
    let latest = |venue: &'static str, id: String| {
        let url = server.url(&format!("/v1/historical/{venue}/orderbook?market_id={id}&limit=1"));
        let key = keys.free.clone();
        async move {
            let v = get_json_key(&url, &key).await?;
            v["snapshots"][0]["timestamp"].as_i64().ok_or(format!("{v}"))
        }
    };
    eventually("rows of both books", 60, async || {
        latest("venue_a", a.clone()).await?;
        latest("venue_b", b.clone()).await
    })
    .await;
    let t0 = Timestamp::now().millis();
    let t1 = t0 + 8_000;
    eventually("rows past the window on both venues", 60, async || {
        for (venue, id) in [("venue_a", a.clone()), ("venue_b", b.clone())] {
            let last = latest(venue, id).await?;
            if last <= t1 {
                return Err(format!("{venue} rows end at {last}, the window at {t1}"));
            }
        }
        Ok(())
    })
    .await;

    let url = server.url(&format!(
        "/v1/replay?market_id=venue_a:{a}&market_id=venue_b:{b}&start_time={t0}&end_time={t1}"
    ));
    let (status, ctype, messages) = replay_lines(&url, &keys.free).await;
    assert_eq!(status, 200, "{messages:?}");
    assert_eq!(ctype, "application/x-ndjson");
    let mut books: BTreeMap<(String, Option<String>), Rebuilt> = BTreeMap::new();
    let mut last_at = i64::MIN;
    let mut trades = 0;
    for m in &messages {
        let at = millis(&m["received_at"]);
        assert!(at >= last_at, "out of time order: {m}");
        assert!((t0..=t1).contains(&at), "outside the window: {m}");
        last_at = at;
        if m["type"] == "trade" {
            trades += 1;
            assert!(m["price"].is_number(), "{m}");
            continue;
        }
        let id = (
            m["market_id"].as_str().unwrap().to_string(),
            m["asset_id"].as_str().map(str::to_string),
        );
        books.entry(id).or_default().apply(m);
    }
    assert_eq!(
        books.len(),
        3,
        "one venue_a book and two venue_b tokens: {:?}",
        books.keys().collect::<Vec<_>>()
    );
    for book in books.values() {
        assert!(
            book.timeline.len() > 5,
            "too few changes to compare: {}",
            book.timeline.len()
        );
    }

    // Every bucket of the history, 1 s wide, holds the book the replay rebuilt at its row's time.
    let hist = |venue: &str, id: &str| {
        server.url(&format!(
            "/v1/historical/{venue}/orderbook?market_id={id}&start_time={t0}&end_time={t1}&granularity=1s&limit=200"
        ))
    };
    let mut compared = 0;
    let rows = get_json_key(&hist("venue_a", &a), &keys.free).await.unwrap();
    for row in rows["snapshots"].as_array().unwrap() {
        let ts = row["timestamp"].as_i64().unwrap().max(t0);
        let book = books[&(a.clone(), None)]
            .at(ts)
            .unwrap_or_else(|| panic!("no book at {ts}: {row}"));
        assert_eq!(
            ordered(&book[0], true),
            ladder(&row["yes_bids"]),
            "venue_a YES bids at {ts}"
        );
        assert_eq!(
            ordered(&book[2], true),
            ladder(&row["no_bids"]),
            "venue_a NO bids at {ts}"
        );
        compared += 1;
    }
    let rows = get_json_key(&hist("venue_b", &b), &keys.free).await.unwrap();
    for row in rows["snapshots"].as_array().unwrap() {
        let ts = row["timestamp"].as_i64().unwrap().max(t0);
        let token = row["asset_id"].as_str().unwrap().to_string();
        let book = books[&(b.clone(), Some(token))]
            .at(ts)
            .unwrap_or_else(|| panic!("no book at {ts}: {row}"));
        assert_eq!(ordered(&book[0], true), ladder(&row["bids"]), "venue_b bids at {ts}");
        assert_eq!(ordered(&book[1], false), ladder(&row["asks"]), "venue_b asks at {ts}");
        compared += 1;
    }
    assert!(compared >= 12, "only {compared} buckets compared");
    eprintln!(
        "{} messages ({trades} trades), {compared} buckets equal",
        messages.len()
    );

    // Refused before the stream starts, naming what is wrong.
    let bad = |q: &str| server.url(&format!("/v1/replay?{q}"));
    for (q, status, param) in [
        (
            format!("market_id=venue_a:NOPE&start_time={t0}&end_time={t1}"),
            404,
            None,
        ),
        (
            format!("market_id=venue_a:{a}&start_time={t1}&end_time={t0}"),
            400,
            Some("start_time"),
        ),
        (
            format!("market_id=venue_a:{a}&start_time=978307200000&end_time={t1}"),
            400,
            Some("end_time"),
        ),
        (
            format!("market_id={a}&start_time={t0}&end_time={t1}"),
            400,
            Some("market_id"),
        ),
        (
            format!("market_id=venue_a:{a}&start_time=yesterday&end_time={t1}"),
            400,
            Some("start_time"),
        ),
    ] {
        let (got, ctype, body) = replay_lines(&bad(&q), &keys.free).await;
        assert_eq!(got, status, "{q}: {body:?}");
        assert!(
            ctype.starts_with("application/json"),
            "{q}: an error body, not a stream"
        );
        assert_eq!(body[0]["param"].as_str(), param, "{q}: {body:?}");
    }
    let (got, _, _) = replay_lines(
        &bad(&format!("market_id=venue_a:{a}&start_time={t0}&end_time={t1}")),
        "",
    )
    .await;
    assert_eq!(got, 401, "a key is required");

    server.stop().await.unwrap();
    db.cleanup().await;
}

/// A client that stops reading and goes away ends the replay: the metric of replays that ended that way
/// counts it, and no replay is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_ends_its_replay() {
    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    seed_catalog(&db.store).await;
    let keys = create_keys(&db.store).await;
    // A long recorded history: 200,000 changes of one book, far more than a socket buffers.
    let key = BookKey::venue_a(M_BTC_A);
    let id = db.store.register_log_books(std::slice::from_ref(&key)).await.unwrap()[0].id;
    // An hour ago: recent, and whole minutes, as the log is written.
    let t0 = (Timestamp::now().millis() / 60_000 - 60) * 60_000;
    let level = |cents: i64, size: i64| Level {
        price: Price::from_cents(cents),
        size: Amount::from_units(size),
    };
    let mut events = vec![BookEvent {
        seq: 1,
        venue_seq: None,
        venue_ts: None,
        received_at: Timestamp::from_millis(t0),
        change: BookChange::Snapshot {
            bids: vec![level(40, 10)],
            asks: vec![],
            no_bids: vec![level(55, 10)],
        },
    }];
    for seq in 2..=200_000u64 {
        events.push(BookEvent {
            seq,
            venue_seq: None,
            venue_ts: None,
            received_at: Timestamp::from_millis(t0 + seq as i64),
            change: BookChange::Delta(vec![LevelChange {
                side: Side::Bid,
                price: Price::from_cents(40),
                size: Amount::from_units(1 + (seq % 50) as i64),
            }]),
        });
    }
    for part in events.chunks(20_000) {
        db.store
            .append_log(&[LogRun {
                book_id: id,
                events: part.to_vec(),
            }])
            .await
            .unwrap();
    }
    // Retention off: its pass at start must not race the replay for the seeded history.
    let config = Config {
        retention_days: 0,
        ..Config::for_tests(&db.url)
    };
    let server = Server::start(config).await;
    let url = server.url(&format!(
        "/v1/replay?exchange=venue_a&market_id={M_BTC_A}&start_time={t0}&end_time={}",
        t0 + 300_000
    ));
    let mut r = client()
        .get(&url)
        .header("x-api-key", &keys.trader)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let first = r.chunk().await.unwrap().expect("a first piece");
    let line: Value = serde_json::from_slice(first.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(line["type"], "book_snapshot", "{line}");
    drop(r);

    eventually("the replay to end as client_gone", 30, async || {
        let gone = metric(&server, "crossbook_replays_total{ended=\"client_gone\"}").await?;
        if gone >= 1.0 {
            Ok(())
        } else {
            Err(format!("client_gone = {gone}"))
        }
    })
    .await;
    tokio::time::timeout(Duration::from_secs(10), server.stop())
        .await
        .unwrap()
        .unwrap();
    db.cleanup().await;
}

/// A level change as both sides render it, with the price's trailing zeros dropped (the stream writes 4
/// decimals, the replay 6) and the size read as a number.
fn changes_of(m: &Value) -> Vec<(String, String, String)> {
    m["changes"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|l| {
                    let price = l["price"].as_str().unwrap_or_default();
                    let price = price.trim_end_matches('0').trim_end_matches('.').to_string();
                    // Sizes are numbers on both sides (`173` or `173.0`): compared as values, not as text.
                    let size = l["size"].as_f64().map(|s| s.to_string()).unwrap_or_default();
                    (l["side"].to_string(), price, size)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The live stream's `book_seq` and the replay's `seq` number the same events, so a client backfills with a
/// replay up to N and continues live from N+1: every change the stream sent is in the replay under its
/// `book_seq`, with the same levels, and the replay's numbers run on without a seam. Checked after a restart
/// on the same database, where the numbering goes on from what the first process stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_streams_book_seq_is_the_replays_seq() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let config = Config {
        simulate: true,
        sim_seed: 12,
        ..Config::for_tests(&db.url)
    };
    // A first process records the book for a while, then stops.
    let started = Timestamp::now().millis() - 1_000;
    let server = Server::start_simulated_on(config.clone(), db.store.clone()).await;
    let a = long_btc_market(&server, "venue_a", &keys.free).await["market_id"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = eventually("the first process's events in the log", 60, async || {
        let url = server.url(&format!(
            "/v1/replay?market_id=venue_a:{a}&start_time={started}&end_time={}",
            Timestamp::now().millis()
        ));
        let (status, _, lines) = replay_lines(&url, &keys.free).await;
        let top = lines.iter().filter_map(|m| m["seq"].as_u64()).max().unwrap_or(0);
        (top >= 5)
            .then_some(top)
            .ok_or(format!("status {status}, seq {top} so far"))
    })
    .await;
    server.stop().await.unwrap();

    // Stopping a process closes the store it was given: the second opens the database itself.
    let server = Server::start_simulated(config).await;
    let t0 = Timestamp::now().millis() - 1_000;
    // The second process serves once its store and ingestion are up.
    let mut ws = eventually("the second process's stream", 60, async || {
        let mut req = format!("ws://{}/v1/stream", server.addr).into_client_request().unwrap();
        req.headers_mut().insert("x-api-key", keys.free.parse().unwrap());
        tokio_tungstenite::connect_async(req)
            .await
            .map(|(ws, _)| ws)
            .map_err(|e| e.to_string())
    })
    .await;
    ws.send(Message::text(
        serde_json::json!({"op": "subscribe", "channel": "book", "markets": [a]}).to_string(),
    ))
    .await
    .unwrap();
    // The stream's book messages, by book_seq, until a snapshot and six changes after it.
    let mut live: BTreeMap<u64, Value> = BTreeMap::new();
    tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let Some(Ok(Message::Text(t))) = ws.next().await else {
                continue;
            };
            let m: Value = serde_json::from_str(t.as_str()).unwrap();
            if matches!(m["type"].as_str(), Some("snapshot" | "change" | "stale")) {
                live.insert(m["book_seq"].as_u64().expect("book_seq on every book message"), m);
            }
            let changes = live.values().filter(|m| m["type"] == "change").count();
            if live.values().any(|m| m["type"] == "snapshot") && changes >= 6 {
                return;
            }
        }
    })
    .await
    .expect("a snapshot and six changes within 120 s");
    drop(ws);
    let last = *live.keys().last().unwrap();
    assert!(
        *live.keys().next().unwrap() > stored,
        "the second process numbers on from the {stored} events stored: {:?}",
        live.keys()
    );

    // The replay holds every one of them once the log is flushed.
    let logged = eventually("the streamed events in the replay", 60, async || {
        let url = server.url(&format!(
            "/v1/replay?market_id=venue_a:{a}&start_time={t0}&end_time={}",
            Timestamp::now().millis()
        ));
        let (status, _, lines) = replay_lines(&url, &keys.free).await;
        let by_seq: BTreeMap<u64, Value> = lines
            .into_iter()
            .filter_map(|m| Some((m["seq"].as_u64()?, m)))
            .collect();
        (status == 200 && by_seq.contains_key(&last))
            .then_some(by_seq)
            .ok_or(format!("status {status}, not yet at seq {last}"))
    })
    .await;
    let mut compared = 0;
    for (n, m) in &live {
        let r = logged
            .get(n)
            .unwrap_or_else(|| panic!("book_seq {n} is not in the replay: {m}"));
        match m["type"].as_str().unwrap() {
            "change" => {
                assert_eq!(r["type"], "book_change", "seq {n}: {r} vs {m}");
                assert_eq!(changes_of(r), changes_of(m), "seq {n}: the same levels");
                compared += 1;
            }
            "stale" => assert_eq!(r["type"], "gap", "seq {n}: {r} vs {m}"),
            _ => assert!(
                matches!(r["type"].as_str(), Some("book_snapshot" | "book_change")),
                "seq {n}: {r}"
            ),
        }
    }
    assert!(compared >= 6, "only {compared} changes compared");
    // No seam: from the stream's first number to its last the replay has every number.
    let first = *live.keys().next().unwrap();
    let numbers: Vec<u64> = logged.range(first..=last).map(|(n, _)| *n).collect();
    assert_eq!(
        numbers,
        (first..=last).collect::<Vec<_>>(),
        "the replay's numbers run on"
    );
    // The restart itself is a numbered gap in the log, after the first process's events.
    assert!(
        logged
            .values()
            .any(|m| m["type"] == "gap" && m["seq"].as_u64().is_some_and(|n| n > stored && n < first)),
        "a restart gap between {stored} and {first}"
    );
    server.stop().await.unwrap();
    db.cleanup().await;
}
