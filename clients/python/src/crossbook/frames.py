"""Recorded data as pandas or polars DataFrames, built through Arrow so that types are set, never guessed.

Every frame has the same rules:
- ids (`market_id`, `asset_id`, `trade_id`, `event_id`) are strings: venue_b token ids are numbers of up to 78
  digits, which a reader that guesses would turn into floats;
- times are UTC timestamps in milliseconds (`datetime64[ms, UTC]` in pandas, `Datetime("ms", "UTC")` in polars);
- prices and sizes are float64, or exact decimals with `exact=True` (prices `decimal(18,4)`, sizes
  `decimal(18,6)`: `Decimal` objects in pandas, `Decimal` columns in polars);
- integer columns that may be missing (`seq`) are nullable integers (`Int64` in pandas);
- gap rows are kept, typed like every other row (`type == "gap"`, with `gap_cause`, `gap_start`, `gap_end`).

pyarrow is needed, and pandas or polars for the frame asked for: `pip install "crossbook[pandas]"` or
`"crossbook[polars]"`.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, Iterator, List, Sequence, Union

from .errors import CrossbookError

FRAMES = ("pandas", "polars", "arrow")


class ReplayError(CrossbookError):
    """The replay ended with an error message (a database failure part-way): what came before is not the range."""


def _pa() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError('frames need pyarrow: pip install "crossbook[pandas]" or "crossbook[polars]"') from e
    return pyarrow


def _ts() -> Any:
    return _pa().timestamp("ms", tz="UTC")


def _money(table: Any, exact: bool, prices: Sequence[str], sizes: Sequence[str]) -> Any:
    """Prices and sizes as float64, or as exact decimals.

    Columns arrive as the service's text (`"0.5300"`), as JSON numbers or as Parquet decimals. Floats are read
    from text, never from a decimal (a decimal scaled by a power of ten is not always the nearest float), and
    decimals from text or from a number rounded to the decimals the service states.
    """
    pa = _pa()
    import pyarrow.compute as pc

    for names, scale in ((prices, 4), (sizes, 6)):
        for name in names:
            if name not in table.column_names:
                continue
            col = table[name]
            if exact:
                if pa.types.is_floating(col.type):
                    col = pc.round(col, scale)
                col = pc.cast(col, pa.decimal128(18, scale))
            else:
                if pa.types.is_decimal(col.type):
                    col = pc.cast(col, pa.string())
                col = pc.cast(col, pa.float64())
            table = table.set_column(table.column_names.index(name), name, col)
    return table


def convert(table: Any, frame: str) -> Any:
    """`table` (Arrow) as the frame asked for: `pandas`, `polars` or `arrow`."""
    if frame == "arrow":
        return table
    if frame == "polars":
        try:
            import polars as pl
        except ImportError as e:
            raise ImportError('frame="polars" needs polars: pip install "crossbook[polars]"') from e
        # The blocks stay chunks: polars reads them as they are, without a copy into one.
        return pl.from_arrow(table, rechunk=False)
    if frame == "pandas":
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError('frame="pandas" needs pandas: pip install "crossbook[pandas]"') from e
        pa = _pa()
        nullable = {pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int32Dtype(), pa.bool_(): pd.BooleanDtype()}
        return table.to_pandas(types_mapper=nullable.get)
    raise ValueError(f"frame must be one of {', '.join(FRAMES)}, not {frame!r}")


# --- replay -----------------------------------------------------------------------------------------------------


def _replay_schema() -> Any:
    pa = _pa()
    ts = _ts()
    level = pa.struct([("price", pa.string()), ("size", pa.float64())])
    change = pa.struct([("side", pa.string()), ("price", pa.string()), ("size", pa.float64())])
    return pa.schema(
        [
            ("type", pa.string()),
            ("exchange", pa.string()),
            ("market_id", pa.string()),
            ("asset_id", pa.string()),
            ("seq", pa.int64()),
            ("venue_ts", ts),
            ("received_at", ts),
            ("bids", pa.list_(level)),
            ("asks", pa.list_(level)),
            ("no_bids", pa.list_(level)),
            ("changes", pa.list_(change)),
            ("trade_id", pa.string()),
            ("taker_side", pa.string()),
            ("outcome", pa.string()),
            ("price", pa.float64()),
            ("size", pa.float64()),
            ("cause", pa.string()),
            ("start", ts),
            ("end", ts),
            ("detail", pa.string()),
        ]
    )


def replay_table(ndjson: Union[bytes, Iterable[bytes]], exact: bool = False) -> Any:
    """A replay's NDJSON as one Arrow table with a row per book level (the export's layout) and per trade or gap.

    A `book_snapshot` gives a row per level (`side` `bid`, `ask` or `no_bid`, best first), or one row without a
    level when the book is empty; a `book_change` a row per changed level (`size` 0 removes it); a `trade` and a
    `gap` one row each. Rows keep the replay's order; a message's rows are consecutive.

    `ndjson` is the whole body, or its pieces as they arrive: blocks of whole lines are then parsed on a
    second thread while the next arrive (Arrow's parser releases the interpreter), so reading and parsing
    overlap and at most a few blocks are held at once.
    """
    pa = _pa()
    if isinstance(ndjson, (bytes, bytearray, memoryview)):
        whole = ndjson
        pieces: Iterable[bytes] = (bytes(whole[i : i + BLOCK_BYTES]) for i in range(0, len(whole), BLOCK_BYTES))
    else:
        pieces = ndjson
    tables = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: List[Any] = []
        for block in _blocks(pieces):
            pending.append(pool.submit(_block_table, block))
            # Two blocks parsing or parsed ahead of the reader bound the memory a long replay holds.
            while len(pending) > 2:
                tables.append(pending.pop(0).result())
        tables += [f.result() for f in pending]
    tables = [t for t in tables if t.num_rows]
    table = pa.concat_tables(tables) if tables else _replay_out_schema().empty_table()
    return _money(table, exact, ["price"], ["size"])


#: Bytes of whole lines parsed at a time.
BLOCK_BYTES = 8 << 20
#: Arrow's JSON reader splits a block into parts of this size, parsed on its threads.
READ_BLOCK_BYTES = 4 << 20


def _blocks(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The pieces regrouped into blocks of whole lines of about `BLOCK_BYTES`."""
    held: List[bytes] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size < BLOCK_BYTES:
            continue
        data = b"".join(held)
        cut = data.rfind(b"\n") + 1
        if cut:
            yield data[:cut]
        held, size = [data[cut:]], len(data) - cut
    data = b"".join(held)
    if data.strip():
        yield data


def _block_table(block: bytes) -> Any:
    pa = _pa()
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.json as pj

    msgs = pj.read_json(
        io.BytesIO(block),
        read_options=pj.ReadOptions(block_size=READ_BLOCK_BYTES),
        parse_options=pj.ParseOptions(explicit_schema=_replay_schema(), unexpected_field_behavior="ignore"),
    )
    # One chunk per column: a `take` over many chunks costs far more than over one.
    msgs = msgs.combine_chunks()
    errors = pc.filter(msgs["detail"], pc.equal(msgs["type"], "error"))
    if len(errors):
        raise ReplayError(f"the replay ended with an error: {errors[0].as_py()}")
    n = msgs.num_rows
    # Each message gives max(1, its levels) rows, consecutive: where its rows start in the output.
    lists = [("bids", "bid"), ("asks", "ask"), ("no_bids", "no_bid"), ("changes", None)]
    arrays = {name: msgs[name].combine_chunks() for name, _ in lists}
    lengths = {name: pc.fill_null(pc.list_value_length(a), 0).to_numpy().astype(np.int64) for name, a in arrays.items()}
    levels = sum(lengths.values())
    rows = np.maximum(levels, 1)
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(rows[:-1], out=first[1:])
    total = int(rows.sum())
    # The level rows, part by part, each with its place in the output; then one row per message without levels.
    before = np.zeros(n, dtype=np.int64)  # levels of the earlier sides of the same snapshot
    parts, places = [], []
    for name, side in lists:
        col = arrays[name]
        flat = col.flatten()
        count = len(flat)
        if count:
            offsets = col.offsets.to_numpy().astype(np.int64)
            parent = pc.list_parent_indices(col).to_numpy().astype(np.int64)
            within = np.arange(count, dtype=np.int64) + offsets[0] - offsets[parent]
            places.append(first[parent] + (before[parent] if side is not None else 0) + within)
            parts.append(
                pa.table(
                    {
                        "side": flat.field("side") if side is None else pa.repeat(pa.scalar(side), count),
                        "price": flat.field("price"),
                        "size": flat.field("size"),
                    }
                )
            )
        if side is not None:
            before += lengths[name]
    single = levels == 0
    if single.any():
        rows_single = msgs.filter(pa.array(single))
        is_trade = pc.equal(rows_single["type"], "trade")
        places.append(first[single])
        parts.append(
            pa.table(
                {
                    "side": pa.nulls(rows_single.num_rows, pa.string()),
                    "price": pc.if_else(
                        is_trade, pc.cast(rows_single["price"], pa.string()), pa.scalar(None, pa.string())
                    ),
                    "size": rows_single["size"],
                }
            )
        )
    if not parts:
        return _replay_out_schema().empty_table()
    # Every row to its place: an inverse permutation, no sort.
    order = np.empty(total, dtype=np.int64)
    order[np.concatenate(places)] = np.arange(total, dtype=np.int64)
    lv = pa.concat_tables([t.cast(parts[-1].schema) for t in parts]).take(pa.array(order))
    head = msgs.select(
        ["type", "exchange", "market_id", "asset_id", "seq", "venue_ts", "received_at"]
        + ["trade_id", "taker_side", "outcome", "cause", "start", "end"]
    ).take(pa.array(np.repeat(np.arange(n, dtype=np.int64), rows)))
    return pa.table(
        {
            **{h: head[h] for h in ("type", "exchange", "market_id", "asset_id", "seq", "venue_ts", "received_at")},
            "side": lv["side"],
            "price": lv["price"],
            "size": lv["size"],
            "trade_id": head["trade_id"],
            "taker_side": head["taker_side"],
            "outcome": head["outcome"],
            "gap_cause": head["cause"],
            "gap_start": head["start"],
            "gap_end": head["end"],
        },
        schema=_replay_out_schema(),
    )


def _replay_out_schema() -> Any:
    pa = _pa()
    ts = _ts()
    fields = [
        ("type", pa.string()),
        ("exchange", pa.string()),
        ("market_id", pa.string()),
        ("asset_id", pa.string()),
        ("seq", pa.int64()),
        ("venue_ts", ts),
        ("received_at", ts),
        ("side", pa.string()),
        ("price", pa.string()),
        ("size", pa.float64()),
        ("trade_id", pa.string()),
        ("taker_side", pa.string()),
        ("outcome", pa.string()),
        ("gap_cause", pa.string()),
        ("gap_start", ts),
        ("gap_end", ts),
    ]
    return pa.schema(fields)


# --- rows of the JSON routes -------------------------------------------------------------------------------------


def _table(rows: List[Dict[str, Any]], fields: List[tuple]) -> Any:
    pa = _pa()
    schema = pa.schema(fields)
    columns = {f.name: [] for f in schema}
    for r in rows:
        for name, values in columns.items():
            values.append(r.get(name))
    arrays = []
    for f in schema:
        values = columns[f.name]
        if f.type == pa.string():
            # Text as sent; a number (a price or an amount) as the shortest text that reads back as it.
            values = [v if v is None or isinstance(v, str) else str(v) for v in values]
        arrays.append(pa.array(values, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def book_rows_table(snapshots: Iterable[Dict[str, Any]], exchange: str, exact: bool = False) -> Any:
    """Order-book history rows as a row per level: the book's time and continuity, `side`, `level` (0 = best)."""
    pa = _pa()
    rows: List[Dict[str, Any]] = []
    for s in snapshots:
        base = {
            "exchange": exchange,
            "market_id": s.get("market_id"),
            "asset_id": s.get("asset_id"),
            "outcome": s.get("outcome"),
            "timestamp": s.get("timestamp"),
            "continuous": s.get("continuous"),
        }
        # venue_a rows name their YES bids `yes_bids`; the frame calls every bid side `bid`, as replays do.
        named = (("bids", "bid"), ("yes_bids", "bid"), ("asks", "ask"), ("no_bids", "no_bid"))
        sides = [(k, name) for k, name in named if s.get(k)]
        if not sides:
            rows.append({**base})
        for key, name in sides:
            for level, lv in enumerate(s[key]):
                rows.append({**base, "side": name, "level": level, "price": lv["price"], "size": lv["size"]})
    fields = [
        ("exchange", pa.string()),
        ("market_id", pa.string()),
        ("asset_id", pa.string()),
        ("outcome", pa.string()),
        ("timestamp", _ts()),
        ("continuous", pa.bool_()),
        ("side", pa.string()),
        ("level", pa.int32()),
        ("price", pa.string()),
        ("size", pa.float64()),
    ]
    return _money(_table(rows, fields), exact, ["price"], ["size"])


def trades_table(trades: Iterable[Dict[str, Any]], exchange: str, exact: bool = False) -> Any:
    pa = _pa()
    rows = [{**t, "exchange": exchange, "executed_at": t.get("timestamp")} for t in trades]
    fields = [
        ("exchange", pa.string()),
        ("market_id", pa.string()),
        ("asset_id", pa.string()),
        ("trade_id", pa.string()),
        ("executed_at", _ts()),
        ("side", pa.string()),
        ("outcome", pa.string()),
        ("price", pa.string()),
        ("size", pa.float64()),
        ("notional", pa.float64()),
        ("transaction_hash", pa.string()),
    ]
    return _money(_table(rows, fields), exact, ["price"], ["size", "notional"])


def ohlcv_table(markets: Iterable[Dict[str, Any]], exact: bool = False) -> Any:
    """A row per market and candle; the market's fields repeated on each of its candles."""
    pa = _pa()
    rows = []
    for m in markets:
        base = {k: m.get(k) for k in ("exchange", "market_id", "event_id", "title", "last_price")}
        for c in m.get("candles", []):
            rows.append({**base, **c, "start": c.get("timestamp")})
    fields = [
        ("exchange", pa.string()),
        ("market_id", pa.string()),
        ("event_id", pa.string()),
        ("title", pa.string()),
        ("start", _ts()),
        ("open", pa.string()),
        ("high", pa.string()),
        ("low", pa.string()),
        ("close", pa.string()),
        ("close_source", pa.string()),
        ("volume", pa.float64()),
        ("volume_usd", pa.float64()),
        ("trade_count", pa.int64()),
        ("last_price", pa.string()),
    ]
    return _money(_table(rows, fields), exact, ["open", "high", "low", "close", "last_price"], ["volume", "volume_usd"])


def export_table(parquet: bytes, exact: bool = False) -> Any:
    """An export file (Parquet) as Arrow; its prices and sizes are exact decimals in the file."""
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(parquet))
    return _money(table, exact, ["price"], ["size"])
