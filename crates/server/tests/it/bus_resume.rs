//! A stream client resumes on another api process of the same deployment, with a real `nats-server` and a
//! shared PostgreSQL database: one ingesting leader over the simulator and two `--role api` processes
//! mirroring it. A client cut from the first process, which then stops, resumes on the second with its
//! session, its last `seq` and its last `pos`, and gets every book message it missed, numbered on, exactly
//! as a client that stayed on the second process got them; a resume from a position the bus no longer holds
//! gets `reset`, with its subscriptions kept.

use std::time::Duration;

use crossbook_live::testing::{NatsServer, nats_binary};
use crossbook_server::config::Config;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_tungstenite::{
    MaybeTlsStream, WebSocketStream, connect_async,
    tungstenite::{Message, client::IntoClientRequest},
};

use crate::{
    bus::{live_venue_a_market, mirroring_api_process, mirroring_api_processes},
    util::*,
};

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens a stream with the key in the header, at `query` (a resume, or nothing).
async fn open(server: &Server, key: &str, query: &str) -> Socket {
    let mut req = format!("ws://{}/v1/stream{query}", server.addr)
        .into_client_request()
        .unwrap();
    req.headers_mut().insert("x-api-key", key.parse().unwrap());
    connect_async(req).await.expect("upgrade").0
}

/// The next message before `deadline`.
async fn next(ws: &mut Socket, deadline: Instant) -> Value {
    loop {
        let m = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("a message within the deadline");
        match m {
            Some(Ok(Message::Text(t))) => return serde_json::from_str(t.as_str()).unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("the stream ended: {other:?}"),
        }
    }
}

fn is_book(m: &Value) -> bool {
    matches!(m["type"].as_str(), Some("snapshot" | "change" | "stale"))
}

/// (type, book_seq) of a book message.
fn book(m: &Value) -> (String, u64) {
    (m["type"].as_str().unwrap().to_string(), m["book_seq"].as_u64().unwrap())
}

fn subscribe(market: &str) -> Message {
    Message::text(json!({"op": "subscribe", "channel": "book", "markets": [market]}).to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resumes_on_another_api_process_without_losing_a_message() {
    let Some(bin) = nats_binary() else { return };
    let Some(db) = crossbook_store::testing::postgres_database().await else {
        return; // roles need a shared PostgreSQL
    };
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    let nats = NatsServer::start(bin);

    let leader = Server::start_simulated(Config {
        simulate: true,
        sim_seed: 11,
        bus_url: nats.url(),
        ..Config::for_tests(&db.url)
    })
    .await;
    let apis = mirroring_api_processes(&db.url, &nats.url()).await;
    let [first, second] = apis;
    let market = live_venue_a_market(&leader, &keys.free).await;

    // A client that stays on the second process the whole time: what every client of the book gets.
    let mut stayer = open(&second, &keys.free, "").await;
    stayer.send(subscribe(&market)).await.unwrap();
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<(String, u64)>();
    let watcher = tokio::spawn(async move {
        while let Some(Ok(m)) = stayer.next().await {
            if let Message::Text(t) = m {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                if is_book(&v) && seen_tx.send(book(&v)).is_err() {
                    break;
                }
            }
        }
    });

    // The client on the first process: its session, and a few of the book's messages, each with a position.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut ws = open(&first, &keys.free, "").await;
    let welcome = next(&mut ws, deadline).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    let session = welcome["session"].as_str().unwrap().to_string();
    ws.send(subscribe(&market)).await.unwrap();
    let (mut last_seq, mut last_pos, mut last_book) = (0u64, 0u64, None::<(String, u64)>);
    let mut changes = 0;
    while changes < 3 {
        let m = next(&mut ws, deadline).await;
        last_seq = m["seq"].as_u64().unwrap();
        if m["channel"] == "book" {
            let pos = m["pos"]
                .as_u64()
                .unwrap_or_else(|| panic!("an api process's message has a pos: {m}"));
            assert!(pos >= last_pos, "positions never go back: {m} after {last_pos}");
            last_pos = pos;
        }
        if is_book(&m) {
            changes += usize::from(m["type"] == "change");
            last_book = Some(book(&m));
        }
    }
    let (_, cut_at) = last_book.unwrap();
    // The connection is cut without a word, and the first process stops.
    drop(ws);
    first.stop().await.unwrap();

    // The book moves on meanwhile: the client misses a few changes.
    let mut stayed: Vec<(String, u64)> = Vec::new();
    while stayed.last().is_none_or(|(_, n)| *n < cut_at + 3) {
        let m = tokio::time::timeout_at(deadline, seen.recv())
            .await
            .expect("the book moves on")
            .unwrap();
        stayed.push(m);
    }

    // Resumed on the second process: every message missed, numbered on from resume_from, then `resumed`,
    // then the live messages, and the book chains on from where the client was cut.
    let q = format!("?session={session}&resume_from={last_seq}&resume_pos={last_pos}");
    let mut ws = open(&second, &keys.free, &q).await;
    let mut got: Vec<(String, u64)> = Vec::new();
    let mut expect_seq = last_seq + 1;
    let (mut resumed, mut replayed) = (false, 0);
    // Until the replay is over and two live book messages have followed it.
    while !resumed || got.len() < replayed + 2 {
        let m = next(&mut ws, deadline).await;
        assert_ne!(m["type"], "reset", "{m}");
        assert_ne!(m["type"], "welcome", "{m}");
        assert_eq!(m["seq"].as_u64(), Some(expect_seq), "numbered on: {m}");
        expect_seq += 1;
        if m["type"] == "resumed" {
            assert_eq!(m["session"], session.as_str(), "{m}");
            assert_eq!(m["from"].as_u64(), Some(last_seq), "{m}");
            resumed = true;
        }
        if is_book(&m) {
            let pos = m["pos"].as_u64().unwrap();
            assert!(pos > last_pos, "after the client's position: {m}");
            got.push(book(&m));
            replayed += usize::from(!resumed);
        }
    }
    assert!(resumed, "the replay ends with `resumed`");
    assert!(
        replayed >= 3,
        "the changes missed while away came from the replay, before `resumed`: {got:?}"
    );
    let mut at = cut_at;
    for (kind, n) in &got {
        assert_eq!(*n, at + 1, "no hole and no repeat after {at}: {got:?}");
        assert_ne!(kind, "stale", "{got:?}");
        at = *n;
    }
    // The same messages as the client that stayed.
    while stayed.last().is_none_or(|(_, n)| *n < at) {
        stayed.push(
            tokio::time::timeout_at(deadline, seen.recv())
                .await
                .expect("the stayer's messages")
                .unwrap(),
        );
    }
    let stayed: Vec<(String, u64)> = stayed.into_iter().filter(|(_, n)| *n > cut_at && *n <= at).collect();
    assert_eq!(got, stayed, "the resumed client got what the stayer got");
    let counted = eventually("the resume counted", 10, async || {
        let n = metric(&second, "crossbook_stream_resumes_elsewhere_total{result=\"resumed\"}").await?;
        (n == 1.0).then_some(n).ok_or(format!("{n}"))
    })
    .await;
    assert_eq!(counted, 1.0);

    // A position the bus no longer holds: the session is known, its subscriptions kept, its messages gone.
    // The bus's window is at least a minute; dropping the events it holds up to now stands for its passing.
    // (Another customer: the first holds as many streams as its plan allows.)
    let mut other = open(&second, &keys.trader, "").await;
    let welcome = next(&mut other, deadline).await;
    let old_session = welcome["session"].as_str().unwrap().to_string();
    other.send(subscribe(&market)).await.unwrap();
    let (mut old_seq, mut old_pos) = (0, 0);
    loop {
        let m = next(&mut other, deadline).await;
        old_seq = m["seq"].as_u64().unwrap_or(old_seq);
        old_pos = m["pos"].as_u64().unwrap_or(old_pos);
        if m["type"] == "snapshot" {
            break;
        }
    }
    drop(other);
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let mut events = js.get_stream(crossbook_live::nats::EVENTS_STREAM).await.unwrap();
    // The stream's last message, once it is numbered past the client's position.
    let last = eventually("events after the client's position", 30, async || {
        let last = events.info().await.map_err(|e| e.to_string())?.state.last_sequence;
        let msg = events.get_raw_message(last).await.map_err(|e| e.to_string())?;
        let env = crossbook_live::nats::wire::Envelope::decode(&msg.payload).map_err(|e| e.to_string())?;
        (env.seq > old_pos + 1)
            .then_some(last)
            .ok_or(format!("{} at {last}", env.seq))
    })
    .await;
    events.purge().sequence(last + 1).await.unwrap();
    // Another process than the one that held it: the first one is gone, so a third.
    let third = mirroring_api_process(&db.url, &nats.url()).await;
    let q = format!("?session={old_session}&resume_from={old_seq}&resume_pos={old_pos}");
    let mut ws = open(&third, &keys.trader, &q).await;
    let welcome = next(&mut ws, deadline).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert_eq!(welcome["session"], old_session.as_str(), "the same session: {welcome}");
    let reset = next(&mut ws, deadline).await;
    assert_eq!(reset["type"], "reset", "{reset}");
    assert!(
        reset["reason"].as_str().is_some_and(|r| r.contains("no longer held")),
        "{reset}"
    );
    loop {
        let m = next(&mut ws, deadline).await;
        if is_book(&m) {
            assert_eq!(
                m["type"], "snapshot",
                "the subscription is kept, from a fresh snapshot: {m}"
            );
            assert_eq!(m["market_id"], market.as_str(), "{m}");
            break;
        }
    }
    let n = metric(&third, "crossbook_stream_resumes_elsewhere_total{result=\"reset\"}")
        .await
        .unwrap();
    assert_eq!(n, 1.0);

    // An unknown session is reset as one that expired.
    let mut ws = open(&third, &keys.trader, "?session=s_nobody&resume_from=3&resume_pos=5").await;
    let welcome = next(&mut ws, deadline).await;
    assert_ne!(welcome["session"], "s_nobody", "{welcome}");
    let reset = next(&mut ws, deadline).await;
    assert!(
        reset["reason"]
            .as_str()
            .is_some_and(|r| r.contains("unknown or expired")),
        "{reset}"
    );

    watcher.abort();
    third.stop().await.unwrap();
    second.stop().await.unwrap();
    leader.stop().await.unwrap();
    db.cleanup().await;
}
