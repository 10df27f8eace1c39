//! What the tests that run the real `crossbook serve` share: the process, its captured output, and waits on
//! conditions with the processes' logs in the failure message.

// Not every helper is used by the tests of this build.
#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crossbook_store::testing;
use serde_json::Value;

/// A running `crossbook` process; killed on drop.
pub struct Proc {
    name: &'static str,
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    /// `crossbook serve --simulate` on `database_url`, listening on a free port, with `args` added.
    pub fn serve(name: &'static str, database_url: &str, args: &[&str]) -> Proc {
        Proc::serve_with(name, database_url, &[&["--simulate"], args].concat())
    }

    /// `crossbook serve` on `database_url`, listening on a free port, with `args` added.
    pub fn serve_with(name: &'static str, database_url: &str, args: &[&str]) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_crossbook"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(["--database-url", database_url])
            .args(args)
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
    pub async fn addr(&mut self, deadline: Duration) -> String {
        let what = format!("{} listening", self.name);
        testing::eventually_seen(&what, deadline, async || {
            let found = self.stderr.lock().unwrap().iter().find_map(|l| {
                let v: Value = serde_json::from_str(l).ok()?;
                (v["fields"]["message"] == "listening").then(|| v["fields"]["addr"].as_str().map(str::to_string))?
            });
            if let Some(a) = found {
                return Ok(a);
            }
            self.assert_running();
            Err(format!("\n{}", self.log()))
        })
        .await
    }

    /// Fails the test, with the process's log, when it has exited.
    pub fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} exited with {status}:\n{}", self.name, self.log());
        }
    }

    /// Ends the process at once (SIGKILL on Unix: no shutdown, no final flush) and reaps it.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill crossbook");
        self.child.wait().expect("reap crossbook");
    }

    /// The last lines of its standard output and standard error.
    pub fn log(&self) -> String {
        let tail = |v: &Arc<Mutex<Vec<String>>>| {
            let v = v.lock().unwrap();
            v[v.len().saturating_sub(40)..].join("\n")
        };
        format!("--- stdout\n{}\n--- stderr\n{}", tail(&self.stdout), tail(&self.stderr))
    }

    /// Every line of its standard output so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stdout.lock().unwrap().clone()
    }

    /// Whether its standard output holds `needle`.
    pub fn printed(&self, needle: &str) -> bool {
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

/// Waits for `cond` up to `secs`, failing with the processes' logs; returns how long it took.
pub async fn until(what: &str, secs: u64, procs: &[&Proc], mut cond: impl AsyncFnMut() -> bool) -> Duration {
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
