//! The commands of `crossbook`, one module each with its flags; [`open_store`] and [`shutdown_signal`] are
//! what several of them share.

pub mod export;
pub mod keys;
pub mod migrate;
pub mod pairs;
pub mod serve;
pub mod simulate;
pub mod tail;

use std::sync::Arc;

use crossbook_server::config::Config;

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

/// [`open_store`] for a command that only reads: a SQLite file that does not exist is an error naming it,
/// rather than an empty database created to be read. Says on standard error which database it reads.
pub async fn open_existing_store(config: &Config) -> anyhow::Result<Arc<dyn crossbook_store::Store>> {
    if let Some(path) = sqlite_file(&config.database_url) {
        anyhow::ensure!(
            std::path::Path::new(path).exists(),
            "no database at {path} (`crossbook serve` creates it; give another with --database-url)"
        );
    }
    eprintln!("database: {}", crossbook_store::redact_url(&config.database_url));
    open_store(config).await
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
