//! The served OpenAPI document against the server's real answers: every operation is called, over HTTP,
//! against the simulated venues, as a caller without a key, with a free key, with an unknown key and as a
//! Trader, with a missing body and with a bad value of each parameter. Every status that comes back must be
//! documented for that operation, and every JSON body must validate against the schema documented for its
//! status. A client generated from the document then cannot meet a field or a status it does not know.

use std::{collections::BTreeMap, time::Duration};

use reqwest::Method;
use serde_json::{Value, json};

use crate::util::{
    Keys, Server, client, eventually, eventually_rows, get_json, get_json_key, long_btc_market, simulated_on_sqlite,
};
use crossbook_core::Timestamp;

/// Ids from the simulator's own catalog, found through the API as a caller would.
struct Ids {
    a_market: String,
    a_event: String,
    b_market: String,
    series: String,
}

/// One request and what it was for, to name it in a failure.
struct Call {
    why: &'static str,
    method: Method,
    url: String,
    key: Option<String>,
    body: Option<Value>,
    /// The parameter given a value its schema refuses: the answer must be a 400 naming it.
    refused: Option<String>,
}

/// The response schema of `status` on `op` (or its `default`), resolved through `$ref`s of `responses`.
fn response_schema<'a>(doc: &'a Value, op: &'a Value, status: u16) -> Option<Option<&'a Value>> {
    let mut resp = op["responses"].get(status.to_string())?;
    if let Some(r) = resp["$ref"].as_str() {
        let name = r.rsplit('/').next()?;
        resp = &doc["components"]["responses"][name];
    }
    Some(resp["content"]["application/json"].get("schema"))
}

/// Validates `body` against `schema` with the document's components in reach of its `$ref`s.
fn validate(doc: &Value, schema: &Value, body: &Value) -> Result<(), String> {
    let mut root = schema.clone();
    if let Some(o) = root.as_object_mut() {
        o.insert("components".into(), doc["components"].clone());
        o.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
    }
    // Formats are checked too (`date-time` above all): a generated client relies on them.
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .map_err(|e| format!("the schema does not compile: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(body)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// A value of parameter `name` on `path` that the server accepts, from the simulator's catalog.
fn good_value(ids: &Ids, path: &str, name: &str) -> Option<String> {
    let venue_b = path.contains("venue_b");
    Some(match name {
        // The replay mixes venues: each id names its own.
        "market_id" if path == "/v1/replay" => format!("venue_a:{}", ids.a_market),
        "market_id" if venue_b => ids.b_market.clone(),
        "market_id" => ids.a_market.clone(),
        "market_ids" => format!("{},{}", ids.a_market, ids.b_market),
        "exchange" => "venue_a".into(),
        "event_id" | "event_ticker" => ids.a_event.clone(),
        "series_id" => ids.series.clone(),
        "q" => "btc".into(),
        // The export's day: today (UTC).
        "date" => Timestamp::now().to_iso()[..10].to_string(),
        "type" => "whale".into(),
        // The replay's range: the last minute (its only required times).
        "start_time" => (Timestamp::now().millis() - 60_000).to_string(),
        "end_time" => Timestamp::now().millis().to_string(),
        // The execution price: 10 YES contracts now.
        "side" => "yes".into(),
        "size" => "10".into(),
        "time" => Timestamp::now().millis().to_string(),
        // A backtest that does not exist yet: the writes below start one and read it.
        "id" if path.starts_with("/v1/backtests") => "bt_00000000000000000000000000000000".into(),
        "format" if path.starts_with("/v1/backtests") => "csv".into(),
        _ => return None,
    })
}

/// The searches that need `q` or `series_id` (a rule no schema keyword can state; their descriptions say it).
fn needs_q_or_series(path: &str) -> bool {
    path == "/v1/search/events" || path == "/v1/search/markets"
}

/// A value of parameter `name` that no rule accepts: a control character where text goes, a word where a
/// number goes, a number out of every range.
fn bad_value(schema: &Value) -> &'static str {
    match schema["type"].as_str() {
        Some("integer") | Some("number") => "not-a-number",
        Some("boolean") => "maybe",
        _ if schema.get("enum").is_some() => "no-such-value",
        _ => "bad\u{1}value",
    }
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The calls made for one operation.
fn calls_for(base: &str, path: &str, method: &Method, op: &Value, ids: &Ids, keys: &Keys) -> Vec<Call> {
    let params: Vec<&Value> = op["parameters"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut url_path = path.to_string();
    let mut query = BTreeMap::new();
    for p in &params {
        let name = p["name"].as_str().unwrap();
        let value = good_value(ids, path, name);
        if p["in"] == "path" {
            let v = value.unwrap_or_else(|| "1".into());
            url_path = url_path.replace(&format!("{{{name}}}"), &encode(&v));
        } else if p["required"] == true || (name == "q" && needs_q_or_series(path)) {
            query.insert(
                name.to_string(),
                value.unwrap_or_else(|| panic!("no value for {path} {name}")),
            );
        }
    }
    let url_with = |q: &BTreeMap<String, String>| {
        let qs: Vec<String> = q.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
        if qs.is_empty() {
            format!("{base}{url_path}")
        } else {
            format!("{base}{url_path}?{}", qs.join("&"))
        }
    };
    let url = url_with(&query);
    let body = op.get("requestBody").map(|_| json!({}));
    let call = |why, key: Option<&str>, url: &str, body: Option<Value>| Call {
        why,
        method: method.clone(),
        url: url.to_string(),
        key: key.map(str::to_string),
        body,
        refused: None,
    };
    let mut calls = vec![
        call("without a key", None, &url, body.clone()),
        call("with a free key", Some(&keys.free), &url, body.clone()),
        call(
            "with an unknown key",
            Some(crate::util::UNKNOWN_KEY),
            &url,
            body.clone(),
        ),
    ];
    // Reads run as a Trader as they are; writes only with bodies that cannot succeed (a read-only test).
    if *method == Method::GET {
        calls.push(call("as a Trader", Some(&keys.trader), &url, None));
    } else if op.get("requestBody").is_some() {
        calls.push(call("with no body", Some(&keys.trader), &url, None));
        calls.push(call("with an empty object", Some(&keys.trader), &url, Some(json!({}))));
    }
    for p in &params {
        let name = p["name"].as_str().unwrap();
        let bad = bad_value(&p["schema"]);
        let url = if p["in"] == "path" {
            let mut bad_path = path.to_string();
            for other in params.iter().filter(|o| o["in"] == "path") {
                let n = other["name"].as_str().unwrap();
                let v = if n == name {
                    bad.to_string()
                } else {
                    good_value(ids, path, n).unwrap_or_else(|| "1".into())
                };
                bad_path = bad_path.replace(&format!("{{{n}}}"), &encode(&v));
            }
            format!("{base}{bad_path}")
        } else {
            let mut q = query.clone();
            q.insert(name.to_string(), bad.to_string());
            url_with(&q)
        };
        let mut c = call("with a bad parameter", Some(&keys.trader), &url, body.clone());
        c.refused = Some(name.to_string());
        calls.push(c);
    }
    calls
}

/// Every parameter has an example its own schema accepts, and the values this test sends as good ones and
/// as bad ones are, by the document, good and bad.
fn parameter_failures(doc: &Value, ids: &Ids) -> Vec<String> {
    let mut failures = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                let schema = &p["schema"];
                let what = format!("{method} {path} parameter {name}");
                match p.get("example") {
                    None => failures.push(format!("{what}: no example")),
                    Some(e) => {
                        if let Err(err) = validate(doc, schema, e) {
                            failures.push(format!("{what}: its example {e} breaks its schema: {err}"));
                        }
                    }
                }
                if let Some(good) = good_value(ids, path, name)
                    && let Err(err) = validate(doc, schema, &typed(schema, &good))
                {
                    failures.push(format!("{what}: the good value {good} breaks its schema: {err}"));
                }
                let bad = bad_value(schema);
                if validate(doc, schema, &typed(schema, bad)).is_ok() {
                    failures.push(format!("{what}: the bad value {bad:?} is valid by its schema"));
                }
            }
        }
    }
    failures
}

/// A query value as the JSON value its schema would type it: numbers and booleans when they parse so.
fn typed(schema: &Value, raw: &str) -> Value {
    // A time written as a number or as text: a number when it reads as one.
    if let Some(alts) = schema["anyOf"].as_array() {
        let numeric = alts.iter().any(|a| a["type"] == "integer" || a["type"] == "number");
        return match serde_json::from_str::<serde_json::Number>(raw) {
            Ok(n) if numeric => Value::Number(n),
            _ => Value::from(raw),
        };
    }
    let ty = schema["type"].as_str().unwrap_or("string");
    match ty {
        "array" => Value::Array(vec![typed(&schema["items"], raw)]),
        "integer" | "number" => serde_json::from_str::<serde_json::Number>(raw)
            .map(Value::Number)
            .unwrap_or(Value::from(raw)),
        "boolean" => raw.parse::<bool>().map(Value::Bool).unwrap_or(Value::from(raw)),
        _ => Value::from(raw),
    }
}

/// `v` with every array cut to its first two items: an example shows the shape, not the whole answer.
fn cut(v: Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.into_iter().take(2).map(cut).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, cut(v))).collect()),
        v => v,
    }
}

/// Every successful JSON response has an example, and every example (errors included) fits its schema.
fn example_failures(doc: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, resp) in op["responses"].as_object().unwrap() {
                let resp = match resp["$ref"].as_str() {
                    Some(r) => &doc["components"]["responses"][r.rsplit('/').next().unwrap()],
                    None => resp,
                };
                let Some(media) = resp["content"].get("application/json") else {
                    continue;
                };
                let what = format!("{method} {path} {status}");
                match media.get("example") {
                    // A response without a schema (the document itself) needs no example.
                    None if status.starts_with('2') && media.get("schema").is_some() => failures.push(format!(
                        "{what}: no example (CROSSBOOK_WRITE_EXAMPLES=1 cargo test -p crossbook-server --test it openapi records them)"
                    )),
                    None => {}
                    Some(example) => {
                        if let Err(e) = validate(doc, &media["schema"], example) {
                            failures.push(format!("{what}: the example breaks the schema: {e}"));
                        }
                    }
                }
            }
        }
    }
    failures
}

/// Sends calls and records every answer that the document does not describe.
struct Checker<'a> {
    doc: &'a Value,
    failures: Vec<String>,
    checked: usize,
    /// The richest successful JSON answer of each `"<METHOD> <path> <status>"`, arrays cut to two items.
    answers: BTreeMap<String, Value>,
}

impl Checker<'_> {
    fn fail(&mut self, path: &str, call: &Call, status: u16, why: &str) {
        self.failures.push(format!(
            "{} {path} {} ({}) -> {status}: {why}",
            call.method, call.why, call.url
        ));
    }

    /// Sends `call` to the operation documented at `path`; returns the status and the body.
    async fn check(&mut self, path: &str, call: &Call) -> (u16, String) {
        let mut req = client().request(call.method.clone(), &call.url);
        if let Some(k) = &call.key {
            req = req.header("x-api-key", k);
        }
        if let Some(b) = &call.body {
            req = req.json(b);
        }
        let resp = tokio::time::timeout(Duration::from_secs(30), req.send())
            .await
            .unwrap_or_else(|_| panic!("{} {}: no answer in 30 s", call.method, call.url))
            .unwrap();
        let status = resp.status().as_u16();
        let is_json = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/json"));
        let text = resp.text().await.unwrap();
        self.checked += 1;
        let op = &self.doc["paths"][path][call.method.as_str().to_lowercase()];
        match (response_schema(self.doc, op, status), is_json) {
            (None, _) => self.fail(path, call, status, &format!("status not documented; body {text}")),
            (Some(Some(schema)), true) => {
                let body: Value = serde_json::from_str(&text).unwrap();
                if let Err(e) = validate(self.doc, schema, &body) {
                    self.fail(path, call, status, &format!("body does not match the schema: {e}"));
                } else if (200..300).contains(&status) && path != "/openapi.json" {
                    // The document's own example is a small hand-written one, not the whole document.
                    let key = format!("{} {path} {status}", call.method);
                    let body = cut(body);
                    let richer = self
                        .answers
                        .get(&key)
                        .is_none_or(|seen| seen.to_string().len() < body.to_string().len());
                    if richer {
                        self.answers.insert(key, body);
                    }
                }
            }
            (Some(Some(_)), false) => self.fail(path, call, status, &format!("documented as JSON, sent {text}")),
            (Some(None), _) => {}
        }
        if let Some(name) = &call.refused {
            let param = serde_json::from_str::<Value>(&text).ok().map(|b| b["param"].clone());
            if status != 400 || param != Some(Value::from(name.as_str())) {
                self.fail(
                    path,
                    call,
                    status,
                    &format!("a value the schema of {name} refuses was not a 400 naming it: {text}"),
                );
            }
        }
        (status, text)
    }

    /// [`Checker::check`] of a Trader's write that must succeed; returns the body.
    async fn write(
        &mut self,
        base: &str,
        method: Method,
        path: &str,
        url_path: &str,
        key: &str,
        body: Option<Value>,
    ) -> Value {
        let call = Call {
            why: "as a Trader (write)",
            method,
            url: format!("{base}{url_path}"),
            key: Some(key.to_string()),
            body,
            refused: None,
        };
        let (status, text) = self.check(path, &call).await;
        if !(200..300).contains(&status) {
            self.fail(path, &call, status, &format!("a good request failed: {text}"));
        }
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

/// The writes, in an order where each succeeds: a watchlist entry added, changed and removed two ways, and
/// a webhook registered, read, changed, tested and removed.
async fn writes(c: &mut Checker<'_>, base: &str, ids: &Ids, keys: &Keys) {
    let k = &keys.trader;
    let add = json!({"exchange": "venue_a", "event_ticker": ids.a_event});
    let by_ticker = "/whales/user/events/by-ticker";
    let added = c
        .write(base, Method::POST, by_ticker, by_ticker, k, Some(add.clone()))
        .await;
    let id = added["id"]
        .as_i64()
        .or_else(|| added["data"]["id"].as_i64())
        .unwrap_or_else(|| panic!("no id in {added}"));
    c.write(base, Method::GET, "/whales/user/events", "/whales/user/events", k, None)
        .await;
    let one = "/whales/user/events/{id}";
    let at = format!("/whales/user/events/{id}");
    c.write(
        base,
        Method::PATCH,
        one,
        &at,
        k,
        Some(json!({"whale_threshold_usd": 2500})),
    )
    .await;
    let feed = format!("/whales/user/feed?event_id={}", encode(&ids.a_event));
    c.write(base, Method::GET, "/whales/user/feed", &feed, k, None).await;
    c.write(base, Method::DELETE, one, &at, k, None).await;
    c.write(base, Method::POST, by_ticker, by_ticker, k, Some(add)).await;
    let by = "/whales/user/events/by-ticker/{exchange}/{event_ticker}";
    let at = format!("/whales/user/events/by-ticker/venue_a/{}", encode(&ids.a_event));
    c.write(base, Method::DELETE, by, &at, k, None).await;
    // The same event by the address of its page, then removed again.
    let series = ids.a_event.split('-').next().unwrap_or_default().to_ascii_lowercase();
    let page = json!({"url": format!("kalshi.com/markets/{series}/{}", ids.a_event.to_ascii_lowercase())});
    let by_url = "/whales/user/events/by-url";
    c.write(base, Method::POST, by_url, by_url, k, Some(page)).await;
    c.write(base, Method::DELETE, by, &at, k, None).await;

    let hook = "/v1/webhooks/{type}";
    let url = json!({"url": "http://127.0.0.1:9/crossbook"});
    c.write(base, Method::POST, hook, "/v1/webhooks/whale", k, Some(url.clone()))
        .await;
    c.write(base, Method::GET, hook, "/v1/webhooks/whale", k, None).await;
    c.write(base, Method::GET, "/v1/webhooks", "/v1/webhooks", k, None)
        .await;
    c.write(
        base,
        Method::PUT,
        hook,
        "/v1/webhooks/whale",
        k,
        Some(json!({"url": "http://127.0.0.1:9/other", "enabled": true})),
    )
    .await;
    c.write(
        base,
        Method::POST,
        "/v1/webhooks/{type}/test",
        "/v1/webhooks/whale/test",
        k,
        None,
    )
    .await;
    c.write(
        base,
        Method::GET,
        "/v1/webhooks/{type}/deliveries",
        "/v1/webhooks/whale/deliveries",
        k,
        None,
    )
    .await;
    c.write(base, Method::DELETE, hook, "/v1/webhooks/whale", k, None).await;

    // A backtest of the last minute, read while it runs or once done, and its trades once done.
    let now = Timestamp::now().millis();
    let body = json!({"from": now - 60_000, "to": now, "min_net_cents": 0});
    let started = c
        .write(base, Method::POST, "/v1/backtests", "/v1/backtests", k, Some(body))
        .await;
    let id = started["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {started}"))
        .to_string();
    let run = format!("/v1/backtests/{id}");
    let done = eventually("the backtest to end", 60, async || {
        let v = get_json_key(&format!("{base}{run}"), k).await?;
        match v["status"].as_str() {
            Some("done") => Ok(v),
            _ => Err(format!("not done: {}", v["status"])),
        }
    })
    .await;
    assert_eq!(done["status"], "done");
    c.write(base, Method::GET, "/v1/backtests/{id}", &run, k, None).await;
    c.write(base, Method::GET, "/v1/backtests", "/v1/backtests", k, None)
        .await;
    let trades = format!("{run}/trades?format=csv");
    c.write(base, Method::GET, "/v1/backtests/{id}/trades", &trades, k, None)
        .await;
}

async fn find_ids(server: &Server, key: &str) -> Ids {
    let a = long_btc_market(server, "venue_a", key).await;
    let b = long_btc_market(server, "venue_b", key).await;
    let (_, series) = get_json(&server.url("/v1/search/series?q=btc&limit=1")).await.unwrap();
    Ids {
        a_market: a["market_id"].as_str().unwrap().to_string(),
        a_event: a["event_id"].as_str().unwrap().to_string(),
        b_market: b["market_id"].as_str().unwrap().to_string(),
        series: series[0]["series_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{series}"))
            .to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_is_documented_with_its_status_and_schema() {
    // The webhook writes register a loopback callback.
    let (db, keys, server) = simulated_on_sqlite(11, |c| c.allow_private_webhook_targets = true).await;
    let ids = find_ids(&server, &keys.trader).await;
    // Let the books fill the answers, so that rows (not only empty lists) are validated: the spreads need a
    // live book on both legs of a pair.
    let trader = &keys.trader;
    eventually_rows(
        "price spreads of a pair",
        90,
        &server.url("/v1/arbitrage/current/difference"),
        trader,
        "",
    )
    .await;
    // An episode in the history: the opportunity rows of the current and history routes then have real
    // values to validate (the simulated books cross every minute or two).
    let history = server.url("/v1/arbitrage/history?limit=1");
    eventually_rows("an arbitrage episode", 180, &history, trader, "/items").await;
    // A whale in the feed, so its rows are validated too (the simulator puts whale-sized trades on the
    // events of the daily pool every 20 s).
    let feed = server.url("/v1/whales/public/feed?limit=1");
    eventually_rows("a whale trade", 180, &feed, trader, "/trades").await;

    let doc: Value = client()
        .get(server.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let base = format!("http://{}", server.addr);
    let mut failures = parameter_failures(&doc, &ids);
    let mut checker = Checker {
        doc: &doc,
        failures: Vec::new(),
        checked: 0,
        answers: BTreeMap::new(),
    };
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let method: Method = method.to_uppercase().parse().unwrap();
            for call in calls_for(&base, path, &method, op, &ids, &keys) {
                let (status, text) = checker.check(path, &call).await;
                // The stream is a WebSocket (its own tests cover the upgrade), and a webhook that is not
                // registered yet, or a backtest not started, is a documented 404; the writes below make them.
                let exempt =
                    path == "/v1/stream" || path.starts_with("/v1/webhooks/") || path.starts_with("/v1/backtests/");
                if call.why == "as a Trader" && !(200..300).contains(&status) && !exempt {
                    checker.fail(path, &call, status, &format!("a good request failed: {text}"));
                }
            }
        }
    }
    writes(&mut checker, &base, &ids, &keys).await;
    failures.extend(checker.failures);
    let checked = checker.checked;
    if std::env::var_os("CROSSBOOK_WRITE_EXAMPLES").is_some() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/src/api/openapi/examples.json");
        let text = serde_json::to_string_pretty(&checker.answers).unwrap() + "\n";
        std::fs::write(file, text).unwrap();
        eprintln!(
            "wrote {} examples to {file}; rebuild to serve them",
            checker.answers.len()
        );
    } else {
        failures.extend(example_failures(&doc));
    }
    server.stop().await.unwrap();
    db.cleanup().await;
    assert!(checked > 100, "only {checked} answers checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} answers break the document:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Words of the project's internal documents that users do not have: `spec 2.4`, `contracts §3`, `§`.
pub fn private_references(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut found = Vec::new();
    for (i, _) in lower.match_indices("spec ").chain(lower.match_indices("contracts §")) {
        let after = &lower[i..];
        let next = after.split_once(' ').map(|(_, r)| r).unwrap_or("");
        let word_start = i == 0 || !lower[..i].ends_with(|c: char| c.is_alphanumeric());
        if word_start && next.starts_with(|c: char| c.is_ascii_digit() || c == '§') {
            found.push(after.chars().take(40).collect());
        }
    }
    for (i, _) in lower.match_indices('§') {
        found.push(lower[i..].chars().take(40).collect());
    }
    found
}

#[test]
fn user_facing_text_names_the_rules_not_internal_documents() {
    assert_eq!(
        private_references("see spec 2.4 and contracts §3"),
        vec!["spec 2.4 and contracts §3", "contracts §3", "§3"]
    );
    assert!(private_references("inspect 2 specs; contracts on 5 levels").is_empty());
    let served = [
        (
            "/openapi.json".to_string(),
            crossbook_server::api::openapi_json().to_string(),
        ),
        ("/docs".to_string(), crossbook_server::api::docs_html().to_string()),
    ];
    for (what, text) in served.into_iter().chain(crate::util::user_docs()) {
        let found = private_references(&text);
        assert!(
            found.is_empty(),
            "{what} refers to documents users do not have: {found:?}"
        );
    }
}

/// The parameter `name` of `GET path`.
fn param<'a>(doc: &'a Value, path: &str, name: &str) -> &'a Value {
    doc["paths"][path]["get"]["parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("{path} has no parameters"))
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{path} has no {name}"))
}

/// Whether `value` is valid by `schema` (with the document's components in reach).
fn accepts(doc: &Value, schema: &Value, value: Value) -> bool {
    validate(doc, schema, &value).is_ok()
}

/// The served document states the rules the parsers enforce: the precision and bounds of numbers, the forms
/// and bounds of times, the length, pattern and format of body strings, and the document's own shape.
#[tokio::test]
async fn the_document_states_what_the_parsers_enforce() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = crate::util::TestApp::new(&db, |_| {});
    let r = app.get("/openapi.json").await;
    assert_eq!(r.status.as_u16(), 200);
    let doc = r.json();

    // Amounts: 0 or more in steps of one micro-unit; the steps are exact for the values a client sends.
    for (path, name) in [
        ("/v1/search/markets", "min_volume"),
        ("/v1/search/markets", "min_liquidity"),
        ("/v1/search/events", "min_volume"),
        ("/v1/whales/public/feed", "min_trade_size"),
        ("/whales/user/feed", "min_trade_size"),
    ] {
        let s = &param(&doc, path, name)["schema"];
        assert_eq!(s["type"], "number", "{path} {name}: {s}");
        assert_eq!(s["multipleOf"].as_f64(), Some(0.000001), "{path} {name}: {s}");
        assert!(s["minimum"].as_f64().is_some_and(|m| m >= 0.0), "{path} {name}: {s}");
        for ok in [json!(1000), json!(2.5), json!(1234.567891), json!(0.000001)] {
            let ok = if path.contains("public") {
                json!(1000.000001)
            } else {
                ok
            };
            assert!(accepts(&doc, s, ok.clone()), "{path} {name} refuses {ok}: {s}");
        }
        assert!(!accepts(&doc, s, json!(1000.0000001)), "{path} {name}: {s}");
    }
    // Cents: any precision (rounded up), below the bound.
    let cents = &param(&doc, "/v1/arbitrage/history", "min_net_cents")["schema"];
    assert_eq!(
        (cents["type"].as_str(), cents["minimum"].as_i64()),
        (Some("number"), Some(0))
    );
    assert_eq!(cents["exclusiveMaximum"], json!(crossbook_server::params::CENTS_BOUND));

    // Times: milliseconds from 2001 on, or RFC 3339 times and dates, where the parser reads both.
    let min_millis = crossbook_server::params::MIN_MILLIS;
    for (path, name) in [
        ("/v1/historical/orderbook", "start_time"),
        ("/v1/historical/venue_a/trades", "end_time"),
        ("/v1/replay", "start_time"),
        ("/v1/replay", "end_time"),
        ("/v1/markets/ohlcv", "from"),
        ("/v1/markets/ohlcv", "to"),
    ] {
        let s = &param(&doc, path, name)["schema"];
        let alts = s["anyOf"].as_array().unwrap_or_else(|| panic!("{path} {name}: {s}"));
        let millis = alts.iter().find(|a| a["type"] == "integer").unwrap();
        assert_eq!(millis["minimum"], json!(min_millis), "{path} {name}");
        assert!(accepts(&doc, s, json!(min_millis)), "{path} {name}");
        assert!(
            !accepts(&doc, s, json!(min_millis - 1)),
            "{path} {name}: seconds are refused"
        );
        for text in ["2026-11-21T19:15:00Z", "2026-11-21"] {
            assert!(accepts(&doc, s, json!(text)), "{path} {name} refuses {text}");
        }
        assert!(!accepts(&doc, s, json!("yesterday")), "{path} {name}");
    }
    // Times written only as text.
    for (path, name) in [
        ("/v1/arbitrage/history", "from"),
        ("/v1/arbitrage/history", "to"),
        ("/v1/search/events", "discovered_after"),
        ("/v1/search/markets", "settled_before"),
        ("/whales/user/feed", "start_date"),
    ] {
        let s = &param(&doc, path, name)["schema"];
        for text in ["2026-11-21T19:15:00+02:00", "2026-11-21"] {
            assert!(accepts(&doc, s, json!(text)), "{path} {name} refuses {text}: {s}");
        }
        for bad in [json!("soon"), json!(1763752500000_i64)] {
            assert!(!accepts(&doc, s, bad.clone()), "{path} {name} takes {bad}: {s}");
        }
    }
    // The export's day is a calendar date.
    for path in ["/v1/export/orderbook", "/v1/export/trades"] {
        if doc["paths"].get(path).is_none() {
            continue;
        }
        let s = &param(&doc, path, "date")["schema"];
        assert_eq!(s["format"], "date", "{path}: {s}");
        assert!(!accepts(&doc, s, json!("2026-02-30")), "{path}: {s}");
    }
    assert!(
        doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .any(|(p, item)| p.starts_with("/v1/export")
                && item["get"]["parameters"].as_array().is_some_and(|ps| ps
                    .iter()
                    .any(|x| x["name"] == "date" && x["schema"]["format"] == "date"))),
        "no export route documents its date"
    );

    // Body strings: the webhook URL and the watchlist's text fields.
    let schemas = &doc["components"]["schemas"];
    let url = &schemas["WebhookIn"]["properties"]["url"];
    let url = match url["$ref"].as_str() {
        Some(r) => &schemas[r.rsplit('/').next().unwrap()],
        None => url,
    };
    assert_eq!(url["format"], "uri", "{url}");
    assert_eq!(url["minLength"], 1, "{url}");
    assert_eq!(
        url["maxLength"],
        json!(crossbook_server::webhooks::ssrf::MAX_URL_LEN),
        "{url}"
    );
    assert!(accepts(&doc, url, json!("https://hooks.example.com/x")), "{url}");
    assert!(!accepts(&doc, url, json!("ftp://hooks.example.com/x")), "{url}");
    for (body, field) in [("AddEventIn", "event_ticker"), ("AddByUrlIn", "url")] {
        let f = &schemas[body]["properties"][field];
        let f = match f["$ref"].as_str() {
            Some(r) => &schemas[r.rsplit('/').next().unwrap()],
            None => f,
        };
        assert_eq!(f["minLength"], 1, "{body}.{field}: {f}");
        assert_eq!(
            f["maxLength"],
            json!(crossbook_server::params::MAX_TEXT_LEN),
            "{body}.{field}: {f}"
        );
        assert!(f["pattern"].is_string(), "{body}.{field}: {f}");
        assert!(!accepts(&doc, f, json!("   ")), "{body}.{field}: only spaces");
    }
    let threshold = &schemas["PatchEventIn"]["properties"]["whale_threshold_usd"];
    assert_eq!(threshold["multipleOf"].as_f64(), Some(0.000001), "{threshold}");

    // The document's own answer is an object, and the document is one by it.
    let media = &doc["paths"]["/openapi.json"]["get"]["responses"]["200"]["content"]["application/json"];
    assert_eq!(media["schema"]["type"], "object", "{media}");
    assert!(accepts(&doc, &media["schema"], doc.clone()));
    db.cleanup().await;
}
