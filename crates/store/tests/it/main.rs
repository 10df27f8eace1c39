//! The store's integration tests, one binary: the storage conformance suite and the per-concern suites. Every
//! test body runs against SQLite (a fresh file) and PostgreSQL (a fresh database on the server named by
//! `CROSSBOOK_TEST_DATABASE_URL`; skipped with a message when unset, a failure when `CI=true`).
//!
//! The harness is the library's `testing` module, included by path so that the tests run with or without the
//! `testing` feature.

// The harness is shared with other crates' tests; these tests do not call every helper.
#[allow(dead_code)]
#[path = "../../src/testing.rs"]
mod testing;

mod arbitrage;
mod backtests;
mod book_log;
mod history;
mod lock;
mod suite;
mod webhooks;
mod whales;
