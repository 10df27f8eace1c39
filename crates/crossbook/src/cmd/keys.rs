//! `crossbook keys create|list|revoke`: API keys managed on the store directly (no running server needed).

use crossbook_core::Plan;
use crossbook_server::config::Config;

#[derive(clap::Subcommand, Debug)]
pub enum KeysCommand {
    /// Create a key for customer NAME; prints the key (shown once) as the last line.
    Create {
        /// Customer name; keys created with the same name belong to the same customer.
        #[arg(long)]
        name: String,
        /// Plan of the key.
        #[arg(long, value_parser = ["free", "builder", "trader"])]
        plan: String,
        /// Create the SQLite database file if it does not exist (otherwise that is an error: the key would go
        /// to a database no server reads).
        #[arg(long)]
        create: bool,
    },
    /// List keys: prefix, customer name, plan, created, revoked.
    List,
    /// Revoke the key whose prefix is PREFIX (as shown by `keys list`).
    Revoke {
        /// Key prefix, e.g. cbk_AbCd1234.
        prefix: String,
    },
}

pub async fn run(cmd: KeysCommand, config: Config) -> anyhow::Result<()> {
    // A database that does not exist is a mistake in the URL or the working folder, not a request to create
    // an empty one, unless the user says so.
    let create = matches!(cmd, KeysCommand::Create { create: true, .. });
    let store = super::open_named_store(&config, create).await?;
    store.migrate().await?;
    let result = async {
        match cmd {
            KeysCommand::Create { name, plan, .. } => {
                let plan: Plan = plan.parse().map_err(anyhow::Error::msg)?;
                let name = name.trim();
                anyhow::ensure!(!name.is_empty(), "--name must not be empty");
                let k = store.create_key(name, plan).await?;
                println!(
                    "created {} key {} for customer {:?}; it is shown only once:",
                    plan, k.info.prefix, name
                );
                println!("{}", k.key);
            }
            KeysCommand::List => {
                let keys = store.list_keys().await?;
                // The name column is as wide as the longest name, so every column lines up.
                let name_w = keys
                    .iter()
                    .map(|k| k.customer_name.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(4);
                println!(
                    "{:<14} {:<name_w$} {:<8} {:<25} REVOKED",
                    "PREFIX", "NAME", "PLAN", "CREATED"
                );
                for k in keys {
                    println!(
                        "{:<14} {:<name_w$} {:<8} {:<25} {}",
                        k.prefix,
                        k.customer_name,
                        // `Plan`'s Display ignores widths: pad its text.
                        k.plan.to_string(),
                        k.created_at.to_iso(),
                        k.revoked_at.map(|t| t.to_iso()).unwrap_or_else(|| "-".into())
                    );
                }
            }
            KeysCommand::Revoke { prefix } => {
                let matching: Vec<_> = store
                    .list_keys()
                    .await?
                    .into_iter()
                    .filter(|k| k.prefix.starts_with(&prefix) && k.revoked_at.is_none())
                    .collect();
                match matching.len() {
                    0 => anyhow::bail!("no active key with prefix {prefix:?}"),
                    1 => {
                        store.revoke_key(&matching[0].prefix).await?;
                        println!("revoked {}", matching[0].prefix);
                    }
                    n => anyhow::bail!("prefix {prefix:?} matches {n} keys; give more characters"),
                }
            }
        }
        Ok(())
    }
    .await;
    store.close().await;
    result
}
