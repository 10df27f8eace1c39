//! `crossbook backtest`: a cross-venue arbitrage backtest run straight from the database, the same run
//! `POST /v1/backtests` starts, with the same assumptions and defaults. The report (JSON) goes to standard
//! output or `--out`; the trades can be written as CSV with `--trades`; a summary goes to standard error.

use std::{path::PathBuf, time::Instant};

use anyhow::Context as _;
use crossbook_core::Timestamp;
use crossbook_server::{
    api::backtests::read_params,
    backtests::{self, render, trades},
    config::Config,
    export::utc_day,
};
use serde_json::{Map, Value};

use super::BadInput;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegOrderArg {
    /// Both legs sent at detection.
    Simultaneous,
    /// The venue_a leg first, the venue_b leg once its fill is known.
    #[value(name = "venue_a_first")]
    VenueAFirst,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingLegArg {
    /// Sell unmatched contracts into their bids at once.
    Unwind,
    /// Hold them to settlement.
    Hold,
}

#[derive(clap::Args, Debug)]
pub struct BacktestArgs {
    /// Range start: Unix milliseconds, an RFC 3339 time or a date (midnight UTC).
    #[arg(long, value_name = "TIME", value_parser = parse_instant)]
    from: Timestamp,
    /// Range end (inclusive), written like --from.
    #[arg(long, value_name = "TIME", value_parser = parse_instant)]
    to: Timestamp,
    /// Take an opportunity when it nets at least this many cents per contract after fees [default: 1].
    #[arg(long, value_name = "CENTS")]
    min_net_cents: Option<String>,
    /// The most one trade may cost, legs and fees, in dollars, or `none` [default: 100].
    #[arg(long, value_name = "DOLLARS")]
    capital_per_trade: Option<String>,
    /// The most all open trades may cost together, in dollars, or `none` [default: 1000].
    #[arg(long, value_name = "DOLLARS")]
    capital_total: Option<String>,
    /// From detection to each leg's order reaching its venue, 0 to 60000 [default: 250].
    #[arg(long, value_name = "MS")]
    latency_ms: Option<i64>,
    /// The order the legs are sent in [default: simultaneous].
    #[arg(long, value_enum)]
    leg_order: Option<LegOrderArg>,
    /// What happens to contracts of one leg the other did not match [default: unwind].
    #[arg(long, value_enum)]
    missing_leg: Option<MissingLegArg>,
    /// venue_b's taker rate per category for this run, e.g. `sports=0.03`; categories not named keep the
    /// configured rates.
    #[arg(long, value_name = "RATES")]
    venue_b_fee_rate: Option<String>,
    /// Only window pairs of this interval (15m, 1h, ...).
    #[arg(long, value_name = "CODE")]
    interval_code: Option<String>,
    /// Write the report here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the trades, one row each, to this CSV file.
    #[arg(long, value_name = "FILE")]
    trades: Option<PathBuf>,
}

fn parse_instant(s: &str) -> Result<Timestamp, String> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let ms: i64 = s.parse().map_err(|_| "too large".to_string())?;
        if ms < crossbook_server::params::MIN_MILLIS {
            return Err(format!(
                "{s} is before 2001 as Unix milliseconds (as seconds, write {s}000)"
            ));
        }
        return Ok(Timestamp::from_millis(ms));
    }
    Timestamp::parse_iso(s)
        .ok()
        .or_else(|| utc_day(s).map(|(from, _)| from))
        .ok_or_else(|| "must be Unix milliseconds, an RFC 3339 time or a date (YYYY-MM-DD)".to_string())
}

/// A number written on the command line, or `none` (null).
fn number(key: &str, s: &str) -> Result<Value, BadInput> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(Value::Null);
    }
    match serde_json::from_str::<Value>(s.trim()) {
        Ok(v @ Value::Number(_)) => Ok(v),
        _ => Err(BadInput(format!("--{}: {s:?} is not a number", key.replace('_', "-")))),
    }
}

/// The flags as the body `POST /v1/backtests` takes, so both read the same way.
fn body(a: &BacktestArgs) -> Result<Value, BadInput> {
    let mut m = Map::new();
    m.insert("from".into(), a.from.millis().into());
    m.insert("to".into(), a.to.millis().into());
    if let Some(v) = &a.min_net_cents {
        m.insert("min_net_cents".into(), number("min_net_cents", v)?);
    }
    if let Some(v) = &a.capital_per_trade {
        m.insert("capital_per_trade_dollars".into(), number("capital_per_trade", v)?);
    }
    if let Some(v) = &a.capital_total {
        m.insert("capital_total_dollars".into(), number("capital_total", v)?);
    }
    if let Some(v) = a.latency_ms {
        m.insert("latency_ms".into(), v.into());
    }
    if let Some(v) = a.leg_order {
        let s = match v {
            LegOrderArg::Simultaneous => "simultaneous",
            LegOrderArg::VenueAFirst => "venue_a_first",
        };
        m.insert("leg_order".into(), s.into());
    }
    if let Some(v) = a.missing_leg {
        let s = match v {
            MissingLegArg::Unwind => "unwind",
            MissingLegArg::Hold => "hold",
        };
        m.insert("missing_leg".into(), s.into());
    }
    if let Some(v) = &a.venue_b_fee_rate {
        m.insert("venue_b_fee_rate".into(), v.clone().into());
    }
    if let Some(v) = &a.interval_code {
        m.insert("interval_code".into(), v.clone().into());
    }
    Ok(Value::Object(m))
}

/// `crossbook backtest`.
pub async fn run(args: BacktestArgs, config: Config) -> anyhow::Result<()> {
    let params = read_params(&body(&args)?, config.venue_b_fee_rate).map_err(|e| BadInput(e.body().detail))?;
    let store = super::open_named_store(&config, false).await?;
    store.migrate().await?;
    let started = Instant::now();
    let report = backtests::run(store, params, None).await?;
    let seconds = started.elapsed().as_secs_f64();
    let json = render::report(&report);
    let text = serde_json::to_string_pretty(&json)?;
    match &args.out {
        Some(path) => std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))?,
        None => println!("{text}"),
    }
    if let Some(path) = &args.trades {
        let rows = json
            .get("trades")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        std::fs::write(path, trades::csv(&rows)).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let s = &report.summary;
    let d = render::dollars;
    eprintln!(
        "{} pairs, {} book events in {seconds:.1} s ({:.0} events/s)\n{} opportunities seen, {} taken: {} filled, \
         {} partial, {} second legs missed, {} skipped for capital, {} across a gap\nP&L net {} dollars (gross {}, \
         fees {}), max drawdown {}, capital used {}; with no latency {} ({} marked to the book)",
        report.pairs,
        report.events,
        report.events as f64 / seconds.max(1e-9),
        report.opportunities_seen,
        s.opportunities_taken,
        s.filled,
        s.partial,
        s.second_legs_missed,
        s.skipped_capital,
        s.skipped_gap,
        d(s.pnl_net),
        d(s.pnl_gross),
        d(s.fees),
        d(s.max_drawdown),
        d(s.capital_used),
        d(report.zero_latency.pnl_net),
        s.marked_trades,
    );
    Ok(())
}
