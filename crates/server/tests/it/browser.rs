//! The dashboard in a real browser: headless Chromium driven through WebDriver (`crossbook-webdriver`)
//! against `serve --simulate`, as a user would use it. Chromium and chromedriver come from Debian's `chromium`
//! and `chromium-driver` (`.ci/run` installs them); without them these tests say so and pass locally, and fail
//! under CI.
//!
//! With `CROSSBOOK_SCREENSHOTS=DIR` (relative to the workspace root) they also save a screenshot of each page
//! there: the dashboard guide's pictures are made by
//! `CROSSBOOK_SCREENSHOTS=docs/screenshots cargo test -p crossbook-server --test it browser::`.

use std::time::Duration;

use crossbook_webdriver::{Browser, LaunchOptions};
use serde_json::{Value, json};

use crate::util::{
    Server, client, eventually, eventually_rows, get_json_key, long_btc_market, long_btc_series, simulated_on_sqlite,
};

/// Longest wait for something the page shows once the data is there.
const PAGE: Duration = Duration::from_secs(20);

/// Chromium, or `None` (with a line saying why) when it is not installed and this is not CI.
async fn launch() -> Option<Browser> {
    if let Err(e) = Browser::find() {
        assert!(std::env::var_os("CI").is_none(), "{e:#}");
        eprintln!("browser test skipped: {e:#}");
        return None;
    }
    // Tall enough that a screenshot holds a market's books and its price history.
    let opts = LaunchOptions {
        height: 1400,
        ..LaunchOptions::default()
    };
    Some(Browser::launch(opts).await.expect("Chromium starts"))
}

/// Opens the dashboard with `key` stored as the page stores it, at the page `hash`.
async fn open(b: &Browser, server: &Server, key: Option<&str>, hash: &str) {
    b.goto(&server.url("/")).await.unwrap();
    wait(b, "the page's script", "return document.body.dataset.page").await;
    if let Some(key) = key {
        b.execute(
            "localStorage.setItem('crossbook.key', arguments[0]); window.dispatchEvent(new Event('crossbook:key')); return true",
            vec![json!(key)],
        )
        .await
        .unwrap();
    }
    go(b, hash).await;
}

/// Waits until `script` returns something truthy; on timeout the failure shows what the page says.
async fn wait(b: &Browser, what: &str, script: &str) -> Value {
    match b.wait_for(what, PAGE, script).await {
        Ok(v) => v,
        Err(e) => {
            let page = b.text("main").await.ok().flatten().unwrap_or_default();
            panic!("{e:#}\n--- the page says:\n{page}");
        }
    }
}

/// Follows an in-page link to `hash` and waits for its page to be drawn.
async fn go(b: &Browser, hash: &str) {
    let page = hash.trim_start_matches("#/").split('/').next().unwrap().to_string();
    b.execute("location.hash = arguments[0]; return true", vec![json!(hash)])
        .await
        .unwrap();
    wait(
        b,
        &format!("page {page}"),
        &format!("return document.body.dataset.page === '{page}'"),
    )
    .await;
}

/// How many elements match `css`.
async fn count(b: &Browser, css: &str) -> u64 {
    b.execute(
        "return document.querySelectorAll(arguments[0]).length",
        vec![json!(css)],
    )
    .await
    .unwrap()
    .as_u64()
    .unwrap()
}

/// Waits until `css` matches at least `n` elements.
async fn wait_count(b: &Browser, css: &str, n: u64) {
    let script = format!("return document.querySelectorAll({}).length >= {n}", json!(css));
    wait(b, &format!("{n} × {css}"), &script).await;
}

/// Waits until the text of `css` contains `needle`, and returns that text.
async fn wait_text(b: &Browser, css: &str, needle: &str) -> String {
    let script = format!(
        "const e = document.querySelector({}); return e && e.innerText.includes({}) ? e.innerText : null",
        json!(css),
        json!(needle)
    );
    let v = wait(b, &format!("{css} saying {needle:?}"), &script).await;
    v.as_str().unwrap().to_string()
}

/// The console's errors, less those `expected` names (each entry is matched by a substring).
async fn assert_no_console_errors(b: &Browser, expected: &[&str]) {
    let errors = b.console_errors().await.unwrap();
    let unexpected: Vec<&String> = errors
        .iter()
        .filter(|e| !expected.iter().any(|x| e.contains(x)))
        .collect();
    assert!(unexpected.is_empty(), "console errors: {unexpected:#?}");
}

/// Saves a screenshot as `name`.png under `CROSSBOOK_SCREENSHOTS`, when it is set.
async fn screenshot(b: &Browser, name: &str) {
    let Some(dir) = std::env::var_os("CROSSBOOK_SCREENSHOTS") else {
        return;
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let png = b.screenshot_png().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// A loopback receiver that answers every webhook delivery 204.
async fn receiver() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(|| async { axum::http::StatusCode::NO_CONTENT });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/hooks/whale")
}

/// A newcomer's path on the Trader plan: the keyless page asks for a key; the key is entered once on the Keys
/// page; the live page then shows an opportunity the API returns; a market found by typing draws its book,
/// the paired book and its history; the history lists episodes; a webhook is sent a test and its log read.
/// No console error on the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_live_data_books_history_and_webhooks() {
    let Some(b) = launch().await else { return };
    let (_db, keys, server) = simulated_on_sqlite(31, |c| c.allow_private_webhook_targets = true).await;

    // Keyless: the page loads and says what a key is for.
    open(&b, &server, None, "#/live").await;
    wait_text(&b, "#live-opportunities .notice-info", "Enter an API key").await;
    assert_eq!(b.text("#who").await.unwrap().as_deref(), Some("no key"));
    // The venues card reads the public /readyz, key or not, with since when each state holds.
    wait_count(&b, "#live-venues tr[data-venue]", 2).await;
    wait(
        &b,
        "the venues' states dated",
        "return [...document.querySelectorAll('#live-venues td.since')].every(c => /^\\d+ (s|min|h|d)$/.test(c.innerText))",
    )
    .await;

    // The key, entered once on the Keys page, is kept and the stream accepts it.
    go(&b, "#/keys").await;
    b.type_into("#key-input", &keys.trader).await.unwrap();
    b.click("#key-save").await.unwrap();
    wait_text(&b, "#key-status", "Trader plan").await;
    let stored = b
        .execute("return localStorage.getItem('crossbook.key')", vec![])
        .await
        .unwrap();
    assert_eq!(stored, json!(keys.trader));

    // Live: both venues' status, then an opportunity that /v1/arbitrage/current also returns.
    go(&b, "#/live").await;
    wait_count(&b, "#live-venues tr[data-venue]", 2).await;
    let current = server.url("/v1/arbitrage/current");
    let shared = eventually("an opportunity on the page and in the API", 120, async || {
        let api = get_json_key(&current, &keys.trader).await?;
        let api_pairs: Vec<String> =
            api.as_array().into_iter().flatten().filter_map(|o| o["pair_id"].as_str().map(String::from)).collect();
        let shown = b
            .execute(
                "return [...document.querySelectorAll('#live-opportunities tr[data-pair]:not(.closed)')].map(r => r.dataset.pair)",
                vec![],
            )
            .await
            .map_err(|e| e.to_string())?;
        let shown: Vec<String> = serde_json::from_value(shown).map_err(|e| e.to_string())?;
        shown.into_iter().find(|p| api_pairs.contains(p)).ok_or(format!("page {api_pairs:?} api"))
    })
    .await;
    let row = b
        .text(&format!("#live-opportunities tr[data-pair={}]", json!(shared)))
        .await
        .unwrap()
        .unwrap();
    assert!(row.contains("venue"), "{row}");
    // A trading row: the settlement basis, each leg's venue and ask (linking to its market), net, ROI,
    // capital and fees.
    let cells = wait(
        &b,
        "an open opportunity row",
        "const r = document.querySelector('#live-opportunities tr[data-pair]:not(.closed)'); \
         return r && { basis: r.querySelector('td.basis').innerText, legs: [...r.querySelectorAll('td.leg')].map(c => c.innerText), \
         links: [...r.querySelectorAll('td.leg a')].map(a => a.getAttribute('href')), roi: r.querySelector('td.roi').innerText, \
         capital: r.querySelector('td.capital').innerText, fees: r.querySelector('td.fees').innerText }",
    )
    .await;
    assert!(
        ["same terms", "sources differ", "unverified"].contains(&cells["basis"].as_str().unwrap()),
        "{cells}"
    );
    for (leg, link) in cells["legs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(cells["links"].as_array().unwrap())
    {
        assert!(leg.as_str().unwrap().contains(" @ 0."), "a leg names its ask: {cells}");
        assert!(link.as_str().unwrap().starts_with("#/market/venue_"), "{cells}");
    }
    assert_eq!(cells["legs"].as_array().unwrap().len(), 2, "{cells}");
    let number = |s: &str| s.trim().replace(',', "").parse::<f64>().unwrap_or(f64::NAN);
    for figure in ["roi", "capital"] {
        let v = number(cells[figure].as_str().unwrap());
        assert!(v >= 0.0, "{figure} is a number: {cells}");
    }
    // Fees: the total, then each leg's ("3.75 = 2.00 YES + 1.75 NO"), which add up to it.
    let fees = cells["fees"].as_str().unwrap();
    let (total, legs) = fees.split_once('=').unwrap_or_else(|| panic!("{cells}"));
    let (yes, no) = legs.split_once('+').unwrap_or_else(|| panic!("{cells}"));
    let (yes, no) = (
        number(yes.trim().trim_end_matches("YES")),
        number(no.trim().trim_end_matches("NO")),
    );
    assert!(
        yes >= 0.0 && no >= 0.0 && ((yes + no) - number(total)).abs() < 0.006,
        "the legs' fees add up: {cells}"
    );
    // Sorting by ROI marks that column as the sort key.
    b.click("#live-opportunities button.sort[data-sort=roi]").await.unwrap();
    wait_count(
        &b,
        "#live-opportunities th[aria-sort=descending] button[data-sort=roi]",
        1,
    )
    .await;
    screenshot(&b, "live").await;
    assert_no_console_errors(&b, &[]).await;

    // A row opens its opportunity: both legs' books side by side, the depth walk behind its size, the
    // legs' prices charted live, and links to both markets. Opportunities come and go on the simulator, so
    // this retries with another row when the one clicked closed before its view opened.
    eventually("an open opportunity's view", 120, async || {
        go(&b, "#/live").await;
        let clicked = b
            .execute(
                "const a = document.querySelector('#live-opportunities tr.opp-row:not(.closed) a.opp-link');                  if (!a) return null; a.click(); return a.getAttribute('href')",
                vec![],
            )
            .await
            .map_err(|e| e.to_string())?;
        let Some(href) = clicked.as_str() else { return Err("no open row".into()) };
        // The view says either that it is open or that the opportunity closed before it loaded.
        let state = b
            .wait_for(
                "the opportunity's view",
                Duration::from_secs(15),
                "const s = document.querySelector('#opp-status'); \
                 return s && /^(Open|Not open)/.test(s.innerText) ? s.innerText : null",
            )
            .await
            .map_err(|e| format!("{href}: {e:#}"))?;
        match state.as_str() {
            Some(s) if s.starts_with("Open") => Ok(()),
            _ => Err(format!("{href} closed: {state}")),
        }
    })
    .await;
    wait_count(&b, "#opp-books .book[data-leg=yes][data-levels] canvas", 1).await;
    wait_count(&b, "#opp-books .book[data-leg=no][data-levels] canvas", 1).await;
    let figures = b.text("#opp-figures").await.unwrap().unwrap();
    for label in ["Buy YES", "Buy NO", "Net ¢ per contract", "ROI %", "Capital $", "fee "] {
        assert!(figures.contains(label), "{label}: {figures}");
    }
    let links = b
        .execute(
            "return [...document.querySelectorAll('#opp-figures a')].map(a => a.getAttribute('href'))",
            vec![],
        )
        .await
        .unwrap();
    let links: Vec<String> = serde_json::from_value(links).unwrap();
    assert!(
        links.iter().any(|l| l.starts_with("#/market/venue_a/"))
            && links.iter().any(|l| l.starts_with("#/market/venue_b/")),
        "both markets are linked: {links:?}"
    );
    // The walk was captured with the row: its sizes add up to the executable size shown.
    // The walk and the figures are read together (the view refreshes them every few seconds).
    let walk = wait(
        &b,
        "the depth walk",
        "const rows = [...document.querySelectorAll('#opp-walk-table tbody tr')].filter(r => r.cells.length === 7); \
         const size = [...document.querySelectorAll('#opp-figures tr')].find(r => r.cells[0].innerText === 'Executable size'); \
         const n = (t) => Number(t.replace(/,/g, '')); \
         return rows.length && size ? { sizes: rows.map(r => n(r.cells[3].innerText)), size: n(size.cells[1].innerText) } : null",
    )
    .await;
    let sizes = walk["sizes"].as_array().unwrap();
    let walked: f64 = sizes.iter().map(|v| v.as_f64().unwrap()).sum();
    let size = walk["size"].as_f64().unwrap();
    // Each figure is shown to the cent: the sum may differ from the total by that rounding.
    let rounding = 0.005 * (sizes.len() + 1) as f64;
    assert!(
        (walked - size).abs() <= rounding,
        "the walk adds up to the size: {walk}"
    );
    wait(
        &b,
        "the legs' prices charted",
        "return Number(document.querySelector('#opp-legs-chart').dataset.points) >= 2",
    )
    .await;
    // Tall enough for the whole view: the books, the prices and the episode.
    b.set_window_size(1280, 2100).await.unwrap();
    screenshot(&b, "opportunity").await;
    b.set_window_size(1280, 1400).await.unwrap();
    assert_no_console_errors(&b, &[]).await;

    // Market: typing finds the market; its page draws both books (it is paired) and its price history.
    let market = long_btc_market(&server, "venue_a", &keys.trader).await;
    let id = market["market_id"].as_str().unwrap().to_string();
    let ohlcv = server.url(&format!("/v1/markets/ohlcv?market_ids={id}&interval=1m"));
    eventually("a closed 1m candle", 60, async || {
        let v = get_json_key(&ohlcv, &keys.trader).await?;
        let closes = v["markets"][0]["candles"]
            .as_array()
            .map_or(0, |c| c.iter().filter(|c| !c["close"].is_null()).count());
        (closes > 0).then_some(()).ok_or(format!("{v}"))
    })
    .await;
    go(&b, "#/market").await;
    b.type_into("#market-search", long_btc_series("venue_a")).await.unwrap();
    let link = format!("#search-results a[href={}]", json!(format!("#/market/venue_a/{id}")));
    wait_count(&b, &link, 1).await;
    b.click(&link).await.unwrap();
    wait(
        &b,
        "the market page",
        &format!("return location.hash === {}", json!(format!("#/market/venue_a/{id}"))),
    )
    .await;
    wait_count(&b, "#market-book .book[data-levels] canvas", 2).await;
    assert!(count(&b, "#market-book .ladder-table tbody tr").await > 0);
    wait_text(&b, "#market-book", "Paired with").await;
    // The pair's settlement terms are named and explained where the pairing is shown.
    wait_text(&b, "#market-book .pair-note", "settlement terms").await;
    wait(
        &b,
        "candles drawn",
        "const c = document.querySelector('#history-chart'); return c && Number(c.dataset.candles) > 0 && c.querySelector('canvas') !== null",
    )
    .await;
    let gaps_note = b.text("#market-history").await.unwrap().unwrap();
    assert!(
        gaps_note.contains("capture gap"),
        "the window's gaps are stated: {gaps_note}"
    );
    // Each book is one token's YES book: never crossed (a venue_b market's two tokens are not mixed).
    let tops = b
        .execute(
            "return [...document.querySelectorAll('#market-book .book > p')].map(p => p.innerText)",
            vec![],
        )
        .await
        .unwrap();
    for top in tops.as_array().unwrap() {
        let top = top.as_str().unwrap();
        let price = |label: &str| -> f64 {
            let rest = top.split(label).nth(1).unwrap_or_else(|| panic!("{top}"));
            rest.trim().split(',').next().unwrap().parse().unwrap()
        };
        assert!(price("Best bid") < price("best ask"), "a crossed book: {top}");
    }
    screenshot(&b, "market").await;
    // Another granularity is drawn from the same route.
    b.execute(
        "delete document.querySelector('#history-chart').dataset.candles; \
         const s = document.querySelector('#history-interval'); s.value = '1h'; s.dispatchEvent(new Event('change')); return true",
        vec![],
    )
    .await
    .unwrap();
    wait(
        &b,
        "hourly candles",
        "return performance.getEntriesByType('resource').some(r => r.name.includes('interval=1h')) \
         && Number(document.querySelector('#history-chart').dataset.candles) >= 1",
    )
    .await;
    assert_no_console_errors(&b, &[]).await;

    // History: the opportunity seen above was recorded as an episode, unmasked for a Trader.
    go(&b, "#/history").await;
    wait_count(&b, "#history-table tbody tr:not(.locked) td.num", 1).await;
    wait_text(&b, "#history-table td.fee-rates", "venue A").await;
    wait_count(&b, "#spreads-panel table", 1).await;
    screenshot(&b, "history").await;

    // Webhooks from the page: registered (its secret shown once), sent a test whose delivery shows in the
    // log, disabled, and deleted, each step as the API then has it.
    let url = receiver().await;
    go(&b, "#/keys").await;
    wait_text(&b, "#key-status", &keys.trader[..12]).await;
    let hook = ".hook[data-type=whale]";
    b.type_into(&format!("{hook} form.hook-register input.hook-url"), &url)
        .await
        .unwrap();
    b.click(&format!("{hook} form.hook-register button[type=submit]"))
        .await
        .unwrap();
    let secret = wait(
        &b,
        "the secret shown",
        &format!("const s = document.querySelector('{hook} .secret-value'); return s && s.innerText"),
    )
    .await;
    let registration = server.url("/v1/webhooks/whale");
    let api_hook = get_json_key(&registration, &keys.trader).await.unwrap();
    assert_eq!(api_hook["data"]["url"], json!(url));
    assert_eq!(
        secret, api_hook["data"]["secret"],
        "the page shows the registration's secret"
    );
    b.click(&format!("{hook} button.test")).await.unwrap();
    wait_text(&b, &format!("{hook} .deliveries"), "webhook.test").await;
    wait_text(&b, &format!("{hook} .deliveries"), "204").await;
    screenshot(&b, "keys").await;
    b.click(&format!("{hook} button.toggle")).await.unwrap();
    wait_text(&b, &format!("{hook} .hook-state"), "disabled").await;
    assert_eq!(
        get_json_key(&registration, &keys.trader).await.unwrap()["data"]["enabled"],
        false
    );
    assert!(
        count(&b, &format!("{hook} .secret-value")).await == 0,
        "the secret is shown once"
    );
    b.click(&format!("{hook} button.delete")).await.unwrap();
    wait_text(&b, &format!("{hook} button.delete"), "confirm").await;
    b.click(&format!("{hook} button.delete")).await.unwrap();
    wait_text(&b, hook, "No whale webhook registered").await;
    let gone = client()
        .get(&registration)
        .header("x-api-key", &keys.trader)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    assert_no_console_errors(&b, &[]).await;

    // With a key the whale panel opens with the latest whale trades the key may see, not empty.
    let feed = server.url("/v1/whales/public/feed?limit=1");
    let newest = eventually("a whale trade in the feed", 90, async || {
        let v = get_json_key(&feed, &keys.trader).await?;
        let t = &v["trades"][0];
        match (t["exchange"].as_str(), t["source_trade_id"].as_str()) {
            (Some(ex), Some(id)) => Ok(format!("{ex}:{id}")),
            _ => Err(format!("{v}")),
        }
    })
    .await;
    go(&b, "#/live").await;
    wait_count(&b, &format!("#live-whales tr[data-trade={}]", json!(newest)), 1).await;

    b.quit().await.unwrap();
    server.stop().await.unwrap();
}

/// A path segment as the page's links encode it (`encodeURIComponent`).
fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every page fits a desktop's width and a phone's: nothing makes the page scroll sideways (wide tables
/// scroll inside their panels).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_fits_a_wide_and_a_narrow_screen() {
    let Some(b) = launch().await else { return };
    let (_db, keys, server) = simulated_on_sqlite(34, |_| {}).await;
    let market = long_btc_market(&server, "venue_a", &keys.trader).await;
    let market_page = format!("#/market/venue_a/{}", market["market_id"].as_str().unwrap());
    // An opportunity's view, open or closed by the time it is drawn: its panels are laid out either way.
    let current = server.url("/v1/arbitrage/current");
    let opportunity = eventually("an opportunity", 120, async || {
        let v = get_json_key(&current, &keys.trader).await?;
        let o = &v[0];
        let part = |k: &str| urlencoding(o[k].as_str().unwrap_or_default());
        o.is_object()
            .then(|| {
                format!(
                    "#/opportunity/{}/{}/{}",
                    part("pair_id"),
                    part("outcome_key"),
                    part("buy_yes_market")
                )
            })
            .ok_or(format!("{v}"))
    })
    .await;
    open(&b, &server, Some(&keys.trader), "#/live").await;
    let pages: [(&str, &str); 7] = [
        ("#/live", "#live-venues tr[data-venue]"),
        ("#/market", "#search-results tbody tr"),
        (&market_page, "#market-book .book"),
        (&opportunity, "#opp-episode-table tr"),
        ("#/history", "#history-table"),
        ("#/backtests", "#backtest-new"),
        ("#/keys", "#key-input"),
    ];
    for width in [1280, 390] {
        b.set_window_size(width, 900).await.unwrap();
        for (hash, drawn) in pages {
            go(&b, hash).await;
            wait_count(&b, drawn, 1).await;
            let sizes = b
                .execute(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
                    vec![],
                )
                .await
                .unwrap();
            let (scroll, client) = (sizes[0].as_u64().unwrap(), sizes[1].as_u64().unwrap());
            assert!(
                scroll <= client,
                "{hash} at {width} px scrolls sideways: {scroll} px of content in {client} px"
            );
            if width == 390 && hash == "#/live" {
                screenshot(&b, "live-phone").await;
            }
        }
    }
    assert_no_console_errors(&b, &[]).await;
    b.quit().await.unwrap();
    server.stop().await.unwrap();
}

/// A Free key: the panels its plan does not include show the plan they need, in the API's words, never a
/// blank panel; the only console entries are the refusals themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panels_beyond_the_plan_say_which_plan_they_need() {
    let Some(b) = launch().await else { return };
    let (_db, keys, server) = simulated_on_sqlite(32, |_| {}).await;

    open(&b, &server, Some(&keys.free), "#/live").await;
    wait_text(&b, "#who", "Free key").await;
    let opp = wait_text(&b, "#live-opportunities .notice-plan", "Trader plan").await;
    assert!(opp.contains("the arbitrage channel requires the Trader plan"), "{opp}");
    let whales = wait_text(&b, "#live-whales .notice-plan", "Builder plan").await;
    assert!(
        whales.contains("the whales channel requires the Builder plan"),
        "{whales}"
    );
    // The status channel is any key's: the venues are shown.
    wait_count(&b, "#live-venues tr[data-venue]", 2).await;
    screenshot(&b, "free-plan").await;

    go(&b, "#/history").await;
    let spreads = wait_text(&b, "#spreads-panel .notice-plan", "Trader plan").await;
    let api = client()
        .get(server.url("/v1/arbitrage/current/difference?limit=20"))
        .header("x-api-key", &keys.free)
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), 403);
    let body: Value = api.json().await.unwrap();
    assert!(
        spreads.contains(body["detail"].as_str().unwrap()),
        "the page shows the API's message: {spreads} / {body}"
    );
    assert_eq!(
        spreads.matches("Trader plan").count(),
        1,
        "the plan is named once: {spreads}"
    );

    // The 403 is the browser's only complaint (it logs every refused request).
    assert_no_console_errors(&b, &["/v1/arbitrage/current/difference"]).await;

    b.quit().await.unwrap();
    server.stop().await.unwrap();
}

/// A capture gap is visibly marked on a market's price history: the venue's sockets are dropped, the gaps
/// route records a `disconnect`, and the chart shades it (read back from the canvas's pixels) and names its
/// cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_gap_is_shaded_on_the_price_history() {
    let Some(b) = launch().await else { return };
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let keys = crate::util::create_keys(&db.store).await;
    let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::new(33, crossbook_sim::SimClock::default()))
        .await
        .unwrap();
    let mut config = crossbook_server::config::Config::for_tests(&db.url);
    crate::util::point_at(&mut config, &sim);
    let server = Server::start(config).await;

    let market = long_btc_market(&server, "venue_a", &keys.trader).await;
    let id = market["market_id"].as_str().unwrap().to_string();
    let gaps = server.url(&format!("/v1/historical/gaps?exchange=venue_a&market_id={id}"));
    let book = server.url(&format!("/v1/historical/venue_a/top-of-book?market_id={id}&limit=1"));
    eventually_rows("the market's book recorded", 60, &book, &keys.trader, "/rows").await;
    sim.faults().drop_sockets_of(crossbook_core::Exchange::VenueA);
    eventually("a disconnect gap of the market, ended", 60, async || {
        let v = get_json_key(&gaps, &keys.trader).await?;
        let ended = v["gaps"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|g| g["cause"] == "disconnect" && !g["end_time"].is_null());
        ended.then_some(()).ok_or(format!("{v}"))
    })
    .await;

    open(&b, &server, Some(&keys.trader), &format!("#/market/venue_a/{id}")).await;
    wait(&b, "a shaded band", "const c = document.querySelector('#history-chart'); return c && c.dataset.bands && JSON.parse(c.dataset.bands).length > 0").await;
    let note = wait_text(&b, "#market-history", "disconnect").await;
    assert!(note.contains("capture gap"), "{note}");
    // The band is drawn: pixels in its middle carry the shade (orange: red well above blue).
    let shaded = b
        .execute(
            "const el = document.querySelector('#history-chart'); const [x0, x1] = JSON.parse(el.dataset.bands)[0]; \
             const canvas = el.querySelector('canvas'); const ctx = canvas.getContext('2d'); \
             const x = Math.floor((x0 + x1) / 2); let n = 0; \
             for (let i = 1; i <= 7; i++) { \
               const [r, g, bl, a] = ctx.getImageData(x, Math.floor(canvas.height * i / 9), 1, 1).data; \
               if (a > 0 && r > bl + 40) n++; } \
             return n",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        shaded.as_u64().unwrap() >= 4,
        "the gap's band is not drawn: {shaded} of 7 pixels shaded"
    );
    screenshot(&b, "market-gap").await;
    assert_no_console_errors(&b, &[]).await;

    b.quit().await.unwrap();
    server.stop().await.unwrap();
}

/// The venues card, without a key, says why a venue that was cut off is down: the venue's last error in
/// words, as `/readyz` has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_venues_card_says_why_a_cut_venue_is_down() {
    let Some(b) = launch().await else { return };
    let db = crossbook_store::testing::sqlite_database().await;
    db.store.migrate().await.unwrap();
    let sim = crossbook_sim::Simulator::start(crossbook_sim::SimConfig::new(35, crossbook_sim::SimClock::default()))
        .await
        .unwrap();
    let mut config = crossbook_server::config::Config::for_tests(&db.url);
    crate::util::point_at(&mut config, &sim);
    let silence = config.feed_silence_seconds;
    let server = Server::start(config).await;
    open(&b, &server, None, "#/live").await;
    wait(
        &b,
        "both venues connected",
        "const c = [...document.querySelectorAll('#live-venues tr[data-venue] td:nth-child(2)')].map(t => t.innerText); \
         return c.length === 2 && c.every(t => t === 'connected')",
    )
    .await;

    sim.shutdown().await;
    // The card reads /readyz every few seconds: within the silence limit both venues are down, with why.
    let reasons = b
        .wait_for(
            "both venues down with a reason",
            Duration::from_secs(silence + 10),
            "const rows = [...document.querySelectorAll('#live-venues tr[data-venue]')].map(r => \
             [r.cells[1].innerText, r.cells[2].innerText, r.querySelector('td.reason').innerText]); \
             return rows.length === 2 && rows.every(([conn, , why]) => conn === 'down' && why.startsWith('disconnected')) \
             ? rows : null",
        )
        .await
        .unwrap();
    let reasons: Vec<(String, String, String)> = serde_json::from_value(reasons).unwrap();
    for (_, data, why) in &reasons {
        assert_eq!(data, "stale", "{reasons:?}");
        // The reason carries the venue's error, not only the word.
        assert!(why.len() > "disconnected".len(), "{reasons:?}");
    }
    screenshot(&b, "live-venue-down").await;
    b.quit().await.unwrap();
    server.stop().await.unwrap();
    db.cleanup().await;
}

/// A backtest started from its page with a Trader key: the page follows the run to its end and shows the
/// report's figures, its equity curve and its trades as the API gives them; a Builder key is told the plan it
/// needs, in the API's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backtest_runs_from_its_page_and_shows_its_report() {
    let Some(b) = launch().await else { return };
    let (_db, keys, server) = simulated_on_sqlite(36, |_| {}).await;
    // An episode in the history: the recorded stretch has something to trade.
    let history = server.url("/v1/arbitrage/history?limit=1");
    eventually_rows("an arbitrage episode", 180, &history, &keys.trader, "/items").await;

    open(&b, &server, Some(&keys.trader), "#/backtests").await;
    wait_count(&b, "#backtest-new", 1).await;
    b.execute(
        "document.querySelector('#b-min-net').value = '0'; document.querySelector('#b-latency').value = '0'; return true",
        vec![],
    )
    .await
    .unwrap();
    b.click("#b-run").await.unwrap();
    let id = wait(
        &b,
        "the run's page",
        "const m = location.hash.match(/^#\\/backtests\\/(bt_[0-9a-f]{32})$/); return m && m[1]",
    )
    .await;
    let id = id.as_str().unwrap().to_string();
    wait(
        &b,
        "the run done",
        "const e = document.querySelector('#backtest-state'); return e && e.dataset.status === 'done'",
    )
    .await;
    let report = get_json_key(&server.url(&format!("/v1/backtests/{id}")), &keys.trader)
        .await
        .unwrap();
    assert_eq!(report["status"], "done");
    assert!(report["opportunities_seen"].as_u64() >= Some(1), "{report}");
    let opps = wait_text(&b, "#fig-opps", "/").await;
    assert!(
        opps.contains(&format!(
            "{} / {}",
            report["opportunities_seen"], report["opportunities_taken"]
        )),
        "{opps} / {report}"
    );
    let trades = report["trades"].as_array().unwrap().len() as u64;
    wait_count(&b, "#backtest-trade-table tbody tr", trades.min(200)).await;
    assert_eq!(count(&b, "#backtest-trade-table tbody tr").await, trades.min(200));
    let points = report["equity"].as_array().unwrap().len();
    if points > 0 {
        let drawn = wait(
            &b,
            "the equity curve",
            "return document.querySelector('#backtest-equity-chart').dataset.points",
        )
        .await;
        assert_eq!(drawn, json!(points.to_string()));
    }
    screenshot(&b, "backtest").await;
    // The list shows the run.
    go(&b, "#/backtests").await;
    wait_count(&b, "#backtest-runs tbody tr", 1).await;

    // A Builder key: the run is refused, and the page says which plan it needs.
    b.execute(
        "localStorage.setItem('crossbook.key', arguments[0]); window.dispatchEvent(new Event('crossbook:key')); return true",
        vec![json!(keys.builder)],
    )
    .await
    .unwrap();
    wait_count(&b, "#backtest-new", 1).await;
    b.click("#b-run").await.unwrap();
    let refused = wait_text(&b, "#backtest-form .notice-plan", "Trader plan").await;
    assert!(refused.contains("this route requires the Trader plan"), "{refused}");
    assert_no_console_errors(&b, &["/v1/backtests"]).await;
    b.quit().await.unwrap();
    server.stop().await.unwrap();
}
