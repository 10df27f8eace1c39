//! Helpers shared by the integration tests: a simulator on a manual clock, an HTTP client, WebSocket
//! clients for both venues, and shape comparison against the venues' sample payloads.

use std::time::Duration;

use crossbook_core::Timestamp;
use crossbook_sim::{SimClock, SimConfig, SimHandle, Simulator, venue_a::auth};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::{
    MaybeTlsStream, WebSocketStream,
    tungstenite::{Message, client::IntoClientRequest},
};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// 2026-05-12T11:07:31.412Z: inside the 07:00–07:15 ET window of the samples.
pub const T0_MS: i64 = 1_778_584_051_412;

/// How long any single wait may take before the test fails (a guard, never a pause).
pub const DEADLINE: Duration = Duration::from_secs(15);

/// A simulator with model time frozen at [`T0_MS`] until the test advances it.
pub async fn start(seed: u64) -> SimHandle {
    let cfg = SimConfig::new(
        seed,
        SimClock::Manual {
            start: Timestamp::from_millis(T0_MS),
        },
    );
    Simulator::start(cfg).await.expect("simulator starts")
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("http client")
}

/// GET `url`, returning the status and the JSON body.
pub async fn get(url: &str) -> (u16, Value) {
    let resp = client().get(url).send().await.expect("request sent");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("JSON body"))
}

/// GET that must succeed.
pub async fn get_ok(url: &str) -> Value {
    let (status, body) = get(url).await;
    assert_eq!(status, 200, "{url}: {body}");
    body
}

pub fn sample(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("sample exists")).expect("sample is JSON")
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Asserts that `actual` has every field of `sample` with the same JSON type, recursively (arrays compare
/// their first elements). A field may be null on one side only when it is listed in `nullable`.
pub fn assert_shape(what: &str, sample: &Value, actual: &Value, nullable: &[&str]) {
    match (sample, actual) {
        (Value::Object(s), Value::Object(a)) => {
            for (k, sv) in s {
                let Some(av) = a.get(k) else {
                    panic!("{what}: missing field {k:?} in {actual}")
                };
                if (sv.is_null() || av.is_null()) && nullable.contains(&k.as_str()) {
                    continue;
                }
                assert_shape(&format!("{what}.{k}"), sv, av, nullable);
            }
        }
        (Value::Array(s), Value::Array(a)) => {
            if let (Some(s0), Some(a0)) = (s.first(), a.first()) {
                assert_shape(&format!("{what}[0]"), s0, a0, nullable);
            }
        }
        (s, a) => assert_eq!(kind(s), kind(a), "{what}: sample {s} vs simulator {a}"),
    }
}

/// Opens the venue_a WebSocket with a handshake signed by `pem` (the demo key unless a test says otherwise).
pub async fn connect_a(sim: &SimHandle, key_id: &str, pem: &str) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    let mut req = sim.venue_a_ws_url().into_client_request().expect("request");
    let ts = Timestamp::now().millis();
    let sig = auth::sign(pem, ts, "GET", auth::WS_PATH).expect("signs");
    let h = req.headers_mut();
    h.insert("KALSHI-ACCESS-KEY", key_id.parse().unwrap());
    h.insert("KALSHI-ACCESS-TIMESTAMP", ts.to_string().parse().unwrap());
    h.insert("KALSHI-ACCESS-SIGNATURE", sig.parse().unwrap());
    tokio_tungstenite::connect_async(req).await.map(|(ws, _)| ws)
}

pub async fn connect_b(sim: &SimHandle) -> Ws {
    tokio_tungstenite::connect_async(sim.venue_b_ws_url())
        .await
        .expect("venue_b socket")
        .0
}

pub async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into())).await.expect("sent");
}

/// The next text frame (pings and pongs skipped); `None` when the socket ended.
pub async fn next_text(ws: &mut Ws) -> Option<String> {
    loop {
        let msg = tokio::time::timeout(DEADLINE, ws.next())
            .await
            .expect("a frame before the deadline");
        match msg {
            Some(Ok(Message::Text(t))) => return Some(t.to_string()),
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Binary(_))) => panic!("unexpected binary frame"),
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
        }
    }
}

/// The next text frame as JSON.
pub async fn next_json(ws: &mut Ws) -> Value {
    let t = next_text(ws).await.expect("socket open");
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("not JSON ({e}): {t}"))
}
