//! `crossbook pairs add|list|remove|reject|unreject`: the operator's arbitrage pair overrides and rejected
//! pairs, kept in the store; the running scanner picks changes up within its catalog refresh.

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
    /// List the overrides (venue_a market, venue_b market, created), then the rejected pairs with their
    /// reasons.
    List,
    /// Remove the override naming MARKET_ID (either venue's id).
    Remove {
        /// venue_a ticker or venue_b condition id of the pair.
        market_id: String,
    },
    /// Reject a pair: the scanner never scans it (no opportunity, history episode, webhook or spread), whichever
    /// matcher formed it; GET /v1/arbitrage/pairs lists it with status "rejected". Rejecting it again replaces
    /// the reason.
    Reject {
        /// venue_a market ticker of the pair.
        #[arg(long = "venue-a", value_name = "ID")]
        venue_a: String,
        /// venue_b condition id (0x...) of the pair.
        #[arg(long = "venue-b", value_name = "ID")]
        venue_b: String,
        /// Why, for the next operator (shown by `pairs list` and as `rejection_reason` in the API).
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Lift the rejection of a pair: the scanner scans it again within its catalog refresh.
    Unreject {
        /// venue_a market ticker of the pair.
        #[arg(long = "venue-a", value_name = "ID")]
        venue_a: String,
        /// venue_b condition id (0x...) of the pair.
        #[arg(long = "venue-b", value_name = "ID")]
        venue_b: String,
    },
}

/// The pair of two ids given on the command line, trimmed; both are required.
fn pair_of(venue_a: &str, venue_b: &str) -> anyhow::Result<crossbook_core::arb::PairOverride> {
    let (a, b) = (venue_a.trim(), venue_b.trim());
    anyhow::ensure!(!a.is_empty() && !b.is_empty(), "both market ids are required");
    Ok(crossbook_core::arb::PairOverride {
        venue_a_market_id: a.to_string(),
        venue_b_market_id: b.to_string(),
    })
}

/// `crossbook pairs add|list|remove|reject|unreject`. The running scanner picks changes up within its catalog refresh (5 s).
pub async fn run(cmd: PairsCommand, config: Config) -> anyhow::Result<()> {
    use crossbook_core::{Exchange, Timestamp, arb::PairOverride};
    let store = match cmd {
        PairsCommand::Add { .. } | PairsCommand::Reject { .. } => super::open_store(&config).await?,
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
                let rejections = store.pair_rejections().await?;
                if !rejections.is_empty() {
                    println!();
                    println!("{:<40} {:<68} {:<24} REASON", "REJECTED VENUE_A", "VENUE_B", "CREATED");
                    for r in rejections {
                        println!(
                            "{:<40} {:<68} {:<24} {}",
                            r.pair.venue_a_market_id,
                            r.pair.venue_b_market_id,
                            r.created_at.to_iso(),
                            r.reason.as_deref().unwrap_or("-")
                        );
                    }
                }
            }
            PairsCommand::Reject {
                venue_a,
                venue_b,
                reason,
            } => {
                let pair = pair_of(&venue_a, &venue_b)?;
                let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                let new = store.reject_pair(&pair, reason, Timestamp::now()).await?;
                let (a, b) = (&pair.venue_a_market_id, &pair.venue_b_market_id);
                if new {
                    println!("rejected venue_a {a} with venue_b {b}: the scanner will not scan this pair");
                } else {
                    println!("venue_a {a} with venue_b {b} was already rejected; reason updated");
                }
            }
            PairsCommand::Unreject { venue_a, venue_b } => {
                let pair = pair_of(&venue_a, &venue_b)?;
                match store.unreject_pair(&pair).await? {
                    0 => anyhow::bail!(
                        "venue_a {} with venue_b {} is not rejected",
                        pair.venue_a_market_id,
                        pair.venue_b_market_id
                    ),
                    _ => println!(
                        "lifted the rejection of venue_a {} with venue_b {}",
                        pair.venue_a_market_id, pair.venue_b_market_id
                    ),
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
