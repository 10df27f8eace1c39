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

/// (type, book_seq) of a book message; (type, 0) of a notice.
fn book_or_notice(m: &Value) -> (String, u64) {
    if is_book(m) {
        book(m)
    } else {
        (m["type"].as_str().unwrap_or_default().to_string(), 0)
    }
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
                let kept = is_book(&v) || v["type"] == "lagged" || v["type"] == "reset";
                if kept && seen_tx.send(book_or_notice(&v)).is_err() {
                    break;
                }
            }
        }
    });

    // The second process holds the book (its mirror may still be repairing it from the leader's keyframes).
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut stayed: Vec<(String, u64)> = Vec::new();
    while stayed.last().is_none_or(|(k, _)| k != "snapshot") {
        stayed.push(
            tokio::time::timeout_at(deadline, seen.recv())
                .await
                .expect("the book at the second process")
                .unwrap(),
        );
    }

    // The client on the first process: its session, and a few of the book's messages, each with a position.
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
    // The replayed messages chain on exactly from where the client was cut. The live ones after `resumed`
    // follow this process's own book, which a loaded machine may have had to repair from the leader's
    // keyframes meanwhile: there a `stale` and a later `snapshot` may restart the chain, as for any client.
    let mut at = cut_at;
    let mut repaired = false;
    for (i, (kind, n)) in got.iter().enumerate() {
        let live = i >= replayed;
        match kind.as_str() {
            "stale" if live => repaired = true,
            "snapshot" if live && *n > at => {
                repaired = true;
                at = *n;
            }
            _ => {
                assert_eq!(kind, "change", "{got:?}");
                assert_eq!(*n, at + 1, "no hole and no repeat after {at}: {got:?}");
                at = *n;
            }
        }
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
    let notices: Vec<String> = stayed
        .iter()
        .filter(|(k, _)| k == "lagged" || k == "reset")
        .map(|(k, _)| k.clone())
        .collect();
    let stayed: Vec<(String, u64)> = stayed.into_iter().filter(|(_, n)| *n > cut_at && *n <= at).collect();
    // The stayer's process may have repaired its own book from a keyframe after a message the bus dropped on
    // the way to it; the resumed client's replay came from the event stream, which holds every change, so
    // it chains on with changes where the stayer got the repair's snapshot.
    let stayer_repaired = stayed.iter().any(|(k, _)| k == "snapshot" || k == "stale");
    if notices.is_empty() && !repaired && !stayer_repaired {
        assert_eq!(got, stayed, "the resumed client got what the stayer got");
    } else {
        // The stayer fell behind its process's bus, or a process repaired the book: every change the
        // stayer got, the resumed client got too.
        eprintln!("the client that stayed got {notices:?}: {stayed:?}; the resumed one {got:?}");
        for m in stayed.iter().filter(|(k, _)| k == "change") {
            assert!(got.contains(m), "{m:?} of the stayer: {got:?}");
        }
    }
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
