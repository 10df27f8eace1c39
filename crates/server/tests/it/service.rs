//! Service routes (contracts §10), request ids, metrics, the OpenAPI document and the docs page, and `serve`
//! itself over TCP.

use std::collections::HashSet;

use crossbook_core::{Exchange, Timestamp};
use crossbook_server::{
    config::{Config, Role},
    state::LockStance,
};
use crossbook_store::testing::for_each_backend;
use crossbook_venues::FeedMode;
use serde_json::{Value, json};

use crate::util::*;

#[tokio::test]
async fn health_and_readiness() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        assert_eq!(app.get("/healthz").await.ok(), json!({"status": "ok"}));

        let not_configured = json!({
            "status": "not_configured", "last_update_at": null, "age_seconds": null, "max_age_seconds": 60,
            "mode": "idle", "connected": false, "books": 0, "stale_books": 0, "books_missing": 0, "last_catalog_sync_at": null,
            "reconnects": 0, "malformed": 0, "capture_gaps": 0, "last_error": null, "reason": null, "status_since": null,
            "last_alive_at": null,
            "connections": {"total": 0, "connected": 0, "reconnects": 0},
            "parts": {
                "books": {"status": "unknown", "failures": 0, "last_ok_at": null, "last_error": null, "last_error_at": null},
                "trades": {"status": "unknown", "failures": 0, "last_ok_at": null, "last_error": null, "last_error_at": null},
                "catalog": {"status": "unknown", "failures": 0, "last_ok_at": null, "last_error": null, "last_error_at": null},
            },
        });
        let body = app.get("/readyz").await.ok();
        assert_eq!(body["status"], "ready");
        assert_eq!(body["store"]["status"], "ok");
        assert_eq!(body["store"]["backend"], db.backend());
        assert!(body["store"]["latency_ms"].is_u64(), "{body}");
        assert_eq!(
            body["venues"],
            json!({"venue_a": not_configured, "venue_b": not_configured})
        );
        assert_eq!(body["ingest"], json!({"role": "all", "leader": false}));
        assert_eq!(body["live"], json!({"status": "serving", "reason": null}));

        // Health recorded while this process does not ingest (a standby) does not count.
        let health = &app.state.health;
        health.update(Exchange::VenueA, |h| {
            h.last_message_at = Some(Timestamp::from_millis(0))
        });
        assert_eq!(
            app.get("/readyz").await.ok()["venues"]["venue_a"]["status"],
            "not_configured"
        );

        // Ingestion runs: both venues count; venue_b has no data yet.
        app.state.ingest.set(crossbook_venues::IngestHandle::default());
        let now = Timestamp::now();
        // The books are counted from those held in memory: 12 fresh, 1 stale.
        let live = &app.state.live;
        for i in 0..13 {
            live.upsert(book(Exchange::VenueA, &format!("A-{i}")));
        }
        live.mark_stale([&crossbook_live::BookKey::of(&book(Exchange::VenueA, "A-0"))]);
        health.update(Exchange::VenueA, |h| {
            h.last_message_at = Some(now);
            h.mode = FeedMode::WebSocket;
            h.connected = true;
            h.reconnects = 2;
            h.malformed = 3;
        });
        let r = app.get("/readyz").await;
        assert_eq!(r.status.as_u16(), 503);
        let v = r.json();
        assert_eq!(v["status"], "not_ready");
        assert_eq!(v["ingest"]["leader"], true);
        assert_eq!(v["venues"]["venue_b"]["status"], "waiting");
        assert_eq!(v["venues"]["venue_b"]["reason"], "connecting");
        let a = &v["venues"]["venue_a"];
        assert_eq!(a["status"], "fresh", "{v}");
        assert_eq!(a["reason"], Value::Null, "{v}");
        assert_eq!(a["last_update_at"], now.to_iso());
        assert_eq!(
            (
                &a["mode"],
                &a["connected"],
                &a["books"],
                &a["stale_books"],
                &a["reconnects"],
                &a["malformed"]
            ),
            (
                &json!("websocket"),
                &json!(true),
                &json!(12),
                &json!(1),
                &json!(2),
                &json!(3)
            )
        );

        // venue_b connected and delivering, but no books yet: still waiting.
        health.update(Exchange::VenueB, |h| {
            h.last_message_at = Some(now);
            h.connected = true;
        });
        let v = app.get("/readyz").await.json();
        assert_eq!(v["venues"]["venue_b"]["status"], "waiting", "{v}");
        assert_eq!(v["venues"]["venue_b"]["reason"], "no books yet", "{v}");
        live.upsert(book(Exchange::VenueB, "B-0"));
        assert_eq!(app.get("/readyz").await.ok()["status"], "ready");

        // venue_b's socket drops: stale at once, though its last data is a moment old.
        health.update(Exchange::VenueB, |h| {
            h.connected = false;
            h.last_error = Some("connection reset".into());
        });
        let r = app.get("/readyz").await;
        assert_eq!(r.status.as_u16(), 503);
        let b = &r.json()["venues"]["venue_b"];
        assert_eq!(
            (&b["status"], &b["reason"]),
            (&json!("stale"), &json!("disconnected: connection reset"))
        );
        health.update(Exchange::VenueB, |h| {
            h.connected = true;
            h.last_error = None;
        });

        // venue_b delivered data two minutes ago: stale, not ready.
        health.update(Exchange::VenueB, |h| {
            h.last_message_at = Some(Timestamp::from_millis(now.millis() - 120_000));
            h.last_error = Some("connection reset".into());
        });
        let r = app.get("/readyz").await;
        assert_eq!(r.status.as_u16(), 503);
        let v = r.json();
        assert_eq!(v["venues"]["venue_b"]["status"], "stale");
        assert_eq!(v["venues"]["venue_b"]["last_error"], "connection reset");
        assert!(v["venues"]["venue_b"]["age_seconds"].as_u64().unwrap() >= 120, "{v}");
        assert_eq!(v["store"]["status"], "ok");

        // Ingestion stopped (the lock was lost): back to not_configured.
        app.state.ingest.clear();
        assert_eq!(
            app.get("/readyz").await.ok()["venues"]["venue_b"]["status"],
            "not_configured"
        );
    })
    .await;
}

#[tokio::test]
async fn request_ids_are_echoed_or_generated() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        for uri in [
            "/v1/search/series",
            "/nope",
            "/v1/search/series?limit=0",
            "/healthz",
            "/metrics",
            "/docs",
        ] {
            let r = app.get_with(uri, &[("x-request-id", "client-chosen-42")]).await;
            assert_eq!(r.header("x-request-id"), Some("client-chosen-42"), "{uri}");
            let generated = app
                .get(uri)
                .await
                .header("x-request-id")
                .map(str::to_string)
                .unwrap_or_default();
            assert_eq!(generated.len(), 36, "{uri}: {generated:?}");
            assert_ne!(
                app.get(uri).await.header("x-request-id"),
                Some(generated.as_str()),
                "{uri}: ids must differ"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn metrics_are_labelled_by_route_template() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});
        app.get(&format!("/v1/search/events/{E_NBA}/markets")).await.ok();
        app.get("/v1/search/events/NO-SUCH-EVENT/markets")
            .await
            .error(404, "not_found", None);
        app.get("/definitely/unknown/path-7f3a")
            .await
            .error(404, "not_found", None);
        let r = app.get("/metrics").await;
        assert_eq!(r.status.as_u16(), 200);
        assert!(
            r.header("content-type").unwrap().starts_with("text/plain"),
            "{:?}",
            r.header("content-type")
        );
        let text = &r.text;
        let has = |status: &str| {
            text.lines().any(|l| {
                l.starts_with("http_requests_total{")
                    && l.contains("route=\"/v1/search/events/{event_id}/markets\"")
                    && l.contains(&format!("status=\"{status}\""))
                    && l.contains("method=\"GET\"")
            })
        };
        assert!(has("200") && has("404"), "{text}");
        assert!(text.contains("http_request_duration_seconds_bucket{"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("http_requests_total{") && l.contains("route=\"unmatched\"")),
            "{text}"
        );
        // Raw paths never become labels.
        assert!(
            !text.contains(E_NBA) && !text.contains("NO-SUCH-EVENT") && !text.contains("path-7f3a"),
            "{text}"
        );
    })
    .await;
}

/// `/metrics` for alerting: every metric family has HELP text; every counter the documentation names is there at 0
/// before its first event (so `increase()` sees the first one); the per-venue gauges follow the feed health.
#[tokio::test]
async fn metrics_have_help_counters_start_at_zero_and_venues_have_gauges() {
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |_| {});
    let now = Timestamp::now();
    // venue_a: two sockets, both up; venue_b: one socket, down.
    for socket in [0, 1] {
        app.state.health.socket_opening(Exchange::VenueA, socket);
        app.state.health.socket_up(Exchange::VenueA, socket);
    }
    app.state.health.update(Exchange::VenueA, |h| {
        h.last_message_at = Some(Timestamp::from_millis(now.millis() - 4_000));
    });
    app.state.health.socket_opening(Exchange::VenueB, 0);
    app.state
        .health
        .update(Exchange::VenueB, |h| assert_eq!(h.mode, FeedMode::WebSocket));
    let r = app.get("/metrics").await;
    assert_eq!(r.status.as_u16(), 200);
    let text = r.text;

    let readme: String = crate::util::user_docs().into_iter().map(|(_, text)| text).collect();
    let mut named: Vec<&str> = readme
        .match_indices("crossbook_")
        .map(|(i, _)| {
            let rest = &readme[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .filter(|n| n.ends_with("_total"))
        .collect();
    named.sort();
    named.dedup();
    assert!(named.len() >= 10, "{named:?}");
    for name in &named {
        assert!(text.contains(&format!("# HELP {name} ")), "no HELP for {name}:\n{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} "))),
            "{name} is absent before its first event:\n{text}"
        );
    }
    // Every family has HELP text.
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let family = line.split_whitespace().nth(2).unwrap();
        assert!(text.contains(&format!("# HELP {family} ")), "no HELP for {family}");
    }
    let value = |series: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
            .unwrap_or_else(|| panic!("no {series}:\n{text}"))
    };
    assert_eq!(value("crossbook_venue_connected{venue=\"venue_a\"}"), 1.0);
    assert_eq!(value("crossbook_venue_connected{venue=\"venue_b\"}"), 0.0);
    // The exporter may write the two labels in either order.
    let connections = |venue: &str, state: &str| {
        let (v, st) = (format!("venue=\"{venue}\""), format!("state=\"{state}\""));
        let one = format!("crossbook_venue_connections{{{v},{st}}}");
        let other = format!("crossbook_venue_connections{{{st},{v}}}");
        value(if text.contains(&one) { &one } else { &other })
    };
    assert_eq!(connections("venue_a", "connected"), 2.0);
    assert_eq!(connections("venue_a", "disconnected"), 0.0);
    assert_eq!(connections("venue_b", "connected"), 0.0);
    assert_eq!(connections("venue_b", "disconnected"), 1.0);
    let age = value("crossbook_venue_data_age_seconds{venue=\"venue_a\"}");
    assert!((4.0..60.0).contains(&age), "{age}");
    assert_eq!(value("crossbook_venue_books{venue=\"venue_a\"}"), 0.0);
    assert_eq!(value("crossbook_venue_stale_books{venue=\"venue_a\"}"), 0.0);
    db.cleanup().await;
}

/// `method` on `path` in process, with no key.
async fn send_method(app: &TestApp, method: &str, path: &str) -> Resp {
    let method = axum::http::Method::from_bytes(method.as_bytes()).unwrap();
    app.send(method, path, &[], axum::body::Body::empty()).await
}

#[tokio::test]
async fn made_up_methods_add_no_metrics_series() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let healthz_405 = |text: &str| {
            text.lines()
                .filter(|l| {
                    l.starts_with("http_requests_total{")
                        && l.contains("route=\"/healthz\"")
                        && l.contains("status=\"405\"")
                })
                .count()
        };
        send_method(&app, "M0", "/healthz")
            .await
            .error(405, "method_not_allowed", None);
        let before = app.get("/metrics").await.text;
        for i in 1..=300 {
            send_method(&app, &format!("M{i}"), "/healthz")
                .await
                .error(405, "method_not_allowed", None);
        }
        let after = app.get("/metrics").await.text;
        // The process's metrics are shared by every test in it (others may send POST /healthz meanwhile), so
        // the count is bounded by the standard methods rather than compared with `before`: the 300 made-up
        // methods are all in the one `other` series.
        assert!(healthz_405(&before) >= 1 && healthz_405(&after) <= 10, "{after}");
        let other = after
            .lines()
            .filter(|l| {
                l.starts_with("http_requests_total{")
                    && l.contains("route=\"/healthz\"")
                    && l.contains("status=\"405\"")
                    && l.contains("method=\"other\"")
            })
            .count();
        assert_eq!(other, 1, "{after}");
        // Every method label anywhere is a standard method or `other`.
        const METHODS: [&str; 10] = [
            "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "other",
        ];
        for label in after.split("method=\"").skip(1) {
            let value = label.split('"').next().unwrap();
            assert!(METHODS.contains(&value), "method label {value:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn unknown_methods_and_paths_count_against_the_rate_limit() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |c| c.rate_limit_anonymous = 6);
        for i in 0..3 {
            send_method(&app, &format!("M{i}"), "/healthz")
                .await
                .error(405, "method_not_allowed", None);
        }
        for i in 0..3 {
            let r = app.get(&format!("/no/such/path/{i}")).await;
            r.error(404, "not_found", None);
            assert_eq!(r.header("x-ratelimit-remaining"), Some(&*(2 - i).to_string()));
        }
        // The bucket is empty: both kinds are now refused, on service and API paths alike.
        send_method(&app, "M9", "/healthz")
            .await
            .error(429, "rate_limited", None);
        send_method(&app, "BREW", "/v1/search")
            .await
            .error(429, "rate_limited", None);
        let r = app.get("/no/such/path/9").await;
        r.error(429, "rate_limited", None);
        assert!(r.header("retry-after").is_some());
        // The service routes' own answers stay unlimited.
        assert_eq!(app.get("/healthz").await.status.as_u16(), 200);
    })
    .await;
}

const SEARCH_PATHS: [&str; 7] = [
    "/v1/search",
    "/v1/search/series",
    "/v1/search/events",
    "/v1/search/markets",
    "/v1/search/recent/events",
    "/v1/search/recent/markets",
    "/v1/search/events/{event_id}/markets",
];
const SERVICE_PATHS: [&str; 5] = ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"];

fn param<'a>(op: &'a Value, name: &str) -> &'a Value {
    op["parameters"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no parameter {name} in {op}"))
}

#[tokio::test]
async fn openapi_documents_every_route() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let r = app.get("/openapi.json").await;
        assert_eq!(r.header("content-type"), Some("application/json; charset=utf-8"));
        let doc = r.ok();
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            doc["openapi"]
        );
        assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());

        let paths = doc["paths"].as_object().unwrap();
        for p in SEARCH_PATHS {
            let bare = p.trim_start_matches("/v1");
            {
                let path = p;
                let op = &paths.get(path).unwrap_or_else(|| panic!("{path} missing"))["get"];
                assert_eq!(op["tags"], json!(["search"]), "{path}");
                assert!(
                    op["summary"].is_string() && op["description"].is_string(),
                    "{path}: handler docs"
                );
                for status in ["200", "400", "429", "500", "503"] {
                    assert!(op["responses"].get(status).is_some(), "{path}: no {status}");
                }
                let limit = &param(op, "limit")["schema"];
                assert_eq!(limit["minimum"], 1, "{path}");
                assert!(limit["maximum"] == 50 || limit["maximum"] == 100, "{path}");
                assert_eq!(
                    param(op, "status")["schema"]["enum"],
                    json!(["active", "closed"]),
                    "{path}"
                );
                assert_eq!(param(op, "status")["schema"]["default"], "active", "{path}");
            }
            // The unversioned alias answers but is documented once, on the /v1 operation.
            assert!(
                paths.get(bare).is_none(),
                "{bare} documented as an operation of its own"
            );
            assert_eq!(paths[p]["get"]["x-also-at"], bare);
            let description = paths[p]["get"]["description"].as_str().unwrap();
            assert!(
                description.contains(&format!("Also answers at `{bare}`")),
                "{description}"
            );
            if !bare.contains('{') {
                assert_eq!(
                    app.get(&format!("{bare}?q=x")).await.status,
                    200,
                    "{bare} still answers"
                );
            }
        }
        for p in SERVICE_PATHS {
            assert!(paths[p]["get"]["responses"]["200"].is_object(), "{p}");
        }
        // Parameters with their rules.
        let events = &paths["/v1/search/events"]["get"];
        assert_eq!(
            param(events, "sort_by")["schema"]["enum"],
            json!(["relevance", "newest", "markets", "volume", "liquidity"]),
            "{events}"
        );
        assert_eq!(param(events, "min_volume")["schema"]["minimum"], 0);
        assert_eq!(param(events, "offset")["schema"]["maximum"], 1_000_000);
        assert!(
            param(events, "discovered_after")["description"]
                .as_str()
                .unwrap()
                .contains("ISO 8601")
        );
        assert_eq!(param(&paths["/v1/search"]["get"], "q")["required"], true);
        let ev_markets = &paths["/v1/search/events/{event_id}/markets"]["get"];
        assert_eq!(param(ev_markets, "event_id")["in"], "path");
        assert!(ev_markets["responses"]["404"].is_object());
        assert_eq!(
            param(&paths["/v1/search/series"]["get"], "limit")["schema"]["default"],
            30
        );

        // Schemas of every object, with their fields.
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for s in [
            "SeriesOut",
            "EventOut",
            "MarketOut",
            "RecentEventOut",
            "RecentMarketOut",
            "CombinedOut",
            "ErrorBody",
            "ErrorCode",
            "ReadyOut",
        ] {
            assert!(schemas.contains_key(s), "schema {s} missing");
        }
        assert_eq!(schemas["ExchangeName"]["enum"], json!(["venue_a", "venue_b"]));
        let market = &schemas["MarketOut"];
        assert!(
            market["required"].as_array().unwrap().iter().any(|f| f == "settled_at"),
            "{market}"
        );
        assert!(schemas["ErrorCode"].to_string().contains("entitlement_required"));
        assert_eq!(doc["components"]["securitySchemes"]["api_key"]["name"], "X-API-Key");

        // Operation ids are unique.
        let mut seen = HashSet::new();
        for item in paths.values() {
            for op in item.as_object().unwrap().values() {
                if let Some(id) = op.get("operationId").and_then(Value::as_str) {
                    assert!(seen.insert(id.to_string()), "duplicate operationId {id}");
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn docs_page_is_self_contained() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let r = app.get("/docs").await;
        assert_eq!(r.status.as_u16(), 200);
        assert!(r.header("content-type").unwrap().starts_with("text/html"));
        let html = &r.text;
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "external reference in /docs"
        );
        assert!(
            !html.contains("<link") && !html.contains("src="),
            "external asset in /docs"
        );
        for p in SEARCH_PATHS.iter().chain(&SERVICE_PATHS) {
            assert!(html.contains(&format!("<code>{p}</code>")), "{p} not documented");
        }
        for needle in ["Try it", "SeriesOut", "min_volume", "X-API-Key", "entitlement_required"] {
            assert!(html.contains(needle), "{needle} missing from /docs");
        }
    })
    .await;
}

/// A process without live data (`--role api`, or a standby waiting for the ingest lock) says so: the routes
/// that answer from live books answer 503 `unavailable` with the reason, and `/readyz` is not ready, rather
/// than answer empty.
#[tokio::test]
async fn a_process_without_live_data_says_so() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        for (role, stance, why) in [
            (Role::Api, LockStance::Unmanaged, "bus_url"),
            (Role::All, LockStance::Standby, "waiting to take over"),
        ] {
            let app = TestApp::new(db, |c| c.role = role);
            app.state.ingest.set_stance(stance);
            let r = app.get("/readyz").await;
            assert_eq!(r.status.as_u16(), 503, "{role:?}");
            let v = r.json();
            assert_eq!(v["status"], "not_ready");
            assert_eq!(v["live"]["status"], "unavailable");
            assert!(v["live"]["reason"].as_str().unwrap().contains(why), "{v}");
            for route in ["/v1/arbitrage/current", "/v1/arbitrage/current/difference"] {
                let e = app.get_key(route, &keys.trader).await.error(503, "unavailable", None);
                assert!(e["detail"].as_str().unwrap().contains(why), "{route}: {e}");
            }
            // Stored data is served as usual.
            app.get_key("/v1/arbitrage/history", &keys.trader).await.ok();
        }
        // The ingest role serves no API, so its live plane is not part of its readiness.
        let app = TestApp::new(db, |c| c.role = Role::Ingest);
        assert_eq!(
            app.get("/readyz").await.json()["live"],
            json!({"status": "not_served", "reason": null})
        );
    })
    .await;
}

#[tokio::test]
async fn ingest_role_serves_only_the_service_routes() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |c| c.role = Role::Ingest);
        app.get("/healthz").await.ok();
        app.get("/v1/search/series").await.error(404, "not_found", None);
    })
    .await;
}

#[tokio::test]
async fn serve_runs_over_tcp_and_shuts_down_gracefully() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let server = Server::start(Config::for_tests(&db.url)).await;
        let http = client();
        let r = http.get(server.url("/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let r = http
            .get(server.url("/v1/search/series?q=nba"))
            .header("x-request-id", "tcp-1")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["x-request-id"], "tcp-1");
        let body: Value = r.json().await.unwrap();
        assert_eq!(ids(&body, "series_id"), ["KXNBA"]);
        server.stop().await.expect("serve returns Ok after a graceful shutdown");
    })
    .await;
}

#[tokio::test]
async fn serve_reports_an_unreachable_database() {
    let config = Config::for_tests("postgres://crossbook:secret@127.0.0.1:1/none");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = crossbook_server::serve(config, listener, std::future::pending())
        .await
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("127.0.0.1:1"), "{msg}");
    assert!(!msg.contains("secret"), "the password leaked: {msg}");
}

/// Connection hygiene of the listener (`crossbook_server::http`): short timeouts so that each test takes a
/// few seconds; every wait below is bounded by this deadline.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads until the server closes the connection (end of stream or reset), failing after [`DEADLINE`];
/// returns what was read.
async fn read_until_closed(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(DEADLINE, read)
        .await
        .expect("the server did not close the connection");
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads one whole response of a keep-alive connection: up to the end of a JSON body ending in `}`.
async fn read_response(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            let n = stream.read(&mut buf).await.expect("read");
            assert!(
                n > 0,
                "closed before a whole response: {}",
                String::from_utf8_lossy(&out)
            );
            out.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&out);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_string)
                    })
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if len.is_some_and(|len| body.len() >= len) {
                    return text.into_owned();
                }
            }
        }
    };
    tokio::time::timeout(DEADLINE, read).await.expect("no response in time")
}

const GET_HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: crossbook\r\n\r\n";

#[tokio::test]
async fn silent_and_trickling_connections_are_closed_after_the_header_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for_each_backend(async |db| {
        let mut config = Config::for_tests(&db.url);
        config.header_read_timeout_seconds = 1;
        let server = Server::start(config).await;
        let started = std::time::Instant::now();
        let mut silent = Vec::new();
        for _ in 0..3 {
            silent.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
        }
        // One header line every 300 ms: each line comes well within the timeout, the headers never end.
        let trickling: Vec<_> = (0..3)
            .map(|_| {
                let addr = server.addr;
                tokio::spawn(async move {
                    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
                    let started = std::time::Instant::now();
                    let mut line: &[u8] = b"GET /healthz HTTP/1.1\r\n";
                    let mut buf = [0u8; 256];
                    loop {
                        assert!(started.elapsed() < DEADLINE, "a trickling connection is still open");
                        if s.write_all(line).await.is_err() {
                            return started.elapsed();
                        }
                        line = b"X-Slow: 1\r\n";
                        match tokio::time::timeout(std::time::Duration::from_millis(300), s.read(&mut buf)).await {
                            Ok(Ok(0) | Err(_)) => return started.elapsed(),
                            Ok(Ok(n)) => panic!("answered: {}", String::from_utf8_lossy(&buf[..n])),
                            Err(_) => {} // still open: next line
                        }
                    }
                })
            })
            .collect();

        // Meanwhile a normal request is answered.
        let r = client().get(server.url("/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200);

        for mut s in silent {
            assert_eq!(read_until_closed(&mut s).await, "", "a silent connection got an answer");
        }
        assert!(
            started.elapsed() >= std::time::Duration::from_millis(900),
            "closed before the timeout"
        );
        for t in trickling {
            let open_for = t.await.unwrap();
            assert!(
                open_for >= std::time::Duration::from_millis(900),
                "closed after {open_for:?}"
            );
        }
        server.stop().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed_after_the_keep_alive_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for_each_backend(async |db| {
        let mut config = Config::for_tests(&db.url);
        config.header_read_timeout_seconds = 1;
        config.keep_alive_timeout_seconds = 2;
        let server = Server::start(config).await;
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(GET_HEALTHZ).await.unwrap();
        assert!(read_response(&mut s).await.starts_with("HTTP/1.1 200"));
        // Idle for longer than the header timeout but within the keep-alive timeout: the connection serves on.
        let mut buf = [0u8; 64];
        let quiet = tokio::time::timeout(std::time::Duration::from_millis(1500), s.read(&mut buf)).await;
        assert!(
            quiet.is_err(),
            "closed or answered while idle past the header timeout: {quiet:?}"
        );
        s.write_all(GET_HEALTHZ).await.unwrap();
        assert!(read_response(&mut s).await.starts_with("HTTP/1.1 200"));
        let idle = std::time::Instant::now();
        assert_eq!(read_until_closed(&mut s).await, "");
        let after = idle.elapsed();
        assert!(
            after >= std::time::Duration::from_millis(1800),
            "closed after {after:?}"
        );
        server.stop().await.unwrap();
    })
    .await;
}

/// Sends the headers of a POST to `path` announcing 100 bytes of body, then one byte every 200 ms (it would
/// take 20 s); returns the status line and head (lower case), the JSON body, and how long the answer took.
async fn slow_post(addr: std::net::SocketAddr, path: &str, key: &str) -> (String, Value, std::time::Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: crossbook\r\nX-API-Key: {key}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let started = std::time::Instant::now();
    let (mut rd, mut wr) = s.into_split();
    let trickle = tokio::spawn(async move {
        // The client's pace, not a wait on the server: one byte per tick.
        let mut pace = tokio::time::interval(std::time::Duration::from_millis(200));
        pace.tick().await;
        loop {
            pace.tick().await;
            if wr.write_all(b" ").await.is_err() {
                break;
            }
        }
    });
    // Until the server answers and closes.
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(DEADLINE, async {
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .expect("no answer in time");
    let took = started.elapsed();
    trickle.abort();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no whole answer: {text}"));
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (head.to_ascii_lowercase(), body, took)
}

#[tokio::test]
async fn a_slow_request_body_is_answered_408() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        let mut config = Config::for_tests(&db.url);
        config.request_body_timeout_seconds = 1;
        let server = Server::start(config).await;

        let (head, body, took) = slow_post(server.addr, "/whales/user/events/by-ticker", &keys.trader).await;
        assert!(head.starts_with("http/1.1 408"), "{head}");
        assert!(took >= std::time::Duration::from_millis(900), "answered after {took:?}");
        assert!(head.contains("content-type: application/json; charset=utf-8"), "{head}");
        assert!(head.contains("x-request-id: "), "{head}");
        assert!(head.contains("connection: close"), "{head}");
        assert_eq!(
            body,
            json!({"detail": "the request body took too long to arrive", "code": "request_timeout"})
        );

        // On the webhook routes, inside their envelope.
        let (head, body, _) = slow_post(server.addr, "/v1/webhooks/arbitrage", &keys.trader).await;
        assert!(head.starts_with("http/1.1 408"), "{head}");
        assert_eq!(
            body,
            json!({
                "success": false, "message": "the request body took too long to arrive", "data": null,
                "detail": "the request body took too long to arrive", "code": "request_timeout"
            })
        );
        server.stop().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for_each_backend(async |db| {
        let mut config = Config::for_tests(&db.url);
        config.max_connections = 2;
        let server = Server::start(config).await;
        // Two connections, each answered once (so both are accepted) and kept open.
        let mut open = Vec::new();
        for _ in 0..2 {
            let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
            s.write_all(GET_HEALTHZ).await.unwrap();
            assert!(read_response(&mut s).await.starts_with("HTTP/1.1 200"));
            open.push(s);
        }
        // The third connects (the listen backlog takes it) but is not served...
        let mut third = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        third.write_all(GET_HEALTHZ).await.unwrap();
        let mut buf = [0u8; 64];
        let early = tokio::time::timeout(std::time::Duration::from_millis(500), third.read(&mut buf)).await;
        assert!(early.is_err(), "the connection over the cap was served: {early:?}");
        // ...until one of the two closes.
        drop(open.pop());
        assert!(read_response(&mut third).await.starts_with("HTTP/1.1 200"));
        server.stop().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_client_that_never_reads_its_response_is_closed_after_the_send_timeout() {
    use tokio::io::AsyncWriteExt;
    for_each_backend(async |db| {
        let mut config = Config::for_tests(&db.url);
        config.response_send_timeout_seconds = 1;
        // The stuck client holds the only connection: another is served only once the stuck one is closed.
        config.max_connections = 1;
        let server = Server::start(config).await;
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stuck = socket.connect(server.addr).await.unwrap();
        // Many copies of the API document, pipelined: far more than both sockets' buffers hold. This client
        // never reads a byte of them.
        let one = "GET /openapi.json HTTP/1.1\r\nHost: crossbook\r\n\r\n";
        stuck.write_all(one.repeat(100).as_bytes()).await.unwrap();
        let healthz = tokio::time::timeout(
            std::time::Duration::from_secs(15),
            client().get(server.url("/healthz")).send(),
        )
        .await
        .expect("the connection that does not read was never closed")
        .unwrap();
        assert_eq!(healthz.status().as_u16(), 200);
        drop(stuck);
        server.stop().await.unwrap();
    })
    .await;
}

/// A GET of `/healthz` whose head (request line, headers, blank line) is exactly `len` bytes, padded by one
/// `X-Pad` header.
fn get_with_head_of(len: usize) -> Vec<u8> {
    let bare = "GET /healthz HTTP/1.1\r\nHost: crossbook\r\nX-Pad: \r\n\r\n".len();
    let head = format!(
        "GET /healthz HTTP/1.1\r\nHost: crossbook\r\nX-Pad: {}\r\n\r\n",
        "a".repeat(len - bare)
    );
    assert_eq!(head.len(), len);
    head.into_bytes()
}

#[tokio::test]
async fn request_headers_over_the_limit_are_answered_431() {
    use tokio::io::AsyncWriteExt;
    for_each_backend(async |db| {
        let config = Config::for_tests(&db.url);
        // The documented default.
        let limit = config.max_header_bytes;
        assert_eq!(limit, 64 * 1024);
        let server = Server::start(config).await;

        // HTTP/1, just under the limit: answered, and the connection serves on.
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(&get_with_head_of(limit - 64)).await.unwrap();
        let answer = read_response(&mut s).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        s.write_all(GET_HEALTHZ).await.unwrap();
        assert!(read_response(&mut s).await.starts_with("HTTP/1.1 200"));

        // HTTP/1, over it (twice the limit is over it however the bytes arrive, see config.default.toml):
        // hyper answers 431 itself, with no body (so not our JSON shape), and closes the connection.
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(&get_with_head_of(2 * limit + 1024)).await.unwrap();
        let answer = read_until_closed(&mut s).await;
        assert!(
            answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{answer}"
        );
        let head = answer.to_ascii_lowercase();
        assert!(head.contains("content-length: 0\r\n"), "{answer}");
        assert!(head.contains("connection: close\r\n"), "{answer}");
        assert!(!head.contains("x-request-id"), "the router answered: {answer}");

        // HTTP/2: the stream is answered 431 (no body), the connection serves on.
        let _ = client(); // installs the TLS provider any reqwest client needs
        let h2 = reqwest::Client::builder().http2_prior_knowledge().build().unwrap();
        let under = h2
            .get(server.url("/healthz"))
            .header("x-pad", "a".repeat(limit - 1024))
            .send()
            .await
            .unwrap();
        assert_eq!(under.version(), reqwest::Version::HTTP_2);
        assert_eq!(under.status(), 200);
        let over = h2
            .get(server.url("/healthz"))
            .header("x-pad", "a".repeat(limit + 1))
            .send()
            .await
            .unwrap();
        assert_eq!(over.status(), 431);
        assert_eq!(over.bytes().await.unwrap().len(), 0);
        let again = h2.get(server.url("/healthz")).send().await.unwrap();
        assert_eq!(again.status(), 200);
        server.stop().await.unwrap();
    })
    .await;
}

/// An empty book of `market_id`.
fn book(exchange: Exchange, market_id: &str) -> crossbook_core::BookSnapshot {
    crossbook_core::BookSnapshot {
        exchange,
        market_id: market_id.into(),
        asset_id: (exchange == Exchange::VenueB).then(|| format!("{market_id}-yes")),
        timestamp: Timestamp::now(),
        bids: vec![],
        asks: vec![],
        no_bids: vec![],
    }
}

/// A log buffer for [`readiness_is_logged_when_it_changes_never_per_request`].
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The lines logged since the last call.
    fn take(&self) -> Vec<String> {
        let bytes = std::mem::take(&mut *self.0.lock().unwrap());
        String::from_utf8(bytes).unwrap().lines().map(str::to_string).collect()
    }
}

/// `/readyz` answering 503 is not an error of the service: nothing at ERROR, one WARN when readiness is
/// lost and one INFO when it is back, however often it is polled.
#[tokio::test(flavor = "current_thread")]
async fn readiness_is_logged_when_it_changes_never_per_request() {
    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |_| {});
    // Ingesting, both venues waiting: not ready.
    app.state.ingest.set(crossbook_venues::IngestHandle::default());
    for _ in 0..5 {
        assert_eq!(app.get("/readyz").await.status.as_u16(), 503);
    }
    let lines = log.take();
    let at = |level: &str| lines.iter().filter(|l| l.contains(level)).cloned().collect::<Vec<_>>();
    assert_eq!(at("ERROR"), Vec::<String>::new(), "{lines:#?}");
    let warns = at(" WARN ");
    assert_eq!(warns.len(), 1, "{lines:#?}");
    assert!(
        warns[0].contains("not ready") && warns[0].contains("connecting"),
        "{warns:?}"
    );

    // Both venues fresh: ready, said once at INFO.
    let now = Timestamp::now();
    for ex in [Exchange::VenueA, Exchange::VenueB] {
        app.state.live.upsert(book(ex, "M"));
        app.state.health.update(ex, |h| {
            h.last_message_at = Some(now);
            h.connected = true;
        });
    }
    for _ in 0..3 {
        assert_eq!(app.get("/readyz").await.status.as_u16(), 200);
    }
    let lines = log.take();
    let infos: Vec<&String> = lines.iter().filter(|l| l.contains("ready again")).collect();
    assert_eq!(infos.len(), 1, "{lines:#?}");
    assert!(infos[0].contains(" INFO "), "{infos:?}");
    assert!(
        !lines.iter().any(|l| l.contains("ERROR") || l.contains(" WARN ")),
        "{lines:#?}"
    );
    db.cleanup().await;
}
