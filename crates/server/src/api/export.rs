//! `GET /v1/export/books` and `GET /v1/export/trades`: one market's UTC day as a file, gzip-compressed CSV or
//! Parquet ([`crate::export`] reads and writes it). Everything that can be wrong with a request is answered
//! with a 400 or 404 before the first byte of the file.

use axum::{
    extract::{RawQuery, State},
    http::header,
    response::Response,
};
use crossbook_core::{Exchange, Timestamp};
use utoipa::{
    IntoParams, PartialSchema, ToSchema,
    openapi::{KnownFormat, ObjectBuilder, RefOr, Schema, SchemaFormat, Type},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::replay::{replay_market, stream, take_slot};
use crate::{
    AppState,
    access::{Gate, groups},
    error::{ApiError, ApiResult},
    export::{FileFormat, Include, ReplayPlan, file_name, rows::Table, utc_day},
    params::{ParamEnum, QueryMap, Text, text_value},
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(export_books))
        .routes(routes!(export_trades))
}

/// The file formats, as the `format` parameter spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Csv,
    Parquet,
}

impl ParamEnum for ExportFormat {
    const VALUES: &'static [(&'static str, Self)] = &[("csv", ExportFormat::Csv), ("parquet", ExportFormat::Parquet)];
}

impl From<ExportFormat> for FileFormat {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Csv => FileFormat::Csv,
            ExportFormat::Parquet => FileFormat::Parquet,
        }
    }
}

/// A file's bytes (the schema of the export responses).
pub struct FileBytes;

impl PartialSchema for FileBytes {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl ToSchema for FileBytes {}

/// Query parameters of the export routes (for the document; read by [`parse`]).
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct ExportParams {
    /// The market's venue: `venue_a` or `venue_b`.
    #[param(inline)]
    exchange: Exchange,
    /// The market: a venue_a ticker or a venue_b condition id. A venue_b market's file holds both of its
    /// tokens' books (told apart by `asset_id`).
    #[param(inline)]
    market_id: Text,
    /// The day, `YYYY-MM-DD`, in UTC: the file covers 00:00:00.000 to 23:59:59.999. It must be a real
    /// calendar day.
    #[param(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", format = Date)]
    date: String,
    /// `csv` (the default): gzip-compressed CSV, a `.csv.gz` file. `parquet`: a Parquet file with typed columns.
    #[param(inline)]
    format: Option<ExportFormat>,
}

/// What a valid request asks for.
#[derive(Debug, PartialEq)]
struct Parsed {
    exchange: Exchange,
    market_id: String,
    date: String,
    /// The day's first and last millisecond.
    day: (Timestamp, Timestamp),
    format: FileFormat,
}

fn parse(q: &QueryMap) -> ApiResult<Parsed> {
    let exchange: Exchange = q.one_of("exchange")?.ok_or_else(|| ApiError::missing("exchange"))?;
    let market_id = text_value(
        "market_id",
        q.raw("market_id").ok_or_else(|| ApiError::missing("market_id"))?,
    )?;
    let date = q.raw("date").ok_or_else(|| ApiError::missing("date"))?;
    let day = utc_day(date).ok_or_else(|| {
        ApiError::invalid(
            "date",
            "date must be a calendar day written YYYY-MM-DD (e.g. 2026-11-24)",
        )
    })?;
    let format = q.one_of::<ExportFormat>("format")?.unwrap_or(ExportFormat::Csv).into();
    Ok(Parsed {
        exchange,
        market_id,
        date: date.to_string(),
        day,
        format,
    })
}

async fn export(
    state: AppState,
    gate: Gate<groups::Historical>,
    raw: Option<String>,
    table: Table,
) -> ApiResult<Response> {
    let q = QueryMap::parse(raw.as_deref().unwrap_or(""))?;
    let p = parse(&q)?;
    let (from, to) = p.day;
    let market = replay_market(&state, p.exchange, &p.market_id).await?;
    let name = file_name(p.exchange, &market.market_id, &p.date, table, p.format);
    let plan = ReplayPlan {
        markets: vec![market],
        from,
        to,
        include: match table {
            Table::Books => Include::BOOKS,
            Table::Trades => Include::TRADES,
        },
    };
    let enc = p.format.encoder(table).map_err(ApiError::internal)?;
    let slot = take_slot(&state, &gate)?;
    Ok(stream(
        &state,
        slot,
        plan,
        enc,
        p.format.media_type(),
        &[(header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\""))],
    ))
}

/// Export a day of order books
///
/// One market's recorded order books over one UTC day, as a file: one row per changed level, in time order
/// (the layout of Tardis's `incremental_book_L2`). Columns: `exchange`, `market_id`, `asset_id` (the venue_b
/// token; empty on venue_a), `seq` (the book's event number), `venue_ts` (the venue's time, where known),
/// `received_at`, `is_snapshot`, `side` (`bid`, `ask` or `no_bid`), `price`, `size` (the level's new size; 0
/// removes it), `gap` and `gap_end`.
///
/// Each book starts with its whole state at midnight: rows with `is_snapshot` true, one per level (a book
/// with no levels is one row without a level). A row whose `gap` names a cause (as on the gaps route, or
/// `unreadable` for stored events that could not be decoded) says the book lost continuity at `received_at`
/// until `gap_end` (empty while it lasts past the day); the book's next rows are a snapshot. A day with no
/// data is a file with the columns and no rows.
///
/// CSV (`format=csv`, the default) is a gzip-compressed file (`.csv.gz`, served as `application/gzip`):
/// times ISO 8601 UTC with milliseconds, prices with 4 decimals, sizes with 6, an empty field for a missing
/// value. Parquet (`format=parquet`) has typed columns: timestamps in milliseconds UTC, prices decimal(18,4),
/// sizes decimal(18,6), `seq` int64, `is_snapshot` boolean, text UTF-8. The file is sent as it is written;
/// a download cut short by a failure is not a readable file.
#[utoipa::path(
    get,
    path = "/v1/export/books",
    tag = "historical",
    params(ExportParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The file, named in `Content-Disposition`.",
         content((FileBytes = "application/gzip"), (FileBytes = "application/vnd.apache.parquet"))),
        (status = 404, description = "A market_id that is not in the catalog.", body = crate::error::ErrorBody),
    )
)]
async fn export_books(
    State(state): State<AppState>,
    gate: Gate<groups::Historical>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    export(state, gate, raw, Table::Books).await
}

/// Export a day of trades
///
/// One market's recorded trades over one UTC day, as a file, one row per trade in execution order. Columns:
/// `exchange`, `market_id`, `asset_id` (the venue_b token traded; empty on venue_a), `trade_id` (the venue's),
/// `executed_at`, `taker_side` (`buy` or `sell`), `outcome` (`YES` or `NO`), `price` and `size`. A day with no
/// trades is a file with the columns and no rows.
///
/// CSV (`format=csv`, the default) is a gzip-compressed file (`.csv.gz`, served as `application/gzip`):
/// times ISO 8601 UTC with milliseconds, prices with 4 decimals, sizes with 6. Parquet (`format=parquet`) has
/// typed columns: `executed_at` a timestamp in milliseconds UTC, prices decimal(18,4), sizes decimal(18,6),
/// text UTF-8.
#[utoipa::path(
    get,
    path = "/v1/export/trades",
    tag = "historical",
    params(ExportParams),
    security(("api_key" = [])),
    responses(
        (status = 200, description = "The file, named in `Content-Disposition`.",
         content((FileBytes = "application/gzip"), (FileBytes = "application/vnd.apache.parquet"))),
        (status = 404, description = "A market_id that is not in the catalog.", body = crate::error::ErrorBody),
    )
)]
async fn export_trades(
    State(state): State<AppState>,
    gate: Gate<groups::Historical>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    export(state, gate, raw, Table::Trades).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param_of(raw: &str) -> String {
        let q = QueryMap::parse(raw).unwrap();
        let e = parse(&q).expect_err("an error");
        e.body().param.clone().unwrap_or_default()
    }

    #[test]
    fn requests_are_checked_before_anything_is_read() {
        let q = QueryMap::parse("exchange=venue_b&market_id=0xAB&date=2026-11-24&format=parquet").unwrap();
        assert_eq!(
            parse(&q).unwrap(),
            Parsed {
                exchange: Exchange::VenueB,
                market_id: "0xAB".into(),
                date: "2026-11-24".into(),
                day: utc_day("2026-11-24").unwrap(),
                format: FileFormat::Parquet,
            }
        );
        let q = QueryMap::parse("exchange=venue_a&market_id=A&date=2026-11-24").unwrap();
        assert_eq!(parse(&q).unwrap().format, FileFormat::Csv, "CSV is the default");
        assert_eq!(param_of("market_id=A&date=2026-11-24"), "exchange");
        assert_eq!(param_of("exchange=venue_a&date=2026-11-24"), "market_id");
        assert_eq!(param_of("exchange=venue_a&market_id=A"), "date");
        for bad in [
            "2026-02-30",
            "2026-11-24T00:00:00Z",
            "24-11-2026",
            "2026-1-4",
            "yesterday",
            "",
        ] {
            assert_eq!(
                param_of(&format!("exchange=venue_a&market_id=A&date={bad}")),
                "date",
                "{bad:?}"
            );
        }
        assert_eq!(
            param_of("exchange=venue_a&market_id=A&date=2026-11-24&format=xlsx"),
            "format"
        );
    }
}
