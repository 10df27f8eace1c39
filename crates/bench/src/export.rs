//! `export`: `GET /v1/export/books` of one book-day over HTTP. Seeds a UTC day of one book at `--rate` changes a
//! second through the ingest writer (as `replay` does), then downloads the day's file `--runs` times in each
//! format and reports the median time, the file size and the rows (the CSV's lines, read back).

use std::{io::Read as _, time::Instant};

use clap::Args;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Database (sqlite://… is recreated; on postgres://… the log tables are emptied first).
    #[arg(long, default_value = "sqlite:///tmp/crossbook-bench-export.db")]
    database_url: String,
    /// Changes per second of the book.
    #[arg(long, default_value_t = 10)]
    rate: u32,
    /// Downloads of each format; the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

pub async fn run(args: ExportArgs) -> anyhow::Result<()> {
    let seeded = crate::replay::seed_and_serve(&args.database_url, 1, args.rate).await?;
    let date = crossbook_core::Timestamp::from_millis(seeded.start).to_iso()[..10].to_string();
    let client = reqwest::Client::new();
    for format in ["parquet", "csv"] {
        let url = format!(
            "http://{}/v1/export/books?exchange=venue_a&market_id={}&date={date}&format={format}",
            seeded.addr, seeded.keys[0]
        );
        let mut times = Vec::new();
        let mut body = Vec::new();
        for _ in 0..args.runs.max(1) {
            let t = Instant::now();
            let resp = client.get(&url).header("x-api-key", &seeded.api_key).send().await?;
            anyhow::ensure!(resp.status().is_success(), "export: status {}", resp.status());
            body = resp.bytes().await?.to_vec();
            times.push(t.elapsed());
        }
        times.sort();
        let rows = if format == "csv" {
            let mut text = String::new();
            flate2::read::GzDecoder::new(body.as_slice()).read_to_string(&mut text)?;
            format!("{} rows", text.lines().count().saturating_sub(1))
        } else {
            "rows as the CSV".to_string()
        };
        println!(
            "export of one book-day ({} changes) to {format}: median {:.2} s of {} (min {:.2}, max {:.2}); file {:.1} MiB, {rows}",
            seeded.per_book,
            times[times.len() / 2].as_secs_f64(),
            times.len(),
            times[0].as_secs_f64(),
            times[times.len() - 1].as_secs_f64(),
            body.len() as f64 / (1024.0 * 1024.0),
        );
    }
    seeded.stop().await
}
