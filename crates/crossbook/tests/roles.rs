//! Roles on a shared PostgreSQL (contracts §11): two real `crossbook serve --role ingest --simulate`
//! processes on one database; exactly one ingests (holds the ingest lock); when it is killed, the other takes
//! over within a deadline and its venues become fresh.
//!
//! Observed through each process's `/readyz` (`ingest.leader`, per-venue status) and its standard output
//! (the demo keys are printed by exactly one process).

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crossbook_store::testing::{self, postgres_database};
use serde_json::Value;

/// A running `crossbook` process; killed on drop.
struct Proc {
    name: &'static str,
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    fn serve(name: &'static str, database_url: &str) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_crossbook"))
            .args(["serve", "--role", "ingest", "--simulate", "--listen", "127.0.0.1:0"])
            .args(["--database-url", database_url])
            .env("CROSSBOOK_LOG_FORMAT", "json")
            .env("CROSSBOOK_LOG", "info")
            .env("CROSSBOOK_RATE_LIMIT_ANONYMOUS", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("crossbook starts");
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        Proc {
            name,
            child,
            stdout,
            stderr,
        }
    }

    /// The address it listens on, from its `listening` log line.
    async fn addr(&mut self, deadline: Duration) -> String {
        let what = format!("{} listening", self.name);
        testing::eventually_seen(&what, deadline, async || {
            let found = self.stderr.lock().unwrap().iter().find_map(|l| {
                let v: Value = serde_json::from_str(l).ok()?;
                (v["fields"]["message"] == "listening").then(|| v["fields"]["addr"].as_str().map(str::to_string))?
            });
            if let Some(a) = found {
                return Ok(a);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited with {status}:\n{}", self.name, self.log());
            }
            Err(format!("\n{}", self.log()))
        })
        .await
    }

    fn log(&self) -> String {
        let tail = |v: &Arc<Mutex<Vec<String>>>| {
            let v = v.lock().unwrap();
            v[v.len().saturating_sub(40)..].join("\n")
        };
        format!("--- stdout\n{}\n--- stderr\n{}", tail(&self.stdout), tail(&self.stderr))
    }

    fn printed(&self, needle: &str) -> bool {
        self.stdout.lock().unwrap().iter().any(|l| l.contains(needle))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines_of(r: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            l.lock().unwrap().push(line);
        }
    });
    lines
}

async fn readyz(http: &reqwest::Client, addr: &str) -> Option<Value> {
    let r = http.get(format!("http://{addr}/readyz")).send().await.ok()?;
    r.json().await.ok()
}

async fn leader(http: &reqwest::Client, addr: &str) -> Option<bool> {
    readyz(http, addr).await.and_then(|v| v["ingest"]["leader"].as_bool())
}

/// Waits for `cond` up to `secs`, failing with the processes' logs; returns how long it took.
async fn until(what: &str, secs: u64, procs: &[&Proc], mut cond: impl AsyncFnMut() -> bool) -> Duration {
    let start = Instant::now();
    testing::eventually_seen(what, Duration::from_secs(secs), async || {
        if cond().await {
            return Ok(());
        }
        let logs: Vec<String> = procs.iter().map(|p| format!("== {}\n{}", p.name, p.log())).collect();
        Err(format!("\n{}", logs.join("\n")))
    })
    .await;
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_process_ingests_and_the_other_takes_over() {
    let Some(db) = postgres_database().await else {
        return;
    };
    db.store.migrate().await.unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();

    let mut first = Proc::serve("first", &db.url);
    let first_addr = first.addr(Duration::from_secs(60)).await;
    until("the first process leads", 30, &[&first], async || {
        leader(&http, &first_addr).await == Some(true)
    })
    .await;

    let mut second = Proc::serve("second", &db.url);
    let second_addr = second.addr(Duration::from_secs(60)).await;
    // The second one serves, but waits for the lock: it is not the leader, and does not become one while the
    // first lives (several of its retries pass).
    until("the second process answers", 30, &[&second], async || {
        leader(&http, &second_addr).await == Some(false)
    })
    .await;
    // Not a wait but an observation: for 5 s, re-read both processes and see the roles never change.
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(5) {
        assert_eq!(leader(&http, &first_addr).await, Some(true), "{}", first.log());
        assert_eq!(leader(&http, &second_addr).await, Some(false), "{}", second.log());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let standby = readyz(&http, &second_addr).await.unwrap();
    assert_eq!(standby["venues"]["venue_a"]["status"], "not_configured", "{standby}");
    assert_eq!(standby["status"], "ready", "a standby is ready to serve: {standby}");

    // The leader ingests: both venues fresh.
    until("the leader's venues are fresh", 60, &[&first], async || {
        readyz(&http, &first_addr)
            .await
            .is_some_and(|v| v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh")
    })
    .await;

    // Demo keys: created and printed once, by the first process only.
    assert!(first.printed("Demo API keys"), "{}", first.log());
    assert!(!second.printed("Demo API keys"), "{}", second.log());
    assert_eq!(db.store.list_keys().await.unwrap().len(), 3);

    // Kill the leader (no graceful shutdown: its session ends with it) and time the takeover.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let took = until("the second process takes over", 20, &[&second], async || {
        leader(&http, &second_addr).await == Some(true)
    })
    .await;
    eprintln!("takeover after {took:?}");
    until("the new leader's venues are fresh", 60, &[&second], async || {
        readyz(&http, &second_addr)
            .await
            .is_some_and(|v| v["venues"]["venue_a"]["status"] == "fresh" && v["venues"]["venue_b"]["status"] == "fresh")
    })
    .await;

    drop(second);
    db.cleanup().await;
}
