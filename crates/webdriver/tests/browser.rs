//! The client against a real headless Chromium and a tiny page served on loopback.
//!
//! Without chromedriver/Chromium these tests skip (printing why), except under CI (env `CI` set), where
//! they fail with `Browser::find`'s message: CI installs the packages (`.ci/run`).

use std::time::{Duration, Instant};

use axum::{Router, response::Html, routing::get};
use crossbook_webdriver::{Browser, LaunchOptions};
use serde_json::json;

const FORM_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>form</title></head>
<body>
  <h1 id="title">Hello, browser</h1>
  <input id="name" autocomplete="off">
  <button id="go" onclick="document.getElementById('out').textContent = 'Hi ' + document.getElementById('name').value">Go</button>
  <div id="out"></div>
</body></html>"#;

const ERROR_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>errors</title></head>
<body>
  <p>errors below</p>
  <script>console.error("boom");</script>
  <script>throw new Error("kaboom");</script>
</body></html>"#;

// Both pages have an inline icon: otherwise Chromium asks for /favicon.ico, and its 404 is a SEVERE
// console entry ("network" source).

/// Serves the test pages on a free loopback port; returns the base URL.
async fn serve_pages() -> String {
    let app = Router::new()
        .route("/", get(|| async { Html(FORM_PAGE) }))
        .route("/errors", get(|| async { Html(ERROR_PAGE) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    format!("http://{addr}")
}

/// A browser, or None (test skipped) when chromedriver or Chromium is missing outside CI.
async fn browser() -> Option<Browser> {
    if let Err(e) = Browser::find() {
        if std::env::var_os("CI").is_some() {
            panic!("{e:#}");
        }
        eprintln!("skipped: the browser tests need chromedriver and Chromium: {e:#}");
        return None;
    }
    Some(
        Browser::launch(LaunchOptions::default())
            .await
            .expect("launch the browser"),
    )
}

#[tokio::test]
async fn navigates_reads_text_types_and_clicks() {
    let Some(b) = browser().await else { return };
    let base = serve_pages().await;
    b.goto(&format!("{base}/")).await.unwrap();
    assert_eq!(b.text("#title").await.unwrap().as_deref(), Some("Hello, browser"));
    assert_eq!(b.text("#nothing-here").await.unwrap(), None);
    assert_eq!(b.text("#out").await.unwrap().as_deref(), Some(""));

    b.type_into("#name", "crossbook").await.unwrap();
    b.click("#go").await.unwrap();
    let out = b
        .wait_for(
            "the greeting",
            Duration::from_secs(5),
            "return document.getElementById('out').textContent",
        )
        .await
        .unwrap();
    assert_eq!(out, json!("Hi crossbook"));

    let err = b.click("#nothing-here").await.unwrap_err();
    assert!(format!("{err:#}").contains("no such element"), "{err:#}");
    b.quit().await.unwrap();
}

#[tokio::test]
async fn executes_with_args_waits_and_screenshots() {
    let Some(b) = browser().await else { return };
    let base = serve_pages().await;
    b.goto(&format!("{base}/")).await.unwrap();

    let v = b
        .execute(
            "return {sum: arguments[0] + arguments[1].n, title: document.title, args: arguments.length}",
            vec![json!(40), json!({"n": 2})],
        )
        .await
        .unwrap();
    assert_eq!(v, json!({"sum": 42, "title": "form", "args": 2}));
    assert_eq!(b.execute("return undefined", vec![]).await.unwrap(), json!(null));
    let err = b.execute("throw new Error('nope')", vec![]).await.unwrap_err();
    assert!(format!("{err:#}").contains("nope"), "{err:#}");

    // 0 counts as a value (only null/false/undefined/"" keep waiting).
    assert_eq!(
        b.wait_for("zero", Duration::from_secs(1), "return 0").await.unwrap(),
        json!(0)
    );
    let t = Instant::now();
    let err = b
        .wait_for(
            "a never-set flag",
            Duration::from_millis(500),
            "return window.neverSet || ''",
        )
        .await
        .unwrap_err();
    let waited = t.elapsed();
    let msg = format!("{err:#}");
    assert!(msg.contains("a never-set flag") && msg.contains("\"\""), "{msg}");
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(5),
        "{waited:?}"
    );

    let png = b.screenshot_png().await.unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "not a PNG: {:?}",
        &png[..png.len().min(8)]
    );
    assert!(png.len() > 1000, "{} bytes", png.len());
    b.quit().await.unwrap();
}

#[tokio::test]
async fn console_errors_catch_console_error_and_exceptions() {
    let Some(b) = browser().await else { return };
    let base = serve_pages().await;
    b.goto(&format!("{base}/")).await.unwrap();
    assert_eq!(b.console_errors().await.unwrap(), Vec::<String>::new());

    b.goto(&format!("{base}/errors")).await.unwrap();
    let errors = b.console_errors().await.unwrap();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("SEVERE console-api: ") && e.contains("boom")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("SEVERE javascript: ") && e.contains("kaboom")),
        "{errors:?}"
    );
    // Read once: the next call only has what came after.
    assert_eq!(b.console_errors().await.unwrap(), Vec::<String>::new());

    let profile = b.profile_dir().to_path_buf();
    assert!(!b.chromium_pids().is_empty());
    assert!(b.chromium_rss_kib() > 0);
    b.quit().await.unwrap();
    assert!(!profile.exists(), "{} left behind", profile.display());
}

#[tokio::test]
async fn drop_without_quit_kills_chromium() {
    let Some(b) = browser().await else { return };
    let profile = b.profile_dir().to_path_buf();
    // The browser, zygotes, GPU, network service, renderers…
    assert!(b.chromium_pids().len() >= 3, "{:?}", b.chromium_pids());
    let needle = profile.display().to_string();
    drop(b);
    let alive = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(&needle))
                .unwrap_or(false)
        })
        .count();
    // A killed process may linger as a zombie briefly, but its cmdline reads empty then.
    assert_eq!(alive, 0, "Chromium processes of {} still running", profile.display());
    assert!(!profile.exists(), "{} left behind", profile.display());
}
