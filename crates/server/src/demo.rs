//! Demo keys of `serve --simulate`: one key per plan on a database without keys, and the banner that prints
//! them once with `curl` lines to paste. The caller that starts the simulated venues asks for them through
//! [`crate::Startup`]; the server creates them because it holds the store and the ingest lock.

use anyhow::Context;
use crossbook_core::Plan;
use crossbook_store::{NewKey, Store};

/// Customer names of the demo keys, one per plan.
pub const DEMO_CUSTOMERS: [(&str, Plan); 3] = [
    ("demo-free", Plan::Free),
    ("demo-builder", Plan::Builder),
    ("demo-trader", Plan::Trader),
];

/// Creates one key per plan when the database has no key at all, and returns them (`None` otherwise).
///
/// Two processes starting together on one empty database both see it empty; callers serialise on the ingest
/// lock ([`crossbook_store::LeaderLock`]) so that exactly one of them creates the keys.
pub async fn create_demo_keys(store: &dyn Store) -> anyhow::Result<Option<Vec<(Plan, NewKey)>>> {
    if !store.list_keys().await.context("cannot list keys")?.is_empty() {
        return Ok(None);
    }
    let mut keys = Vec::new();
    for (name, plan) in DEMO_CUSTOMERS {
        let k = store
            .create_key(name, plan)
            .await
            .with_context(|| format!("cannot create the {plan} demo key"))?;
        keys.push((plan, k));
    }
    Ok(Some(keys))
}

/// Real ids of the simulated catalog for the banner's examples, so every line works as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tour {
    /// An open venue_a market ticker.
    pub venue_a_market: Option<String>,
    /// The event ticker of `venue_a_market`.
    pub venue_a_event: Option<String>,
    /// An open venue_b condition id.
    pub venue_b_market: Option<String>,
    /// A game on both venues that the scanner pairs: venue_a ticker, venue_b condition id, and a word that
    /// finds both in search (a team name).
    pub pair: Option<(String, String, String)>,
}

/// The address a banner shows for `addr`: an unspecified listen address (0.0.0.0) is reached on loopback.
pub fn base_url(mut addr: std::net::SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    format!("http://{addr}")
}

/// `database` (a URL without its password) with a relative SQLite path made absolute, so that a command
/// pasted from the banner into another folder still names this database.
fn absolute_database(database: &str) -> String {
    let Some(path) = database.strip_prefix("sqlite://") else {
        return database.to_string();
    };
    let (file, query) = path.split_once('?').map_or((path, None), |(f, q)| (f, Some(q)));
    if file.is_empty() || file.contains(":memory:") || std::path::Path::new(file).is_absolute() {
        return database.to_string();
    }
    match std::path::absolute(file) {
        Ok(abs) => format!(
            "sqlite://{}{}",
            abs.display(),
            query.map(|q| format!("?{q}")).unwrap_or_default()
        ),
        Err(_) => database.to_string(),
    }
}

/// The first line of every start-up banner.
fn listening_line(base: &str) -> String {
    format!("crossbook is listening on {base}; dashboard: {base}/; API reference: {base}/docs\n")
}

/// The command that makes a key for the database: keys are shown only when created, so a lost one is
/// replaced by a new one.
fn create_key_command(database: &str) -> String {
    format!("  crossbook keys create --database-url '{database}' --name NAME --plan trader\n")
}

/// What plain `serve` prints at start: where it listens, and on a database without keys (`has_keys` false)
/// how to create one.
pub fn serve_banner(base: &str, database: &str, has_keys: bool) -> String {
    let mut s = listening_line(base);
    if !has_keys {
        s.push_str("\nThe database has no API keys yet. Create one (it is shown only once) with:\n");
        s.push_str(&create_key_command(&absolute_database(database)));
    }
    s
}

/// The text `serve --simulate` prints at start: where it listens and the API docs; with new demo `keys`
/// (created because the database had none) each key and `curl` lines with real ids from `tour`; without
/// them (a restart) how to make a new key and list the existing ones in `database` (a URL without its
/// password).
pub fn demo_banner(keys: &[(Plan, NewKey)], base: &str, tour: &Tour, database: &str) -> String {
    let key_of = |p: Plan| keys.iter().find(|(q, _)| *q == p).map(|(_, k)| k.key.as_str());
    let mut s = listening_line(base);
    s.push('\n');
    let (Some(free), Some(trader)) = (key_of(Plan::Free), key_of(Plan::Trader)) else {
        // Keys are shown only when created; a restart can only point at them, or make a new one.
        let database = absolute_database(database);
        s.push_str("The database already has API keys, shown only when they were created. To get a new one:\n");
        s.push_str(&create_key_command(&database));
        s.push_str(&format!(
            "List the existing ones (their prefixes, names and plans) with:\n  \
             crossbook keys list --database-url '{database}'\n\n"
        ));
        s.push_str("Try (no key needed):\n");
        s.push_str(&format!("  curl '{base}/readyz'\n"));
        s.push_str(&format!("  curl '{base}/v1/search/markets?q=btc&limit=5'\n"));
        return s;
    };
    s.push_str("Demo API keys (created because the database had none; shown only this once):\n");
    for (plan, k) in keys {
        s.push_str(&format!("  {:<8} {}\n", plan.to_string(), k.key));
    }
    s.push_str("\nTry (the venues are fresh within seconds; GET /readyz says so):\n");
    s.push_str(&format!("  curl '{base}/readyz'\n"));
    s.push_str(&format!("  curl '{base}/v1/search/markets?q=btc&limit=5'\n"));
    if let Some(event) = &tour.venue_a_event {
        s.push_str(&format!("  # the markets of venue_a event {event}\n"));
        s.push_str(&format!("  curl '{base}/v1/search/events/{event}/markets'\n"));
    }
    if let Some(market) = &tour.venue_a_market {
        s.push_str(&format!("  # order books of venue_a market {market}\n"));
        s.push_str(&format!(
            "  curl -H 'X-API-Key: {trader}' '{base}/v1/historical/venue_a/orderbook?market_id={market}&limit=5'\n"
        ));
    }
    if let Some(market) = &tour.venue_b_market {
        s.push_str(&format!("  # order books of venue_b market {market}\n"));
        s.push_str(&format!(
            "  curl -H 'X-API-Key: {trader}' '{base}/v1/historical/venue_b/orderbook?market_id={market}&limit=5'\n"
        ));
    }
    if let Some((a, b, team)) = &tour.pair {
        s.push_str(&format!(
            "  # one game on both venues, paired by the scanner: venue_a {a} with venue_b {b}\n"
        ));
        s.push_str(&format!("  curl '{base}/v1/search/markets?q={team}&limit=10'\n"));
    }
    s.push_str(&format!(
        "  curl -H 'X-API-Key: {free}' '{base}/v1/arbitrage/current?min_net_cents=0&limit=5'\n"
    ));
    s.push_str(&format!("  curl '{base}/v1/whales/public/feed?limit=5'\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbook_store::ApiKeyInfo;

    #[test]
    fn banner_names_every_key_and_route() {
        let key = |k: &str, plan| {
            (
                plan,
                NewKey {
                    key: k.to_string(),
                    info: ApiKeyInfo {
                        id: 1,
                        prefix: k[..12].to_string(),
                        customer_id: 1,
                        customer_name: "x".into(),
                        plan,
                        created_at: crossbook_core::Timestamp::from_millis(0),
                        revoked_at: None,
                    },
                },
            )
        };
        let keys = vec![
            key("cbk_free00000000", Plan::Free),
            key("cbk_build0000000", Plan::Builder),
            key("cbk_trade0000000", Plan::Trader),
        ];
        let tour = Tour {
            venue_a_market: Some("KXBTC24H-26MAY1316-00".into()),
            venue_a_event: Some("KXBTC24H-26MAY1316".into()),
            venue_b_market: Some("0xabc".into()),
            pair: Some(("KXNBAGAME-26MAY12DENAUS-DEN".into(), "0xdef".into(), "Denver".into())),
        };
        let b = demo_banner(&keys, "http://127.0.0.1:8080", &tour, "sqlite://data/crossbook.db");
        for needle in [
            "listening on http://127.0.0.1:8080",
            "http://127.0.0.1:8080/docs",
            "cbk_free00000000",
            "cbk_build0000000",
            "X-API-Key: cbk_trade0000000",
            "/v1/search/markets?q=btc",
            "/v1/arbitrage/current",
            "/v1/search/events/KXBTC24H-26MAY1316/markets",
            "/v1/historical/venue_a/orderbook?market_id=KXBTC24H-26MAY1316-00",
            "/v1/historical/venue_b/orderbook?market_id=0xabc",
            "venue_a KXNBAGAME-26MAY12DENAUS-DEN with venue_b 0xdef",
            "/v1/search/markets?q=Denver",
        ] {
            assert!(b.contains(needle), "{needle} missing from\n{b}");
        }
        assert!(!b.contains("keys list"), "new keys are shown, not pointed at:\n{b}");
    }

    #[test]
    fn restart_banner_says_where_and_how_to_list_keys() {
        let b = demo_banner(
            &[],
            "http://127.0.0.1:8080",
            &Tour::default(),
            "sqlite:///srv/crossbook.db",
        );
        for needle in [
            "listening on http://127.0.0.1:8080",
            "http://127.0.0.1:8080/docs",
            "crossbook keys create --database-url 'sqlite:///srv/crossbook.db' --name NAME --plan trader",
            "crossbook keys list --database-url 'sqlite:///srv/crossbook.db'",
        ] {
            assert!(b.contains(needle), "{needle} missing from\n{b}");
        }
        assert!(!b.contains("Demo API keys") && !b.contains("X-API-Key"), "{b}");
    }

    #[test]
    fn plain_serve_banner_says_where_and_how_to_make_a_key_when_there_is_none() {
        let b = serve_banner("http://127.0.0.1:8080", "sqlite://./data/crossbook.db", false);
        assert!(
            b.contains("listening on http://127.0.0.1:8080; dashboard: http://127.0.0.1:8080/"),
            "{b}"
        );
        let abs = std::path::absolute("./data/crossbook.db").unwrap();
        assert!(
            b.contains(&format!(
                "crossbook keys create --database-url 'sqlite://{}'",
                abs.display()
            )),
            "relative SQLite paths are made absolute: {b}"
        );
        let b = serve_banner("http://127.0.0.1:8080", "postgres://u:***@db/cb", true);
        assert_eq!(b.trim_end().lines().count(), 1, "{b}");
    }
}
