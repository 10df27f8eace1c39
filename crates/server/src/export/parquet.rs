//! Parquet: the rows of [`super::rows`] in typed columns. Text is UTF-8 (`exchange`, ids, `side`, `gap`),
//! times are timestamps in milliseconds UTC, prices decimals with 4 places and sizes decimals with 6 (both
//! stored as 64-bit integers: exact), `seq` a 64-bit integer and `is_snapshot` a boolean. Rows go out in row
//! groups of [`ROW_GROUP_ROWS`], Snappy-compressed; the footer comes last, so a cut-short download is not a
//! readable file.

use std::sync::Arc;

use ::parquet::{
    basic::{Compression, Encoding, LogicalType, Repetition, TimeUnit, Type as Physical},
    data_type::{BoolType, ByteArray, ByteArrayType, Int64Type},
    errors::ParquetError,
    file::{properties::WriterProperties, writer::SerializedFileWriter},
    schema::types::{ColumnPath, Type},
};
use crossbook_core::Timestamp;
use tokio_util::bytes::Bytes;

use super::{
    Encoder, Message,
    rows::{Table, book_rows, trade_row},
};

/// Rows per row group: large enough for good compression and fast scans, small enough that a writer holds
/// a few MiB.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Text,
    Time,
    /// A decimal with this many places, stored as an integer of that many places.
    Decimal(i32),
    Int,
    Bool,
}

/// One column's values of the current row group.
enum Values {
    Text(Vec<ByteArray>),
    Int(Vec<i64>),
    Bool(Vec<bool>),
}

struct Column {
    optional: bool,
    values: Values,
    /// Definition levels of an optional column: 1 where a value is present.
    defs: Vec<i16>,
}

impl Column {
    fn text(&mut self, v: Option<ByteArray>) {
        self.def(v.is_some());
        if let (Values::Text(vals), Some(v)) = (&mut self.values, v) {
            vals.push(v);
        }
    }
    fn int(&mut self, v: Option<i64>) {
        self.def(v.is_some());
        if let (Values::Int(vals), Some(v)) = (&mut self.values, v) {
            vals.push(v);
        }
    }
    fn bool(&mut self, v: bool) {
        self.def(true);
        if let Values::Bool(vals) = &mut self.values {
            vals.push(v);
        }
    }
    fn def(&mut self, present: bool) {
        if self.optional {
            self.defs.push(i16::from(present));
        }
    }
    fn clear(&mut self) {
        self.defs.clear();
        match &mut self.values {
            Values::Text(v) => v.clear(),
            Values::Int(v) => v.clear(),
            Values::Bool(v) => v.clear(),
        }
    }
}

/// (name, kind, optional) of each column of `table`, in [`Table::columns`] order.
fn layout(table: Table) -> Vec<(&'static str, Kind, bool)> {
    use Kind::*;
    let kinds: &[(Kind, bool)] = match table {
        Table::Books => &[
            (Text, false),      // exchange
            (Text, false),      // market_id
            (Text, true),       // asset_id
            (Int, false),       // seq
            (Time, true),       // venue_ts
            (Time, false),      // received_at
            (Bool, false),      // is_snapshot
            (Text, true),       // side
            (Decimal(4), true), // price
            (Decimal(6), true), // size
            (Text, true),       // gap
            (Time, true),       // gap_end
        ],
        Table::Trades => &[
            (Text, false),       // exchange
            (Text, false),       // market_id
            (Text, true),        // asset_id
            (Text, false),       // trade_id
            (Time, false),       // executed_at
            (Text, false),       // taker_side
            (Text, false),       // outcome
            (Decimal(4), false), // price
            (Decimal(6), false), // size
        ],
    };
    table
        .columns()
        .iter()
        .zip(kinds)
        .map(|(name, (kind, optional))| (*name, *kind, *optional))
        .collect()
}

/// The Parquet schema of `table`.
fn schema(table: Table) -> Result<Type, ParquetError> {
    let mut fields = Vec::new();
    for (name, kind, optional) in layout(table) {
        let (physical, logical) = match kind {
            Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
            Kind::Time => (Physical::INT64, Some(LogicalType::timestamp(true, TimeUnit::MILLIS))),
            Kind::Decimal(scale) => (Physical::INT64, Some(LogicalType::decimal(scale, 18))),
            Kind::Int => (Physical::INT64, None),
            Kind::Bool => (Physical::BOOLEAN, None),
        };
        let mut b = Type::primitive_type_builder(name, physical)
            .with_repetition(if optional {
                Repetition::OPTIONAL
            } else {
                Repetition::REQUIRED
            })
            .with_logical_type(logical);
        if let Kind::Decimal(scale) = kind {
            b = b.with_precision(18).with_scale(scale);
        }
        fields.push(Arc::new(b.build()?));
    }
    Type::group_type_builder("schema").with_fields(fields).build()
}

/// The Parquet encoder: rows of `table` gathered into row groups.
pub struct Parquet {
    table: Table,
    writer: Option<SerializedFileWriter<Vec<u8>>>,
    columns: Vec<Column>,
    rows: usize,
    /// Strings seen before (exchange, market and token ids repeat on every row), shared instead of copied.
    interned: Vec<Bytes>,
    error: Option<ParquetError>,
}

impl Parquet {
    pub fn new(table: Table) -> Result<Self, ParquetError> {
        let mut props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("crossbook {}", env!("CARGO_PKG_VERSION")));
        // Times and sequence numbers rise row by row: stored as differences they take a byte or two a row,
        // where a dictionary of mostly distinct values takes eight.
        for (name, kind, _) in layout(table) {
            if matches!(kind, Kind::Time | Kind::Int) {
                props = props
                    .set_column_dictionary_enabled(ColumnPath::from(name), false)
                    .set_column_encoding(ColumnPath::from(name), Encoding::DELTA_BINARY_PACKED);
            }
        }
        let props = props.build();
        let writer = SerializedFileWriter::new(Vec::new(), Arc::new(schema(table)?), Arc::new(props))?;
        let columns = layout(table)
            .into_iter()
            .map(|(_, kind, optional)| Column {
                optional,
                values: match kind {
                    Kind::Text => Values::Text(Vec::new()),
                    Kind::Bool => Values::Bool(Vec::new()),
                    _ => Values::Int(Vec::new()),
                },
                defs: Vec::new(),
            })
            .collect();
        Ok(Parquet {
            table,
            writer: Some(writer),
            columns,
            rows: 0,
            interned: Vec::new(),
            error: None,
        })
    }

    fn text(&mut self, s: &str) -> ByteArray {
        if let Some(b) = self.interned.iter().find(|b| b.as_ref() == s.as_bytes()) {
            return ByteArray::from(b.clone());
        }
        let b = Bytes::copy_from_slice(s.as_bytes());
        if self.interned.len() < 16 {
            self.interned.push(b.clone());
        }
        ByteArray::from(b)
    }

    fn row_group(&mut self) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| ParquetError::General("the file is already closed".into()))?;
        let mut rg = writer.next_row_group()?;
        for col in &self.columns {
            let mut w = rg
                .next_column()?
                .ok_or_else(|| ParquetError::General("more columns than the schema".into()))?;
            let defs = col.optional.then_some(col.defs.as_slice());
            match &col.values {
                Values::Text(v) => w.typed::<ByteArrayType>().write_batch(v, defs, None)?,
                Values::Int(v) => w.typed::<Int64Type>().write_batch(v, defs, None)?,
                Values::Bool(v) => w.typed::<BoolType>().write_batch(v, defs, None)?,
            };
            w.close()?;
        }
        rg.close()?;
        writer.flush()?;
        for c in &mut self.columns {
            c.clear();
        }
        self.rows = 0;
        Ok(())
    }

    fn add(&mut self, m: &Message<'_>) -> Result<(), ParquetError> {
        let time = |t: Timestamp| t.millis();
        match self.table {
            Table::Books => {
                let mut rows = Vec::new();
                book_rows(m, |r| rows.push(r));
                for r in rows {
                    let exchange = self.text(r.exchange.as_str());
                    let market = self.text(r.market_id);
                    let asset = r.asset_id.map(|a| self.text(a));
                    let side = r
                        .level
                        .map(|(s, _, _)| ByteArray::from(Bytes::from_static(s.as_bytes())));
                    let gap = r.gap.map(|g| self.text(g));
                    let c = &mut self.columns;
                    c[0].text(Some(exchange));
                    c[1].text(Some(market));
                    c[2].text(asset);
                    c[3].int(Some(r.seq as i64));
                    c[4].int(r.venue_ts.map(time));
                    c[5].int(Some(time(r.received_at)));
                    c[6].bool(r.is_snapshot);
                    c[7].text(side);
                    c[8].int(
                        r.level
                            .map(|(_, p, _)| crossbook_core::money::round_half_up(p.micros(), 2)),
                    );
                    c[9].int(r.level.map(|(_, _, s)| s.micros()));
                    c[10].text(gap);
                    c[11].int(r.gap_end.map(time));
                    self.rows += 1;
                }
            }
            Table::Trades => {
                if let Some(r) = trade_row(m) {
                    let exchange = self.text(r.exchange.as_str());
                    let market = self.text(r.market_id);
                    let asset = r.asset_id.map(|a| self.text(a));
                    let c = &mut self.columns;
                    c[0].text(Some(exchange));
                    c[1].text(Some(market));
                    c[2].text(asset);
                    c[3].text(Some(ByteArray::from(r.trade_id.as_bytes().to_vec())));
                    c[4].int(Some(time(r.executed_at)));
                    c[5].text(Some(ByteArray::from(Bytes::from_static(r.taker_side.as_bytes()))));
                    c[6].text(Some(ByteArray::from(Bytes::from_static(r.outcome.as_bytes()))));
                    c[7].int(Some(crossbook_core::money::round_half_up(r.price.micros(), 2)));
                    c[8].int(Some(r.size.micros()));
                    self.rows += 1;
                }
            }
        }
        if self.rows >= ROW_GROUP_ROWS {
            self.row_group()?;
        }
        Ok(())
    }
}

fn io(e: ParquetError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl Encoder for Parquet {
    fn message(&mut self, m: &Message<'_>) {
        if self.error.is_none()
            && let Err(e) = self.add(m)
        {
            self.error = Some(e);
        }
    }

    fn ready(&self) -> usize {
        self.writer.as_ref().map_or(0, |w| w.inner().len())
    }

    fn take(&mut self) -> Vec<u8> {
        self.writer
            .as_mut()
            .map(|w| std::mem::take(w.inner_mut()))
            .unwrap_or_default()
    }

    fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        if let Some(e) = self.error.take() {
            return Err(io(e));
        }
        self.row_group().map_err(io)?;
        let writer = self
            .writer
            .take()
            .ok_or_else(|| std::io::Error::other("the file is already closed"))?;
        writer.into_inner().map_err(io)
    }

    fn failed(&mut self, _detail: &str) -> Option<Vec<u8>> {
        None
    }
}
