//! The live stream (`/v1/stream`) over real sockets: the protocol, gating and limits, resume within and
//! beyond the buffer, a slow consumer cut, heartbeats, close frames on shutdown, and, against the simulated
//! venues, books rebuilt from the stream that equal the live book.

use std::{collections::BTreeMap, net::SocketAddr, sync::Arc, time::Duration};

use crossbook_core::{Amount, BookSnapshot, Exchange, Level, Outcome, Price, TakerSide, Timestamp, Trade};
use crossbook_live::{BookKey, DomainEvent};
use crossbook_server::{
    config::{Config, Role},
    state::LockStance,
};
use crossbook_store::testing::{TestDb, sqlite_database};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::{
    MaybeTlsStream, WebSocketStream,
    tungstenite::{Message, client::IntoClientRequest},
};
use tokio_util::sync::CancellationToken;

use crate::util::*;

const WAIT: Duration = Duration::from_secs(10);

/// The stream does not depend on the backend (its keys come through the same cache), so these tests use
/// SQLite only.
async fn migrated_sqlite() -> TestDb {
    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    db
}

/// A stream client.
pub(crate) struct Ws {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// How a read ended when it did not produce a message.
#[derive(Debug, PartialEq)]
enum Ended {
    Closed(Option<(u16, String)>),
    Eof,
}

impl Ws {
    pub(crate) async fn connect(addr: SocketAddr, query: &str, key: Option<&str>) -> Ws {
        Self::try_connect(addr, query, key).await.expect("upgrade")
    }

    async fn try_connect(
        addr: SocketAddr,
        query: &str,
        key: Option<&str>,
    ) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
        let mut req = format!("ws://{addr}/v1/stream{query}").into_client_request().unwrap();
        if let Some(k) = key {
            req.headers_mut().insert("x-api-key", k.parse().unwrap());
        }
        let (ws, _) = tokio_tungstenite::connect_async(req).await?;
        Ok(Ws { ws })
    }

    pub(crate) async fn send(&mut self, v: Value) {
        self.ws.send(Message::Text(v.to_string().into())).await.unwrap();
    }

    /// The next JSON message, or how the connection ended.
    async fn read(&mut self) -> Result<Value, Ended> {
        loop {
            let m = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a message within the deadline");
            match m {
                Some(Ok(Message::Text(t))) => return Ok(serde_json::from_str(t.as_str()).unwrap()),
                Some(Ok(Message::Close(f))) => {
                    return Err(Ended::Closed(f.map(|f| (u16::from(f.code), f.reason.to_string()))));
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Err(Ended::Eof),
            }
        }
    }

    pub(crate) async fn next(&mut self) -> Value {
        self.read().await.expect("an open stream")
    }

    /// Reads past every message to how the connection ended.
    async fn until_closed(&mut self) -> Ended {
        loop {
            if let Err(e) = self.read().await {
                return e;
            }
        }
    }

    /// The next message of `kind`, skipping others.
    pub(crate) async fn next_of(&mut self, kind: &str) -> Value {
        loop {
            let m = self.next().await;
            if m["type"] == kind {
                return m;
            }
        }
    }
}

/// The app over a test database, served on a real socket with its stream hub running, so tests can
/// publish on its bus and read its live books.
struct Served {
    app: TestApp,
    addr: SocketAddr,
    stop: CancellationToken,
}

impl Served {
    async fn start(db: &TestDb, tune: impl FnOnce(&mut Config)) -> Served {
        let app = TestApp::new(db, tune);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let hub = app.state.stream.clone();
        tokio::spawn(hub.clone().run(app.state.bus.subscribe(), stop.clone()));
        let router = app.router.clone();
        let s = stop.clone();
        // The server's own listener (timeouts, connection cap), as `serve` runs it.
        let limits = crossbook_server::http::Limits::new(&app.state.config, None);
        tokio::spawn(async move {
            crossbook_server::http::serve(listener, router, limits, async move {
                s.cancelled().await;
                hub.close();
            })
            .await
            .unwrap();
        });
        // The hub subscribed to the bus before anything is published.
        while app.state.bus.receiver_count() == 0 {
            tokio::task::yield_now().await;
        }
        Served { app, addr, stop }
    }

    fn publish(&self, ev: DomainEvent) {
        self.app.state.bus.publish(ev);
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A migrated database with a key of each plan, and the app served over it.
async fn served(tune: impl FnOnce(&mut Config)) -> (TestDb, Keys, Served) {
    let db = migrated_sqlite().await;
    let keys = create_keys(&db.store).await;
    let s = Served::start(&db, tune).await;
    (db, keys, s)
}

fn trade(n: u64) -> Trade {
    Trade {
        exchange: Exchange::VenueA,
        source_trade_id: format!("t{n}"),
        market_id: "KX-M".into(),
        event_id: "KX-E".into(),
        executed_at: Timestamp::from_millis(1_000 + n as i64),
        taker_side: TakerSide::Buy,
        outcome: Outcome::Yes,
        price: Price::from_cents(53),
        size: Amount::from_units(10),
    }
}

fn book(market: &str, bid_cents: i64, size: i64) -> BookSnapshot {
    BookSnapshot {
        exchange: Exchange::VenueA,
        market_id: market.into(),
        asset_id: None,
        timestamp: Timestamp::now(),
        bids: vec![Level {
            price: Price::from_cents(bid_cents),
            size: Amount::from_units(size),
        }],
        asks: vec![],
        no_bids: vec![],
    }
}

#[tokio::test]
async fn subscribe_gets_a_snapshot_then_changes_in_book_seq_order() {
    let (db, keys, s) = served(|_| {}).await;
    s.app.state.live.upsert(book("KX-M", 50, 10));

    let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let welcome = ws.next().await;
    assert_eq!(
        (welcome["type"].as_str(), welcome["seq"].as_u64()),
        (Some("welcome"), Some(1))
    );
    assert_eq!(welcome["plan"], "free");
    assert_eq!(welcome["limits"], json!({"connections": 2, "markets": 50}));
    ws.send(json!({"op": "subscribe", "channel": "book", "markets": ["KX-M"]}))
        .await;
    let sub = ws.next().await;
    assert_eq!(
        (sub["type"].as_str(), sub["channel"].as_str()),
        (Some("subscribed"), Some("book"))
    );
    let snap = ws.next().await;
    assert_eq!(snap["type"], "snapshot");
    assert_eq!(snap["seq"], 3, "one more per message");
    assert_eq!(snap["book_seq"], 1);
    assert_eq!(snap["bids"], json!([{"price": "0.5000", "size": 10.0}]));
    for field in ["sent_at", "received_at", "venue_ts"] {
        assert!(snap[field].is_string(), "{field}: {snap}");
    }

    // A change as ingestion publishes it: live map first, then the bus.
    let seq = s.app.state.live.upsert(book("KX-M", 51, 4)).unwrap();
    s.publish(DomainEvent::BookUpdated(Arc::new(crossbook_live::BookChanged {
        key: BookKey::venue_a("KX-M"),
        book_seq: seq,
        timestamp: Timestamp::now(),
        change: crossbook_core::book::BookChange::Delta(vec![crossbook_core::book::LevelChange {
            side: crossbook_core::book::Side::Bid,
            price: Price::from_cents(51),
            size: Amount::from_units(4),
        }]),
        venue_ts: None,
        received_at: Timestamp::now(),
    })));
    let change = ws.next().await;
    assert_eq!(change["type"], "change");
    assert_eq!(change["book_seq"], 2);
    assert_eq!(
        change["changes"],
        json!([{"side": "bid", "price": "0.5100", "size": 4.0}])
    );

    // A change the session cannot follow (book_seq jumps) is replaced by a fresh snapshot.
    s.app.state.live.upsert(book("KX-M", 52, 1));
    let seq = s.app.state.live.upsert(book("KX-M", 53, 1)).unwrap();
    s.publish(DomainEvent::book_touched(BookKey::venue_a("KX-M"), Timestamp::now()));
    let mut touched = DomainEvent::book_touched(BookKey::venue_a("KX-M"), Timestamp::now());
    if let DomainEvent::BookUpdated(c) = &mut touched {
        Arc::make_mut(c).book_seq = seq;
    }
    s.publish(touched);
    let snap = ws.next().await;
    assert_eq!(
        (snap["type"].as_str(), snap["book_seq"].as_u64()),
        (Some("snapshot"), Some(seq))
    );
    assert_eq!(snap["bids"], json!([{"price": "0.5300", "size": 1.0}]));

    // Stale, then unsubscribe: nothing more for that market.
    // The gap takes the book's next number; the change after it cannot follow and comes as a snapshot.
    let marked = s.app.state.live.mark_stale([&BookKey::venue_a("KX-M")]);
    assert_eq!(marked.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [seq + 1]);
    s.publish(DomainEvent::BooksStale {
        exchange: Exchange::VenueA,
        keys: vec![BookKey::venue_a("KX-M")],
        book_seqs: vec![seq + 1],
        cause: crossbook_core::book::GapCause::Disconnect,
        at: Timestamp::now(),
    });
    let stale = ws.next().await;
    assert_eq!(
        (
            stale["type"].as_str(),
            stale["cause"].as_str(),
            stale["book_seq"].as_u64()
        ),
        (Some("stale"), Some("disconnect"), Some(seq + 1))
    );
    let after = s.app.state.live.upsert(book("KX-M", 54, 1)).unwrap();
    assert_eq!(after, seq + 2);
    let mut touched = DomainEvent::book_touched(BookKey::venue_a("KX-M"), Timestamp::now());
    if let DomainEvent::BookUpdated(c) = &mut touched {
        Arc::make_mut(c).book_seq = after;
        Arc::make_mut(c).change = crossbook_core::book::BookChange::Delta(vec![crossbook_core::book::LevelChange {
            side: crossbook_core::book::Side::Bid,
            price: crossbook_core::Price::from_cents(54),
            size: crossbook_core::Amount::from_units(1),
        }]);
    }
    s.publish(touched);
    let snap = ws.next().await;
    assert_eq!(
        (snap["type"].as_str(), snap["book_seq"].as_u64()),
        (Some("snapshot"), Some(after)),
        "after a stale, a snapshot: {snap}"
    );
    ws.send(json!({"op": "unsubscribe", "channel": "book"})).await;
    assert_eq!(ws.next().await["type"], "unsubscribed");
    s.publish(DomainEvent::book_touched(BookKey::venue_a("KX-M"), Timestamp::now()));
    ws.send(json!({"op": "ping"})).await;
    assert_eq!(
        ws.next().await["type"],
        "pong",
        "nothing came for the market unsubscribed"
    );
    db.cleanup().await;
}

#[tokio::test]
async fn channels_are_gated_by_plan_and_refusals_keep_the_connection_open() {
    let db = migrated_sqlite().await;
    let keys = create_keys(&db.store).await;
    seed_catalog(&db.store).await;
    let s = Served::start(&db, |_| {}).await;

    // An invalid key in the header is refused at the upgrade; a plain GET is a 400.
    let err = Ws::try_connect(s.addr, "", Some(UNKNOWN_KEY))
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("401"), "{err}");
    let r = s.app.get("/v1/stream").await;
    r.error(400, "invalid_parameter", None);
    let r = s.app.get("/v1/stream?session=s_x").await;
    r.error(400, "invalid_parameter", Some("session"));

    // No key: anything but auth and ping is refused; the key may come as the first message.
    let mut ws = Ws::connect(s.addr, "", None).await;
    assert_eq!(ws.next().await["plan"], Value::Null);
    ws.send(json!({"op": "subscribe", "channel": "status"})).await;
    let e = ws.next().await;
    assert_eq!(
        (e["type"].as_str(), e["code"].as_str()),
        (Some("error"), Some("unauthorized"))
    );
    ws.send(json!({"op": "auth", "key": UNKNOWN_KEY})).await;
    assert_eq!(ws.next().await["code"], "unauthorized");
    ws.send(json!({"op": "auth", "key": keys.free})).await;
    let a = ws.next().await;
    assert_eq!(
        (a["type"].as_str(), a["plan"].as_str()),
        (Some("authenticated"), Some("free"))
    );

    // Free: whales need Builder, arbitrage Trader; the error names the plan.
    for (channel, plan, words) in [("whales", "builder", "Builder"), ("arbitrage", "trader", "Trader")] {
        ws.send(json!({"op": "subscribe", "channel": channel})).await;
        let e = ws.next().await;
        assert_eq!(e["code"], "entitlement_required", "{e}");
        assert_eq!(
            (e["channel"].as_str(), e["required_plan"].as_str()),
            (Some(channel), Some(plan))
        );
        assert!(
            e["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("requires the {words} plan")),
            "{e}"
        );
    }
    // Bad messages get an error naming the field; the connection stays open.
    for (msg, param) in [
        ("{not json", "op"),
        (r#"{"op":"dance"}"#, "op"),
        (r#"{"op":"subscribe","channel":"news"}"#, "channel"),
        (r#"{"op":"subscribe","channel":"book"}"#, "markets"),
        (
            r#"{"op":"subscribe","channel":"book","markets":["NO-SUCH-MARKET"]}"#,
            "markets",
        ),
    ] {
        ws.ws.send(Message::Text(msg.into())).await.unwrap();
        let e = ws.next().await;
        assert_eq!(
            (e["code"].as_str(), e["param"].as_str()),
            (Some("invalid_parameter"), Some(param)),
            "{msg}: {e}"
        );
    }
    ws.ws.send(Message::Binary(vec![1, 2, 3].into())).await.unwrap();
    assert_eq!(ws.next().await["code"], "invalid_parameter");
    // A market of the catalog is accepted although no book is live yet.
    ws.send(json!({"op": "subscribe", "channel": "book", "markets": [M_BTC_A, M_BTC_B]}))
        .await;
    let sub = ws.next().await;
    assert_eq!(sub["type"], "subscribed", "{sub}");

    // Builder gets whales, and the whale.entry data in them.
    let mut b = Ws::connect(s.addr, "", Some(&keys.builder)).await;
    b.next().await;
    b.send(json!({"op": "subscribe", "channel": "whales"})).await;
    assert_eq!(b.next().await["type"], "subscribed");
    s.publish(DomainEvent::WhaleEntry(Arc::new(crossbook_core::whale::WhaleEntry {
        trade: trade(1),
        market: None,
        event_title: None,
    })));
    let w = b.next().await;
    assert_eq!(
        (w["type"].as_str(), w["channel"].as_str()),
        (Some("whale"), Some("whales"))
    );
    assert_eq!(w["data"]["source_trade_id"], "t1");
    assert_eq!(w["data"]["notional_usd"], 5.3);
    db.cleanup().await;
}

#[tokio::test]
async fn plans_limit_connections_and_markets() {
    let (db, keys, s) = served(|c| {
        c.stream_connections_free = 2;
        c.stream_markets_free = 2;
    })
    .await;
    for m in ["A", "B", "C"] {
        s.app.state.live.upsert(book(m, 50, 1));
    }
    let mut one = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let _two = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let mut three = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let e = three.next().await;
    assert_eq!(
        (e["type"].as_str(), e["code"].as_str()),
        (Some("error"), Some("limit_exceeded"))
    );
    assert_eq!(
        three.read().await,
        Err(Ended::Closed(Some((1008, "connection limit reached".into()))))
    );
    // Another customer is not held back by this one's streams.
    let mut other = Ws::connect(s.addr, "", Some(&keys.trader)).await;
    assert_eq!(other.next().await["type"], "welcome");

    one.next().await;
    one.send(json!({"op": "subscribe", "channel": "book", "markets": ["A", "B", "C"]}))
        .await;
    let e = one.next().await;
    assert_eq!(
        (e["code"].as_str(), e["param"].as_str()),
        (Some("limit_exceeded"), Some("markets"))
    );
    one.send(json!({"op": "subscribe", "channel": "book", "markets": ["A", "B"]}))
        .await;
    assert_eq!(one.next_of("subscribed").await["markets"], json!(["A", "B"]));
    // A connection closed frees its place.
    drop(one);
    let mut again = crossbook_store::testing::eventually("a free place after a close", WAIT, async || {
        let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
        (ws.next().await["type"] == "welcome").then_some(ws)
    })
    .await;
    again.send(json!({"op": "ping"})).await;
    assert_eq!(again.next().await["type"], "pong");
    db.cleanup().await;
}

#[tokio::test]
async fn resume_within_the_buffer_replays_and_beyond_it_resets_with_snapshots() {
    let (db, keys, s) = served(|c| c.stream_buffer = 10).await;
    s.app.state.live.upsert(book("KX-M", 50, 10));

    let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let session = ws.next().await["session"].as_str().unwrap().to_string();
    ws.send(json!({"op": "subscribe", "channel": "trades"})).await;
    ws.send(json!({"op": "subscribe", "channel": "book", "markets": ["KX-M"]}))
        .await;
    ws.next_of("snapshot").await;
    s.publish(DomainEvent::TradeIngested(trade(1)));
    let t1 = ws.next_of("trade").await;
    let last = t1["seq"].as_u64().unwrap();
    drop(ws);

    // Missed while away, within the buffer: replayed in order, then `resumed`.
    crossbook_store::testing::eventually("the session detached", WAIT, async || {
        (s.app.state.stream.attached_count() == 0).then_some(())
    })
    .await;
    for n in 2..=4 {
        s.publish(DomainEvent::TradeIngested(trade(n)));
    }
    let mut ws = crossbook_store::testing::eventually("the missed trades kept", WAIT, async || {
        let mut ws = Ws::connect(
            s.addr,
            &format!("?session={session}&resume_from={last}"),
            Some(&keys.free),
        )
        .await;
        let first = ws.next().await;
        (first["type"] == "trade" && first["seq"] == last + 1).then_some((ws, first))
    })
    .await;
    let mut got = vec![ws.1["trade_id"].as_str().unwrap().to_string()];
    let mut seq = last + 1;
    loop {
        let m = ws.0.next().await;
        seq += 1;
        assert_eq!(m["seq"], seq, "no hole: {m}");
        if m["type"] == "resumed" {
            assert_eq!(m["from"], last);
            break;
        }
        got.push(m["trade_id"].as_str().unwrap().to_string());
    }
    assert_eq!(got, ["t2", "t3", "t4"]);
    let last = seq;
    drop(ws);

    // Missed more than the buffer holds: welcome, reset, then the book afresh; subscriptions kept.
    crossbook_store::testing::eventually("the session detached", WAIT, async || {
        (s.app.state.stream.attached_count() == 0).then_some(())
    })
    .await;
    for n in 10..30 {
        s.publish(DomainEvent::TradeIngested(trade(n)));
    }
    let mut ws = crossbook_store::testing::eventually("the trades published", WAIT, async || {
        let mut ws = Ws::connect(
            s.addr,
            &format!("?session={session}&resume_from={last}"),
            Some(&keys.free),
        )
        .await;
        let first = ws.next().await;
        let second = ws.next().await;
        (second["type"] == "reset").then_some((ws, first))
    })
    .await;
    assert_eq!(
        (ws.1["type"].as_str(), ws.1["session"].as_str()),
        (Some("welcome"), Some(session.as_str()))
    );
    let snap = ws.0.next().await;
    assert_eq!(
        (snap["type"].as_str(), snap["market_id"].as_str()),
        (Some("snapshot"), Some("KX-M"))
    );
    s.publish(DomainEvent::TradeIngested(trade(99)));
    assert_eq!(
        ws.0.next_of("trade").await["trade_id"],
        "t99",
        "still subscribed to trades"
    );

    // An unknown session: a new one, told to subscribe again.
    let mut ws = Ws::connect(s.addr, "?session=s_gone&resume_from=3", Some(&keys.free)).await;
    let w = ws.next().await;
    assert_ne!(w["session"], "s_gone");
    let r = ws.next().await;
    assert_eq!(r["type"], "reset");
    assert!(r["reason"].as_str().unwrap().contains("subscribe again"), "{r}");
    db.cleanup().await;
}

#[tokio::test]
async fn a_client_that_does_not_read_is_cut_without_slowing_others() {
    let (db, keys, s) = served(|c| {
        // Room for one burst of 200: the fast client keeps up between bursts.
        c.stream_queue = 256;
        c.stream_connections_free = 0;
    })
    .await;
    let mut slow = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let mut fast = Ws::connect(s.addr, "", Some(&keys.free)).await;
    for ws in [&mut slow, &mut fast] {
        ws.next().await;
        ws.send(json!({"op": "subscribe", "channel": "trades"})).await;
        ws.next_of("subscribed").await;
    }
    // The fast client reads everything while the slow one reads nothing, until the slow one is cut (its
    // socket buffers full, then its queue).
    let mut n = 0u64;
    let mut fast_seen = 0u64;
    while s.app.state.stream.attached_count() == 2 {
        for _ in 0..200 {
            n += 1;
            s.publish(DomainEvent::TradeIngested(trade(n)));
        }
        while fast_seen < n {
            if fast.next().await["type"] == "trade" {
                fast_seen += 1;
            }
        }
        assert!(n < 2_000_000, "the slow client was never cut");
    }
    assert_eq!(fast_seen, n, "the fast client got every trade");
    // The slow client finds, after what it had buffered, the close that says why.
    let end = slow.until_closed().await;
    match end {
        Ended::Closed(Some((code, reason))) => {
            assert_eq!(code, 1013);
            assert!(reason.starts_with("slow consumer"), "{reason}");
        }
        other => panic!("expected a 1013 close, got {other:?}"),
    }
    db.cleanup().await;
}

/// A stream client that upgrades over a raw socket with a small receive buffer, sends `op` (a masked text
/// frame, as clients must) and then never reads again, so the kernel buffers on both sides fill up.
async fn never_reading_stream(addr: SocketAddr, key: &str, op: Value) -> TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    let head = format!(
        "GET /v1/stream HTTP/1.1\r\nHost: crossbook\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-API-Key: {key}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut b = [0u8; 1];
        assert_eq!(s.read(&mut b).await.unwrap(), 1, "closed during the upgrade");
        got.push(b[0]);
    }
    assert!(got.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&got));
    let payload = op.to_string().into_bytes();
    assert!(payload.len() < 126);
    let mask = [1u8, 2, 3, 4];
    let mut frame = vec![0x81, 0x80 | payload.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&frame).await.unwrap();
    s
}

#[tokio::test]
async fn a_cut_client_that_never_reads_frees_its_slot_and_its_connection() {
    let (db, keys, s) = served(|c| {
        c.stream_queue = 64;
        c.stream_connections_free = 1;
        // The stuck client and the stream that replaces it: a third connection only once the stuck one is gone.
        c.max_connections = 2;
    })
    .await;
    let stuck = never_reading_stream(s.addr, &keys.free, json!({"op": "subscribe", "channel": "trades"})).await;
    let hub = s.app.state.stream.clone();
    // Once it is attached, publish until it is cut (trades before its subscription lands just go nowhere).
    eventually("the stream attached", 10, async || {
        if hub.attached_count() == 1 {
            Ok(())
        } else {
            Err("not yet".to_string())
        }
    })
    .await;
    // Small bursts the connection keeps up with until the socket buffers are full and its write blocks; only
    // then does its queue fill and the cut come.
    let mut n = 0u64;
    while hub.attached_count() > 0 {
        for _ in 0..16 {
            n += 1;
            s.publish(DomainEvent::TradeIngested(trade(n)));
        }
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        assert!(n < 2_000_000, "the client was never cut");
    }
    // Its plan slot is free: the same Free key (one stream allowed) opens a new stream...
    let mut again = eventually("a new stream for the key", 10, async || {
        let mut ws = Ws::try_connect(s.addr, "", Some(&keys.free))
            .await
            .map_err(|e| e.to_string())?;
        let first = ws.next().await;
        if first["type"] == "welcome" {
            Ok(ws)
        } else {
            Err(first.to_string())
        }
    })
    .await;
    // ...and within a few seconds its connection is dropped too: another client gets the second connection.
    let healthz = tokio::time::timeout(WAIT, client().get(format!("http://{}/healthz", s.addr)).send())
        .await
        .expect("the stuck connection still holds its place under max_connections")
        .unwrap();
    assert_eq!(healthz.status().as_u16(), 200);
    again.send(json!({"op": "ping"})).await;
    again.next_of("pong").await;
    drop(stuck);
    db.cleanup().await;
}

#[tokio::test]
async fn an_oversized_message_is_answered_with_close_code_1009() {
    let (db, keys, s) = served(|_| {}).await;
    for size in [65 * 1024, 10 * 1024 * 1024] {
        let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
        ws.next_of("welcome").await;
        ws.ws.send(Message::Text("x".repeat(size).into())).await.unwrap();
        match ws.until_closed().await {
            Ended::Closed(Some((code, reason))) => {
                assert_eq!(code, 1009, "{reason}");
                assert!(reason.contains("65536 bytes"), "{reason}");
            }
            other => panic!("expected a 1009 close for {size} bytes, got {other:?}"),
        }
    }
    db.cleanup().await;
}

#[tokio::test]
async fn the_server_pings_and_closes_a_client_that_never_answers() {
    let (db, keys, s) = served(|c| c.stream_ping_seconds = 1).await;
    // A client that reads (and so answers pings, as tungstenite does) stays open; it counts the pings.
    let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
    let (pings_tx, mut pings) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        while let Some(Ok(m)) = ws.ws.next().await {
            if let Message::Ping(_) = m {
                let _ = pings_tx.send(());
            }
        }
    });
    // A client that sends and reads nothing never answers: after three ping periods it is closed.
    let mut silent = Ws::connect(s.addr, "", Some(&keys.free)).await;
    crossbook_store::testing::eventually("the silent client detached", WAIT, async || {
        (s.app.state.stream.attached_count() == 1).then_some(())
    })
    .await;
    let end = silent.until_closed().await;
    assert_eq!(end, Ended::Closed(Some((1001, "no answer to pings".into()))));
    // Both clients see the same ping periods, but the reader's third ping may still be on its way when the
    // silent one is closed: wait for it rather than count what has arrived so far.
    let mut n = 0;
    crossbook_store::testing::eventually("the reading client sees three pings", WAIT, async || {
        while pings.try_recv().is_ok() {
            n += 1;
        }
        (n >= 3).then_some(())
    })
    .await;
    assert!(!reader.is_finished(), "the client that answers stays connected");
    assert_eq!(s.app.state.stream.attached_count(), 1);
    reader.abort();
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_the_simulator_books_rebuilt_from_the_stream_equal_the_live_book_and_shutdown_closes() {
    let db = migrated_sqlite().await;
    let keys = create_keys(&db.store).await;
    let config = Config {
        simulate: true,
        sim_seed: 11,
        ..Config::for_tests(&db.url)
    };
    let server = Server::start_simulated(config).await;
    let addr = server.addr;
    // A venue_a market with a live book, open for the rest of the test.
    let market = long_btc_market(&server, "venue_a", &keys.free).await["market_id"]
        .as_str()
        .unwrap()
        .to_string();

    // A Trader sees opportunities open (the simulated books cross now and then), with their episode.
    let mut trader = Ws::connect(addr, "", Some(&keys.trader)).await;
    trader.next().await;
    trader.send(json!({"op": "subscribe", "channel": "arbitrage"})).await;
    assert_eq!(trader.next().await["type"], "subscribed");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let o = loop {
        assert!(tokio::time::Instant::now() < deadline, "no opportunity within 60 s");
        let m = trader.next().await;
        if m["type"] == "opportunity" {
            break m;
        }
    };
    assert!(
        ["opened", "changed", "closed"].contains(&o["change"].as_str().unwrap()),
        "{o}"
    );
    let id = o["episode"]["id"].as_str().unwrap();
    assert!(id.starts_with(o["opportunity"]["event_id"].as_str().unwrap()), "{o}");
    assert!(o["opportunity"]["net_cents"].is_number(), "{o}");
    assert_eq!(o["channel"], "arbitrage");
    drop(trader);

    let mut ws = Ws::connect(addr, "", Some(&keys.free)).await;
    ws.next().await;
    ws.send(json!({"op": "subscribe", "channel": "book", "markets": [market]}))
        .await;
    ws.send(json!({"op": "subscribe", "channel": "status"})).await;
    ws.next_of("subscribed").await;
    let snap = ws.next_of("snapshot").await;
    let mut rebuilt = Ladders::of(&snap);
    let mut book_seq = snap["book_seq"].as_u64().unwrap();
    let mut changes = 0;
    while changes < 5 {
        let m = ws.next().await;
        match m["type"].as_str() {
            Some("change") => {
                assert_eq!(m["book_seq"], book_seq + 1, "changes follow each other: {m}");
                book_seq += 1;
                rebuilt.apply(&m["changes"]);
                changes += 1;
            }
            Some("snapshot") => {
                rebuilt = Ladders::of(&m);
                book_seq = m["book_seq"].as_u64().unwrap();
            }
            _ => {}
        }
    }
    // A second client's snapshot is the live book; at the same book_seq the two agree.
    let mut other = Ws::connect(addr, "", Some(&keys.free)).await;
    other.next().await;
    other
        .send(json!({"op": "subscribe", "channel": "book", "markets": [market]}))
        .await;
    let theirs = other.next_of("snapshot").await;
    let their_seq = theirs["book_seq"].as_u64().unwrap();
    while book_seq < their_seq {
        let m = ws.next().await;
        match m["type"].as_str() {
            Some("change") => {
                assert_eq!(m["book_seq"], book_seq + 1);
                book_seq += 1;
                rebuilt.apply(&m["changes"]);
            }
            Some("snapshot") => {
                rebuilt = Ladders::of(&m);
                book_seq = m["book_seq"].as_u64().unwrap();
            }
            _ => {}
        }
    }
    assert_eq!(book_seq, their_seq);
    assert_eq!(
        rebuilt,
        Ladders::of(&theirs),
        "the book rebuilt from the stream is the live book"
    );

    // Shutdown: each stream gets a close frame that says why, and the server stops.
    server.stop().await.unwrap();
    let end = ws.until_closed().await;
    assert_eq!(
        end,
        Ended::Closed(Some((1001, "going away: the server is shutting down".into())))
    );
    db.cleanup().await;
}

/// A book's ladders as price → size, per side.
#[derive(Debug, PartialEq, Default)]
struct Ladders(BTreeMap<(String, String), String>);

impl Ladders {
    fn of(snap: &Value) -> Ladders {
        let mut l = Ladders::default();
        for (field, side) in [("bids", "bid"), ("asks", "ask"), ("no_bids", "no_bid")] {
            for level in snap[field].as_array().unwrap() {
                l.0.insert(
                    (side.to_string(), level["price"].as_str().unwrap().to_string()),
                    level["size"].to_string(),
                );
            }
        }
        l
    }

    fn apply(&mut self, changes: &Value) {
        for c in changes.as_array().unwrap() {
            let k = (
                c["side"].as_str().unwrap().to_string(),
                c["price"].as_str().unwrap().to_string(),
            );
            if c["size"].as_f64() == Some(0.0) {
                self.0.remove(&k);
            } else {
                self.0.insert(k, c["size"].to_string());
            }
        }
    }
}

#[tokio::test]
async fn a_stream_without_a_key_is_closed_after_ten_seconds() {
    let db = migrated_sqlite().await;
    let s = Served::start(&db, |_| {}).await;
    let mut ws = Ws::connect(s.addr, "", None).await;
    assert_eq!(ws.next().await["type"], "welcome");
    let opened = std::time::Instant::now();
    let end = loop {
        match tokio::time::timeout(Duration::from_secs(20), ws.ws.next())
            .await
            .expect("closed within 20 s")
        {
            Some(Ok(Message::Close(f))) => break f.map(|f| (u16::from(f.code), f.reason.to_string())),
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    let (code, reason) = end.expect("a close reason");
    assert_eq!(code, 1008);
    assert!(reason.starts_with("no API key"), "{reason}");
    assert!(opened.elapsed() >= Duration::from_secs(9), "not before the deadline");
    db.cleanup().await;
}

#[tokio::test]
async fn a_stream_outlives_the_header_and_keep_alive_timeouts() {
    let (db, keys, s) = served(|c| {
        c.header_read_timeout_seconds = 1;
        c.keep_alive_timeout_seconds = 1;
    })
    .await;
    let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
    assert_eq!(ws.next().await["plan"], "free");
    // Silent past both timeouts (pings come every 15 s, so nothing at all crosses the socket)...
    let quiet = tokio::time::timeout(Duration::from_millis(2500), ws.ws.next()).await;
    assert!(quiet.is_err(), "nothing arrives and nothing closes: {quiet:?}");
    // ...and the upgraded connection is still open.
    ws.send(json!({"op": "ping"})).await;
    assert_eq!(ws.next().await["type"], "pong");
    db.cleanup().await;
}

/// A book subscription to a catalog market with no book held is not silence: after `subscribed` (and the
/// snapshots of the books that are held), each such market gets a `not_live` naming it and why. The
/// subscription stands: a book that arrives later is sent.
#[tokio::test]
async fn a_book_subscription_to_a_market_without_a_live_book_says_so() {
    let db = migrated_sqlite().await;
    let keys = create_keys(&db.store).await;
    seed_catalog(&db.store).await;
    let s = Served::start(&db, |_| {}).await;
    s.app.state.live.upsert(book(M_LAL, 50, 10));

    let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
    assert_eq!(ws.next().await["type"], "welcome");
    ws.send(json!({"op": "subscribe", "channel": "book", "markets": [M_LAL, M_BTC_A, M_OLD]}))
        .await;
    assert_eq!(ws.next().await["type"], "subscribed");
    let snap = ws.next().await;
    assert_eq!(
        (snap["type"].as_str(), snap["market_id"].as_str()),
        (Some("snapshot"), Some(M_LAL))
    );
    let mut not_live = Vec::new();
    for _ in 0..2 {
        let m = ws.next().await;
        assert_eq!(
            (m["type"].as_str(), m["channel"].as_str()),
            (Some("not_live"), Some("book")),
            "{m}"
        );
        assert_eq!(m["exchange"], "venue_a", "{m}");
        assert!(m["detail"].as_str().is_some_and(|d| !d.is_empty()), "{m}");
        not_live.push((
            m["market_id"].as_str().unwrap().to_string(),
            m["reason"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(
        not_live,
        [
            (M_BTC_A.to_string(), "no_book".to_string()),
            (M_OLD.to_string(), "closed".to_string())
        ]
    );

    // The book of M_BTC_A arrives: its snapshot follows on the same subscription.
    let seq = s.app.state.live.upsert(book(M_BTC_A, 40, 3)).unwrap();
    s.publish(DomainEvent::BookUpdated(Arc::new(crossbook_live::BookChanged {
        key: BookKey::venue_a(M_BTC_A),
        book_seq: seq,
        timestamp: Timestamp::now(),
        change: crossbook_core::book::BookChange::Snapshot {
            bids: vec![Level {
                price: Price::from_cents(40),
                size: Amount::from_units(3),
            }],
            asks: vec![],
            no_bids: vec![],
        },
        venue_ts: None,
        received_at: Timestamp::now(),
    })));
    let snap = ws.next_of("snapshot").await;
    assert_eq!(snap["market_id"], M_BTC_A);
    drop(s);
    db.cleanup().await;
}

/// Streams opened without a key are bounded per client address until they authenticate: one more than allowed
/// is refused 429 before the upgrade, a keyed stream from the same address is not affected, and a stream that
/// authenticates or closes frees its place.
#[tokio::test]
async fn streams_without_a_key_are_bounded_per_address() {
    let (db, keys, s) = served(|c| c.stream_anonymous_per_address = 2).await;
    let mut first = Ws::connect(s.addr, "", None).await;
    assert_eq!(first.next().await["type"], "welcome");
    let mut second = Ws::connect(s.addr, "", None).await;
    assert_eq!(second.next().await["type"], "welcome");
    let err = Ws::try_connect(s.addr, "", None)
        .await
        .err()
        .expect("a third is refused");
    assert!(err.to_string().contains("429"), "{err}");
    let mut keyed = Ws::connect(s.addr, "", Some(&keys.free)).await;
    assert_eq!(keyed.next().await["type"], "welcome");

    // The dashboard's way: the key in the first message. The stream no longer counts against the address.
    second.send(json!({"op": "auth", "key": keys.builder})).await;
    assert_eq!(second.next().await["type"], "authenticated");
    let mut third = anonymous_when_there_is_room(s.addr).await;
    // Full again; closing one frees its place.
    assert!(Ws::try_connect(s.addr, "", None).await.is_err());
    first.ws.close(None).await.unwrap();
    assert!(matches!(first.until_closed().await, Ended::Closed(_) | Ended::Eof));
    let fourth = anonymous_when_there_is_room(s.addr).await;
    third.ws.close(None).await.unwrap();
    drop((second, fourth, keyed, s));
    db.cleanup().await;
}

/// A stream without a key, once the address has room (a freed place is given back as the old connection
/// ends).
async fn anonymous_when_there_is_room(addr: SocketAddr) -> Ws {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match Ws::try_connect(addr, "", None).await {
            Ok(mut ws) => {
                assert_eq!(ws.next().await["type"], "welcome");
                return ws;
            }
            Err(e) if tokio::time::Instant::now() < deadline => {
                assert!(e.to_string().contains("429"), "{e}");
                tokio::task::yield_now().await;
            }
            Err(e) => panic!("no place was freed: {e}"),
        }
    }
}

/// A process that holds no live data (`--role api`, or a standby waiting for the ingest lock) refuses the stream
/// with 503 rather than accept subscriptions and send nothing.
#[tokio::test]
async fn a_process_without_live_data_refuses_the_stream() {
    let (db, keys, s) = served(|c| c.role = Role::Api).await;
    let err = Ws::try_connect(s.addr, "", Some(&keys.trader))
        .await
        .err()
        .expect("the upgrade is refused");
    assert!(err.to_string().contains("503"), "{err}");
    drop(s);

    // A standby: the same process serves the stream once it leads.
    let s = Served::start(&db, |_| {}).await;
    s.app.state.ingest.set_stance(LockStance::Standby);
    let err = Ws::try_connect(s.addr, "", Some(&keys.trader))
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("503"), "{err}");
    s.app.state.ingest.set_stance(LockStance::Unmanaged);
    let mut ws = Ws::connect(s.addr, "", Some(&keys.trader)).await;
    assert_eq!(ws.next().await["type"], "welcome");
    drop((ws, s));
    db.cleanup().await;
}

/// One customer cannot pile up sessions by reconnecting without `session`: past its bound (open streams of
/// the plan × `stream_sessions_per_connection`) the oldest detached session is dropped, and resuming it
/// answers `reset`, while the newest still resumes.
#[tokio::test]
async fn detached_sessions_are_bounded_per_customer_and_the_oldest_is_dropped() {
    let (db, keys, s) = served(|c| {
        c.stream_connections_free = 1;
        c.stream_sessions_per_connection = 2;
    })
    .await;
    let evicted_before = sessions_evicted(&s).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        // The plan allows one stream: each opens once the previous one has detached.
        let mut ws = crossbook_store::testing::eventually("a free place", WAIT, async || {
            let mut ws = Ws::connect(s.addr, "", Some(&keys.free)).await;
            let w = ws.next().await;
            (w["type"] == "welcome").then_some((ws, w))
        })
        .await;
        ids.push(ws.1["session"].as_str().unwrap().to_string());
        ws.0.send(json!({"op": "ping"})).await;
        assert_eq!(ws.0.next().await["type"], "pong");
        drop(ws);
        crossbook_store::testing::eventually("the session detached", WAIT, async || {
            (s.app.state.stream.attached_count() == 0).then_some(())
        })
        .await;
    }
    // Bound 2: each of the last three sessions, on getting its key, dropped the oldest detached one.
    assert!(sessions_evicted(&s).await >= evicted_before + 3);

    // The oldest: unknown now, so a reset and a new session.
    let mut ws = Ws::connect(s.addr, &format!("?session={}&resume_from=2", ids[0]), Some(&keys.free)).await;
    let w = ws.next().await;
    assert_eq!(w["type"], "welcome");
    assert_ne!(w["session"], ids[0].as_str());
    let r = ws.next().await;
    assert_eq!(r["type"], "reset", "{r}");
    assert!(r["reason"].as_str().unwrap().contains("unknown or expired"), "{r}");
    drop(ws);
    crossbook_store::testing::eventually("the session detached", WAIT, async || {
        (s.app.state.stream.attached_count() == 0).then_some(())
    })
    .await;

    // The newest still resumes: welcome (1) and pong (2) were sent, nothing after.
    let newest = ids.last().unwrap();
    let mut ws = Ws::connect(s.addr, &format!("?session={newest}&resume_from=2"), Some(&keys.free)).await;
    let m = ws.next().await;
    assert_eq!(
        (m["type"].as_str(), m["session"].as_str()),
        (Some("resumed"), Some(newest.as_str())),
        "{m}"
    );
    db.cleanup().await;
}

/// `crossbook_stream_sessions_evicted_total` as `/metrics` shows it now.
async fn sessions_evicted(s: &Served) -> u64 {
    let r = s.app.get("/metrics").await;
    r.text
        .lines()
        .find_map(|l| l.strip_prefix("crossbook_stream_sessions_evicted_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}
