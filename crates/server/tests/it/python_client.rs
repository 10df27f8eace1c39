//! The Python package (`clients/python`): its own tests (pytest) run against `serve --simulate` on SQLite and on
//! PostgreSQL, and its generated models are checked against the OpenAPI document the code generates.
//!
//! The database is recorded by one process, which stops, then served by a second: every book followed then has
//! a `restart` gap in its log, so the package's frames and book rebuilding are tested across a real gap.

use std::path::PathBuf;

use crossbook_core::{Plan, Timestamp};
use crossbook_server::config::Config;
use crossbook_store::testing::{TestDb, postgres_database, sqlite_database};

use crate::util::*;

fn package() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients/python")
}

/// Whether the package's dependencies are here (a failure under CI, which installs them).
fn python_ready() -> bool {
    ["httpx", "websockets", "pytest", "pandas", "polars", "pyarrow"]
        .iter()
        .all(|m| python_with(m, "the Python package's tests"))
}

/// One package run at a time: each runs two simulated processes and the suite, and the rest of the server's
/// tests share the machine with it.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn run_package_tests(db: TestDb) {
    if !python_ready() {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().await;
    db.store.migrate().await.unwrap();
    let keys = create_keys(&db.store).await;
    // A customer of its own for the rate-limit test, so that no other test waits on its limit.
    let limited = db
        .store
        .create_key("rate-limited-customer", Plan::Free)
        .await
        .unwrap()
        .key;
    let config = Config {
        simulate: true,
        sim_seed: 38,
        allow_private_webhook_targets: true,
        rate_limit_free: 60,
        ..Config::for_tests(&db.url)
    };

    let first = Server::start_simulated_on(config.clone(), db.store.clone()).await;
    let a = long_btc_market(&first, "venue_a", &keys.free).await;
    let b = long_btc_market(&first, "venue_b", &keys.free).await;
    let (a, b) = (
        a["market_id"].as_str().unwrap().to_string(),
        b["market_id"].as_str().unwrap().to_string(),
    );
    let recorded_from = Timestamp::now().millis();
    eventually("both books recorded for a while", 60, async || {
        let now = Timestamp::now().millis();
        let lines = replay(&first, &keys.free, &a, &b, recorded_from - 60_000, now).await?;
        let changes = count(&lines, "book_change", "");
        // The frames are checked on trades of both venues too.
        let traded = count(&lines, "trade", "venue_a").min(count(&lines, "trade", "venue_b"));
        (changes >= 40 && traded > 0 && now - recorded_from >= 5_000)
            .then_some(())
            .ok_or(format!(
                "{changes} changes so far, {traded} trades of the venue with fewer"
            ))
    })
    .await;
    first.stop().await.unwrap();
    let restarted_at = Timestamp::now().millis();

    // Stopping a process closes the store it was given: the second opens the database itself.
    let server = Server::start_simulated(config).await;
    long_btc_market(&server, "venue_a", &keys.free).await;
    long_btc_market(&server, "venue_b", &keys.free).await;
    // The tests read a range that ends a few seconds after the second process started recording, and that the
    // log holds whole (events are stored a moment after they are received): `recorded_to`.
    let recorded_to = eventually("the second process's books recorded for a while", 60, async || {
        let now = Timestamp::now().millis();
        let changes = count(
            &replay(&server, &keys.free, &a, &b, restarted_at, now).await?,
            "book_change",
            "",
        );
        (changes >= 20 && now - restarted_at >= 8_000)
            .then_some(now - 3_000)
            .ok_or(format!("{changes} changes since the restart"))
    })
    .await;

    let out = tokio::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(package())
        .env("PYTHONPATH", package().join("src"))
        .env("CROSSBOOK_TEST_URL", server.url(""))
        .env("CROSSBOOK_TEST_FREE", &keys.free)
        .env("CROSSBOOK_TEST_BUILDER", &keys.builder)
        .env("CROSSBOOK_TEST_TRADER", &keys.trader)
        .env("CROSSBOOK_TEST_LIMITED", &limited)
        .env("CROSSBOOK_TEST_MARKET_A", &a)
        .env("CROSSBOOK_TEST_MARKET_B", &b)
        .env("CROSSBOOK_TEST_RECORDED_FROM", recorded_from.to_string())
        .env("CROSSBOOK_TEST_RESTARTED_AT", restarted_at.to_string())
        .env("CROSSBOOK_TEST_RECORDED_TO", recorded_to.to_string())
        .env_remove("CROSSBOOK_KEY")
        .env_remove("CROSSBOOK_URL")
        .output()
        .await
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}\n{stderr}");
    assert!(
        out.status.success(),
        "the Python package's tests failed:\n{stdout}\n{stderr}"
    );
    // Every test ran: a skip would hide a route or a frame that no longer works.
    assert!(!stdout.contains("skipped"), "a Python test was skipped:\n{stdout}");
    server.stop().await.unwrap();
}

/// The replay's lines of both markets between two instants.
async fn replay(server: &Server, key: &str, a: &str, b: &str, from: i64, to: i64) -> Result<Vec<String>, String> {
    let url = server.url(&format!(
        "/v1/replay?market_id=venue_a:{a}&market_id=venue_b:{b}&start_time={from}&end_time={to}"
    ));
    let r = client().get(&url).header("x-api-key", key).send().await;
    let text = r.map_err(|e| e.to_string())?.text().await.map_err(|e| e.to_string())?;
    Ok(text.lines().map(str::to_string).collect())
}

/// The lines of message type `kind` (of `venue`, unless empty).
fn count(lines: &[String], kind: &str, venue: &str) -> usize {
    let kind = format!(r#""type":"{kind}""#);
    let venue = (!venue.is_empty()).then(|| format!(r#""exchange":"{venue}""#));
    lines
        .iter()
        .filter(|l| l.contains(&kind) && venue.as_ref().is_none_or(|v| l.contains(v)))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_package_passes_its_tests_on_sqlite() {
    run_package_tests(sqlite_database().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_package_passes_its_tests_on_postgres() {
    let Some(db) = postgres_database().await else {
        return;
    };
    run_package_tests(db).await;
}

/// The models and route methods are what the generator writes from the current document: a route, a parameter
/// or a field changed without regenerating them fails here.
#[tokio::test]
async fn the_python_models_match_the_openapi_document() {
    if !python_with("json", "the Python models check") {
        return;
    }
    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |_| {});
    let doc = app.get("/openapi.json").await.ok();
    let file = std::env::temp_dir().join(format!("crossbook-openapi-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = std::process::Command::new("python3")
        .arg(package().join("scripts/generate.py"))
        .arg(&file)
        .arg("--check")
        .output()
        .expect("python3 runs");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "clients/python is out of step with /openapi.json: run `python3 clients/python/scripts/generate.py \
         FILE` on the served document.\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
