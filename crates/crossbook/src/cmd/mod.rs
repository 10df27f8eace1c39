//! The commands of `crossbook`, one module each with its flags; [`open_store`] and [`shutdown_signal`] are
//! what several of them share.

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
    let store = crossbook_store::open(&config.database_url)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open database {url}: {e}"))?;
    store
        .ping()
        .await
        .map_err(|e| anyhow::anyhow!("cannot reach database {url}: {e}"))?;
    Ok(store)
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
