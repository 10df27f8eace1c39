//! Test harness: the same test body against every backend, each run on a database of its own.
//!
//! - SQLite: a fresh file under the system temp folder (a unique name per database).
//! - PostgreSQL: a fresh database `cb_test_<uuid>` created through the server named by
//!   `CROSSBOOK_TEST_DATABASE_URL` (for example `postgres://postgres@127.0.0.1:5432/test`) and dropped
//!   afterwards, so parallel tests and repeated runs never see each other's rows.
//!
//! When the variable is unset or the server does not answer, the PostgreSQL half is skipped with a message on
//! standard error, unless `CI=true`, where that is a failure: CI must never silently test one backend only.
//!
//! ```ignore
//! crossbook_store::testing::for_each_backend(async |db| {
//!     db.store.upsert_series(&series, now).await.unwrap();
//!     // … assertions …
//! })
//! .await;
//! ```
//!
//! Databases are removed by [`TestDb::cleanup`], or by `Drop` when a test panics before reaching it.

use std::{path::PathBuf, sync::Arc, time::Duration};

use crossbook_store::{Store, postgres::PgStore, sqlite::SqliteStore};
use sqlx::{AssertSqlSafe, Connection, postgres::PgConnection};

/// Names the PostgreSQL server (any database on it) the tests create their databases on.
pub const DATABASE_URL_ENV: &str = "CROSSBOOK_TEST_DATABASE_URL";

/// One test database and an open store on it.
pub struct TestDb {
    /// The URL of this database (what a server under test would be started with).
    pub url: String,
    pub store: Arc<dyn Store>,
    place: Place,
    cleaned: bool,
}

enum Place {
    Sqlite(PathBuf),
    Postgres { admin_url: String, name: String },
}

impl TestDb {
    /// `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        self.store.backend()
    }

    /// Closes the store and removes the database.
    pub async fn cleanup(mut self) {
        self.store.close().await;
        match &self.place {
            Place::Sqlite(path) => remove_sqlite(path),
            Place::Postgres { admin_url, name } => {
                if let Err(e) = drop_pg(admin_url, name).await {
                    eprintln!("could not drop test database {name}: {e}");
                }
            }
        }
        self.cleaned = true;
    }
}

impl Drop for TestDb {
    /// The fallback when a test panicked before [`TestDb::cleanup`]: remove the database synchronously. The
    /// PostgreSQL drop runs on a thread with its own runtime, because `Drop` may run inside (or outside) an async
    /// context. `WITH (FORCE)` ends the connections the store still holds.
    fn drop(&mut self) {
        if self.cleaned {
            return;
        }
        match &self.place {
            Place::Sqlite(path) => remove_sqlite(path),
            Place::Postgres { admin_url, name } => {
                let (admin_url, name) = (admin_url.clone(), name.clone());
                let dropped = std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
                    match rt {
                        Ok(rt) => rt.block_on(drop_pg(&admin_url, &name)).map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    }
                })
                .join();
                if let Ok(Err(e)) = dropped {
                    eprintln!("could not drop test database: {e}");
                }
            }
        }
    }
}

fn remove_sqlite(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm", "-leader.lock"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

async fn drop_pg(admin_url: &str, name: &str) -> Result<(), sqlx::Error> {
    let mut admin = PgConnection::connect(admin_url).await?;
    sqlx::raw_sql(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await?;
    admin.close().await
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Explains why PostgreSQL is skipped, or fails the test in CI.
fn skip_postgres(why: &str) {
    if in_ci() {
        panic!("PostgreSQL is required when CI=true: {why}");
    }
    eprintln!("skipping the PostgreSQL half of this test: {why}");
}

/// A fresh SQLite database file, not migrated.
pub async fn sqlite_database() -> TestDb {
    let path = std::env::temp_dir().join(format!("crossbook-test-{}.db", uuid::Uuid::new_v4().simple()));
    let url = format!("sqlite://{}", path.display());
    let store = SqliteStore::open(&url)
        .await
        .unwrap_or_else(|e| panic!("open {url}: {e}"));
    TestDb {
        url,
        store: Arc::new(store),
        place: Place::Sqlite(path),
        cleaned: false,
    }
}

/// A fresh PostgreSQL database, not migrated; `None` (after a message, or a panic in CI) when no server is
/// configured or reachable.
pub async fn postgres_database() -> Option<TestDb> {
    let Ok(admin_url) = std::env::var(DATABASE_URL_ENV) else {
        skip_postgres(&format!("{DATABASE_URL_ENV} is not set"));
        return None;
    };
    let connect = tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(&admin_url)).await;
    let mut admin = match connect {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            skip_postgres(&format!(
                "cannot connect to {}: {e}",
                crossbook_store::redact_url(&admin_url)
            ));
            return None;
        }
        Err(_) => {
            skip_postgres(&format!("no answer from {}", crossbook_store::redact_url(&admin_url)));
            return None;
        }
    };
    let name = format!("cb_test_{}", uuid::Uuid::new_v4().simple());
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("create test database {name}: {e}"));
    let _ = admin.close().await;
    let mut url = url::Url::parse(&admin_url).unwrap_or_else(|e| panic!("{DATABASE_URL_ENV} is not a URL: {e}"));
    url.set_path(&format!("/{name}"));
    let url = url.to_string();
    match PgStore::open(&url).await {
        Ok(store) => Some(TestDb {
            url,
            store: Arc::new(store),
            place: Place::Postgres { admin_url, name },
            cleaned: false,
        }),
        Err(e) => {
            let _ = drop_pg(&admin_url, &name).await;
            panic!("open {}: {e}", crossbook_store::redact_url(&url));
        }
    }
}

/// One fresh, empty (not migrated) database per available backend: SQLite always, PostgreSQL when configured.
pub async fn empty_test_databases() -> Vec<TestDb> {
    let mut dbs = vec![sqlite_database().await];
    dbs.extend(postgres_database().await);
    dbs
}

/// One fresh, migrated database per available backend: SQLite always, PostgreSQL when configured.
pub async fn test_databases() -> Vec<TestDb> {
    let dbs = empty_test_databases().await;
    for db in &dbs {
        db.store
            .migrate()
            .await
            .unwrap_or_else(|e| panic!("migrate {}: {e}", db.backend()));
    }
    dbs
}

/// Runs `body` against a fresh, migrated database of each available backend in turn, then removes the
/// databases. A panic in `body` fails the test; the databases are still removed.
pub async fn for_each_backend(mut body: impl AsyncFnMut(&TestDb)) {
    for db in test_databases().await {
        eprintln!("-- backend {}", db.backend());
        body(&db).await;
        db.cleanup().await;
    }
}

/// How often [`eventually`] looks again.
const POLL: Duration = Duration::from_millis(20);

/// Polls `check` until it returns `Ok`, failing the test after `timeout` with the last `Err` it returned (what
/// was seen instead). The one way tests wait for something that happens in the background: on a condition
/// with a deadline, never a fixed sleep. Under a paused Tokio clock the deadline is in virtual time.
pub async fn eventually_seen<T>(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> Result<T, String>) -> T {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match check().await {
            Ok(v) => return v,
            Err(seen) if tokio::time::Instant::now() >= deadline => {
                panic!("{what}: not within {timeout:?}; last seen: {seen}")
            }
            Err(_) => tokio::time::sleep(POLL).await,
        }
    }
}

/// [`eventually_seen`] for a check with nothing to report while it waits.
pub async fn eventually<T>(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    eventually_seen(what, timeout, async || {
        check().await.ok_or_else(|| "nothing yet".to_string())
    })
    .await
}
