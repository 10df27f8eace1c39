//! `crossbook export`: one market's UTC day of books or trades written to a file straight from the database,
//! the same file `GET /v1/export/{books|trades}` serves. The file appears under its name only once complete
//! (it is written as `NAME.partial` and renamed), and a terminal shows a progress bar through the day.

use std::{
    io::{IsTerminal as _, Write as _},
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::Duration,
};

use anyhow::Context as _;
use crossbook_core::{Exchange, Timestamp};
use crossbook_server::{
    config::Config,
    export::{self, Ended, FileFormat, Include, ReplayMarket, ReplayPlan, file_name, rows::Table, utc_day},
};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    /// Order books: one row per changed level, snapshots and gaps marked.
    Books,
    /// Trades: one row per trade.
    Trades,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Gzip-compressed CSV (.csv.gz).
    Csv,
    /// Parquet with typed columns.
    Parquet,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Venue {
    #[value(name = "venue_a")]
    VenueA,
    #[value(name = "venue_b")]
    VenueB,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// What to export.
    #[arg(long, value_enum, default_value = "books")]
    data: Data,
    /// The market's venue.
    #[arg(long, value_enum)]
    exchange: Venue,
    /// The market: a venue_a ticker or a venue_b condition id (a venue_b market's books file holds both tokens).
    #[arg(long, value_name = "MARKET_ID")]
    market: String,
    /// The UTC day, YYYY-MM-DD.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_date)]
    date: Day,
    /// The file format.
    #[arg(long, value_enum, default_value = "csv")]
    format: Format,
    /// Where to write the file (default: venue_market_date_data.csv.gz or .parquet in the current directory).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// A UTC day as written and its first and last millisecond.
#[derive(Clone, Debug)]
struct Day {
    text: String,
    from: Timestamp,
    to: Timestamp,
}

fn parse_date(s: &str) -> Result<Day, String> {
    let (from, to) =
        utc_day(s).ok_or_else(|| "must be a calendar day written YYYY-MM-DD (e.g. 2026-11-24)".to_string())?;
    Ok(Day {
        text: s.to_string(),
        from,
        to,
    })
}

/// `crossbook export`.
pub async fn run(args: ExportArgs, config: Config) -> anyhow::Result<()> {
    let exchange = match args.exchange {
        Venue::VenueA => Exchange::VenueA,
        Venue::VenueB => Exchange::VenueB,
    };
    let (table, include) = match args.data {
        Data::Books => (Table::Books, Include::BOOKS),
        Data::Trades => (Table::Trades, Include::TRADES),
    };
    let format = match args.format {
        Format::Csv => FileFormat::Csv,
        Format::Parquet => FileFormat::Parquet,
    };
    let (from, to) = (args.date.from, args.date.to);
    let store = super::open_named_store(&config, false).await?;
    store.migrate().await?;
    let market = store
        .get_market(exchange, args.market.trim())
        .await?
        .with_context(|| format!("no market {} on {exchange} in the catalog", args.market.trim()))?
        .market;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from(file_name(exchange, &market.market_id, &args.date.text, table, format)));
    let partial = PathBuf::from(format!("{}.partial", out.display()));
    let plan = ReplayPlan {
        markets: vec![ReplayMarket::of(market)],
        from,
        to,
        include,
    };
    let enc = format.encoder(table)?;

    let mut file = std::io::BufWriter::new(
        std::fs::File::create(&partial).with_context(|| format!("cannot create {}", partial.display()))?,
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    let progress = Arc::new(AtomicI64::new(from.millis()));
    let task = tokio::spawn(export::run_observed(store, plan, enc, tx, Some(progress.clone())));
    let bar = Bar {
        show: std::io::stderr().is_terminal(),
        from: from.millis(),
        to: to.millis(),
    };
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut written = 0u64;
    let result: anyhow::Result<()> = async {
        loop {
            tokio::select! {
                piece = rx.recv() => match piece {
                    Some(Ok(bytes)) => {
                        file.write_all(&bytes).with_context(|| format!("cannot write {}", partial.display()))?;
                        written += bytes.len() as u64;
                    }
                    Some(Err(e)) => anyhow::bail!("the export failed: {e}"),
                    None => break,
                },
                // Redrawn only on a terminal; elsewhere the tick is never awaited.
                _ = tick.tick(), if bar.show => bar.draw(progress.load(Ordering::Relaxed), written),
            }
        }
        Ok(())
    }
    .await;
    let (ended, messages) = task.await.context("the export task failed")?;
    bar.clear();
    if let Err(e) = result.and_then(|()| {
        anyhow::ensure!(ended == Ended::Complete, "the export ended early ({})", ended.as_str());
        file.flush()
            .with_context(|| format!("cannot write {}", partial.display()))?;
        Ok(())
    }) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    drop(file);
    std::fs::rename(&partial, &out)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), out.display()))?;
    println!(
        "wrote {} ({}, {messages} {} through the day)",
        out.display(),
        human_bytes(written),
        match table {
            Table::Books => "book messages",
            Table::Trades => "trades",
        }
    );
    Ok(())
}

/// The progress bar on standard error: how far through the day the export is, and the bytes written.
struct Bar {
    show: bool,
    from: i64,
    to: i64,
}

impl Bar {
    fn draw(&self, at: i64, written: u64) {
        let done = ((at - self.from) as f64 / (self.to - self.from + 1) as f64).clamp(0.0, 1.0);
        let width = 30;
        let filled = (done * width as f64).round() as usize;
        eprint!(
            "\r[{}{}] {:>3.0}% of the day  {}   ",
            "#".repeat(filled),
            ".".repeat(width - filled),
            done * 100.0,
            human_bytes(written)
        );
        let _ = std::io::stderr().flush();
    }

    fn clear(&self) {
        if self.show {
            eprint!("\r{:60}\r", "");
        }
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}
