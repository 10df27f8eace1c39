//! `dashboard`: the web dashboard (`GET /`) in a real headless Chromium, driven through WebDriver
//! (crossbook-webdriver), against a `crossbook serve --simulate` child process on a fresh SQLite database.
//!
//! - First paint, cold: `--loads` times a fresh browser (a fresh profile, so nothing cached) opens the page
//!   without a key, as a newcomer does: first paint and first contentful paint, DOMContentLoaded and load,
//!   and the bytes transferred (the document and every resource it fetched until the network went quiet).
//! - Live page memory: one browser with the Trader key in `localStorage` keeps the live view open for
//!   `--minutes`; every `--sample-seconds` it forces a garbage collection (`window.gc`, exposed by
//!   `--js-flags=--expose-gc`) and samples the JS heap (`performance.memory`, precise thanks to
//!   `--enable-precise-memory-info`), the DOM size, the page's own counters (`window.crossbookStats`) and the
//!   summed memory of the Chromium processes (RSS, which counts shared pages once per process, and PSS,
//!   which splits them: the real footprint). A heap that keeps growing after the warm-up is a leak.
//!
//! Each part ends with the browser console's errors (`console.error`, uncaught exceptions, failed requests).
//!
//! ```text
//! cargo build --release -p crossbook -p crossbook-bench
//! target/release/crossbook-bench dashboard --minutes 10
//! ```

use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use crossbook_core::Plan;
use crossbook_webdriver::{Browser, LaunchOptions};
use serde_json::{Value, json};

#[derive(Args, Debug)]
pub struct DashboardArgs {
    /// Cold page loads to time, each in a fresh browser.
    #[arg(long, default_value_t = 10)]
    loads: usize,
    /// Minutes the live view stays open for the memory samples (0 skips that part).
    #[arg(long, default_value_t = 10)]
    minutes: u64,
    /// Seconds between memory samples.
    #[arg(long, default_value_t = 30)]
    sample_seconds: u64,
    /// The page whose first paint is timed (a path on the server, e.g. `/docs` to try the bench on another
    /// page).
    #[arg(long, default_value = "/")]
    page: String,
    /// The page kept open for the memory samples.
    #[arg(long, default_value = "/#/live")]
    live_page: String,
    /// The `crossbook` binary to run as the server.
    #[arg(long, default_value = "target/release/crossbook")]
    server_bin: String,
    /// Seed of the simulated venues.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

/// The localStorage key under which the dashboard keeps the API key.
const KEY_STORAGE: &str = "crossbook.key";

/// What one cold load measured (times in ms from navigation start, sizes in bytes).
struct Load {
    fcp: Option<f64>,
    fp: Option<f64>,
    dcl: f64,
    load: f64,
    requests: usize,
    transferred: u64,
    decoded: u64,
    /// The document and each resource: (url, initiator type, transferred, decoded).
    resources: Vec<(String, String, u64, u64)>,
}

/// Reads the navigation, paint and resource timing entries of the current page.
const TIMING_SCRIPT: &str = r#"
const nav = performance.getEntriesByType('navigation')[0];
const paint = {};
for (const p of performance.getEntriesByType('paint')) paint[p.name] = p.startTime;
const res = performance.getEntriesByType('resource').map(r => ({
  url: r.name, type: r.initiatorType, transfer: r.transferSize, decoded: r.decodedBodySize,
}));
return {
  fcp: paint['first-contentful-paint'] ?? null,
  fp: paint['first-paint'] ?? null,
  dcl: nav.domContentLoadedEventEnd,
  load: nav.loadEventEnd,
  doc: {url: nav.name, type: 'document', transfer: nav.transferSize, decoded: nav.decodedBodySize},
  resources: res,
};
"#;

/// One memory sample of the live page, after a forced garbage collection when `window.gc` exists.
const SAMPLE_SCRIPT: &str = r#"
const gc = typeof window.gc === 'function';
if (gc) window.gc();
const m = performance.memory || {};
const s = window.crossbookStats;
return {
  gc,
  used: m.usedJSHeapSize ?? null,
  total: m.totalJSHeapSize ?? null,
  nodes: document.getElementsByTagName('*').length,
  stats: s && typeof s === 'object'
    ? {messages: s.messages ?? null, opportunities: s.opportunities ?? null, whales: s.whales ?? null,
       reconnects: s.reconnects ?? null}
    : null,
};
"#;

pub async fn run(args: DashboardArgs) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    anyhow::ensure!(
        std::path::Path::new(&args.server_bin).exists(),
        "{} not found: build it with `cargo build --release -p crossbook`",
        args.server_bin
    );
    anyhow::ensure!(args.sample_seconds > 0, "--sample-seconds must be at least 1");
    Browser::find()?;

    let (url, db_path) = crate::temp_sqlite("dashboard");
    // A key of our own makes the database non-empty, so `serve --simulate` creates no demo keys (and its
    // banner, which we do not read, has none).
    let key = crate::stream::create_key(&url, Plan::Trader).await?;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        l.local_addr()?.port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let mut child = tokio::process::Command::new(&args.server_bin)
        .arg("--database-url")
        .arg(&url)
        .arg("serve")
        .arg("--simulate")
        .arg("--sim-seed")
        .arg(args.seed.to_string())
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .env("CROSSBOOK_LOG", "warn")
        // Ten loads in a few seconds from one address are not one newcomer: without this the anonymous
        // limit (60/min) could answer the later loads' API calls with 429.
        .env("CROSSBOOK_RATE_LIMIT_ANONYMOUS", "0")
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("start {}", args.server_bin))?;
    let result = bench(&args, &base, &key).await;
    let _ = child.kill().await;
    crate::remove_sqlite(&db_path);
    result
}

async fn bench(args: &DashboardArgs, base: &str, key: &str) -> anyhow::Result<()> {
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("{base}/readyz")).send().await
            && r.status() == 200
        {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(90),
            "the server did not become ready in 90 s"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    println!(
        "server {} ready in {:.1} s at {base}",
        args.server_bin,
        started.elapsed().as_secs_f64()
    );
    if args.loads > 0 {
        first_paint(args, base).await?;
    }
    if args.minutes > 0 {
        live_memory(args, base, key).await?;
    }
    Ok(())
}

/// Cold loads of `args.page` without a key, one fresh browser each.
async fn first_paint(args: &DashboardArgs, base: &str) -> anyhow::Result<()> {
    let url = format!("{base}{}", args.page);
    println!("\nfirst paint, cold (a fresh browser profile per load, no key): {url}");
    let mut loads = Vec::with_capacity(args.loads);
    let mut errors = Vec::new();
    for i in 0..args.loads {
        let browser = Browser::launch(LaunchOptions::default()).await?;
        browser.goto(&url).await?;
        let load = measure_load(&browser)
            .await
            .with_context(|| format!("load {}", i + 1))?;
        println!(
            "  load {:>2}: FP {} FCP {} DCL {:.0} ms load {:.0} ms, {} requests, {} transferred ({} decoded)",
            i + 1,
            ms(load.fp),
            ms(load.fcp),
            load.dcl,
            load.load,
            load.requests,
            bytes(load.transferred),
            bytes(load.decoded),
        );
        errors.extend(browser.console_errors().await?);
        browser.quit().await?;
        loads.push(load);
    }

    let fcps: Vec<f64> = loads.iter().filter_map(|l| l.fcp).collect();
    println!("FCP over {} loads: {}", loads.len(), spread(&fcps, "ms"));
    if fcps.len() < loads.len() {
        println!(
            "  (no first contentful paint within 10 s in {} loads)",
            loads.len() - fcps.len()
        );
    }
    let fps: Vec<f64> = loads.iter().filter_map(|l| l.fp).collect();
    println!("FP: {}", spread(&fps, "ms"));
    let loaded: Vec<f64> = loads.iter().map(|l| l.load).collect();
    println!("load event: {}", spread(&loaded, "ms"));
    let weights: Vec<f64> = loads.iter().map(|l| l.transferred as f64).collect();
    let decoded: Vec<f64> = loads.iter().map(|l| l.decoded as f64).collect();
    let requests: Vec<f64> = loads.iter().map(|l| l.requests as f64).collect();
    let (w, d, r) = (median(&weights), median(&decoded), median(&requests));
    println!(
        "weight: {w:.0} bytes ({:.1} KiB) transferred, {d:.0} bytes ({:.1} KiB) decoded, {r:.0} requests (medians; transferred {})",
        w / 1024.0,
        d / 1024.0,
        spread(&weights, "bytes"),
    );
    if let Some(first) = loads.first() {
        println!("resources of load 1 (transferred / decoded bytes):");
        for (url, kind, transferred, decoded) in &first.resources {
            println!("  {transferred:>9} {decoded:>9}  {kind:<14} {url}");
        }
    }
    print_console_errors("first paint", &errors);
    Ok(())
}

/// Waits for the load event, the first contentful paint (at most 10 s) and a quiet network (no new resource
/// for 500 ms, at most 5 s), then reads the timing entries.
async fn measure_load(browser: &Browser) -> anyhow::Result<Load> {
    browser
        .wait_for(
            "the load event",
            Duration::from_secs(30),
            "const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0",
        )
        .await?;
    // A page that paints nothing has no FCP: record that rather than fail.
    let _ = browser
        .wait_for(
            "the first contentful paint",
            Duration::from_secs(10),
            "return performance.getEntriesByType('paint').some(p => p.name === 'first-contentful-paint')",
        )
        .await;
    let quiet_since = Instant::now();
    let (mut count, mut changed) = (usize::MAX, Instant::now());
    while changed.elapsed() < Duration::from_millis(500) && quiet_since.elapsed() < Duration::from_secs(5) {
        let n = browser
            .execute("return performance.getEntriesByType('resource').length", vec![])
            .await?
            .as_u64()
            .unwrap_or(0) as usize;
        if n != count {
            (count, changed) = (n, Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let t = browser.execute(TIMING_SCRIPT, vec![]).await?;
    let entry = |v: &Value| {
        (
            v["url"].as_str().unwrap_or("").to_string(),
            v["type"].as_str().unwrap_or("").to_string(),
            v["transfer"].as_f64().unwrap_or(0.0) as u64,
            v["decoded"].as_f64().unwrap_or(0.0) as u64,
        )
    };
    let mut resources = vec![entry(&t["doc"])];
    resources.extend(t["resources"].as_array().into_iter().flatten().map(entry));
    Ok(Load {
        fcp: t["fcp"].as_f64(),
        fp: t["fp"].as_f64(),
        dcl: t["dcl"].as_f64().unwrap_or(0.0),
        load: t["load"].as_f64().unwrap_or(0.0),
        requests: resources.len(),
        transferred: resources.iter().map(|r| r.2).sum(),
        decoded: resources.iter().map(|r| r.3).sum(),
        resources,
    })
}

/// One memory sample.
struct Sample {
    at: Duration,
    used: Option<f64>,
    total: Option<f64>,
    nodes: u64,
    stats: Option<Value>,
    rss_kib: u64,
    pss_kib: u64,
}

/// The live view kept open with the Trader key for `args.minutes`, sampled every `args.sample_seconds`.
async fn live_memory(args: &DashboardArgs, base: &str, key: &str) -> anyhow::Result<()> {
    let url = format!("{base}{}", args.live_page);
    let run = Duration::from_secs(args.minutes * 60);
    // The heap right after load still holds start-up garbage and caches: compare from a minute on (from
    // half-way for runs shorter than two minutes).
    let warmup = Duration::from_secs(60).min(run / 2);
    println!(
        "\nlive page memory: {url} with a Trader key for {} min, a sample every {} s (after window.gc())",
        args.minutes, args.sample_seconds
    );
    let browser = Browser::launch(LaunchOptions::default()).await?;
    browser.goto(&format!("{base}/")).await?;
    browser
        .execute(
            "localStorage.setItem(arguments[0], arguments[1])",
            vec![json!(KEY_STORAGE), json!(key)],
        )
        .await?;
    // A navigation that only changes the fragment would not reload the page: leave it first, so the page
    // starts afresh with the key in place.
    browser.goto("about:blank").await?;
    browser.goto(&url).await?;

    let start = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    let mut gc_missing = false;
    for k in 0.. {
        let at = Duration::from_secs(k * args.sample_seconds);
        if at > run {
            break;
        }
        tokio::time::sleep_until((start + at).into()).await;
        let v = browser.execute(SAMPLE_SCRIPT, vec![]).await?;
        gc_missing |= v["gc"] != json!(true);
        let s = Sample {
            at: start.elapsed(),
            used: v["used"].as_f64(),
            total: v["total"].as_f64(),
            nodes: v["nodes"].as_u64().unwrap_or(0),
            stats: v.get("stats").filter(|s| !s.is_null()).cloned(),
            rss_kib: browser.chromium_rss_kib(),
            pss_kib: browser.chromium_pss_kib(),
        };
        let stat = |k: &str| {
            s.stats
                .as_ref()
                .and_then(|st| st.get(k))
                .filter(|v| !v.is_null())
                .map_or("-".to_string(), |v| v.to_string())
        };
        println!(
            "  t={:>5.0} s  heap used {} total {}  DOM nodes {:>6}  messages {} opportunities {} whales {} reconnects {}  Chromium RSS {:.1} MiB PSS {:.1} MiB",
            s.at.as_secs_f64(),
            mib(s.used),
            mib(s.total),
            s.nodes,
            stat("messages"),
            stat("opportunities"),
            stat("whales"),
            stat("reconnects"),
            s.rss_kib as f64 / 1024.0,
            s.pss_kib as f64 / 1024.0,
        );
        samples.push(s);
    }
    if gc_missing {
        println!("  (window.gc was missing: the heap figures include uncollected garbage)");
    }

    let base_sample = samples.iter().find(|s| s.at >= warmup).or(samples.last());
    if let (Some(first), Some(last)) = (base_sample, samples.last()) {
        let max = samples.iter().filter_map(|s| s.used).fold(f64::NAN, f64::max);
        println!(
            "heap used: {} at t={:.0} s (after the {:.0} s warm-up), {} at the end, max {}, change {}",
            mib(first.used),
            first.at.as_secs_f64(),
            warmup.as_secs_f64(),
            mib(last.used),
            mib(Some(max).filter(|m| !m.is_nan())),
            change(first.used, last.used),
        );
        println!(
            "DOM nodes: {} → {}; Chromium RSS: {:.1} MiB → {:.1} MiB ({}), PSS {:.1} MiB → {:.1} MiB ({})",
            first.nodes,
            last.nodes,
            first.rss_kib as f64 / 1024.0,
            last.rss_kib as f64 / 1024.0,
            change(Some(first.rss_kib as f64), Some(last.rss_kib as f64)),
            first.pss_kib as f64 / 1024.0,
            last.pss_kib as f64 / 1024.0,
            change(Some(first.pss_kib as f64), Some(last.pss_kib as f64)),
        );
        let messages = |s: &Sample| s.stats.as_ref().and_then(|st| st["messages"].as_f64());
        match (samples.first().and_then(messages), messages(last)) {
            (_, None) => println!("messages: window.crossbookStats absent (the page does not expose its counters)"),
            (first_seen, Some(end)) => println!(
                "messages received: {end:.0} in all, {:.0} over the sampled {:.0} s",
                end - first_seen.unwrap_or(0.0),
                last.at.as_secs_f64()
            ),
        }
    }
    let errors = browser.console_errors().await?;
    print_console_errors("live page", &errors);
    browser.quit().await?;
    Ok(())
}

fn print_console_errors(part: &str, errors: &[String]) {
    println!("console errors ({part}): {}", errors.len());
    for e in errors {
        println!("  {e}");
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// "median X unit (min Y, max Z)".
fn spread(v: &[f64], unit: &str) -> String {
    if v.is_empty() {
        return "none".into();
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("median {:.0} {unit} (min {min:.0}, max {max:.0})", median(v))
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0} ms"))
}

fn bytes(b: u64) -> String {
    format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
}

fn mib(b: Option<f64>) -> String {
    b.map_or("-".into(), |b| format!("{:.2} MiB", b / (1024.0 * 1024.0)))
}

fn change(from: Option<f64>, to: Option<f64>) -> String {
    match (from, to) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:+.1}%", (b - a) / a * 100.0),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_changes() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(change(Some(100.0), Some(110.0)), "+10.0%");
        assert_eq!(change(None, Some(1.0)), "-");
        assert_eq!(spread(&[10.0, 30.0, 20.0], "ms"), "median 20 ms (min 10, max 30)");
    }
}
