//! `crossbook pairs add|list|remove`: the operator's arbitrage pair overrides, kept in the store; the running
//! scanner picks changes up within its catalog refresh.

use crossbook_server::config::Config;

#[derive(clap::Subcommand, Debug)]
pub enum PairsCommand {
    /// Pair a venue_a market with a venue_b market (YES on one must be YES on the other).
    Add {
        /// venue_a market ticker.
        venue_a_market_id: String,
        /// venue_b condition id (0x...).
        venue_b_market_id: String,
    },
    /// List the overrides: venue_a market, venue_b market, created.
    List,
    /// Remove the override naming MARKET_ID (either venue's id).
    Remove {
        /// venue_a ticker or venue_b condition id of the pair.
        market_id: String,
    },
}

/// `crossbook pairs add|list|remove`. The running scanner picks changes up within its catalog refresh (5 s).
pub async fn run(cmd: PairsCommand, config: Config) -> anyhow::Result<()> {
    use crossbook_core::{Exchange, Timestamp, arb::PairOverride};
    let store = match cmd {
        PairsCommand::Add { .. } => super::open_store(&config).await?,
        // Reading or removing from a database that does not exist is a mistake in the URL.
        _ => super::open_existing_store(&config).await?,
    };
    store.migrate().await?;
    let result = async {
        match cmd {
            PairsCommand::Add {
                venue_a_market_id,
                venue_b_market_id,
            } => {
                let (a, b) = (venue_a_market_id.trim(), venue_b_market_id.trim());
                anyhow::ensure!(!a.is_empty() && !b.is_empty(), "both market ids are required");
                let pair = PairOverride {
                    venue_a_market_id: a.to_string(),
                    venue_b_market_id: b.to_string(),
                };
                if !store.add_pair_override(&pair, Timestamp::now()).await? {
                    anyhow::bail!("{a} or {b} is already in an override; remove it first (crossbook pairs remove ID)");
                }
                println!("paired venue_a {a} with venue_b {b}");
                for (ex, id) in [(Exchange::VenueA, a), (Exchange::VenueB, b)] {
                    if store.get_market(ex, id).await?.is_none() {
                        eprintln!(
                            "note: {id} is not in the catalog yet; the pair applies once both markets are active"
                        );
                    }
                }
            }
            PairsCommand::List => {
                println!("{:<40} {:<68} CREATED", "VENUE_A", "VENUE_B");
                for o in store.pair_overrides().await? {
                    println!(
                        "{:<40} {:<68} {}",
                        o.pair.venue_a_market_id,
                        o.pair.venue_b_market_id,
                        o.created_at.to_iso()
                    );
                }
            }
            PairsCommand::Remove { market_id } => match store.remove_pair_override(market_id.trim()).await? {
                0 => anyhow::bail!("no override names {market_id:?}"),
                _ => println!("removed the override of {market_id}"),
            },
        }
        Ok(())
    }
    .await;
    store.close().await;
    result
}
