//! A minimal W3C WebDriver client for headless Chromium: just what the dashboard's browser tests and the
//! `crossbook-bench dashboard` bench need (navigate, run a script, click, type, screenshot, console log).
//!
//! It speaks JSON over HTTP to a chromedriver it starts itself on a free loopback port, so a test needs
//! nothing running beforehand: only the Debian packages `chromium` and `chromium-driver`
//! (`apt-get install chromium chromium-driver`). Each [`Browser`] has its own chromedriver, its own
//! Chromium and a fresh profile directory (a cold cache, no state shared between tests); all three are
//! gone when it is dropped.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use crossbook_webdriver::{Browser, LaunchOptions};
//! let browser = Browser::launch(LaunchOptions::default()).await?;
//! browser.goto("http://127.0.0.1:8080/").await?;
//! let title = browser.execute("return document.title", vec![]).await?;
//! assert!(browser.console_errors().await?.is_empty(), "{title}");
//! browser.quit().await?;
//! # Ok(())
//! # }
//! ```

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use anyhow::{Context, anyhow, bail};
use base64::Engine as _;
use serde_json::{Value, json};

/// The key under which WebDriver returns an element reference (W3C "web element identifier").
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long chromedriver may take to answer `/status` with `ready: true` after it is spawned.
const DRIVER_START_TIMEOUT: Duration = Duration::from_secs(20);

/// How a [`Browser`] is started.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Window width in CSS pixels (`--window-size`).
    pub width: u32,
    /// Window height in CSS pixels.
    pub height: u32,
    /// Chromium flags added after the standard ones.
    pub extra_args: Vec<String>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            width: 1280,
            height: 900,
            extra_args: Vec::new(),
        }
    }
}

/// One headless Chromium driven through its own chromedriver.
///
/// Dropping it kills chromedriver and every Chromium process of its profile (found by the profile path on
/// their command line: killing chromedriver alone would leave Chromium running), then removes the profile
/// directory. [`Browser::quit`] first closes the session politely.
pub struct Browser {
    driver: Child,
    session: String,
    /// `http://127.0.0.1:<port>` of chromedriver.
    base: String,
    http: reqwest::Client,
    profile: PathBuf,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("driver_pid", &self.driver.id())
            .field("session", &self.session)
            .field("base", &self.base)
            .field("profile", &self.profile)
            .finish()
    }
}

impl Browser {
    /// Paths of chromedriver and Chromium: from the environment variables `CROSSBOOK_CHROMEDRIVER` and
    /// `CROSSBOOK_CHROMIUM`, else `/usr/bin/chromedriver` and `/usr/bin/chromium` (Debian's packages).
    ///
    /// Errs naming what is missing and how to install it, so a skipped or failed test says what to do.
    pub fn find() -> anyhow::Result<(PathBuf, PathBuf)> {
        let driver = path_from_env("CROSSBOOK_CHROMEDRIVER", "/usr/bin/chromedriver");
        let chromium = path_from_env("CROSSBOOK_CHROMIUM", "/usr/bin/chromium");
        let mut missing = Vec::new();
        if !driver.is_file() {
            missing.push(format!(
                "chromedriver ({}; set CROSSBOOK_CHROMEDRIVER to another path)",
                driver.display()
            ));
        }
        if !chromium.is_file() {
            missing.push(format!(
                "Chromium ({}; set CROSSBOOK_CHROMIUM to another path)",
                chromium.display()
            ));
        }
        if !missing.is_empty() {
            bail!(
                "not found: {}; install them with `apt-get install chromium chromium-driver`",
                missing.join(", ")
            );
        }
        Ok((driver, chromium))
    }

    /// Starts chromedriver on a free loopback port, waits until it reports ready, and opens a session
    /// with a headless Chromium on a fresh temporary profile.
    pub async fn launch(opts: LaunchOptions) -> anyhow::Result<Browser> {
        let (driver_path, chromium) = Self::find()?;
        let profile = fresh_profile_dir()?;
        let http = http_client()?;

        // A port the kernel just handed out and we released: chromedriver binds it a moment later. Another
        // process could take it in between; then chromedriver exits and the error below says so.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free loopback port for chromedriver")?
            .port();
        let driver = Command::new(&driver_path)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", driver_path.display()))?;
        // From here on, an error drops `browser`, which kills chromedriver and removes the profile.
        let mut browser = Browser {
            driver,
            session: String::new(),
            base: format!("http://127.0.0.1:{port}"),
            http,
            profile,
        };
        browser.wait_ready().await?;

        let mut args: Vec<String> = [
            "--headless=new",
            // We run as root in containers, where Chromium's sandbox cannot start.
            "--no-sandbox",
            "--disable-gpu",
            // The network is closed: background fetches (updates, sync, QUIC probes) only fail or hang.
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // /dev/shm is small in containers; Chromium crashes when it runs out.
            "--disable-dev-shm-usage",
            // `performance.memory` with real figures (otherwise bucketed), and `window.gc()` for the bench.
            "--enable-precise-memory-info",
            "--js-flags=--expose-gc",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(format!("--user-data-dir={}", browser.profile.display()));
        args.push(format!("--window-size={},{}", opts.width, opts.height));
        args.extend(opts.extra_args);

        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium.to_string_lossy(),
                        "args": args,
                    },
                    // Keeps the browser console for `console_errors`.
                    "goog:loggingPrefs": { "browser": "ALL" },
                    // A page that never loads fails in a minute rather than the default five.
                    "timeouts": { "pageLoad": 60_000, "script": 30_000, "implicit": 0 },
                }
            }
        });
        let value = browser
            .call(reqwest::Method::POST, "/session", Some(caps))
            .await
            .context("creating the WebDriver session (starting Chromium)")?;
        browser.session = value
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("new session answer without sessionId: {value}"))?
            .to_string();
        Ok(browser)
    }

    /// Navigates to `url` and returns once the page has loaded (WebDriver's default "normal" page-load
    /// strategy waits for the `load` event).
    pub async fn goto(&self, url: &str) -> anyhow::Result<()> {
        self.cmd(reqwest::Method::POST, "/url", json!({ "url": url }))
            .await
            .with_context(|| format!("navigating to {url}"))?;
        Ok(())
    }

    /// Runs `script` in the page (execute/sync): `script` is a function body (use `return …`), and `args`
    /// are its `arguments[0..]`. Returns what the script returned (`null` for `undefined`); a thrown
    /// exception is an error.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> anyhow::Result<Value> {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            json!({ "script": script, "args": args }),
        )
        .await
    }

    /// Polls `script` (a function body) every 100 ms until it returns something other than
    /// null/false/undefined/"" and returns that value. On timeout, errs with `what` and the last value
    /// seen (or the last error, when the script failed, as it may while a page is navigating).
    pub async fn wait_for(&self, what: &str, timeout: Duration, script: &str) -> anyhow::Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self.execute(script, vec![]).await {
                Ok(v) if is_truthy(&v) => return Ok(v),
                Ok(v) => format!("last value {v}"),
                Err(e) => format!("last error {e:#}"),
            };
            if Instant::now() >= deadline {
                bail!("timed out after {timeout:?} waiting for {what} ({last})");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `document.querySelector(css)?.innerText`: `None` when nothing matches.
    pub async fn text(&self, css: &str) -> anyhow::Result<Option<String>> {
        let v = self
            .execute(
                "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;",
                vec![json!(css)],
            )
            .await?;
        Ok(v.as_str().map(str::to_string))
    }

    /// Clicks the first element matching `css` through WebDriver's element click: real input (scrolled
    /// into view, hit-tested; an element covered by another one is an error), not a synthetic `click()`.
    ///
    /// A page that re-renders between the find and the click replaces the element ("stale element
    /// reference"); a user would click the new one, so the click finds it again, a few times at most.
    pub async fn click(&self, css: &str) -> anyhow::Result<()> {
        let mut stale = 0;
        loop {
            let id = self.find_element(css).await?;
            match self
                .cmd(reqwest::Method::POST, &format!("/element/{id}/click"), json!({}))
                .await
            {
                Ok(_) => return Ok(()),
                Err(e) if stale < 3 && format!("{e:#}").contains("stale element reference") => stale += 1,
                Err(e) => return Err(e.context(format!("clicking {css}"))),
            }
        }
    }

    /// Types `text` into the first element matching `css` through WebDriver's element send keys (focuses
    /// it and sends key events, so `input` and `keydown` listeners run as for a user).
    pub async fn type_into(&self, css: &str, text: &str) -> anyhow::Result<()> {
        let id = self.find_element(css).await?;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            json!({ "text": text }),
        )
        .await
        .with_context(|| format!("typing into {css}"))?;
        Ok(())
    }

    /// Resizes the browser window to `width` × `height` CSS pixels (W3C "Set Window Rect"), so a page can
    /// be checked at a phone's width and at a desktop's.
    pub async fn set_window_size(&self, width: u32, height: u32) -> anyhow::Result<()> {
        self.cmd(
            reqwest::Method::POST,
            "/window/rect",
            json!({ "width": width, "height": height }),
        )
        .await
        .with_context(|| format!("resizing the window to {width}×{height}"))?;
        Ok(())
    }

    /// A PNG of the viewport.
    pub async fn screenshot_png(&self) -> anyhow::Result<Vec<u8>> {
        let v = self.cmd(reqwest::Method::GET, "/screenshot", Value::Null).await?;
        let b64 = v
            .as_str()
            .ok_or_else(|| anyhow!("screenshot answer is not a string: {v}"))?;
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .context("decoding the screenshot's base64")
    }

    /// The browser console's SEVERE entries since the last call (`console.error`, uncaught exceptions,
    /// failed requests), each as `"LEVEL source: message"`.
    ///
    /// Uses chromedriver's own log endpoint (`POST /session/{id}/se/log` with `{"type": "browser"}`; the
    /// W3C protocol has none), which returns and clears the entries collected thanks to the
    /// `goog:loggingPrefs` capability set at launch.
    pub async fn console_errors(&self) -> anyhow::Result<Vec<String>> {
        let v = self
            .cmd(reqwest::Method::POST, "/se/log", json!({ "type": "browser" }))
            .await
            .context("reading the browser console log")?;
        let entries = v.as_array().ok_or_else(|| anyhow!("log answer is not an array: {v}"))?;
        Ok(entries
            .iter()
            .filter(|e| e.get("level").and_then(Value::as_str) == Some("SEVERE"))
            .map(|e| {
                let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                format!("{} {}: {}", field("level"), field("source"), field("message"))
            })
            .collect())
    }

    /// Closes the session (chromedriver shuts Chromium down), then cleans up as a drop does.
    pub async fn quit(self) -> anyhow::Result<()> {
        self.call(reqwest::Method::DELETE, &format!("/session/{}", self.session), None)
            .await
            .context("closing the WebDriver session")?;
        Ok(())
    }

    /// The temporary profile directory (`--user-data-dir`) of this browser's Chromium.
    pub fn profile_dir(&self) -> &Path {
        &self.profile
    }

    /// Process ids of this browser's Chromium processes (browser, renderers, GPU and utility processes):
    /// those whose command line names its profile directory.
    pub fn chromium_pids(&self) -> Vec<u32> {
        pids_with_arg(&format!("--user-data-dir={}", self.profile.display()))
    }

    /// Summed resident set size (`VmRSS`) of this browser's Chromium processes, in KiB. Shared pages are
    /// counted once per process, so this overstates the real footprint; it is meant for trends.
    pub fn chromium_rss_kib(&self) -> u64 {
        self.chromium_pids()
            .into_iter()
            .filter_map(|pid| proc_kib(&format!("/proc/{pid}/status"), "VmRSS:"))
            .sum()
    }

    /// Summed proportional set size (`Pss` of `/proc/<pid>/smaps_rollup`) of this browser's Chromium
    /// processes, in KiB: shared pages split between the processes sharing them, so the sum is the real
    /// footprint (RSS sums count the shared libraries and shared memory once per process).
    pub fn chromium_pss_kib(&self) -> u64 {
        self.chromium_pids()
            .into_iter()
            .filter_map(|pid| proc_kib(&format!("/proc/{pid}/smaps_rollup"), "Pss:"))
            .sum()
    }

    /// `POST /session/{id}/element` with a CSS selector: the element's WebDriver id.
    async fn find_element(&self, css: &str) -> anyhow::Result<String> {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                json!({ "using": "css selector", "value": css }),
            )
            .await
            .with_context(|| format!("finding element {css}"))?;
        v.get(ELEMENT_KEY)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| anyhow!("element answer without an id: {v}"))
    }

    /// A command of this session: `path` is relative to `/session/{id}`; a `Null` body sends none.
    async fn cmd(&self, method: reqwest::Method, path: &str, body: Value) -> anyhow::Result<Value> {
        let body = (!body.is_null()).then_some(body);
        self.call(method, &format!("/session/{}{path}", self.session), body)
            .await
    }

    /// One WebDriver request: the answer's `value`, or an error carrying WebDriver's `error` and `message`.
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
        let mut req = self.http.request(method.clone(), format!("{}{path}", self.base));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.with_context(|| format!("WebDriver {method} {path}"))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .with_context(|| format!("WebDriver {method} {path}: reading the answer"))?;
        let parsed: Value = serde_json::from_str(&text)
            .with_context(|| format!("WebDriver {method} {path}: HTTP {status}, not JSON: {text:.300}"))?;
        let value = parsed.get("value").cloned().unwrap_or(Value::Null);
        if let Some(error) = value.get("error").and_then(Value::as_str) {
            let message = value.get("message").and_then(Value::as_str).unwrap_or("");
            bail!("WebDriver {method} {path}: {error}: {message}");
        }
        if !status.is_success() {
            bail!("WebDriver {method} {path}: HTTP {status}: {text:.300}");
        }
        Ok(value)
    }

    /// Polls chromedriver's `/status` until it says `ready`, failing early if the process exits.
    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + DRIVER_START_TIMEOUT;
        loop {
            if let Some(status) = self.driver.try_wait().context("polling chromedriver")? {
                bail!("chromedriver exited during start-up ({status}); is {} free?", self.base);
            }
            let last = match self.call(reqwest::Method::GET, "/status", None).await {
                Ok(v) if v.get("ready").and_then(Value::as_bool) == Some(true) => return Ok(()),
                Ok(v) => format!("not ready: {v}"),
                Err(e) => format!("{e:#}"),
            };
            if Instant::now() >= deadline {
                bail!(
                    "chromedriver at {} not ready after {DRIVER_START_TIMEOUT:?}: {last}",
                    self.base
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        // Killing chromedriver does not stop the Chromium it started (after `quit` there is none left).
        // SIGKILL takes effect asynchronously, and a dying browser process still writes to its profile (or
        // forks one last renderer): kill until none is left (zombies have an empty command line), then
        // remove the profile.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let pids = self.chromium_pids();
            if pids.is_empty() || Instant::now() >= deadline {
                break;
            }
            for pid in pids {
                if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for _ in 0..20 {
            match std::fs::remove_dir_all(&self.profile) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                _ => break,
            }
        }
    }
}

fn path_from_env(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default))
}

/// JavaScript truthiness as `wait_for` defines it: anything but null (undefined), false and "".
fn is_truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false)) && v.as_str() != Some("")
}

/// A new, empty directory under the temporary directory, unique to this process and call.
fn fresh_profile_dir() -> anyhow::Result<PathBuf> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "crossbook-chromium-{}-{}-{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).with_context(|| format!("creating the profile directory {}", dir.display()))?;
    Ok(dir)
}

/// The HTTP client to chromedriver. reqwest is built with rustls but without a crypto provider (the
/// workspace's binaries install ring's process-wide); this library must not depend on that, so it hands
/// reqwest a TLS config with ring's provider. Only plain HTTP to loopback is ever spoken.
fn http_client() -> anyhow::Result<reqwest::Client> {
    let tls =
        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .context("TLS versions")?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .no_proxy()
        // Page loads wait up to the session's 60 s page-load timeout; leave room above it.
        .timeout(Duration::from_secs(120))
        .build()
        .context("building the HTTP client")
}

/// Pids of the processes whose command line contains `arg`, followed by the end or a separator.
///
/// A substring, not an argument: Chromium's child processes (zygotes, renderers, GPU, network service)
/// rewrite their command line into one space-joined string, so only the browser process still has
/// `--user-data-dir=…` as an argument of its own.
fn pids_with_arg(arg: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| contains_arg(&c, arg.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

fn contains_arg(cmdline: &[u8], arg: &[u8]) -> bool {
    (0..cmdline.len().saturating_sub(arg.len()) + 1)
        .any(|i| cmdline[i..].starts_with(arg) && matches!(cmdline.get(i + arg.len()), None | Some(0 | b' ')))
}

/// A "<field> <n> kB" line of a /proc file, in KiB (None once the process has exited).
fn proc_kib(path: &str, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthiness_follows_wait_for_contract() {
        for v in [json!(null), json!(false), json!("")] {
            assert!(!is_truthy(&v), "{v}");
        }
        for v in [json!(true), json!(0), json!("x"), json!([]), json!({})] {
            assert!(is_truthy(&v), "{v}");
        }
    }

    #[test]
    fn args_match_whole_in_either_command_line_form() {
        let arg = b"--user-data-dir=/tmp/p-1";
        assert!(contains_arg(b"chromium\0--user-data-dir=/tmp/p-1\0--x\0", arg));
        assert!(contains_arg(
            b"chromium --type=renderer --user-data-dir=/tmp/p-1 --x",
            arg
        ));
        assert!(contains_arg(b"chromium --user-data-dir=/tmp/p-1", arg));
        assert!(!contains_arg(b"chromium --user-data-dir=/tmp/p-12 --x", arg));
        assert!(!contains_arg(b"", arg));
    }

    #[test]
    fn profile_dirs_are_fresh() {
        let a = fresh_profile_dir().unwrap();
        let b = fresh_profile_dir().unwrap();
        assert_ne!(a, b);
        assert!(a.is_dir() && b.is_dir());
        std::fs::remove_dir(a).unwrap();
        std::fs::remove_dir(b).unwrap();
    }
}
