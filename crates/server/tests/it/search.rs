//! Search routes (spec §4.1, contracts §4): filters, sort orders, paging, output shapes, and strict
//! parameter validation, on both backends.

use std::collections::BTreeSet;

use crossbook_store::testing::for_each_backend;
use serde_json::{Value, json};

use crate::util::*;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

const SERIES_FIELDS: &[&str] = &[
    "series_id",
    "exchange",
    "title",
    "slug",
    "url",
    "category",
    "status",
    "n_events_total",
    "n_events_active",
    "earliest_event_at",
    "latest_event_at",
];
const EVENT_FIELDS: &[&str] = &[
    "event_id",
    "exchange",
    "series_id",
    "title",
    "url",
    "image_url",
    "status",
    "market_count",
    "total_volume",
    "total_liquidity",
    "market_questions",
];
const MARKET_FIELDS: &[&str] = &[
    "market_id",
    "exchange",
    "series_id",
    "title",
    "subtitle",
    "question",
    "status",
    "volume",
    "liquidity",
    "last_yes_price",
    "last_no_price",
    "event_id",
    "settled_at",
    "window_start",
    "window_end",
];

#[tokio::test]
async fn series_filters_sorts_and_shape() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});

        // Default: active, by title.
        let v = app.get("/v1/search/series").await.ok();
        assert_eq!(ids(&v, "series_id"), ["KXBTC15M", "btc-up-or-down-15m", "KXNBA"]);
        let by_id = |id: &str| {
            v.as_array()
                .unwrap()
                .iter()
                .find(|s| s["series_id"] == id)
                .unwrap()
                .clone()
        };
        let s = by_id("KXBTC15M");
        assert_eq!(keys(&s), set(SERIES_FIELDS));
        assert_eq!(
            s,
            json!({
                "series_id": "KXBTC15M", "exchange": "venue_a", "title": "Bitcoin 15 minute up or down",
                "slug": "kxbtc15m", "url": "https://venue-a.example/series/kxbtc15m", "category": "crypto",
                "status": "active", "n_events_total": 2, "n_events_active": 1,
                "earliest_event_at": "2026-11-20T19:00:00.000Z", "latest_event_at": "2026-11-21T19:15:00.000Z"
            })
        );
        let b = by_id("btc-up-or-down-15m");
        assert_eq!((b["exchange"].as_str(), b["slug"].is_null()), (Some("venue_b"), true));
        let nba = by_id("KXNBA");
        assert!(
            nba["earliest_event_at"].is_null() && nba["latest_event_at"].is_null(),
            "{nba}"
        );

        // Case-insensitive q on series_id and title.
        for q in ["btc", "BTC", "bTc"] {
            let v = app.get(&format!("/v1/search/series?q={q}")).await.ok();
            assert_eq!(ids(&v, "series_id"), ["KXBTC15M", "btc-up-or-down-15m"], "q={q}");
        }
        assert_eq!(
            ids(&app.get("/v1/search/series?q=BITCOIN").await.ok(), "series_id"),
            ["KXBTC15M"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?q=nomatch").await.ok(), "series_id"),
            Vec::<String>::new()
        );

        assert_eq!(
            ids(&app.get("/v1/search/series?exchange=venue_b").await.ok(), "series_id"),
            ["btc-up-or-down-15m"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?exchange=venue_a").await.ok(), "series_id"),
            ["KXBTC15M", "KXNBA"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?category=sports").await.ok(), "series_id"),
            ["KXNBA"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?status=closed").await.ok(), "series_id"),
            ["KXOLD"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?sort_by=newest").await.ok(), "series_id"),
            ["btc-up-or-down-15m", "KXNBA", "KXBTC15M"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?sort_by=title").await.ok(), "series_id"),
            ["KXBTC15M", "btc-up-or-down-15m", "KXNBA"]
        );
        // Paging.
        assert_eq!(
            ids(&app.get("/v1/search/series?limit=1").await.ok(), "series_id"),
            ["KXBTC15M"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?limit=1&offset=1").await.ok(), "series_id"),
            ["btc-up-or-down-15m"]
        );
        assert_eq!(
            ids(&app.get("/v1/search/series?offset=3").await.ok(), "series_id"),
            Vec::<String>::new()
        );
        // Unknown parameters are ignored.
        assert_eq!(
            ids(&app.get("/v1/search/series?foo=bar&q=nba").await.ok(), "series_id"),
            ["KXNBA"]
        );
    })
    .await;
}

#[tokio::test]
async fn events_filters_sorts_and_shape() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});

        let v = app.get(&format!("/v1/search/events?q={E_BTC_B}")).await.ok();
        assert_eq!(ids(&v, "event_id"), [E_BTC_B]);
        let e = &v[0];
        assert_eq!(keys(e), set(EVENT_FIELDS));
        assert_eq!(
            *e,
            json!({
                "event_id": E_BTC_B, "exchange": "venue_b", "series_id": "btc-up-or-down-15m",
                "title": "Bitcoin Up or Down - November 21, 7:00PM-7:15PM ET", "url": null,
                "image_url": "https://venue-b.example/btc.png", "status": "active", "market_count": 1,
                "total_volume": 2500.51, "total_liquidity": 800.25,
                "market_questions": ["Bitcoin Up or Down - November 21, 7:00PM-7:15PM ET"]
            })
        );
        let nba = app.get("/v1/search/events?series_id=KXNBA").await.ok();
        assert_eq!(nba[0]["market_count"], 2);
        assert_eq!(nba[0]["total_volume"], 400.0);
        assert_eq!(nba[0]["total_liquidity"], 70.0);
        let mut questions: Vec<_> = nba[0]["market_questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q.as_str().unwrap())
            .collect();
        questions.sort();
        assert_eq!(questions, ["Will the Celtics win?", "Will the Lakers win?"]);

        // q matches market questions, case-insensitively.
        assert_eq!(
            ids(&app.get("/v1/search/events?q=LAKERS%20WIN").await.ok(), "event_id"),
            [E_NBA]
        );
        // Relevance (default with q): title prefix before a match in another field (the id).
        assert_eq!(
            ids(&app.get("/v1/search/events?q=btc").await.ok(), "event_id"),
            [E_BTC_A, E_BTC_B]
        );
        assert_eq!(
            ids(
                &app.get("/v1/search/events?q=btc&sort_by=relevance").await.ok(),
                "event_id"
            ),
            [E_BTC_A, E_BTC_B]
        );

        // Filters (q=e matches the three active events).
        let all = "/v1/search/events?q=e";
        let got = |v: Value| ids(&v, "event_id").into_iter().collect::<BTreeSet<_>>();
        assert_eq!(got(app.get(all).await.ok()), set(&[E_BTC_A, E_BTC_B, E_NBA]));
        assert_eq!(
            ids(&app.get(&format!("{all}&sort_by=newest")).await.ok(), "event_id"),
            [E_NBA, E_BTC_B, E_BTC_A]
        );
        assert_eq!(
            ids(&app.get(&format!("{all}&sort_by=volume")).await.ok(), "event_id"),
            [E_BTC_B, E_BTC_A, E_NBA]
        );
        assert_eq!(
            ids(&app.get(&format!("{all}&sort_by=liquidity")).await.ok(), "event_id"),
            [E_BTC_A, E_BTC_B, E_NBA]
        );
        assert_eq!(
            ids(&app.get(&format!("{all}&sort_by=markets")).await.ok(), "event_id")[0],
            E_NBA
        );
        assert_eq!(
            got(app.get(&format!("{all}&exchange=venue_b")).await.ok()),
            set(&[E_BTC_B])
        );
        assert_eq!(
            got(app.get(&format!("{all}&category=sports")).await.ok()),
            set(&[E_NBA])
        );
        // min_volume is inclusive and exact to the micro-unit.
        assert_eq!(
            got(app.get(&format!("{all}&min_volume=400")).await.ok()),
            set(&[E_BTC_A, E_BTC_B, E_NBA])
        );
        assert_eq!(
            got(app.get(&format!("{all}&min_volume=400.000001")).await.ok()),
            set(&[E_BTC_A, E_BTC_B])
        );
        assert_eq!(
            got(app.get(&format!("{all}&min_volume=2500.505")).await.ok()),
            set(&[E_BTC_B])
        );
        // discovered_after is inclusive; E_BTC_B was discovered at T0 + 11 min.
        assert_eq!(
            got(app
                .get(&format!("{all}&discovered_after=2026-11-21T10:11:00Z"))
                .await
                .ok()),
            set(&[E_BTC_B, E_NBA])
        );
        assert_eq!(
            got(app
                .get(&format!("{all}&discovered_after=2026-11-21T12:11:00%2B02:00"))
                .await
                .ok()),
            set(&[E_BTC_B, E_NBA])
        );
        // series_id alone; status.
        assert_eq!(
            ids(&app.get("/v1/search/events?series_id=KXBTC15M").await.ok(), "event_id"),
            [E_BTC_A]
        );
        assert_eq!(
            ids(
                &app.get("/v1/search/events?series_id=KXBTC15M&status=closed").await.ok(),
                "event_id"
            ),
            [E_OLD]
        );
        // Paging.
        assert_eq!(
            ids(
                &app.get(&format!("{all}&sort_by=newest&limit=1&offset=1")).await.ok(),
                "event_id"
            ),
            [E_BTC_B]
        );
    })
    .await;
}

/// Numbers written with an exponent are read exactly as their plain form: the same answer, and the same
/// refusal of more than 6 decimals or of a fraction where an integer goes.
#[tokio::test]
async fn exponent_numbers_answer_as_their_plain_form() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let all = "/v1/search/events?q=e";
        for (written, plain) in [
            ("min_volume=4e2", "min_volume=400"),
            ("min_volume=4.00000001E2", "min_volume=400.000001"),
            ("min_volume=2.500505e%2B3", "min_volume=2500.505"),
            ("min_volume=25005050e-4", "min_volume=2500.505"),
            ("limit=1e0", "limit=1"),
            ("limit=2E0&offset=1e0", "limit=2&offset=1"),
            ("limit=1.5e1", "limit=15"),
        ] {
            let exp = app.get(&format!("{all}&{written}")).await.ok();
            let plain_answer = app.get(&format!("{all}&{plain}")).await.ok();
            assert_eq!(exp, plain_answer, "{written} against {plain}");
            assert!(!ids(&exp, "event_id").is_empty(), "{written}: {exp}");
        }
        assert_eq!(
            ids(
                &app.get(&format!("{all}&min_volume=4.00000001E2")).await.ok(),
                "event_id"
            )
            .into_iter()
            .collect::<BTreeSet<_>>(),
            set(&[E_BTC_A, E_BTC_B])
        );
        for (bad, param) in [
            ("min_volume=4e-7", "min_volume"),
            ("min_volume=1e", "min_volume"),
            ("limit=1e-1", "limit"),
            ("limit=2.5e0", "limit"),
            ("offset=1e99", "offset"),
        ] {
            app.get(&format!("{all}&{bad}"))
                .await
                .error(400, "invalid_parameter", Some(param));
        }
    })
    .await;
}

#[tokio::test]
async fn markets_filters_sorts_and_shape() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let got = |v: Value| ids(&v, "market_id").into_iter().collect::<BTreeSet<_>>();

        let v = app.get("/v1/search/markets?q=15m&exchange=venue_b").await.ok();
        assert_eq!(ids(&v, "market_id"), [M_BTC_B]);
        assert_eq!(keys(&v[0]), set(MARKET_FIELDS));
        assert_eq!(
            v[0],
            json!({
                "market_id": M_BTC_B, "exchange": "venue_b", "series_id": "btc-up-or-down-15m", "title": null,
                "subtitle": null, "question": "Bitcoin Up or Down - November 21, 7:00PM-7:15PM ET", "status": "active",
                "volume": 2500.51, "liquidity": 800.25, "last_yes_price": "0.5556", "last_no_price": "0.4445",
                "event_id": E_BTC_B, "settled_at": null, "window_start": null, "window_end": null
            })
        );
        let a = app.get(&format!("/v1/search/markets?q={M_BTC_A}")).await.ok();
        assert_eq!(a[0]["market_id"], M_BTC_A, "exact id first");
        assert_eq!(
            (a[0]["last_yes_price"].as_str(), a[0]["last_no_price"].as_str()),
            (Some("0.5300"), Some("0.4700"))
        );
        assert_eq!(
            (a[0]["title"].as_str(), a[0]["subtitle"].as_str()),
            (Some("BTC up at 7:15 PM"), Some("7:15 PM ET"))
        );

        // `q` equal to an interval code matches it exactly (M_BTC_B's text does not contain "15m").
        assert_eq!(
            got(app.get("/v1/search/markets?q=15m").await.ok()),
            set(&[M_BTC_A, M_BTC_B])
        );
        assert_eq!(
            got(app.get("/v1/search/markets?q=15M").await.ok()),
            set(&[M_BTC_A, M_BTC_B])
        );
        assert_eq!(got(app.get("/v1/search/markets?q=CELTICS").await.ok()), set(&[M_BOS]));
        assert_eq!(
            ids(&app.get("/v1/search/markets?q=btc").await.ok(), "market_id"),
            [M_BTC_A]
        );

        let nba = "/v1/search/markets?series_id=KXNBA";
        assert_eq!(
            ids(&app.get(nba).await.ok(), "market_id"),
            [M_BOS, M_LAL],
            "newest first without q"
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&sort_by=volume")).await.ok(), "market_id"),
            [M_BOS, M_LAL]
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&sort_by=liquidity")).await.ok(), "market_id"),
            [M_LAL, M_BOS]
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&sort_by=newest")).await.ok(), "market_id"),
            [M_BOS, M_LAL]
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&min_volume=300")).await.ok(), "market_id"),
            [M_BOS]
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&min_volume=300.5")).await.ok(), "market_id"),
            Vec::<String>::new()
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&min_liquidity=50")).await.ok(), "market_id"),
            [M_LAL]
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&min_liquidity=0")).await.ok(), "market_id"),
            [M_BOS, M_LAL]
        );
        assert_eq!(
            ids(
                &app.get(&format!("{nba}&discovered_after=2026-11-21T10:23:00.000Z"))
                    .await
                    .ok(),
                "market_id"
            ),
            [M_BOS]
        );
        assert_eq!(
            ids(&app.get(&format!("{nba}&limit=1&offset=1")).await.ok(), "market_id"),
            [M_LAL]
        );
        assert_eq!(
            got(app.get("/v1/search/markets?series_id=KXNBA&category=crypto").await.ok()),
            set(&[])
        );
        assert_eq!(
            got(app
                .get("/v1/search/markets?q=15m&category=crypto&exchange=venue_a")
                .await
                .ok()),
            set(&[M_BTC_A])
        );

        // Settlement window of closed markets; bounds are inclusive.
        let closed = "/v1/search/markets?series_id=KXBTC15M&status=closed";
        let m = app.get(closed).await.ok();
        assert_eq!(ids(&m, "market_id"), [M_OLD]);
        assert_eq!(
            (m[0]["status"].as_str(), m[0]["settled_at"].as_str()),
            (Some("closed"), Some("2026-11-20T19:15:00.000Z"))
        );
        assert_eq!(
            ids(
                &app.get(&format!("{closed}&settled_after=2026-11-20T19:15:00Z"))
                    .await
                    .ok(),
                "market_id"
            ),
            [M_OLD]
        );
        assert!(
            ids(
                &app.get(&format!("{closed}&settled_after=2026-11-20T19:15:00.001Z"))
                    .await
                    .ok(),
                "market_id"
            )
            .is_empty()
        );
        assert_eq!(
            ids(
                &app.get(&format!("{closed}&settled_before=2026-11-20T19:15:00Z"))
                    .await
                    .ok(),
                "market_id"
            ),
            [M_OLD]
        );
        assert!(
            ids(
                &app.get(&format!("{closed}&settled_before=2026-11-20")).await.ok(),
                "market_id"
            )
            .is_empty()
        );
        assert_eq!(
            ids(
                &app.get(&format!("{closed}&settled_after=2026-11-20&settled_before=2026-11-21"))
                    .await
                    .ok(),
                "market_id"
            ),
            [M_OLD]
        );
    })
    .await;
}

#[tokio::test]
async fn recent_event_markets_and_combined() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});

        // Recent events: newest discovered first, event object plus discovered_at.
        let v = app.get("/v1/search/recent/events").await.ok();
        assert_eq!(ids(&v, "event_id"), [E_NBA, E_BTC_B, E_BTC_A]);
        let mut want = set(EVENT_FIELDS);
        want.insert("discovered_at".into());
        assert_eq!(keys(&v[0]), want);
        assert_eq!(v[0]["discovered_at"], "2026-11-21T10:12:00.000Z");
        assert_eq!(v[0]["market_count"], 2);
        assert_eq!(
            ids(
                &app.get("/v1/search/recent/events?exchange=venue_a").await.ok(),
                "event_id"
            ),
            [E_NBA, E_BTC_A]
        );
        assert_eq!(
            ids(
                &app.get("/v1/search/recent/events?status=closed").await.ok(),
                "event_id"
            ),
            [E_OLD]
        );
        assert_eq!(
            ids(
                &app.get("/v1/search/recent/events?limit=1&offset=2").await.ok(),
                "event_id"
            ),
            [E_BTC_A]
        );

        // Recent markets.
        let v = app.get("/v1/search/recent/markets").await.ok();
        assert_eq!(ids(&v, "market_id"), [M_BOS, M_LAL, M_BTC_B, M_BTC_A]);
        let mut want = set(MARKET_FIELDS);
        want.insert("discovered_at".into());
        assert_eq!(keys(&v[0]), want);
        assert_eq!(v[0]["discovered_at"], "2026-11-21T10:23:00.000Z");
        assert_eq!(
            ids(
                &app.get("/v1/search/recent/markets?exchange=venue_b").await.ok(),
                "market_id"
            ),
            [M_BTC_B]
        );
        assert_eq!(
            ids(
                &app.get("/v1/search/recent/markets?status=closed").await.ok(),
                "market_id"
            ),
            [M_OLD]
        );

        // Markets of one event: highest volume first; 404 for an unknown event.
        let path = format!("/v1/search/events/{E_NBA}/markets");
        let v = app.get(&path).await.ok();
        assert_eq!(ids(&v, "market_id"), [M_BOS, M_LAL]);
        assert_eq!(keys(&v[0]), set(MARKET_FIELDS));
        assert_eq!(
            ids(&app.get(&format!("{path}?limit=1")).await.ok(), "market_id"),
            [M_BOS]
        );
        assert_eq!(
            ids(&app.get(&format!("{path}?offset=1")).await.ok(), "market_id"),
            [M_LAL]
        );
        assert!(ids(&app.get(&format!("{path}?status=closed")).await.ok(), "market_id").is_empty());
        assert_eq!(
            ids(
                &app.get(&format!("/v1/search/events/{E_OLD}/markets?status=closed"))
                    .await
                    .ok(),
                "market_id"
            ),
            [M_OLD]
        );
        assert_eq!(
            ids(
                &app.get(&format!("/v1/search/events/{E_BTC_B}/markets")).await.ok(),
                "market_id"
            ),
            [M_BTC_B]
        );
        let body = app
            .get("/v1/search/events/NO-SUCH-EVENT/markets")
            .await
            .error(404, "not_found", None);
        assert!(body["detail"].as_str().unwrap().contains("NO-SUCH-EVENT"), "{body}");

        // Combined search: the three arrays, each limited.
        let v = app.get("/v1/search?q=btc").await.ok();
        assert_eq!(keys(&v), set(&["series", "events", "markets"]));
        assert_eq!(ids(&v["series"], "series_id"), ["KXBTC15M", "btc-up-or-down-15m"]);
        assert_eq!(ids(&v["events"], "event_id"), [E_BTC_A, E_BTC_B]);
        assert_eq!(ids(&v["markets"], "market_id"), [M_BTC_A]);
        assert_eq!(keys(&v["series"][0]), set(SERIES_FIELDS));
        assert_eq!(keys(&v["events"][0]), set(EVENT_FIELDS));
        assert_eq!(keys(&v["markets"][0]), set(MARKET_FIELDS));
        let v = app.get("/v1/search?q=btc&limit=1").await.ok();
        assert_eq!(
            (
                v["series"].as_array().unwrap().len(),
                v["events"].as_array().unwrap().len()
            ),
            (1, 1)
        );
        let v = app.get("/v1/search?q=btc&exchange=venue_b").await.ok();
        assert_eq!(ids(&v["series"], "series_id"), ["btc-up-or-down-15m"]);
        assert_eq!(ids(&v["events"], "event_id"), [E_BTC_B]);
        assert!(v["markets"].as_array().unwrap().is_empty());
        let v = app.get("/v1/search?q=btc&status=closed").await.ok();
        assert_eq!(ids(&v["events"], "event_id"), [E_OLD]);
        assert!(v["series"].as_array().unwrap().is_empty());

        // Every route answers the same without /v1.
        for path in [
            "/search?q=btc",
            "/search/series?sort_by=newest",
            "/search/events?q=e&sort_by=volume",
            "/search/markets?series_id=KXNBA",
            "/search/recent/events",
            "/search/recent/markets",
        ] {
            assert_eq!(
                app.get(path).await.ok(),
                app.get(&format!("/v1{path}")).await.ok(),
                "{path}"
            );
        }
        assert_eq!(
            app.get(&format!("/search/events/{E_NBA}/markets")).await.ok(),
            app.get(&path).await.ok()
        );
    })
    .await;
}

/// One route, a query that is valid without the parameter under test, and its `limit` range.
struct Route {
    path: String,
    base: &'static str,
    max_limit: u32,
    offset: bool,
}

fn routes() -> Vec<Route> {
    let r = |path: &str, base, max_limit, offset| Route {
        path: path.to_string(),
        base,
        max_limit,
        offset,
    };
    vec![
        r("/v1/search", "q=btc", 50, false),
        r("/v1/search/series", "", 100, true),
        r("/v1/search/events", "q=e", 100, true),
        r("/v1/search/markets", "q=15m", 100, true),
        r("/v1/search/recent/events", "", 100, true),
        r("/v1/search/recent/markets", "", 100, true),
        r(&format!("/v1/search/events/{E_NBA}/markets"), "", 100, true),
    ]
}

impl Route {
    fn with(&self, extra: &str) -> String {
        let q = [self.base, extra]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("&");
        if q.is_empty() {
            self.path.clone()
        } else {
            format!("{}?{q}", self.path)
        }
    }
}

/// `path` with one more query parameter.
fn add(path: &str, extra: &str) -> String {
    if path.contains('?') {
        format!("{path}&{extra}")
    } else {
        format!("{path}?{extra}")
    }
}

/// The number of items a route answered (the combined route: the longest of its arrays).
fn count(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.len(),
        Value::Object(o) => o.values().filter_map(Value::as_array).map(Vec::len).max().unwrap_or(0),
        _ => panic!("unexpected {v}"),
    }
}

#[tokio::test]
async fn limits_offsets_and_common_parameters_are_strict() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});
        for r in routes() {
            let max = r.max_limit;
            let msg = format!("limit must be an integer from 1 to {max}");
            for bad in [
                "limit=0".to_string(),
                format!("limit={}", max + 1),
                "limit=".into(),
                "limit=-1".into(),
                "limit=1.5".into(),
                "limit=1e-1".into(),
                "limit=ten".into(),
            ] {
                let body = app
                    .get(&r.with(&bad))
                    .await
                    .error(400, "invalid_parameter", Some("limit"));
                assert_eq!(body["detail"], msg.as_str(), "{} {bad}", r.path);
            }
            assert_eq!(count(&app.get(&r.with("limit=1")).await.ok()), 1, "{} limit=1", r.path);
            assert!(
                count(&app.get(&r.with(&format!("limit={max}"))).await.ok()) >= 2,
                "{} limit=max",
                r.path
            );

            if r.offset {
                for bad in ["offset=-1", "offset=", "offset=1000001", "offset=x"] {
                    let body = app
                        .get(&r.with(bad))
                        .await
                        .error(400, "invalid_parameter", Some("offset"));
                    assert_eq!(
                        body["detail"], "offset must be an integer from 0 to 1000000",
                        "{} {bad}",
                        r.path
                    );
                }
                assert_eq!(count(&app.get(&r.with("offset=1000000")).await.ok()), 0, "{}", r.path);
            }
            for bad in ["status=open", "status=", "status=ACTIVE"] {
                let body = app
                    .get(&r.with(bad))
                    .await
                    .error(400, "invalid_parameter", Some("status"));
                assert_eq!(
                    body["detail"], "status must be one of active or closed",
                    "{} {bad}",
                    r.path
                );
            }
            // Repeated parameters are refused; unknown ones ignored.
            app.get(&r.with("limit=1&limit=2"))
                .await
                .error(400, "invalid_parameter", Some("limit"));
            app.get(&r.with("unknown=1")).await.ok();
        }
        for path in [
            "/v1/search?q=btc",
            "/v1/search/series",
            "/v1/search/events?q=e",
            "/v1/search/markets?q=e",
        ] {
            for bad in ["exchange=venue_c", "exchange=", "exchange=VENUE_A"] {
                let body = app
                    .get(&add(path, bad))
                    .await
                    .error(400, "invalid_parameter", Some("exchange"));
                assert_eq!(
                    body["detail"], "exchange must be one of venue_a or venue_b",
                    "{path} {bad}"
                );
            }
        }
        for path in ["/v1/search/recent/events", "/v1/search/recent/markets"] {
            app.get(&format!("{path}?exchange=kalshi"))
                .await
                .error(400, "invalid_parameter", Some("exchange"));
        }
    })
    .await;
}

#[tokio::test]
async fn route_specific_parameters_are_strict() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let cases: &[(&str, &str, &str)] = &[
            // Text parameters given empty.
            ("/v1/search/series?q=", "q", "q must not be empty"),
            ("/v1/search/series?q=%20%20", "q", "q must not be empty"),
            ("/v1/search/series?category=", "category", "category must not be empty"),
            ("/v1/search/events?q=", "q", "q must not be empty"),
            (
                "/v1/search/events?series_id=",
                "series_id",
                "series_id must not be empty",
            ),
            (
                "/v1/search/markets?q=btc&category=",
                "category",
                "category must not be empty",
            ),
            ("/v1/search?q=", "q", "q must not be empty"),
            (
                "/v1/search/series?q=btc%00",
                "q",
                "q must not contain control characters",
            ),
            (
                "/v1/search/markets?series_id=KX%0ANBA",
                "series_id",
                "series_id must not contain control characters",
            ),
            // Sort orders are per route.
            (
                "/v1/search/series?sort_by=volume",
                "sort_by",
                "sort_by must be one of title or newest",
            ),
            (
                "/v1/search/series?sort_by=",
                "sort_by",
                "sort_by must be one of title or newest",
            ),
            (
                "/v1/search/events?q=e&sort_by=price",
                "sort_by",
                "sort_by must be one of relevance, newest, markets, volume or liquidity",
            ),
            (
                "/v1/search/markets?q=e&sort_by=markets",
                "sort_by",
                "sort_by must be one of relevance, newest, volume or liquidity",
            ),
            // Money thresholds: non-negative decimals only.
            ("/v1/search/events?q=e&min_volume=-1", "min_volume", ""),
            ("/v1/search/events?q=e&min_volume=abc", "min_volume", ""),
            ("/v1/search/events?q=e&min_volume=1e-7", "min_volume", ""),
            ("/v1/search/events?q=e&min_volume=", "min_volume", ""),
            ("/v1/search/events?q=e&min_volume=0.0000001", "min_volume", ""),
            ("/v1/search/markets?q=e&min_volume=-0.5", "min_volume", ""),
            ("/v1/search/markets?q=e&min_liquidity=-5", "min_liquidity", ""),
            ("/v1/search/markets?q=e&min_liquidity=NaN", "min_liquidity", ""),
            // Dates.
            (
                "/v1/search/events?q=e&discovered_after=yesterday",
                "discovered_after",
                "",
            ),
            ("/v1/search/events?q=e&discovered_after=", "discovered_after", ""),
            (
                "/v1/search/markets?q=e&discovered_after=2026-13-01",
                "discovered_after",
                "",
            ),
            (
                "/v1/search/markets?q=e&settled_after=2026-11-21T25:00:00Z",
                "settled_after",
                "",
            ),
            (
                "/v1/search/markets?q=e&settled_before=1763752500000",
                "settled_before",
                "",
            ),
            ("/v1/search/markets?q=e&settled_before=", "settled_before", ""),
        ];
        for (uri, param, detail) in cases {
            let body = app.get(uri).await.error(400, "invalid_parameter", Some(param));
            if !detail.is_empty() {
                assert_eq!(body["detail"], *detail, "{uri}");
            } else {
                assert!(body["detail"].as_str().unwrap().starts_with(param), "{uri}: {body}");
            }
        }
        // Decimal thresholds are accepted as integers and decimals.
        for ok in ["min_volume=0", "min_volume=400", "min_volume=399.99", "min_volume=.5"] {
            app.get(&format!("/v1/search/events?q=e&{ok}")).await.ok();
        }

        // Required parameters.
        for uri in [
            "/v1/search/events",
            "/v1/search/markets",
            "/v1/search/events?exchange=venue_a",
            "/search/markets?status=closed",
        ] {
            let body = app.get(uri).await.error(400, "missing_parameter", None);
            assert_eq!(body["detail"], "q or series_id is required", "{uri}");
        }
        let body = app
            .get("/v1/search?exchange=venue_a")
            .await
            .error(400, "missing_parameter", Some("q"));
        assert_eq!(body["detail"], "q is required");
        // Invalid values are reported before the missing `q`/`series_id`.
        app.get("/v1/search/events?limit=0")
            .await
            .error(400, "invalid_parameter", Some("limit"));
    })
    .await;
}

#[tokio::test]
async fn odd_text_never_fails() {
    for_each_backend(async |db| {
        seed_catalog(&db.store).await;
        let app = TestApp::new(db, |_| {});
        let long = "b".repeat(256);
        let needles = [
            "%25",
            "_",
            "%22",
            "'",
            "%5C",
            "*",
            "a%22b",
            "OR",
            "NEAR(",
            "(",
            "-",
            "%5E",
            "%F0%9F%9A%80",
            "%EF%BC%A2%EF%BC%B4%EF%BC%A3",
            "btc%20OR%20eth",
            "a%25b_c",
            "%2B",
            ":",
            "col:btc",
            "%26",
            "%3B%20DROP%20TABLE%20markets",
            long.as_str(),
            "15m%25",
        ];
        for q in needles {
            for route in [
                "/v1/search",
                "/v1/search/series",
                "/v1/search/events",
                "/v1/search/markets",
            ] {
                for extra in ["", "&sort_by=newest"] {
                    if route == "/v1/search" && !extra.is_empty() {
                        continue;
                    }
                    let uri = format!("{route}?q={q}{extra}");
                    let r = app.get(&uri).await;
                    assert_eq!(r.status.as_u16(), 200, "{} {uri}: {}", db.backend(), r.text);
                }
            }
        }
        // LIKE wildcards are matched literally.
        for q in ["%25", "_", "a%25b_c"] {
            for route in ["/v1/search/series", "/v1/search/events", "/v1/search/markets"] {
                assert_eq!(
                    app.get(&format!("{route}?q={q}")).await.ok(),
                    json!([]),
                    "{route}?q={q}"
                );
            }
        }
        assert_eq!(app.get("/v1/search/events?series_id=%25").await.ok(), json!([]));
    })
    .await;
}

/// Markets as the venues send them, through the real normalisers: a market that never traded has the venue's
/// own last price (never null) on every route that returns markets, and a closed market that has not settled
/// yet has its close time as `settled_at`, so the settlement filters find it.
#[tokio::test]
async fn venue_markets_have_last_prices_and_closed_ones_a_settlement_time() {
    use crossbook_core::{Category, Timestamp};
    use crossbook_venues::{venue_a, venue_b};

    for_each_backend(async |db| {
        let now = Timestamp::parse_iso("2026-11-21T19:20:00Z").unwrap();
        // venue_a: a 5-minute window past its close, "closed" but not settled, that never traded.
        let a: venue_a::model::MarketOne = serde_json::from_value(json!({"market": {
            "ticker": "KXBTC5M-26NOV211415-15", "event_ticker": "KXBTC5M-26NOV211415",
            "title": "BTC price up in next 5 mins?", "status": "closed",
            "open_time": "2026-11-21T19:10:00Z", "close_time": "2026-11-21T19:15:00Z",
            "last_price_dollars": "0.0000", "volume_fp": "0.00", "settlement_ts": null
        }}))
        .unwrap();
        let ma = venue_a::normalise::market(&a.market, "KXBTC5M", Category::Crypto, now).unwrap();
        let ea = venue_a::normalise::event(
            &serde_json::from_value(json!({"event_ticker": "KXBTC5M-26NOV211415", "series_ticker": "KXBTC5M",
                "title": "BTC price up in next 5 mins?"}))
            .unwrap(),
            std::slice::from_ref(&ma),
            Category::Crypto,
        );
        // venue_b: an open market with lastTradePrice 0 before its first trade.
        let (e, m): (venue_b::model::GammaEvent, venue_b::model::GammaMarket) = (
            serde_json::from_value(json!({"id": "77", "slug": "btc-updown-5m-1763752200", "title": "Bitcoin Up or Down 5m"}))
                .unwrap(),
            serde_json::from_value(json!({"conditionId": "0xfeed", "question": "Bitcoin Up or Down 5m",
                "outcomes": "[\"Up\", \"Down\"]", "clobTokenIds": "[\"1\", \"2\"]", "lastTradePrice": 0}))
            .unwrap(),
        );
        let mb = venue_b::normalise::market(&e, &m, "btc-up-or-down-5m", Category::Crypto).unwrap();
        let eb = venue_b::normalise::event(&e, std::slice::from_ref(&mb), "btc-up-or-down-5m", Category::Crypto).unwrap();
        db.store.upsert_events(&[ea, eb], now).await.unwrap();
        db.store.upsert_markets(&[ma, mb], now).await.unwrap();
        let app = TestApp::new(db, |_| {});

        let routes = [
            "/v1/search/markets?q=bitcoin&limit=100".to_string(),
            "/v1/search/markets?q=btc&status=closed&limit=100".to_string(),
            "/v1/search/recent/markets?limit=100".to_string(),
            "/v1/search/events/KXBTC5M-26NOV211415/markets?status=closed".to_string(),
            "/v1/search/events/77/markets".to_string(),
        ];
        let mut seen = BTreeSet::new();
        for route in &routes {
            let v = app.get(route).await.ok();
            for m in v.as_array().unwrap_or_else(|| panic!("{route}: {v}")) {
                let id = m["market_id"].as_str().unwrap().to_string();
                assert_eq!(
                    (m["last_yes_price"].as_str(), m["last_no_price"].as_str()),
                    (Some("0.0000"), Some("1.0000")),
                    "{route}: {m}"
                );
                seen.insert(id);
            }
        }
        assert_eq!(seen, set(&["KXBTC5M-26NOV211415-15", "0xfeed"]));

        let closed = app
            .get("/v1/search/markets?q=btc&exchange=venue_a&status=closed&settled_after=2026-11-21T19:15:00Z&settled_before=2026-11-21T19:15:00Z")
            .await
            .ok();
        assert_eq!(ids(&closed, "market_id"), ["KXBTC5M-26NOV211415-15"]);
        assert_eq!(closed[0]["settled_at"], "2026-11-21T19:15:00.000Z");
        // The window it settles on, as the venue lists it: what tells it apart from the series' other windows,
        // which share its title.
        assert_eq!(
            (&closed[0]["window_start"], &closed[0]["window_end"]),
            (&json!("2026-11-21T19:10:00.000Z"), &json!("2026-11-21T19:15:00.000Z"))
        );
    })
    .await;
}

/// The dashboard's search box suggests queries in its placeholder: each finds markets of the simulated venues
/// (whose teams are fictional, so a suggestion must name something both they and the real venues list).
#[tokio::test]
async fn the_dashboard_search_examples_find_simulated_markets() {
    let js = include_str!("../../src/dashboard/assets/js/market.js");
    let examples = js
        .split("(e.g. ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("the search placeholder lists examples");
    let (_db, _keys, server) = simulated_on_sqlite(33, |_| {}).await;
    for q in examples.split(", ") {
        let url = server.url(&format!("/v1/search/markets?q={}&limit=1", q.replace(' ', "%20")));
        eventually(&format!("a market for the example {q:?}"), 60, async || {
            let (status, v) = get_json(&url).await?;
            match v.get(0) {
                Some(_) if status == 200 => Ok(()),
                _ => Err(format!("{status}: {v}")),
            }
        })
        .await;
    }
    server.stop().await.unwrap();
}
