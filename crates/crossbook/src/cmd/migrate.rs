//! `crossbook migrate`: applies the database migrations and exits (`serve` also applies them at start).

use crossbook_server::config::Config;

pub async fn run(config: Config) -> anyhow::Result<()> {
    let store = super::open_store(&config).await?;
    store.migrate().await?;
    println!(
        "migrations applied to {}",
        crossbook_store::redact_url(&config.database_url)
    );
    store.close().await;
    Ok(())
}
