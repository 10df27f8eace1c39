//! OHLCV aggregates ([`crossbook_core::candle`]): written beside the trades they sum, in the same
//! transaction, by each backend's insert; read here for both. The upsert differs only in the spelling of
//! two-argument min/max (`MIN`/`MAX` on SQLite, `LEAST`/`GREATEST` on PostgreSQL).

use crossbook_core::{
    Amount, Exchange, Price, Timestamp,
    candle::{Candle, Span},
};

use crate::{StoreResult, backend::Exec, codec::Cols, sql::Sql};

/// The upsert of one aggregate, for a dialect's two-argument min and max, as a literal (sqlx takes only
/// `'static` SQL text). The stored row is the earlier-inserted side of [`Candle::merge`]: `SET` reads the row as
/// it was before the update.
macro_rules! upsert_sql {
    ($least:literal, $greatest:literal, $values:literal) => {
        concat!(
            "INSERT INTO trade_candles (exchange, market_id, bucket_ms, bucket_start, open_price, open_at, ",
            "high_price, low_price, close_price, close_at, volume, notional, trade_count) ",
            $values,
            " ON CONFLICT (exchange, market_id, bucket_ms, bucket_start) DO UPDATE SET ",
            "open_price = CASE WHEN excluded.open_at < trade_candles.open_at THEN excluded.open_price ",
            "ELSE trade_candles.open_price END, ",
            "open_at = ",
            $least,
            "(trade_candles.open_at, excluded.open_at), ",
            "high_price = ",
            $greatest,
            "(trade_candles.high_price, excluded.high_price), ",
            "low_price = ",
            $least,
            "(trade_candles.low_price, excluded.low_price), ",
            "close_price = CASE WHEN excluded.close_at >= trade_candles.close_at THEN excluded.close_price ",
            "ELSE trade_candles.close_price END, ",
            "close_at = ",
            $greatest,
            "(trade_candles.close_at, excluded.close_at), ",
            "volume = trade_candles.volume + excluded.volume, ",
            "notional = trade_candles.notional + excluded.notional, ",
            "trade_count = trade_candles.trade_count + excluded.trade_count"
        )
    };
}
pub(super) use upsert_sql;

/// The stored aggregates of one market and span starting in `[from, to)`, oldest first.
pub(super) async fn read<E: Exec>(
    ex: &E,
    exchange: Exchange,
    market_id: &str,
    span: Span,
    from: Timestamp,
    to: Timestamp,
) -> StoreResult<Vec<Candle>> {
    let mut sql = Sql::new(
        "SELECT bucket_start, open_price, open_at, high_price, low_price, close_price, close_at, volume, notional, \
         trade_count FROM trade_candles WHERE exchange = ",
    );
    sql.text(exchange.as_str())
        .push(" AND market_id = ")
        .text(market_id)
        .push(" AND bucket_ms = ")
        .int(span.millis())
        .push(" AND bucket_start >= ")
        .int(from.millis())
        .push(" AND bucket_start < ")
        .int(to.millis())
        .push(" ORDER BY bucket_start");
    ex.rows(&sql).await?.iter().map(candle).collect()
}

fn candle(r: &impl Cols) -> StoreResult<Candle> {
    Ok(Candle {
        start: Timestamp::from_millis(r.int("bucket_start")?),
        open: Price::from_micros(r.int("open_price")?),
        open_at: Timestamp::from_millis(r.int("open_at")?),
        high: Price::from_micros(r.int("high_price")?),
        low: Price::from_micros(r.int("low_price")?),
        close: Price::from_micros(r.int("close_price")?),
        close_at: Timestamp::from_millis(r.int("close_at")?),
        volume: Amount::from_micros(r.int("volume")?),
        notional: Amount::from_micros(r.int("notional")?),
        trades: r.int("trade_count")?,
    })
}
