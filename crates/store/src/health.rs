//! Write health: whether the process's writers can write, as they report it.
//!
//! A store can answer a ping and still refuse every write (a full disk, a read-only file system, a PostgreSQL
//! out of space), so readiness cannot come from a ping alone. Each background writer (the book log, trades,
//! episodes, webhook deliveries, the catalog, the whale pool) reports the outcome of its writes here: a failure marks its
//! kind failing from that moment, the next success clears it. `/readyz` shows the store `degraded` while any
//! kind fails, with the last error and since when.
//!
//! Some kinds are written rarely (an episode when an opportunity changes, the catalog once a minute) or by a
//! writer that stopped with the outage (a leader stepping down drops what it held). Their failure must not
//! outlive the outage until their next write, so a kind also stops failing once the store took a write of
//! any kind after the kind's last failure and the kind has not failed for [`SETTLED`]. A writer that keeps
//! failing (the held book events and trades are retried within seconds) keeps its kind failing even while
//! other kinds still fit.
//!
//! What a writer gave up on is counted here too, per kind, in `crossbook_writes_dropped_total`; the writer
//! itself records the capture gap where its data has one (the book log does).

use std::{sync::Mutex, time::Duration};

use crossbook_core::Timestamp;

/// How long a kind must go without a failure before another kind's successful write clears it: longer than
/// any retrying writer waits between attempts (at most 2 s).
pub const SETTLED: Duration = Duration::from_secs(10);

/// What a writer writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteKind {
    /// The book event log.
    BookEvents,
    Trades,
    /// Arbitrage episodes.
    Episodes,
    /// The webhook delivery log.
    Deliveries,
    /// Series, events and markets from the catalog sync.
    Catalog,
    /// The day's public whale pool.
    Whales,
}

impl WriteKind {
    pub const ALL: [WriteKind; 6] = [
        WriteKind::BookEvents,
        WriteKind::Trades,
        WriteKind::Episodes,
        WriteKind::Deliveries,
        WriteKind::Catalog,
        WriteKind::Whales,
    ];

    /// The name in `/metrics` and `/readyz`.
    pub fn as_str(self) -> &'static str {
        match self {
            WriteKind::BookEvents => "book_events",
            WriteKind::Trades => "trades",
            WriteKind::Episodes => "episodes",
            WriteKind::Deliveries => "deliveries",
            WriteKind::Catalog => "catalog",
            WriteKind::Whales => "whales",
        }
    }
}

/// One kind that fails now.
#[derive(Debug, Clone)]
struct Failing {
    kind: WriteKind,
    since: Timestamp,
    last_error: String,
    last_at: Timestamp,
}

/// The writers' health as `/readyz` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteStatus {
    /// The kinds whose last write failed, in [`WriteKind::ALL`] order.
    pub failing: Vec<WriteKind>,
    /// The latest error of any failing kind.
    pub last_error: Option<String>,
    /// When the oldest failing kind started failing.
    pub since: Option<Timestamp>,
}

impl WriteStatus {
    pub fn is_degraded(&self) -> bool {
        !self.failing.is_empty()
    }
}

/// Shared by every writer of one store (see the module documentation).
#[derive(Debug, Default)]
pub struct WriteHealth {
    failing: Mutex<Vec<Failing>>,
    /// When a write of any kind last succeeded.
    last_ok_at: Mutex<Option<Timestamp>>,
}

impl WriteHealth {
    /// A write of `kind` succeeded: the kind no longer fails.
    pub fn ok(&self, kind: WriteKind) {
        self.ok_at(kind, Timestamp::now());
    }

    fn ok_at(&self, kind: WriteKind, now: Timestamp) {
        *self.last_ok_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(now);
        let mut f = self.failing.lock().unwrap_or_else(|p| p.into_inner());
        if f.iter().any(|x| x.kind == kind) {
            f.retain(|x| x.kind != kind);
            tracing::info!(kind = kind.as_str(), "writes succeed again");
        }
    }

    /// A write of `kind` failed with `error`: counted in `crossbook_write_failures_total{kind}`, and the kind
    /// fails from now (or from its first failure, if it already did).
    pub fn failed(&self, kind: WriteKind, error: &dyn std::fmt::Display) {
        self.failed_at(kind, error, Timestamp::now());
    }

    fn failed_at(&self, kind: WriteKind, error: &dyn std::fmt::Display, now: Timestamp) {
        metrics::counter!("crossbook_write_failures_total", "kind" => kind.as_str()).increment(1);
        let last_error = error.to_string();
        let mut f = self.failing.lock().unwrap_or_else(|p| p.into_inner());
        match f.iter_mut().find(|x| x.kind == kind) {
            Some(x) => {
                x.last_error = last_error;
                x.last_at = now;
            }
            None => f.push(Failing {
                kind,
                since: now,
                last_error,
                last_at: now,
            }),
        }
    }

    /// `n` items of `kind` were given up on (not written, not to be retried): counted in
    /// `crossbook_writes_dropped_total{kind}`.
    pub fn dropped(&self, kind: WriteKind, n: u64) {
        metrics::counter!("crossbook_writes_dropped_total", "kind" => kind.as_str()).increment(n);
    }

    /// The outcome of `result` for `kind`: [`ok`](Self::ok) or [`failed`](Self::failed). Returns `result`.
    pub fn report<T, E: std::fmt::Display>(&self, kind: WriteKind, result: Result<T, E>) -> Result<T, E> {
        match &result {
            Ok(_) => self.ok(kind),
            Err(e) => self.failed(kind, e),
        }
        result
    }

    pub fn status(&self) -> WriteStatus {
        self.status_at(Timestamp::now())
    }

    /// The status at `now`, after clearing the kinds that settled (see the module documentation).
    fn status_at(&self, now: Timestamp) -> WriteStatus {
        let last_ok = *self.last_ok_at.lock().unwrap_or_else(|p| p.into_inner());
        let mut f = self.failing.lock().unwrap_or_else(|p| p.into_inner());
        let settled = |x: &Failing| {
            last_ok.is_some_and(|ok| ok.millis() > x.last_at.millis())
                && now.millis() - x.last_at.millis() >= SETTLED.as_millis() as i64
        };
        f.retain(|x| {
            let keep = !settled(x);
            if !keep {
                tracing::info!(
                    kind = x.kind.as_str(),
                    "the store takes writes again; no longer failing"
                );
            }
            keep
        });
        let mut failing: Vec<WriteKind> = f.iter().map(|x| x.kind).collect();
        failing.sort();
        WriteStatus {
            failing,
            last_error: f.iter().max_by_key(|x| x.last_at).map(|x| x.last_error.clone()),
            since: f.iter().map(|x| x.since).min(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_fails_from_its_first_failure_until_its_next_success() {
        let h = WriteHealth::default();
        assert!(!h.status().is_degraded());
        h.failed(WriteKind::Trades, &"disk full");
        let first = h.status();
        assert_eq!(first.failing, vec![WriteKind::Trades]);
        assert_eq!(first.last_error.as_deref(), Some("disk full"));
        h.failed(WriteKind::BookEvents, &"database unavailable");
        h.failed(WriteKind::Trades, &"still full");
        let both = h.status();
        assert_eq!(both.failing, vec![WriteKind::BookEvents, WriteKind::Trades]);
        // Since the oldest failure, whichever error came last.
        assert_eq!(both.since, first.since);
        assert!(matches!(
            both.last_error.as_deref(),
            Some("still full") | Some("database unavailable")
        ));
        h.report::<(), &str>(WriteKind::Trades, Ok(())).unwrap();
        assert_eq!(h.status().failing, vec![WriteKind::BookEvents]);
        h.ok(WriteKind::BookEvents);
        assert_eq!(
            h.status(),
            WriteStatus {
                failing: vec![],
                last_error: None,
                since: None
            }
        );
    }

    /// A kind written rarely (or whose writer stopped) stops failing once the store took another write after
    /// its failure and it has not failed for [`SETTLED`]; a kind that keeps failing stays failing, and
    /// nothing clears while no write succeeds.
    #[test]
    fn a_failure_clears_once_the_store_takes_writes_again() {
        let t = |s: i64| Timestamp::from_millis(1_000_000 + s * 1000);
        let h = WriteHealth::default();
        h.failed_at(WriteKind::Episodes, &"connection refused", t(0));
        h.failed_at(WriteKind::BookEvents, &"connection refused", t(0));
        // The outage goes on: nothing succeeds, everything keeps failing.
        assert_eq!(
            h.status_at(t(30)).failing,
            vec![WriteKind::BookEvents, WriteKind::Episodes]
        );
        // The database is back: trades are written; no episode is written for a while.
        h.ok_at(WriteKind::Trades, t(31));
        h.ok_at(WriteKind::BookEvents, t(31));
        assert_eq!(h.status_at(t(31)).failing, vec![], "settled: last failure 31 s ago");

        // A short blip: a success right after the failure does not clear it before SETTLED...
        h.failed_at(WriteKind::Episodes, &"connection reset", t(40));
        h.ok_at(WriteKind::Trades, t(41));
        assert_eq!(h.status_at(t(45)).failing, vec![WriteKind::Episodes]);
        // ...and does once the kind has gone SETTLED without failing.
        assert_eq!(h.status_at(t(50)).failing, vec![]);

        // A full disk: book events keep failing every second while small trade rows still fit.
        for s in 60..80 {
            h.failed_at(WriteKind::BookEvents, &"database or disk is full", t(s));
            h.ok_at(WriteKind::Trades, t(s));
        }
        assert_eq!(h.status_at(t(80)).failing, vec![WriteKind::BookEvents]);
    }
}
