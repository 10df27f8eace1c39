//! venue_b market WebSocket: initial book dump, `price_change` (current schema) rebuilding the books,
//! trades with resent books, `PING`/`PONG`, and the socket-level faults.

use std::{collections::BTreeMap, time::Duration};

use crossbook_core::{Amount, Exchange, IntervalCode, Outcome, Price, TakerSide};
use crossbook_sim::SimHandle;
use serde_json::{Value, json};

use crate::util::{DEADLINE, Ws, assert_shape, connect_b, next_json, next_text, sample, send, start};

/// One token's book as the client rebuilds it.
#[derive(Debug, Default, PartialEq)]
struct Replica {
    bids: BTreeMap<Price, Amount>,
    asks: BTreeMap<Price, Amount>,
}

fn levels(v: &Value) -> BTreeMap<Price, Amount> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["price"].as_str().unwrap().parse().unwrap(),
                l["size"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

fn model_replica(sim: &SimHandle, token: &str) -> Replica {
    let b = sim.book(Exchange::VenueB, token).unwrap();
    Replica {
        bids: b.bids.iter().map(|l| (l.price, l.size)).collect(),
        asks: b.asks.iter().map(|l| (l.price, l.size)).collect(),
    }
}

/// Applies one event to the replicas; returns its `event_type`.
fn apply(books: &mut BTreeMap<String, Replica>, e: &Value) -> String {
    let kind = e["event_type"].as_str().unwrap().to_string();
    match kind.as_str() {
        "book" => {
            let r = Replica {
                bids: levels(&e["bids"]),
                asks: levels(&e["asks"]),
            };
            books.insert(e["asset_id"].as_str().unwrap().to_string(), r);
        }
        "price_change" => {
            for c in e["price_changes"].as_array().unwrap() {
                let book = books.get_mut(c["asset_id"].as_str().unwrap()).unwrap();
                let side = if c["side"] == "BUY" {
                    &mut book.bids
                } else {
                    &mut book.asks
                };
                let price: Price = c["price"].as_str().unwrap().parse().unwrap();
                let size: Amount = c["size"].as_str().unwrap().parse().unwrap();
                if size == Amount::ZERO {
                    side.remove(&price);
                } else {
                    side.insert(price, size);
                }
                assert!(c["best_bid"].is_string() && c["best_ask"].is_string());
            }
        }
        _ => {}
    }
    kind
}

/// Subscribes to both tokens of an open window and checks the initial dump's shape (not its contents: see
/// [`subscribed`]).
async fn subscribe(sim: &SimHandle, code: IntervalCode) -> (Ws, [String; 2], BTreeMap<String, Replica>) {
    let tokens = sim.with_model(|m| m.open_window_pair(code).unwrap().1.tokens.clone().unwrap());
    let mut ws = connect_b(sim).await;
    send(
        &mut ws,
        json!({"assets_ids": tokens, "type": "market", "initial_dump": true, "level": 2, "custom_feature_enabled": true}),
    )
    .await;
    let dump = next_json(&mut ws).await;
    let events = dump.as_array().expect("the initial dump is one JSON array");
    assert_eq!(events.len(), 2);
    // The WS `book` event carries the REST summary's fields except `min_order_size` and `neg_risk`.
    let mut shape = sample("polymarket_clob_book.json");
    shape
        .as_object_mut()
        .unwrap()
        .retain(|k, _| k != "min_order_size" && k != "neg_risk");
    let mut books = BTreeMap::new();
    for e in events {
        assert_eq!(apply(&mut books, e), "book");
        assert_shape("book", &shape, e, &[]);
    }
    (ws, tokens, books)
}

/// [`subscribe`], and the initial books equal the model's. Only for a simulator whose clock the test drives:
/// with the wall-clock tick running, the model may move between the dump and the comparison.
async fn subscribed(sim: &SimHandle, code: IntervalCode) -> (Ws, [String; 2], BTreeMap<String, Replica>) {
    let (ws, tokens, books) = subscribe(sim, code).await;
    for t in &tokens {
        assert_eq!(books[t], model_replica(sim, t), "initial book equals the model");
    }
    (ws, tokens, books)
}

#[tokio::test]
async fn price_changes_rebuild_both_token_books() {
    let sim = start(31).await;
    let (mut ws, tokens, mut books) = subscribed(&sim, IntervalCode::M15).await;
    send_text(&mut ws, "PING").await;
    assert_eq!(next_text(&mut ws).await.as_deref(), Some("PONG"));
    sim.advance(Duration::from_secs(30));
    let mut kinds = BTreeMap::<String, usize>::new();
    while tokens.iter().any(|t| books[t] != model_replica(&sim, t)) || !kinds.contains_key("price_change") {
        let frame = next_json(&mut ws).await;
        let events = match &frame {
            Value::Array(a) => a.clone(),
            one => vec![one.clone()],
        };
        for e in &events {
            if e["event_type"] == "price_change" {
                assert_shape("price_change", &sample("polymarket_ws_price_change.json"), e, &[]);
                assert!(e["timestamp"].is_string());
            }
            *kinds.entry(apply(&mut books, e)).or_default() += 1;
        }
    }
    // Up and Down books stay mirror images.
    let (up, down) = (model_replica(&sim, &tokens[0]), model_replica(&sim, &tokens[1]));
    let best_up_bid = up.bids.keys().next_back().unwrap();
    let best_down_ask = down.asks.keys().next().unwrap();
    assert_eq!(best_up_bid.micros() + best_down_ask.micros(), 1_000_000);
}

async fn send_text(ws: &mut Ws, text: &str) {
    use futures_util::SinkExt;
    ws.send(tokio_tungstenite::tungstenite::Message::Text(text.into()))
        .await
        .unwrap();
}

#[tokio::test]
async fn trades_send_last_trade_price_and_fresh_books() {
    let sim = start(32).await;
    let (mut ws, tokens, _) = subscribed(&sim, IntervalCode::H1).await;
    let cid = sim.with_model(|m| m.open_window_pair(IntervalCode::H1).unwrap().1.market_id.clone());
    let trade = sim
        .inject_trade(
            Exchange::VenueB,
            &cid,
            Outcome::No,
            TakerSide::Buy,
            Amount::from_units(12),
        )
        .expect("trade executes");
    let frame = next_json(&mut ws).await;
    let events = frame.as_array().expect("trade frames come as one array");
    assert_eq!(events[0]["event_type"], "last_trade_price");
    assert_eq!(events[0]["asset_id"], tokens[1].as_str());
    assert_eq!(events[0]["side"], "BUY");
    assert_eq!(events[0]["size"], "12");
    assert_eq!(events[0]["transaction_hash"], trade.trade_id.as_str());
    // A BTC window is a crypto market: taker rate 0.07 = 700 bps, sent as a string like the real feed.
    assert_eq!(events[0]["fee_rate_bps"], "700");
    assert_eq!(
        events[0]["price"].as_str().unwrap().parse::<Price>().unwrap(),
        trade.price
    );
    assert_eq!(events.len(), 3, "then a book per subscribed token");
    for e in &events[1..] {
        let t = e["asset_id"].as_str().unwrap();
        let replica = Replica {
            bids: levels(&e["bids"]),
            asks: levels(&e["asks"]),
        };
        assert_eq!(replica, model_replica(&sim, t));
    }
}

#[tokio::test]
async fn malformed_silent_and_dropped_sockets() {
    let sim = start(33).await;
    let (mut ws, _, _) = subscribed(&sim, IntervalCode::M5).await;
    // Malformed: one frame no parser accepts, then valid frames again.
    sim.faults().malform_next(Exchange::VenueB);
    sim.advance(Duration::from_secs(5));
    let bad = next_text(&mut ws).await.unwrap();
    assert!(serde_json::from_str::<Value>(&bad).is_err(), "malformed: {bad}");
    let good = next_text(&mut ws).await.unwrap();
    assert!(serde_json::from_str::<Value>(&good).is_ok());

    // Silent: updates happen but nothing is sent; keepalive still answered.
    sim.faults().set_silent(Exchange::VenueB, true);
    sim.advance(Duration::from_secs(10));
    send_text(&mut ws, "PING").await;
    // Frames published before the switch may still be in flight; the first frame after them is PONG.
    loop {
        let t = next_text(&mut ws).await.unwrap();
        if t == "PONG" {
            break;
        }
    }
    sim.advance(Duration::from_secs(10));
    send_text(&mut ws, "PING").await;
    assert_eq!(
        next_text(&mut ws).await.as_deref(),
        Some("PONG"),
        "nothing sent while silent"
    );
    sim.faults().set_silent(Exchange::VenueB, false);
    sim.advance(Duration::from_secs(5));
    assert!(
        next_text(&mut ws).await.is_some_and(|t| t != "PONG"),
        "the feed resumes"
    );

    // Dropped: the socket ends without a close handshake and the session is gone.
    assert_eq!(sim.faults().sessions_open(Exchange::VenueB), 1);
    sim.faults().drop_sockets();
    loop {
        match next_text(&mut ws).await {
            None => break,
            Some(_) => continue,
        }
    }
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while sim.faults().sessions_open(Exchange::VenueB) != 0 {
        assert!(tokio::time::Instant::now() < deadline, "session closed");
        tokio::task::yield_now().await;
    }
    // Reconnecting works.
    let _again = connect_b(&sim).await;
    assert_eq!(sim.faults().sessions_accepted(Exchange::VenueB), 2);
}

#[tokio::test]
async fn shutdown_closes_sockets_and_stops_serving() {
    let sim = start(34).await;
    let (mut ws, _, _) = subscribed(&sim, IntervalCode::M15).await;
    let gamma = sim.venue_b_gamma_url().to_string();
    sim.shutdown().await;
    assert_eq!(next_text(&mut ws).await, None);
    assert!(
        crate::util::client()
            .get(format!("{gamma}/events"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_wall_clock_feed_is_live() {
    let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::default())
        .await
        .unwrap();
    let (mut ws, _, _) = subscribe(&sim, IntervalCode::M15).await;
    // The tick task steps the model every 200 ms; a change arrives without the test advancing anything.
    loop {
        let frame = next_json(&mut ws).await;
        let first = if frame.is_array() { frame[0].clone() } else { frame };
        if first["event_type"] == "price_change" || first["event_type"] == "last_trade_price" {
            break;
        }
    }
    assert!(sim.now().millis() > 0);
    sim.shutdown().await;
}

/// Past the connection's asset limit the venue serves nothing for the extra assets (no `book`, no changes);
/// dropping the socket that carries one asset leaves the venue's other sockets open.
#[tokio::test]
async fn assets_past_the_connection_limit_are_ignored_and_one_socket_drops_alone() {
    let sim = start(35).await;
    sim.faults().set_ws_limit(Exchange::VenueB, 3);
    let m5 = sim.with_model(|m| m.open_window_pair(IntervalCode::M5).unwrap().1.clone());
    let m15 = sim.with_model(|m| m.open_window_pair(IntervalCode::M15).unwrap().1.clone());
    let (t5, t15) = (m5.tokens.clone().unwrap(), m15.tokens.clone().unwrap());
    let mut ws = connect_b(&sim).await;
    send(
        &mut ws,
        json!({"assets_ids": [t5[0], t5[1], t15[0], t15[1]], "type": "market", "initial_dump": true, "custom_feature_enabled": true}),
    )
    .await;
    let dump = next_json(&mut ws).await;
    let served: Vec<&str> = dump
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["asset_id"].as_str().unwrap())
        .collect();
    assert_eq!(served.len(), 3, "three of four assets served: {served:?}");
    // The fourth stays ignored when asked again; an asset leaving makes room for it.
    send(&mut ws, json!({"operation": "unsubscribe", "assets_ids": [served[0]]})).await;
    let missing: Vec<&String> = [&t5[0], &t5[1], &t15[0], &t15[1]]
        .into_iter()
        .filter(|t| !served.contains(&t.as_str()))
        .collect();
    send(&mut ws, json!({"operation": "subscribe", "assets_ids": [missing[0]]})).await;
    let dump = next_json(&mut ws).await;
    assert_eq!(dump[0]["asset_id"].as_str(), Some(missing[0].as_str()));

    // A second socket with another asset; dropping the one carrying `missing[0]` leaves it open.
    let mut other = connect_b(&sim).await;
    send(
        &mut other,
        json!({"assets_ids": [served[0]], "type": "market", "initial_dump": true}),
    )
    .await;
    next_json(&mut other).await;
    sim.faults().drop_socket_carrying(Exchange::VenueB, missing[0]);
    while next_text(&mut ws).await.is_some() {}
    send_text(&mut other, "PING").await;
    assert_eq!(
        next_text(&mut other).await.as_deref(),
        Some("PONG"),
        "the other socket stays up"
    );
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while sim.faults().sessions_open(Exchange::VenueB) != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "only the dropped session closed"
        );
        tokio::task::yield_now().await;
    }
}
