//! venue_a WebSocket: signed handshake, commands, snapshot-then-deltas with per-`sid` `seq`, trades,
//! injected gaps, heartbeats.

use std::{collections::BTreeMap, time::Duration};

use crossbook_core::{Amount, Exchange, IntervalCode, Outcome, Price, TakerSide};
use crossbook_sim::SimHandle;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest};

use crate::util::{DEADLINE, Ws, assert_shape, connect_a, next_json, next_text, sample, send, start};

async fn open(sim: &SimHandle) -> Ws {
    connect_a(sim, sim.venue_a_key_id(), sim.venue_a_private_key_pem())
        .await
        .expect("handshake accepted")
}

/// The status the upgrade was refused with.
async fn refused(sim: &SimHandle, headers: &[(&str, String)]) -> u16 {
    let mut req = sim.venue_a_ws_url().into_client_request().unwrap();
    for (k, v) in headers {
        let name = tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap();
        req.headers_mut().insert(name, v.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(req).await {
        Err(tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("handshake should be refused"),
    }
}

#[tokio::test]
async fn handshake_rejects_bad_signatures() {
    let sim = start(21).await;
    let ts = crossbook_core::Timestamp::now().millis();
    let pem = sim.venue_a_private_key_pem();
    let path = crossbook_sim::venue_a::auth::WS_PATH;
    let good = crossbook_sim::venue_a::auth::sign(pem, ts, "GET", path).unwrap();
    let other_path = crossbook_sim::venue_a::auth::sign(pem, ts, "GET", "/trade-api/v2").unwrap();
    let key = sim.venue_a_key_id().to_string();
    assert_eq!(refused(&sim, &[]).await, 401, "no headers");
    let h = |k: &str, t: i64, s: &str| {
        vec![
            ("KALSHI-ACCESS-KEY", k.to_string()),
            ("KALSHI-ACCESS-TIMESTAMP", t.to_string()),
            ("KALSHI-ACCESS-SIGNATURE", s.to_string()),
        ]
    };
    assert_eq!(
        refused(&sim, &h(&key, ts + 1, &good)).await,
        401,
        "timestamp not the signed one"
    );
    assert_eq!(
        refused(&sim, &h(&key, ts, &other_path)).await,
        401,
        "signed another path"
    );
    assert_eq!(
        refused(&sim, &h("someone-else", ts, &good)).await,
        401,
        "unknown key id"
    );
    assert_eq!(refused(&sim, &h(&key, ts, "AAAA")).await, 401, "garbage signature");
    let mut ws = open(&sim).await;
    send(&mut ws, json!({"id": 1, "cmd": "list_subscriptions"})).await;
    assert_eq!(next_json(&mut ws).await, json!({"id": 1, "type": "ok", "msg": []}));
}

/// One market's two bid ladders as the client rebuilds them: price → size.
#[derive(Debug, Default, PartialEq)]
struct Replica {
    yes: BTreeMap<Price, Amount>,
    no: BTreeMap<Price, Amount>,
}

fn ladder(v: &Value) -> BTreeMap<Price, Amount> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|l| {
                    (
                        l[0].as_str().unwrap().parse().unwrap(),
                        l[1].as_str().unwrap().parse().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn model_replica(sim: &SimHandle, ticker: &str) -> Replica {
    let b = sim.book(Exchange::VenueA, ticker).unwrap();
    Replica {
        yes: b.bids.iter().map(|l| (l.price, l.size)).collect(),
        no: b.no_bids.iter().map(|l| (l.price, l.size)).collect(),
    }
}

#[tokio::test]
async fn snapshot_then_deltas_rebuild_the_book_with_consecutive_seq() {
    let sim = start(22).await;
    let tickers: Vec<String> = [IntervalCode::M15, IntervalCode::H1]
        .iter()
        .map(|c| sim.with_model(|m| m.open_window_pair(*c).unwrap().0.market_id.clone()))
        .collect();
    let mut ws = open(&sim).await;
    send(
        &mut ws,
        json!({"id": 1, "cmd": "subscribe",
               "params": {"channels": ["orderbook_delta"], "market_tickers": tickers, "use_yes_price": false}}),
    )
    .await;
    let ack = next_json(&mut ws).await;
    assert_eq!(ack["type"], "subscribed");
    assert_eq!(ack["id"], 1);
    assert_eq!(ack["msg"]["channel"], "orderbook_delta");
    let sid = ack["msg"]["sid"].as_u64().unwrap();
    let mut books: BTreeMap<String, Replica> = BTreeMap::new();
    let mut last = 0;
    for expected in 1..=2 {
        let snap = next_json(&mut ws).await;
        assert_shape(
            "snapshot",
            &sample("variants/kalshi_ws_orderbook_snapshot.json"),
            &snap,
            &[],
        );
        assert_eq!(
            (snap["type"].as_str(), snap["sid"].as_u64(), snap["seq"].as_u64()),
            (Some("orderbook_snapshot"), Some(sid), Some(expected))
        );
        let msg = &snap["msg"];
        let t = msg["market_ticker"].as_str().unwrap().to_string();
        books.insert(
            t,
            Replica {
                yes: ladder(&msg["yes_dollars_fp"]),
                no: ladder(&msg["no_dollars_fp"]),
            },
        );
        last = expected;
    }
    for t in &tickers {
        assert_eq!(books[t], model_replica(&sim, t), "{t} snapshot equals the model");
    }
    sim.advance(Duration::from_secs(30));
    let mut deltas = 0;
    while tickers.iter().any(|t| books[t] != model_replica(&sim, t)) || deltas == 0 {
        let f = next_json(&mut ws).await;
        assert_eq!(f["type"], "orderbook_delta", "{f}");
        assert_shape("delta", &sample("kalshi_ws_orderbook_delta.json"), &f, &[]);
        let seq = f["seq"].as_u64().unwrap();
        assert_eq!(seq, last + 1, "seq increases by one per sid");
        last = seq;
        let msg = &f["msg"];
        let book = books.get_mut(msg["market_ticker"].as_str().unwrap()).unwrap();
        let side = if msg["side"] == "yes" {
            &mut book.yes
        } else {
            &mut book.no
        };
        let price: Price = msg["price_dollars"].as_str().unwrap().parse().unwrap();
        let delta: Amount = msg["delta_fp"].as_str().unwrap().parse().unwrap();
        let size = side.get(&price).copied().unwrap_or_default().micros() + delta.micros();
        assert!(size >= 0, "a delta never takes a level below zero");
        if size == 0 {
            side.remove(&price);
        } else {
            side.insert(price, Amount::from_micros(size));
        }
        assert!(msg["ts_ms"].is_i64() && msg["ts"].is_string());
        deltas += 1;
    }
    assert!(deltas > 5, "{deltas} deltas in 30 s");
}

#[tokio::test]
async fn an_injected_skip_shows_as_a_seq_gap() {
    let sim = start(23).await;
    let ticker = sim.with_model(|m| m.open_window_pair(IntervalCode::M15).unwrap().0.market_id.clone());
    let mut ws = open(&sim).await;
    send(
        &mut ws,
        json!({"id": 7, "cmd": "subscribe", "params": {"channels": ["orderbook_delta"], "market_ticker": ticker}}),
    )
    .await;
    assert_eq!(next_json(&mut ws).await["type"], "subscribed");
    let mut last = next_json(&mut ws).await["seq"].as_u64().unwrap();
    assert_eq!(last, 1);
    sim.faults().skip_next_seq();
    sim.advance(Duration::from_secs(15));
    loop {
        let f = next_json(&mut ws).await;
        let seq = f["seq"].as_u64().unwrap();
        if seq != last + 1 {
            assert_eq!(seq, last + 2, "exactly one seq skipped");
            break;
        }
        last = seq;
    }
    // A fresh snapshot on request carries the command id and continues the sequence.
    send(
        &mut ws,
        json!({"id": 8, "cmd": "update_subscription", "params": {"sid": 1, "action": "get_snapshot"}}),
    )
    .await;
    loop {
        let f = next_json(&mut ws).await;
        if f["type"] == "orderbook_snapshot" {
            assert_eq!(f["id"], 8);
            break;
        }
    }
}

#[tokio::test]
async fn trades_arrive_on_the_trade_channel() {
    let sim = start(24).await;
    let ticker = sim.with_model(|m| m.open_window_pair(IntervalCode::H24).unwrap().0.market_id.clone());
    let mut ws = open(&sim).await;
    send(
        &mut ws,
        json!({"id": 1, "cmd": "subscribe", "params": {"channels": ["trade", "ticker"]}}),
    )
    .await;
    let a = next_json(&mut ws).await;
    let b = next_json(&mut ws).await;
    assert_eq!(
        (a["msg"]["channel"].as_str(), b["msg"]["channel"].as_str()),
        (Some("trade"), Some("ticker"))
    );
    assert_ne!(a["msg"]["sid"], b["msg"]["sid"], "one sid per channel");
    let trade = sim
        .inject_trade(
            Exchange::VenueA,
            &ticker,
            Outcome::No,
            TakerSide::Buy,
            Amount::from_units(7),
        )
        .expect("trade executes");
    let mut got_trade = false;
    let mut got_ticker = false;
    while !(got_trade && got_ticker) {
        let f = next_json(&mut ws).await;
        match f["type"].as_str().unwrap() {
            "trade" => {
                let m = &f["msg"];
                assert_eq!(f["seq"], 1);
                assert_eq!(m["trade_id"], trade.trade_id.as_str());
                assert_eq!(m["market_ticker"], ticker.as_str());
                assert_eq!(m["count_fp"], "7.00");
                assert_eq!(m["taker_outcome_side"], "no");
                assert_eq!(m["taker_book_side"], "ask");
                assert_eq!(m["no_price_dollars"], trade.price.to_string4());
                assert!(m["ts"].is_i64() && m["ts_ms"].is_i64());
                got_trade = true;
            }
            "ticker" => {
                assert!(f.get("seq").is_none(), "ticker frames carry no seq");
                assert!(f["msg"]["yes_bid_dollars"].is_string() && f["msg"]["dollar_volume"].is_i64());
                got_ticker = true;
            }
            other => panic!("unexpected {other}: {f}"),
        }
    }
}

#[tokio::test]
async fn commands_answer_errors_with_documented_codes() {
    let sim = start(25).await;
    let mut ws = open(&sim).await;
    let cases = [
        (json!({"id": 1, "cmd": "nope"}), 5),
        (json!({"id": 2, "cmd": "subscribe", "params": {"channels": []}}), 3),
        (
            json!({"id": 3, "cmd": "subscribe", "params": {"channels": ["orderbook_delta"]}}),
            14,
        ),
        (
            json!({"id": 4, "cmd": "subscribe", "params": {"channels": ["weather"], "market_tickers": ["X"]}}),
            8,
        ),
        (json!({"id": 5, "cmd": "unsubscribe", "params": {"sids": [99]}}), 7),
        (
            json!({"id": 6, "cmd": "update_subscription", "params": {"sid": 99, "action": "add_markets"}}),
            7,
        ),
    ];
    for (cmd, code) in cases {
        send(&mut ws, cmd.clone()).await;
        let f = next_json(&mut ws).await;
        assert_eq!(
            (f["type"].as_str(), f["msg"]["code"].as_u64()),
            (Some("error"), Some(code)),
            "{cmd}"
        );
        assert_eq!(f["id"], cmd["id"]);
    }
    send(
        &mut ws,
        json!({"id": 9, "cmd": "subscribe", "params": {"channels": ["trade"]}}),
    )
    .await;
    let sid = next_json(&mut ws).await["msg"]["sid"].as_u64().unwrap();
    send(
        &mut ws,
        json!({"id": 10, "cmd": "unsubscribe", "params": {"sids": [sid]}}),
    )
    .await;
    let f = next_json(&mut ws).await;
    assert_eq!(
        (f["type"].as_str(), f["sid"].as_u64()),
        (Some("unsubscribed"), Some(sid))
    );
}

#[tokio::test(start_paused = true)]
async fn the_server_pings_with_a_heartbeat_body() {
    let sim = start(26).await;
    let mut ws = open(&sim).await;
    let msg = tokio::time::timeout(DEADLINE, ws.next())
        .await
        .expect("a frame")
        .expect("open")
        .expect("ok");
    assert_eq!(msg, Message::Ping("heartbeat".as_bytes().to_vec().into()));
}

/// Past the connection's market limit a `subscribe` or an `add_markets` is refused with error 26 and
/// changes nothing; dropping the socket that carries a market leaves the venue's other sockets open.
#[tokio::test]
async fn markets_past_the_connection_limit_are_refused_with_error_26() {
    let sim = start(23).await;
    sim.faults().set_ws_limit(Exchange::VenueA, 2);
    let tickers: Vec<String> = sim
        .markets(Exchange::VenueA)
        .into_iter()
        .filter(|m| m.phase == crossbook_sim::Phase::Open)
        .take(3)
        .map(|m| m.market_id)
        .collect();
    let mut ws = open(&sim).await;
    send(
        &mut ws,
        json!({"id": 1, "cmd": "subscribe", "params": {"channels": ["orderbook_delta"], "market_tickers": tickers}}),
    )
    .await;
    let refused = next_json(&mut ws).await;
    assert_eq!(
        (refused["type"].as_str(), refused["msg"]["code"].as_u64()),
        (Some("error"), Some(26))
    );
    assert_eq!(refused["id"], 1);
    send(
        &mut ws,
        json!({"id": 2, "cmd": "subscribe", "params": {"channels": ["orderbook_delta", "trade"], "market_tickers": &tickers[..2]}}),
    )
    .await;
    let mut snapshots = 0;
    for _ in 0..4 {
        let f = next_json(&mut ws).await;
        snapshots += usize::from(f["type"] == "orderbook_snapshot");
    }
    assert_eq!(snapshots, 2);
    send(
        &mut ws,
        json!({"id": 3, "cmd": "update_subscription", "params": {"sid": 1, "action": "add_markets", "market_tickers": [tickers[2]]}}),
    )
    .await;
    let refused = next_json(&mut ws).await;
    assert_eq!(
        (refused["id"].as_u64(), refused["msg"]["code"].as_u64()),
        (Some(3), Some(26))
    );
    // Deleting one market makes room for another.
    send(
        &mut ws,
        json!({"id": 4, "cmd": "update_subscription", "params": {"sid": 1, "action": "delete_markets", "market_tickers": [tickers[0]]}}),
    )
    .await;
    assert_eq!(next_json(&mut ws).await["type"], "ok");
    send(
        &mut ws,
        json!({"id": 5, "cmd": "update_subscription", "params": {"sid": 2, "action": "delete_markets", "market_tickers": [tickers[0]]}}),
    )
    .await;
    assert_eq!(next_json(&mut ws).await["type"], "ok");
    send(
        &mut ws,
        json!({"id": 6, "cmd": "update_subscription", "params": {"sid": 1, "action": "add_markets", "market_tickers": [tickers[2]]}}),
    )
    .await;
    let snap = next_json(&mut ws).await;
    assert_eq!(
        (snap["type"].as_str(), snap["msg"]["market_ticker"].as_str()),
        (Some("orderbook_snapshot"), Some(tickers[2].as_str()))
    );

    // A second socket on another market; dropping the one carrying `tickers[2]` leaves it open.
    let mut other = open(&sim).await;
    send(
        &mut other,
        json!({"id": 1, "cmd": "subscribe", "params": {"channels": ["orderbook_delta"], "market_tickers": [tickers[0]]}}),
    )
    .await;
    next_json(&mut other).await;
    sim.faults().drop_socket_carrying(Exchange::VenueA, &tickers[2]);
    while next_text(&mut ws).await.is_some() {}
    send(&mut other, json!({"id": 9, "cmd": "list_subscriptions"})).await;
    loop {
        let f = next_json(&mut other).await;
        if f["id"] == 9 {
            break;
        }
    }
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while sim.faults().sessions_open(Exchange::VenueA) != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "only the dropped session closed"
        );
        tokio::task::yield_now().await;
    }
}
