//! `crossbook pairs add|list|remove|reject|unreject`: the operator's arbitrage pair overrides and rejected
//! pairs, kept in the store; the running scanner picks changes up within its catalog refresh.

use crossbook_core::{Exchange, Timestamp, arb::PairOverride};
use crossbook_server::config::Config;
use crossbook_store::Store;

#[derive(clap::Subcommand, Debug)]
pub enum PairsCommand {
    /// Pair a venue_a market with a venue_b market (YES on one must be YES on the other).
    Add {
        /// venue_a market ticker.
        venue_a_market_id: String,
        /// venue_b condition id (0x...).
        venue_b_market_id: String,
        #[command(flatten)]
        create: Create,
        #[command(flatten)]
        unknown: AllowUnknown,
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
        #[command(flatten)]
        create: Create,
        #[command(flatten)]
        unknown: AllowUnknown,
    },
    /// Lift the rejection of a pair: the scanner scans it again within its catalog refresh.
    Unreject {
        /// venue_a market ticker of the pair.
        #[arg(long = "venue-a", value_name = "ID")]
        venue_a: String,
        /// venue_b condition id (0x...) of the pair.
        #[arg(long = "venue-b", value_name = "ID")]
        venue_b: String,
        #[command(flatten)]
        unknown: AllowUnknown,
    },
}

/// `--create` of the commands that write a pair.
#[derive(clap::Args, Debug)]
pub struct Create {
    /// Create the SQLite database file if it does not exist (otherwise that is an error: the pair would go to
    /// a database no server reads).
    #[arg(long)]
    create: bool,
}

/// `--allow-unknown` of the commands that name a pair.
#[derive(clap::Args, Debug)]
pub struct AllowUnknown {
    /// Accept a market id that no market of its venue has in the catalog (a market not listed yet); by
    /// default that is an error, since a mistyped id would make a pair that never applies.
    #[arg(long)]
    allow_unknown: bool,
}

/// Checks that each id of `pair` names a market of its venue in the catalog: an unknown one is bad input
/// naming the id and the venue, or with `--allow-unknown` a note that the pair waits for it.
async fn check_known(store: &dyn Store, pair: &PairOverride, unknown: &AllowUnknown) -> anyhow::Result<()> {
    for (ex, id) in [
        (Exchange::VenueA, &pair.venue_a_market_id),
        (Exchange::VenueB, &pair.venue_b_market_id),
    ] {
        if store.get_market(ex, id).await?.is_some() {
            continue;
        }
        if !unknown.allow_unknown {
            let what = match ex {
                Exchange::VenueA => "ticker",
                Exchange::VenueB => "condition id",
            };
            return Err(super::BadInput(format!(
                "no {} market has the id {id:?} (give a {} {what}, or --allow-unknown for a market not listed yet)",
                ex.as_str(),
                ex.as_str()
            ))
            .into());
        }
        eprintln!("note: {id} is not in the catalog yet; the pair applies once both markets are active");
    }
    Ok(())
}

/// The pair of two ids given on the command line, trimmed; both are required.
fn pair_of(venue_a: &str, venue_b: &str) -> anyhow::Result<PairOverride> {
    let (a, b) = (venue_a.trim(), venue_b.trim());
    anyhow::ensure!(!a.is_empty() && !b.is_empty(), "both market ids are required");
    Ok(PairOverride {
        venue_a_market_id: a.to_string(),
        venue_b_market_id: b.to_string(),
    })
}

/// `crossbook pairs add|list|remove|reject|unreject`. The running scanner picks changes up within its catalog refresh (5 s).
pub async fn run(cmd: PairsCommand, config: Config) -> anyhow::Result<()> {
    // A database that does not exist is a mistake in the URL or the working folder, unless the user says so.
    let create = match &cmd {
        PairsCommand::Add { create, .. } | PairsCommand::Reject { create, .. } => create.create,
        _ => false,
    };
    let store = super::open_named_store(&config, create).await?;
    store.migrate().await?;
    let result = async {
        match cmd {
            PairsCommand::Add {
                venue_a_market_id,
                venue_b_market_id,
                unknown,
                ..
            } => {
                let pair = pair_of(&venue_a_market_id, &venue_b_market_id)?;
                check_known(store.as_ref(), &pair, &unknown).await?;
                let (a, b) = (&pair.venue_a_market_id, &pair.venue_b_market_id);
                if !store.add_pair_override(&pair, Timestamp::now()).await? {
                    anyhow::bail!("{a} or {b} is already in an override; remove it first (crossbook pairs remove ID)");
                }
                println!("paired venue_a {a} with venue_b {b}");
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
                unknown,
                ..
            } => {
                let pair = pair_of(&venue_a, &venue_b)?;
                check_known(store.as_ref(), &pair, &unknown).await?;
                let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                let new = store.reject_pair(&pair, reason, Timestamp::now()).await?;
                let (a, b) = (&pair.venue_a_market_id, &pair.venue_b_market_id);
                if new {
                    println!("rejected venue_a {a} with venue_b {b}: the scanner will not scan this pair");
                } else {
                    println!("venue_a {a} with venue_b {b} was already rejected; reason updated");
                }
            }
            PairsCommand::Unreject {
                venue_a,
                venue_b,
                unknown,
            } => {
                let pair = pair_of(&venue_a, &venue_b)?;
                // A rejection is lifted whatever the catalog holds now (its markets may have closed since);
                // only when there was none is an unknown id the likelier mistake.
                match store.unreject_pair(&pair).await? {
                    0 => {
                        if !unknown.allow_unknown {
                            check_known(store.as_ref(), &pair, &unknown).await?;
                        }
                        anyhow::bail!(
                            "venue_a {} with venue_b {} is not rejected",
                            pair.venue_a_market_id,
                            pair.venue_b_market_id
                        )
                    }
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
