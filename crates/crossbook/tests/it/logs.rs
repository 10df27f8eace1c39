//! The log as an operator's log shipper sees it: `serve` writing to a pipe (as under systemd, Docker or
//! `> serve.log`) gives plain text without colour codes, and `log_format = "json"` gives one JSON object per
//! line.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

/// The first `n` log lines of `crossbook serve --simulate` on a fresh SQLite file, with `env` set.
fn first_log_lines(n: usize, env: &[(&str, &str)]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("crossbook-logs-{}-{}", std::process::id(), env.len()));
    let db = format!("sqlite://{}/cb.db", dir.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_crossbook"))
        .args(["serve", "--simulate", "--listen", "127.0.0.1:0", "--database-url", &db])
        .env("CROSSBOOK_LOG", "info")
        .env_remove("NO_COLOR")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start crossbook");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut lines = Vec::new();
    while lines.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        lines.len() >= n,
        "only {} log lines within 30 s: {lines:?}",
        lines.len()
    );
    lines
}

#[test]
fn text_logs_to_a_pipe_carry_no_colour_codes() {
    let lines = first_log_lines(3, &[]);
    assert!(lines.iter().all(|l| !l.contains('\u{1b}')), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("INFO")), "{lines:?}");
}

#[test]
fn json_logs_are_one_object_per_line() {
    let lines = first_log_lines(3, &[("CROSSBOOK_LOG_FORMAT", "json")]);
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{v}");
        assert!(!line.contains('\u{1b}'), "{line}");
    }
}
