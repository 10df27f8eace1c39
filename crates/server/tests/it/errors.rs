//! The error body and headers of contracts §2 for every status this server produces: 400 (invalid,
//! missing), 401/403 (see also `gating`), 404, 405, 413, 415, 429, 500, 503.

use axum::{
    body::{Body, Bytes},
    http::Method,
};
use crossbook_server::config::Config;
use crossbook_store::testing::for_each_backend;
use serde_json::json;

use crate::util::*;

#[tokio::test]
async fn bad_parameters_answer_400_with_the_exact_body() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        let r = app.get("/v1/search/series?limit=101").await;
        r.error(400, "invalid_parameter", Some("limit"));
        assert_eq!(
            r.json(),
            json!({"detail": "limit must be an integer from 1 to 100", "code": "invalid_parameter", "param": "limit"})
        );
        let r = app.get("/v1/search?exchange=venue_a").await;
        assert_eq!(
            r.error(400, "missing_parameter", Some("q")),
            json!({"detail": "q is required", "code": "missing_parameter", "param": "q"})
        );
        let r = app.get("/v1/search/markets").await;
        assert_eq!(
            r.error(400, "missing_parameter", None),
            json!({"detail": "q or series_id is required", "code": "missing_parameter"})
        );
        // Path parameters that cannot be decoded are 400 too.
        app.get("/v1/search/events/%FF/markets")
            .await
            .error(400, "invalid_parameter", None);
        let r = app.get("/v1/search/events/a%00b/markets").await;
        r.error(400, "invalid_parameter", Some("event_id"));
    })
    .await;
}

#[tokio::test]
async fn unauthorized_and_forbidden_bodies() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        let probe = TestApp::new(db, |_| {}).probe();
        let r = probe.get("/probe/historical").await;
        assert_eq!(
            r.error(401, "unauthorized", None),
            json!({"detail": "this route requires an API key in the X-API-Key header", "code": "unauthorized"})
        );
        let r = probe.get_key("/probe/price_spread", &keys.free).await;
        assert_eq!(
            r.error(403, "entitlement_required", None),
            json!({"detail": "this route requires the Trader plan", "code": "entitlement_required", "required_plan": "trader"})
        );
    })
    .await;
}

#[tokio::test]
async fn unknown_routes_and_methods() {
    for_each_backend(async |db| {
        let app = TestApp::new(db, |_| {});
        for uri in [
            "/nope",
            "/v1/search/series/extra",
            "/v2/search",
            "/v1/historical/venue_c/orderbook",
            "/whales/user/feed/extra",
        ] {
            let body = app.get(uri).await.error(404, "not_found", None);
            assert_eq!(body["detail"], format!("no route for {uri}"));
        }
        let body = app
            .get("/v1/search/events/nope/markets")
            .await
            .error(404, "not_found", None);
        assert_eq!(body["detail"], "no event with id \"nope\"");

        for (method, uri) in [
            (Method::POST, "/v1/search/series"),
            (Method::DELETE, "/search/events"),
            (Method::PUT, "/v1/search/events/x/markets"),
            (Method::POST, "/healthz"),
            (Method::POST, "/openapi.json"),
        ] {
            let r = app.send(method.clone(), uri, &[], Body::empty()).await;
            let body = r.error(405, "method_not_allowed", None);
            let allow = r
                .header("allow")
                .unwrap_or_else(|| panic!("no Allow on {method} {uri}"));
            assert!(!allow.split(',').any(|m| m.trim() == method.as_str()), "{allow}");
            assert!(
                allow.split(',').any(|m| m.trim() == "GET"),
                "{method} {uri}: Allow {allow:?}"
            );
            assert_eq!(
                body["detail"],
                "method not allowed on this route; the Allow header lists the allowed methods"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn request_bodies_limits_and_types() {
    for_each_backend(async |db| {
        let probe = TestApp::new(db, |_| {}).probe();
        let json_ct = [("content-type", "application/json")];

        let ok = probe.send(Method::POST, "/probe/echo", &json_ct, Body::from(r#"{"a": 1}"#)).await;
        assert_eq!(ok.ok(), json!({"a": 1}));
        // Up to 64 KiB is fine.
        let big = format!("\"{}\"", "x".repeat(64 * 1024 - 2));
        probe.send(Method::POST, "/probe/echo", &json_ct, Body::from(big)).await.ok();

        // Over 64 KiB with a Content-Length: refused before reading.
        let too_big = format!("\"{}\"", "x".repeat(64 * 1024));
        let len = too_big.len().to_string();
        let r = probe
            .send(Method::POST, "/probe/echo", &[("content-type", "application/json"), ("content-length", &len)], Body::from(too_big))
            .await;
        assert_eq!(
            r.error(413, "payload_too_large", None),
            json!({"detail": "request body is larger than 64 KiB", "code": "payload_too_large"})
        );
        // Over 64 KiB streamed without a length: refused while reading.
        let chunks: Vec<Result<Bytes, std::io::Error>> = (0..3).map(|_| Ok(Bytes::from(vec![b' '; 30_000]))).collect();
        let r = probe.send(Method::POST, "/probe/echo", &json_ct, Body::from_stream(futures_util::stream::iter(chunks))).await;
        r.error(413, "payload_too_large", None);

        // Not JSON.
        for headers in [&[("content-type", "text/plain")][..], &[][..], &[("content-type", "application/x-www-form-urlencoded")][..]] {
            let r = probe.send(Method::POST, "/probe/echo", headers, Body::from("a=1")).await;
            assert_eq!(
                r.error(415, "unsupported_media_type", None),
                json!({"detail": "request body must be JSON (Content-Type: application/json)", "code": "unsupported_media_type"})
            );
        }
        // Malformed JSON.
        let r = probe.send(Method::POST, "/probe/echo", &json_ct, Body::from("{\"a\": ")).await;
        let body = r.error(400, "invalid_parameter", None);
        assert!(body["detail"].as_str().unwrap().starts_with("malformed JSON body"), "{body}");
    })
    .await;
}

#[tokio::test]
async fn panics_answer_500_without_details() {
    for_each_backend(async |db| {
        let probe = TestApp::new(db, |_| {}).probe();
        let r = probe.get_with("/probe/panic", &[("x-request-id", "panic-1")]).await;
        assert_eq!(
            r.error(500, "internal", None),
            json!({"detail": "internal error", "code": "internal"})
        );
        assert!(!r.text.contains("secret"), "{}", r.text);
        assert_eq!(r.header("x-request-id"), Some("panic-1"));
    })
    .await;
}

#[tokio::test]
async fn store_outage_answers_503() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        let app = TestApp::new(db, |_| {});
        app.get("/v1/search/series").await.ok();
        db.store.close().await;

        let r = app.get("/v1/search/series").await;
        assert_eq!(
            r.error(503, "unavailable", None),
            json!({"detail": "the service is temporarily unavailable; retry shortly", "code": "unavailable"})
        );
        // A key that must be looked up cannot be: 503 as well, not 401.
        app.get_key("/v1/search/recent/events", &keys.trader)
            .await
            .error(503, "unavailable", None);
        let ready = app.get("/readyz").await;
        assert_eq!(ready.status.as_u16(), 503);
        assert_eq!(ready.json()["store"]["status"], "unavailable");
        assert_eq!(ready.json()["status"], "not_ready");
        app.get("/healthz").await.ok();
    })
    .await;
}

#[tokio::test]
async fn rate_limits_per_ip_and_per_key() {
    for_each_backend(async |db| {
        let keys = create_keys(&db.store).await;
        let mut config = Config::for_tests(&db.url);
        config.rate_limit_anonymous = 2;
        config.rate_limit_free = 1;
        let server = Server::start(config).await;
        let http = client();
        let get = |path: &str, key: Option<&str>| {
            let mut req = http.get(server.url(path));
            if let Some(k) = key {
                req = req.header("x-api-key", k);
            }
            req.send()
        };
        let header = |r: &reqwest::Response, name: &str| r.headers().get(name).map(|v| v.to_str().unwrap().to_string());

        // Anonymous callers share their IP's bucket of 2 per minute.
        let r = get("/v1/search/series", None).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            (header(&r, "x-ratelimit-limit"), header(&r, "x-ratelimit-remaining")),
            (Some("2".into()), Some("1".into()))
        );
        // An invalid key counts as anonymous: same bucket.
        let r = get("/search/series", Some(UNKNOWN_KEY)).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "x-ratelimit-remaining"), Some("0".into()));
        let r = get("/v1/search/recent/events", None).await.unwrap();
        assert_eq!(r.status(), 429);
        assert_eq!(
            header(&r, "content-type").as_deref(),
            Some("application/json; charset=utf-8")
        );
        let retry: u64 = header(&r, "retry-after").expect("Retry-After").parse().unwrap();
        assert!((1..=30).contains(&retry), "{retry}");
        assert_eq!(
            (header(&r, "x-ratelimit-limit"), header(&r, "x-ratelimit-remaining")),
            (Some("2".into()), Some("0".into()))
        );
        assert!(header(&r, "x-request-id").is_some());
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["code"], "rate_limited");
        assert_eq!(body["detail"], format!("rate limit exceeded; retry in {retry} s"));

        // A valid key has its own bucket, sized by its plan.
        let r = get("/v1/search/series", Some(&keys.free)).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            (header(&r, "x-ratelimit-limit"), header(&r, "x-ratelimit-remaining")),
            (Some("1".into()), Some("0".into()))
        );
        let r = get("/v1/search/series", Some(&keys.free)).await.unwrap();
        assert_eq!(r.status(), 429);
        assert!(header(&r, "retry-after").is_some());
        // Builder and trader are unlimited here (0): no rate headers.
        for _ in 0..3 {
            let r = get("/v1/search/series", Some(&keys.builder)).await.unwrap();
            assert_eq!(r.status(), 200);
            assert_eq!(header(&r, "x-ratelimit-limit"), None);
        }
        // Service routes are not limited.
        for _ in 0..3 {
            assert_eq!(get("/healthz", None).await.unwrap().status(), 200);
        }
        server.stop().await.unwrap();
    })
    .await;
}
