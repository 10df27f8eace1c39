//! Write health: whether the process's writers can write, as they report it.
//!
//! A store can answer a ping and still refuse every write (a full disk, a read-only file system, a PostgreSQL
//! out of space), so readiness cannot come from a ping alone. Each background writer (the book log, trades,
//! episodes, webhook deliveries, the catalog, the whale pool) reports the outcome of its writes here: a failure marks its
//! kind failing from that moment, the next success clears it. `/readyz` shows the store `degraded` while any
//! kind fails, with the last error and since when.
//!
//! What a writer gave up on is counted here too, per kind, in `crossbook_writes_dropped_total`; the writer
//! itself records the capture gap where its data has one (the book log does).

use std::sync::Mutex;

use crossbook_core::Timestamp;

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
}

impl WriteHealth {
    /// A write of `kind` succeeded: the kind no longer fails.
    pub fn ok(&self, kind: WriteKind) {
        let mut f = self.failing.lock().unwrap_or_else(|p| p.into_inner());
        if f.iter().any(|x| x.kind == kind) {
            f.retain(|x| x.kind != kind);
            tracing::info!(kind = kind.as_str(), "writes succeed again");
        }
    }

    /// A write of `kind` failed with `error`: counted in `crossbook_write_failures_total{kind}`, and the kind
    /// fails from now (or from its first failure, if it already did).
    pub fn failed(&self, kind: WriteKind, error: &dyn std::fmt::Display) {
        metrics::counter!("crossbook_write_failures_total", "kind" => kind.as_str()).increment(1);
        let now = Timestamp::now();
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
        let f = self.failing.lock().unwrap_or_else(|p| p.into_inner());
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
}
