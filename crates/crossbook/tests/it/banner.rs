//! The start-up banner of `crossbook serve --simulate`: on an empty database, every `curl` line it prints
//! (with the real ids of its own catalog and the new demo keys) answers 2xx once the venues are ingested; on
//! a restart it says where the service listens and how to list the keys.

use std::time::Duration;

use crate::common::{Proc, until};

/// A printed `curl [-H 'X-API-Key: K'] 'URL'` line as (key, URL).
fn parse_curl(line: &str) -> (Option<String>, String) {
    let quoted: Vec<&str> = line.split('\'').skip(1).step_by(2).collect();
    let url = quoted.last().expect("a quoted URL").to_string();
    let key = quoted
        .iter()
        .find_map(|q| q.strip_prefix("X-API-Key: "))
        .map(str::to_string);
    (key, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn banner_lines_work_and_a_restart_points_at_the_keys() {
    let db = crossbook_store::testing::sqlite_database().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();

    let mut first = Proc::serve("first", &db.url, &[]);
    let addr = first.addr(Duration::from_secs(60)).await;
    until("the banner", 30, &[&first], async || first.printed("Demo API keys")).await;
    let out = first.stdout_lines();
    let text = out.join("\n");
    assert!(text.contains(&format!("listening on http://{addr}")), "{text}");
    assert!(text.contains(&format!("http://{addr}/docs")), "{text}");
    let curls: Vec<(Option<String>, String)> = out
        .iter()
        .filter(|l| l.trim_start().starts_with("curl "))
        .map(|l| parse_curl(l))
        .collect();
    // The tour: a venue_a market and event, a venue_b market, and a game paired across the venues.
    for route in [
        "/v1/historical/venue_a/orderbook?market_id=",
        "/v1/historical/venue_b/orderbook?market_id=0x",
        "/v1/search/events/",
        "/v1/search/markets?q=",
    ] {
        assert!(
            curls.iter().any(|(_, u)| u.contains(route)),
            "{route} missing from\n{text}"
        );
    }
    assert!(text.contains("paired by the scanner: venue_a "), "{text}");
    for (key, url) in &curls {
        until(&format!("2xx from {url}"), 60, &[&first], async || {
            let mut req = http.get(url);
            if let Some(k) = key {
                req = req.header("X-API-Key", k);
            }
            req.send().await.is_ok_and(|r| r.status().is_success())
        })
        .await;
    }
    drop(first);

    // A restart on the same database creates no keys: it points at them instead.
    let mut second = Proc::serve("second", &db.url, &[]);
    let addr = second.addr(Duration::from_secs(60)).await;
    until("the restart banner", 30, &[&second], async || {
        second.printed("crossbook keys list --database-url")
    })
    .await;
    assert!(
        second.printed(&format!("crossbook keys create --database-url '{}'", db.url)),
        "{}",
        second.log()
    );
    assert!(
        second.printed(&format!("listening on http://{addr}")),
        "{}",
        second.log()
    );
    assert!(!second.printed("Demo API keys"), "{}", second.log());
    drop(second);
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_serve_says_where_it_listens_and_how_to_make_a_key() {
    let db = crossbook_store::testing::sqlite_database().await;
    // Plain `serve --config FILE`, its venues on a closed loopback port (never the live venues): nothing to
    // ingest, which the banner does not need.
    let file = std::env::temp_dir().join(format!("crossbook-banner-{}.toml", std::process::id()));
    let nowhere = "127.0.0.1:1";
    std::fs::write(
        &file,
        format!(
            "venue_a_rest_url = \"http://{nowhere}/a\"\nvenue_a_ws_url = \"ws://{nowhere}/a\"\n\
             venue_b_gamma_url = \"http://{nowhere}/g\"\nvenue_b_clob_url = \"http://{nowhere}/c\"\n\
             venue_b_data_url = \"http://{nowhere}/d\"\nvenue_b_ws_url = \"ws://{nowhere}/w\"\n"
        ),
    )
    .unwrap();
    let quiet = ["--config", file.to_str().unwrap()];
    let mut first = Proc::serve_with("first", &db.url, &quiet);
    let addr = first.addr(Duration::from_secs(60)).await;
    until("the banner", 30, &[&first], async || first.printed("listening on")).await;
    until("the key hint", 30, &[&first], async || first.printed("keys create")).await;
    let text = first.stdout_lines().join("\n");
    assert!(
        text.contains(&format!("listening on http://{addr}; dashboard: http://{addr}/")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "crossbook keys create --database-url '{}' --name NAME --plan trader",
            db.url
        )),
        "{text}"
    );
    drop(first);

    // With a key in the database: where it listens, no hint.
    db.store.create_key("me", crossbook_core::Plan::Trader).await.unwrap();
    let mut second = Proc::serve_with("second", &db.url, &quiet);
    let addr = second.addr(Duration::from_secs(60)).await;
    until("the banner", 30, &[&second], async || second.printed("listening on")).await;
    assert!(
        second.printed(&format!("listening on http://{addr}")),
        "{}",
        second.log()
    );
    assert!(!second.printed("keys create"), "{}", second.log());
    drop(second);
    let _ = std::fs::remove_file(&file);
    db.cleanup().await;
}
