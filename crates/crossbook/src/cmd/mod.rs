//! The commands of `crossbook`, one module each with its flags; [`open_store`] and [`shutdown_signal`] are
//! what several of them share.

pub mod backtest;
pub mod export;
pub mod keys;
pub mod migrate;
pub mod pairs;
pub mod serve;
pub mod simulate;
pub mod tail;

use std::sync::Arc;

use crossbook_server::config::Config;

/// An error in what the user asked for (exit code 2, as a usage error), found only once the database is read:
/// a market id no market of its venue has, say.
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Opens the configured store and checks that it answers; errors name the database (password redacted).
pub async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn crossbook_store::Store>> {
    let url = crossbook_store::redact_url(&config.database_url);
    let store = crossbook_store::open_with(&config.database_url, &config.store_options())
        .await
        .map_err(|e| anyhow::anyhow!("cannot open database {url}: {e}"))?;
    store
        .ping()
        .await
        .map_err(|e| anyhow::anyhow!("cannot reach database {url}: {e}"))?;
    Ok(store)
}

/// [`open_store`] for the commands other than `serve`: a SQLite file that does not exist is an error naming it
/// (a mistyped URL or the wrong working folder would otherwise give a new, empty database that no server
/// reads) unless `create` (the `--create` flag). Says on standard error which database it opened and
/// whether a running server ingests from it, so that a key or a pair made on the wrong database shows.
pub async fn open_named_store(config: &Config, create: bool) -> anyhow::Result<Arc<dyn crossbook_store::Store>> {
    let url = crossbook_store::redact_url(&config.database_url);
    let file = sqlite_file(&config.database_url).map(|p| std::path::absolute(p).unwrap_or_else(|_| p.into()));
    if let Some(path) = &file
        && !create
    {
        anyhow::ensure!(
            path.exists(),
            "no database at {} (`crossbook serve` creates it; give another with --database-url, or pass --create \
             to create an empty one)",
            path.display()
        );
    }
    let store = open_store(config).await?;
    let file = file.map(|p| format!(", file {}", p.display())).unwrap_or_default();
    eprintln!("database: {url}{file}{}", server_note(store.as_ref()).await);
    Ok(store)
}

/// Whether a `crossbook serve` ingests from the store: that process holds the ingest lock (a lock file next to
/// a SQLite database, an advisory lock on PostgreSQL) for as long as it runs. A server with role `api` takes
/// no lock and is not seen. The lock is taken and given back at once when free.
async fn server_note(store: &dyn crossbook_store::Store) -> &'static str {
    match store.try_leader_lock().await {
        Ok(None) => " (a running crossbook server ingests from it)",
        Ok(Some(guard)) => {
            guard.release().await;
            " (no running crossbook server ingests from it)"
        }
        Err(_) => "",
    }
}

/// The file of a `sqlite://PATH` URL (without its query); `None` for PostgreSQL and in-memory databases.
fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && !path.contains(":memory:")).then_some(path)
}

/// Resolves on Ctrl-C or SIGTERM, whichever comes first.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutdown requested");
}
