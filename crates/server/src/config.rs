//! Configuration: defaults from `config.default.toml` (compiled in), then an optional TOML file, then
//! `CROSSBOOK_*` environment variables, then command-line flags.
//!
//! Keys are flat so that one name maps to the file key, the variable (`CROSSBOOK_` + upper case) and the flag
//! (`--` + dashes) without a translation table.

use std::{net::SocketAddr, path::Path, str::FromStr};

use crossbook_core::arb::FeeModel;
use figment::{
    Figment,
    providers::{Env, Format, Serialized, Toml},
};
use serde::{Deserialize, Serialize};

/// The documented defaults; also the source of truth for them.
pub const DEFAULTS: &str = include_str!("../config.default.toml");

/// Bounds of `max_header_bytes`. hyper refuses (panics on) an HTTP/1 read buffer under 8 KiB, and one
/// request's headers are held in memory whole, so the ceiling bounds what a client can make the server keep
/// per connection.
pub const MIN_HEADER_BYTES: usize = 8 * 1024;
pub const MAX_HEADER_BYTES: usize = 1024 * 1024;

/// Which parts of the service this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// API, ingestion, scanner and webhooks.
    All,
    /// The HTTP API only.
    Api,
    /// Ingestion, scanner and webhooks, without the HTTP API routes (service routes stay up).
    Ingest,
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Role::All),
            "api" => Ok(Role::Api),
            "ingest" => Ok(Role::Ingest),
            o => Err(format!("unknown role {o:?} (expected all, api or ingest)")),
        }
    }
}

/// Every setting; see `config.default.toml` for what each one means.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub listen: SocketAddr,
    pub database_url: String,
    pub database_acquire_timeout_ms: u64,
    pub role: Role,
    pub bus_url: String,
    pub bus_window_seconds: u64,
    pub log: String,
    pub log_format: String,

    pub header_read_timeout_seconds: u64,
    pub keep_alive_timeout_seconds: u64,
    pub request_body_timeout_seconds: u64,
    pub response_send_timeout_seconds: u64,
    pub max_connections: usize,
    pub max_header_bytes: usize,

    pub simulate: bool,
    pub sim_seed: u64,
    pub sim_scale: String,
    pub sim_venue_a_changes_per_second: u64,
    pub sim_venue_b_changes_per_second: u64,
    pub sim_burst_multiple: u64,
    pub sim_burst_seconds: u64,
    pub sim_burst_every_seconds: u64,
    pub sim_quiet_percent: u64,
    pub sim_quiet_seconds: u64,
    pub sim_match_percent: u64,

    pub rate_limit_anonymous: u32,
    pub rate_limit_free: u32,
    pub rate_limit_builder: u32,
    pub rate_limit_trader: u32,
    pub key_cache_seconds: u64,
    pub search_cache_ms: u64,
    pub arbitrage_cache_ms: u64,

    pub venue_a_rest_url: String,
    pub venue_a_ws_url: String,
    pub venue_a_key_id: String,
    pub venue_a_private_key_file: String,
    pub venue_a_series: String,

    pub venue_b_gamma_url: String,
    pub venue_b_clob_url: String,
    pub venue_b_data_url: String,
    pub venue_b_ws_url: String,
    pub venue_b_series: String,

    pub catalog_sync_seconds: u64,
    /// No longer used: every book change is recorded in the event log. Accepted so that older configuration
    /// files still load (a warning says it is ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_interval_ms: Option<u64>,
    pub feed_silence_seconds: u64,
    pub feed_data_silence_seconds: u64,
    pub venue_a_ws_markets_per_connection: usize,
    pub venue_b_ws_assets_per_connection: usize,
    pub write_buffer_events: usize,
    pub retention_days: u32,

    pub scan_interval_ms: u64,
    pub webhook_min_net_cents: f64,
    pub opportunity_cooldown_seconds: u64,
    /// Scan pairs whose YES outcomes name different sides (off by default: they are listed, not priced).
    pub arbitrage_scan_inverted_pairs: bool,
    /// venue_b's taker fee rate per market category (`category=rate` entries); checked when the
    /// configuration is read, so a bad entry stops the start with an error naming this key.
    pub venue_b_fee_rate: FeeModel,
    pub venue_a_display_name: String,
    pub venue_b_display_name: String,

    pub whale_platform_threshold_usd: u64,
    pub whale_public_min_usd: u64,
    pub whale_default_threshold_usd: u64,
    pub whale_pool_size: u32,
    pub whale_preview_events: u32,

    pub allow_private_webhook_targets: bool,
    pub webhook_concurrency: usize,
    pub webhook_delivery_log_days: u32,

    pub stream_queue: usize,
    pub stream_buffer: usize,
    pub stream_resume_seconds: u64,
    pub stream_ping_seconds: u64,
    pub stream_connections_free: usize,
    pub stream_connections_builder: usize,
    pub stream_connections_trader: usize,
    pub stream_markets_free: usize,
    pub stream_markets_builder: usize,
    pub stream_markets_trader: usize,
    pub stream_anonymous_per_address: usize,
    pub stream_sessions_per_connection: usize,
}

/// The prefix of the environment variables that set a key (`CROSSBOOK_LISTEN` sets `listen`).
pub const ENV_PREFIX: &str = "CROSSBOOK_";

/// Every key a configuration has, in the order of [`Config`]'s fields (as serde knows them, so the list
/// cannot drift from the struct).
pub fn keys() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Fields<'a>(&'a std::cell::Cell<&'static [&'static str]>);
    impl<'de> serde::Deserializer<'de> for Fields<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only the field names are read"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.set(fields);
            Err(de::Error::custom("only the field names are read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    static KEYS: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let fields = std::cell::Cell::new(&[][..]);
        let _ = Config::deserialize(Fields(&fields));
        fields.get()
    })
}

/// Whether `name` (any case) is a key of the configuration.
fn is_key(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    keys().contains(&name.as_str())
}

/// The environment variables with the [`ENV_PREFIX`] that name no key, hence are not read; the command line
/// warns about each. `CROSSBOOK_TEST_*` (the test harness's) and `CROSSBOOK_KEY` (`crossbook tail`'s API key)
/// are expected there and not listed.
pub fn ignored_environment() -> Vec<String> {
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| {
            let Some(rest) = k.strip_prefix(ENV_PREFIX) else {
                return false;
            };
            let rest = rest.to_ascii_lowercase();
            !is_key(&rest) && !rest.starts_with("test_") && rest != "key"
        })
        .collect();
    names.sort();
    names
}

/// A configuration error as one line naming the key and where its value came from; an unknown key (only a
/// file can hold one: the environment is filtered, the flags are known) names the file and is followed by
/// the valid keys, a few to a line.
fn describe_error(e: figment::Error, file: Option<&Path>) -> String {
    let Some(first) = e.into_iter().next() else {
        return "invalid configuration".into();
    };
    if let figment::error::Kind::UnknownField(key, _) = &first.kind {
        let source = file.map_or_else(
            || "the configuration".to_string(),
            |p| format!("config file {}", p.display()),
        );
        let mut lines = vec![format!(
            "invalid configuration: unknown key `{key}` in {source}; the keys are (see config.default.toml):"
        )];
        let mut line = String::new();
        for k in keys() {
            if !line.is_empty() && line.len() + k.len() > 100 {
                lines.push(std::mem::take(&mut line));
            }
            line.push_str(if line.is_empty() { "  " } else { " " });
            line.push_str(k);
        }
        lines.push(line);
        return lines.join("\n");
    }
    // figment names a file's key with its profile ("default.listen"); the key alone is what the file holds.
    format!(
        "invalid configuration: {}",
        first.to_string().replace("\"default.", "\"")
    )
}

impl Default for Config {
    fn default() -> Self {
        Figment::from(Toml::string(DEFAULTS))
            .extract()
            .expect("config.default.toml is valid")
    }
}

impl Config {
    /// This configuration with the keys of `toml` (the text of a config file) set over it, checked like a file.
    pub fn merged_with_toml(&self, toml: &str) -> Result<Config, String> {
        Figment::from(Serialized::defaults(self))
            .merge(Toml::string(toml))
            .extract()
            .map_err(|e| format!("invalid configuration: {e}"))
    }

    /// Loads defaults < `file` < `CROSSBOOK_*` environment < `overrides` (the flags that were given,
    /// serialised with absent flags skipped). Errors name the key and where its bad value came from.
    pub fn load<T: Serialize>(file: Option<&Path>, overrides: &T) -> Result<Config, String> {
        let mut fig = Figment::from(Toml::string(DEFAULTS));
        if let Some(path) = file {
            if !path.exists() {
                return Err(format!("config file {} does not exist", path.display()));
            }
            fig = fig.merge(Toml::file(path));
        }
        // `RUST_LOG`, the Rust convention, sets the log filter too; `CROSSBOOK_LOG` (merged next) wins over it.
        if let Some(filter) = std::env::var("RUST_LOG").ok().filter(|v| !v.trim().is_empty()) {
            fig = fig.merge(Serialized::default("log", filter));
        }
        // Only variables that name a setting are read: others with the prefix belong to something else (a
        // webhook receiver's secret, `crossbook tail`'s key, the test harness) and `ignored_environment`
        // lists them for a warning.
        fig = fig.merge(Env::prefixed(ENV_PREFIX).filter(|k| is_key(k.as_str())));
        fig = fig.merge(Serialized::defaults(overrides));
        let cfg: Config = fig.extract().map_err(|e| describe_error(e, file))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// A configuration for tests: defaults with the given database, listening anywhere on loopback, no
    /// rate limits unless the test sets them, and venue URLs on a closed loopback port (never the live
    /// venues: a test server's ingestion finds nothing there and backs off; `simulate` points it elsewhere).
    pub fn for_tests(database_url: &str) -> Config {
        const NOWHERE: &str = "127.0.0.1:1";
        Config {
            database_url: database_url.to_string(),
            listen: "127.0.0.1:0".parse().expect("valid address"),
            rate_limit_anonymous: 0,
            rate_limit_free: 0,
            rate_limit_builder: 0,
            rate_limit_trader: 0,
            // Tests change the catalog between requests and expect to see it at once.
            search_cache_ms: 0,
            arbitrage_cache_ms: 0,
            venue_a_rest_url: format!("http://{NOWHERE}/trade-api/v2"),
            venue_a_ws_url: format!("ws://{NOWHERE}/trade-api/ws/v2"),
            venue_b_gamma_url: format!("http://{NOWHERE}/gamma"),
            venue_b_clob_url: format!("http://{NOWHERE}/clob"),
            venue_b_data_url: format!("http://{NOWHERE}/data"),
            venue_b_ws_url: format!("ws://{NOWHERE}/ws/market"),
            ..Config::default()
        }
    }

    /// How the store is opened (`database_acquire_timeout_ms`).
    pub fn store_options(&self) -> crossbook_store::OpenOptions {
        crossbook_store::OpenOptions {
            acquire_timeout: std::time::Duration::from_millis(self.database_acquire_timeout_ms),
        }
    }

    /// The bus's settings; `None` without `bus_url` (events stay in this process).
    pub fn bus_settings(&self) -> Option<crossbook_live::nats::BusSettings> {
        let url = self.bus_url.trim();
        (!url.is_empty()).then(|| crossbook_live::nats::BusSettings {
            url: url.to_string(),
            window: std::time::Duration::from_secs(self.bus_window_seconds),
        })
    }

    fn validate(&self) -> Result<(), String> {
        if !(self.database_url.starts_with("sqlite:")
            || self.database_url.starts_with("postgres://")
            || self.database_url.starts_with("postgresql://"))
        {
            return Err("invalid configuration: database_url must start with sqlite:// or postgres://".into());
        }
        if self.role != Role::All && self.database_url.starts_with("sqlite:") {
            return Err("invalid configuration: role api/ingest needs a shared PostgreSQL database_url".into());
        }
        if self.log_format != "text" && self.log_format != "json" {
            return Err("invalid configuration: log_format must be text or json".into());
        }
        if self.stream_queue == 0 || self.stream_buffer == 0 || self.stream_ping_seconds == 0 {
            return Err(
                "invalid configuration: stream_queue, stream_buffer and stream_ping_seconds must be positive".into(),
            );
        }
        if self.database_acquire_timeout_ms == 0 {
            return Err("invalid configuration: database_acquire_timeout_ms must be positive".into());
        }
        if self.header_read_timeout_seconds == 0
            || self.keep_alive_timeout_seconds == 0
            || self.request_body_timeout_seconds == 0
            || self.response_send_timeout_seconds == 0
        {
            return Err(
                "invalid configuration: header_read_timeout_seconds, keep_alive_timeout_seconds, \
                 request_body_timeout_seconds and response_send_timeout_seconds must be positive"
                    .into(),
            );
        }
        if !(MIN_HEADER_BYTES..=MAX_HEADER_BYTES).contains(&self.max_header_bytes) {
            return Err(format!(
                "invalid configuration: max_header_bytes must be from {MIN_HEADER_BYTES} to {MAX_HEADER_BYTES}"
            ));
        }
        if self.sim_scale != "demo" && self.sim_scale != "full" {
            return Err("invalid configuration: sim_scale must be demo or full".into());
        }
        if !self.bus_url.trim().is_empty() && self.bus_window_seconds < 60 {
            return Err("invalid configuration: bus_window_seconds must be at least 60".into());
        }
        if self.venue_a_ws_markets_per_connection == 0 || self.venue_b_ws_assets_per_connection == 0 {
            return Err(
                "invalid configuration: venue_a_ws_markets_per_connection and venue_b_ws_assets_per_connection \
                 must be positive"
                    .into(),
            );
        }
        if self.scan_interval_ms == 0 {
            return Err("invalid configuration: scan_interval_ms must be positive".into());
        }
        if !(self.webhook_min_net_cents.is_finite() && self.webhook_min_net_cents >= 0.0) {
            return Err("invalid configuration: webhook_min_net_cents must be a non-negative number".into());
        }
        Ok(())
    }
}

#[cfg(test)]
// `figment::Jail` closures must return `figment::Error`, which is large; not ours to box.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Flags {
        #[serde(skip_serializing_if = "Option::is_none")]
        listen: Option<String>,
    }

    #[test]
    fn defaults_parse_and_match_contracts() {
        let c = Config::default();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.database_url, "sqlite://./data/crossbook.db");
        assert_eq!(c.role, Role::All);
        assert_eq!(
            (
                c.rate_limit_anonymous,
                c.rate_limit_free,
                c.rate_limit_builder,
                c.rate_limit_trader
            ),
            (60, 120, 600, 3000)
        );
        assert_eq!(c.webhook_delivery_log_days, 30);
        assert_eq!(c.database_acquire_timeout_ms, 500);
        assert_eq!(
            (
                c.header_read_timeout_seconds,
                c.keep_alive_timeout_seconds,
                c.request_body_timeout_seconds,
                c.max_connections
            ),
            (10, 60, 30, 0)
        );
        assert_eq!(c.max_header_bytes, 64 * 1024);
    }

    #[test]
    fn flag_beats_env_beats_file_beats_default() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("c.toml", "listen = \"127.0.0.1:1001\"\nsim_seed = 7\nrole = \"all\"")?;
            let c = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap();
            assert_eq!(c.listen.port(), 1001);
            assert_eq!(c.sim_seed, 7);
            jail.set_env("CROSSBOOK_LISTEN", "127.0.0.1:1002");
            let c = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap();
            assert_eq!(c.listen.port(), 1002);
            let c = Config::load(
                Some(Path::new("c.toml")),
                &Flags {
                    listen: Some("127.0.0.1:1003".into()),
                },
            )
            .unwrap();
            assert_eq!(c.listen.port(), 1003);
            assert_eq!(c.sim_seed, 7);
            Ok(())
        });
    }

    #[test]
    fn venue_b_fee_rates_per_category() {
        use crossbook_core::{
            Category,
            arb::{FeeModel, FeeRate},
        };
        #[derive(Serialize, Default)]
        struct FeeFlag {
            #[serde(skip_serializing_if = "Option::is_none")]
            venue_b_fee_rate: Option<String>,
        }
        let rate = |s: &str| s.parse::<FeeRate>().unwrap();
        assert_eq!(
            Config::default().venue_b_fee_rate,
            FeeModel::SPEC,
            "0.07 everywhere by default"
        );
        figment::Jail::expect_with(|jail| {
            jail.create_file("c.toml", "venue_b_fee_rate = \"Sports=0.03, other=0\"")?;
            let c = Config::load(Some(Path::new("c.toml")), &FeeFlag::default()).unwrap();
            let m = c.venue_b_fee_rate;
            assert_eq!(m.venue_b_rate(Category::Sports), rate("0.03"));
            assert_eq!(m.venue_b_rate(Category::Other), FeeRate::ZERO);
            assert_eq!(m.venue_b_rate(Category::Crypto), FeeRate::SPEC);
            // A higher level replaces the whole list.
            jail.set_env("CROSSBOOK_VENUE_B_FEE_RATE", "crypto=0.05");
            let c = Config::load(Some(Path::new("c.toml")), &FeeFlag::default()).unwrap();
            assert_eq!(
                c.venue_b_fee_rate,
                FeeModel::SPEC.with_venue_b_rate(Category::Crypto, rate("0.05"))
            );
            let flag = FeeFlag {
                venue_b_fee_rate: Some("sports=0.02,crypto=0.04".into()),
            };
            let c = Config::load(Some(Path::new("c.toml")), &flag).unwrap();
            assert_eq!(c.venue_b_fee_rate.to_string(), "crypto=0.04,sports=0.02,other=0.07");
            // The configuration round-trips through its serialised form (the simulator's merge does this).
            let again = c.merged_with_toml("").unwrap();
            assert_eq!(again.venue_b_fee_rate, c.venue_b_fee_rate);
            Ok(())
        });
        for (bad, says) in [
            ("sports=1.5", "from 0 to 1 with at most 4 decimals"),
            ("sports=0.00001", "at most 4 decimals"),
            ("politics=0.04", "unknown category"),
            ("sports", "category=rate"),
        ] {
            figment::Jail::expect_with(|jail| {
                jail.set_env("CROSSBOOK_VENUE_B_FEE_RATE", bad);
                let e = Config::load(None, &FeeFlag::default()).unwrap_err();
                assert!(
                    e.to_lowercase().contains("venue_b_fee_rate") && e.contains(says),
                    "{bad}: {e}"
                );
                Ok(())
            });
        }
    }

    /// The per-connection limits and the data-silence limit default to the venues' figures and a few
    /// minutes, are read from the file and the environment, and a zero limit is refused by name.
    #[test]
    fn sharding_settings_parse() {
        let c = Config::default();
        assert_eq!(
            (
                c.venue_a_ws_markets_per_connection,
                c.venue_b_ws_assets_per_connection,
                c.feed_data_silence_seconds
            ),
            (1000, 500, 300)
        );
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "c.toml",
                "venue_a_ws_markets_per_connection = 5\nvenue_b_ws_assets_per_connection = 8\nfeed_data_silence_seconds = 0",
            )?;
            jail.set_env("CROSSBOOK_VENUE_B_WS_ASSETS_PER_CONNECTION", "12");
            let c = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap();
            assert_eq!(
                (
                    c.venue_a_ws_markets_per_connection,
                    c.venue_b_ws_assets_per_connection,
                    c.feed_data_silence_seconds
                ),
                (5, 12, 0)
            );
            let ingest = crate::workers::ingest::ingest_config(&c);
            assert_eq!(
                (
                    ingest.venue_a_ws_markets_per_connection,
                    ingest.venue_b_ws_assets_per_connection,
                    ingest.feed_data_silence_seconds
                ),
                (5, 12, 0)
            );
            jail.set_env("CROSSBOOK_VENUE_A_WS_MARKETS_PER_CONNECTION", "0");
            let e = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap_err();
            assert!(e.contains("venue_a_ws_markets_per_connection"), "{e}");
            jail.set_env("CROSSBOOK_VENUE_A_WS_MARKETS_PER_CONNECTION", "many");
            let e = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap_err();
            assert!(e.to_lowercase().contains("venue_a_ws_markets_per_connection"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn bad_values_name_the_key() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("CROSSBOOK_RATE_LIMIT_FREE", "lots");
            let e = Config::load(None, &Flags::default()).unwrap_err();
            // figment names environment keys in upper case ("RATE_LIMIT_FREE in `CROSSBOOK_` environment variable(s)").
            assert!(e.to_lowercase().contains("rate_limit_free"), "{e}");
            Ok(())
        });
        figment::Jail::expect_with(|jail| {
            jail.create_file("c.toml", "no_such_key = 1")?;
            let e = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap_err();
            assert!(e.contains("no_such_key"), "{e}");
            Ok(())
        });
    }

    #[test]
    fn other_crossbook_variables_are_ignored_and_listed() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("CROSSBOOK_WEBHOOK_SECRET", "whsec_x");
            jail.set_env("CROSSBOOK_KEY", "cbk_x");
            jail.set_env("CROSSBOOK_TEST_ANYTHING", "1");
            jail.set_env("CROSSBOOK_SIM_SEED", "9");
            let c = Config::load(None, &Flags::default()).unwrap();
            assert_eq!(c.sim_seed, 9, "a setting's variable is still read");
            let ignored = ignored_environment();
            assert!(ignored.contains(&"CROSSBOOK_WEBHOOK_SECRET".to_string()), "{ignored:?}");
            for not in ["CROSSBOOK_KEY", "CROSSBOOK_TEST_ANYTHING", "CROSSBOOK_SIM_SEED"] {
                assert!(!ignored.contains(&not.to_string()), "{not}: {ignored:?}");
            }
            Ok(())
        });
        for key in [
            "listen",
            "venue_b_fee_rate",
            "snapshot_interval_ms",
            "stream_markets_trader",
        ] {
            assert!(keys().contains(&key), "{key}: {:?}", keys());
        }
    }

    #[test]
    fn an_unknown_file_key_names_the_file_and_lists_the_keys_on_short_lines() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("c.toml", "webhook_secret = \"x\"")?;
            let e = Config::load(Some(Path::new("c.toml")), &Flags::default()).unwrap_err();
            let first = e.lines().next().unwrap();
            assert!(
                first.contains("`webhook_secret`") && first.contains("config file c.toml"),
                "{e}"
            );
            assert!(e.lines().all(|l| l.len() <= 120), "{e}");
            assert!(
                e.lines()
                    .skip(1)
                    .any(|l| l.split_whitespace().any(|w| w == "database_url")),
                "{e}"
            );
            jail.create_file("d.toml", "rate_limit_free = \"lots\"")?;
            let e = Config::load(Some(Path::new("d.toml")), &Flags::default()).unwrap_err();
            assert!(e.contains("\"rate_limit_free\"") && e.contains("d.toml"), "{e}");
            Ok(())
        });
    }
}
