//! The ingest worker: runs [`crossbook_venues::Ingest`] with the server's configuration, so that the store,
//! `state.live`, `state.bus` and `state.health` follow both venues, and records the [`IngestHandle`] in
//! `state.ingest` (watchlists use it to follow new events).
//!
//! [`IngestHandle`]: crossbook_venues::IngestHandle

use anyhow::Context;
use crossbook_venues::{Ingest, IngestConfig, split_list};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{AppState, config::Config};

/// The ingestion settings of `config`: the keys mirror each other (series lists split on commas); the
/// tuning knobs `config.default.toml` does not expose keep the connector defaults.
pub fn ingest_config(config: &Config) -> IngestConfig {
    IngestConfig {
        venue_a_rest_url: config.venue_a_rest_url.clone(),
        venue_a_ws_url: config.venue_a_ws_url.clone(),
        venue_a_key_id: config.venue_a_key_id.clone(),
        venue_a_private_key_file: config.venue_a_private_key_file.clone(),
        venue_a_series: split_list(&config.venue_a_series),
        venue_b_gamma_url: config.venue_b_gamma_url.clone(),
        venue_b_clob_url: config.venue_b_clob_url.clone(),
        venue_b_data_url: config.venue_b_data_url.clone(),
        venue_b_ws_url: config.venue_b_ws_url.clone(),
        venue_b_series: split_list(&config.venue_b_series),
        catalog_sync_seconds: config.catalog_sync_seconds,
        feed_silence_seconds: config.feed_silence_seconds,
        feed_data_silence_seconds: config.feed_data_silence_seconds,
        venue_a_ws_markets_per_connection: config.venue_a_ws_markets_per_connection,
        venue_b_ws_assets_per_connection: config.venue_b_ws_assets_per_connection,
        write_buffer: config.write_buffer_events,
        ..IngestConfig::default()
    }
}

/// Checks what would make ingestion fail to start, so that `serve` fails before it listens instead of when
/// it takes the ingest lock: venue_a credentials given by halves, or a private key file that cannot be read.
pub fn check(config: &Config) -> anyhow::Result<()> {
    let key_id = config.venue_a_key_id.trim();
    let key_file = config.venue_a_private_key_file.trim();
    anyhow::ensure!(
        key_id.is_empty() == key_file.is_empty(),
        "invalid configuration: venue_a_key_id and venue_a_private_key_file go together (set both or neither)"
    );
    if !key_file.is_empty() {
        std::fs::metadata(key_file)
            .with_context(|| format!("invalid configuration: venue_a_private_key_file {key_file} cannot be read"))?;
    }
    Ok(())
}

/// Starts ingestion of both venues on `tracker` until `cancel`, and records its handle in `state.ingest`.
pub fn spawn(state: &AppState, tracker: &TaskTracker, cancel: &CancellationToken) -> anyhow::Result<()> {
    let cfg = ingest_config(&state.config);
    let handle = Ingest::start(
        cfg,
        state.store.clone(),
        state.live.clone(),
        state.bus.clone(),
        state.health.clone(),
        cancel.clone(),
        tracker,
    )
    .context("cannot start ingestion")?;
    state.ingest.set(handle);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_mirror_the_configuration() {
        let mut c = Config::for_tests("sqlite::memory:");
        c.venue_a_series = " KXBTC15M, ,KXBTCD ".into();
        c.venue_b_series = String::new();
        let i = ingest_config(&c);
        assert_eq!(i.venue_a_series, vec!["KXBTC15M", "KXBTCD"]);
        assert!(i.venue_b_series.is_empty());
        assert_eq!(i.catalog_sync_seconds, c.catalog_sync_seconds);
        assert_eq!(i.venue_b_ws_url, c.venue_b_ws_url);
        assert!(i.venue_a_enabled && i.venue_b_enabled);
    }

    #[test]
    fn half_credentials_are_refused() {
        let mut c = Config::for_tests("sqlite::memory:");
        assert!(check(&c).is_ok());
        c.venue_a_key_id = "abc".into();
        assert!(check(&c).unwrap_err().to_string().contains("go together"));
        c.venue_a_private_key_file = "/nonexistent/key.pem".into();
        assert!(check(&c).unwrap_err().to_string().contains("cannot be read"));
    }
}
