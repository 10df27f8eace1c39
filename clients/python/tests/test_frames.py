"""Frames of every venue, with the documented types; books rebuilt from a replay match the top-of-book route."""

import bisect
import datetime as dt
from decimal import Decimal

import pandas as pd
import polars as pl
import pytest

import crossbook
from crossbook import books, frames


UTC_MS_PANDAS = "datetime64[ms, UTC]"
UTC_MS_POLARS = pl.Datetime("ms", "UTC")


def is_text(dtype) -> bool:
    return pd.api.types.is_string_dtype(dtype)


@pytest.fixture(scope="module")
def window(env):
    # From before the first process recorded to after the second began: the restart between them is a gap
    # inside, and every event of the range is stored (the log is written a moment after it is received).
    return env.recorded_from - 60_000, env.recorded_to


@pytest.fixture(scope="module")
def replay_pl(env, free, window):
    return free.replay([f"venue_a:{env.market_a}", f"venue_b:{env.market_b}"], *window, frame="polars")


def test_a_replay_frame_keeps_every_message_typed_with_ids_as_text(env, free, window, replay_pl):
    f = replay_pl
    assert f.schema["market_id"] == pl.String and f.schema["asset_id"] == pl.String
    assert f.schema["seq"] == pl.Int64 and f.schema["price"] == pl.Float64 and f.schema["size"] == pl.Float64
    for col in ("venue_ts", "received_at", "gap_start", "gap_end"):
        assert f.schema[col] == UTC_MS_POLARS, col
    kinds = set(f["type"].unique().to_list())
    assert {"book_snapshot", "book_change", "trade", "gap"} <= kinds, kinds
    # venue_b token ids whole (78-digit numbers as text), none on venue_a.
    tokens = f.filter(pl.col("exchange") == "venue_b")["asset_id"].unique().to_list()
    assert len(tokens) == 2 and all(t.isdigit() and len(t) > 60 for t in tokens), tokens
    assert (
        f.filter(pl.col("exchange") == "venue_a")["asset_id"].null_count()
        == f.filter(pl.col("exchange") == "venue_a").height
    )
    # The restart between the two processes: a typed gap row per book, then that book's snapshot.
    gaps = f.filter(pl.col("type") == "gap")
    assert set(gaps["gap_cause"].to_list()) >= {"restart"}, gaps
    assert gaps["gap_start"].null_count() == 0 and gaps["seq"].null_count() == 0
    restart = gaps.filter(pl.col("gap_cause") == "restart")
    assert {(r["exchange"], r["asset_id"]) for r in restart.iter_rows(named=True)} >= {("venue_a", None)} | {
        ("venue_b", t) for t in tokens
    }
    # Trades: their price and size, the taker's side and the outcome.
    trades = f.filter(pl.col("type") == "trade")
    assert trades["trade_id"].null_count() == 0 and trades["price"].is_between(0, 1).all()
    assert set(trades["outcome"].unique().to_list()) <= {"YES", "NO"}
    # Book levels: a side, a price in [0, 1] and a size.
    levels = f.filter(pl.col("type").is_in(["book_snapshot", "book_change"]) & pl.col("side").is_not_null())
    assert set(levels["side"].unique().to_list()) == {"bid", "ask", "no_bid"}
    assert levels["price"].is_between(0, 1).all() and (levels["size"] >= 0).all()
    # Messages are in time order, and each book's event numbers grow.
    assert f["received_at"].is_sorted()
    for (_, _), g in f.filter(pl.col("seq").is_not_null()).group_by(["market_id", "asset_id"]):
        assert g["seq"].is_sorted()

    # The same replay as pandas: the same rows, the same types in pandas' terms.
    p = free.replay([f"venue_a:{env.market_a}", f"venue_b:{env.market_b}"], *window, frame="pandas")
    assert len(p) >= f.height
    assert is_text(p["asset_id"].dtype) and is_text(p["market_id"].dtype) and is_text(p["trade_id"].dtype)
    assert str(p["received_at"].dtype) == UTC_MS_PANDAS and str(p["gap_start"].dtype) == UTC_MS_PANDAS
    assert str(p["seq"].dtype) == "Int64" and str(p["price"].dtype) == "float64"
    assert set(p.loc[p["exchange"] == "venue_b", "asset_id"].unique()) == set(tokens)


def test_exact_frames_carry_decimals(env, free, window):
    f = free.replay(f"venue_b:{env.market_b}", *window, frame="polars", exact=True)
    assert f.schema["price"] == pl.Decimal(18, 4) and f.schema["size"] == pl.Decimal(18, 6)
    p = free.replay(env.market_a, *window, exchange="venue_a", frame="pandas", exact=True)
    prices = p["price"].dropna()
    assert len(prices) and all(isinstance(v, Decimal) and v == v.quantize(Decimal("0.0001")) for v in prices)


def test_history_trade_and_candle_frames_of_both_venues(env, free, window):
    start, end = window
    for exchange, market in (("venue_a", env.market_a), ("venue_b", env.market_b)):
        ob = free.orderbook_history(exchange, market, start, end, granularity="10s", frame="polars")
        assert ob.height > 0 and ob.schema["timestamp"] == UTC_MS_POLARS and ob.schema["level"] == pl.Int32
        assert ob.schema["asset_id"] == pl.String and ob.schema["continuous"] == pl.Boolean
        # One row per level: the best level of each side is level 0, and bids fall as levels rise.
        best = ob.filter((pl.col("side") == "bid") & (pl.col("level") == 0))
        assert best.height > 0
        # The route's own rows, read page by page, give the same levels.
        routed = list(
            free.iterate(
                getattr(free, f"{exchange}_orderbook"),
                market_id=market,
                start_time=start,
                end_time=end,
                granularity="10s",
                limit=200,
            )
        )
        assert ob.filter(pl.col("level").is_not_null()).height == sum(
            sum(len(r.get(k) or []) for k in ("bids", "yes_bids", "asks", "no_bids")) for r in routed
        )
        latest = free.orderbook_history(exchange, market, limit=3)
        assert str(latest["timestamp"].dtype) == UTC_MS_PANDAS and is_text(latest["market_id"].dtype)

        tr = free.trades(exchange, market, start, end, frame="polars")
        assert tr.height > 0 and tr.schema["trade_id"] == pl.String and tr.schema["executed_at"] == UTC_MS_POLARS
        assert tr["executed_at"].is_sorted()
        if exchange == "venue_b":
            assert all(t.isdigit() and len(t) > 60 for t in tr["asset_id"].to_list())
        tp = free.trades(exchange, market, limit=5)
        assert is_text(tp["trade_id"].dtype) and str(tp["price"].dtype) == "float64"

    candles = free.ohlcv([env.market_a, env.market_b], interval="1m", from_=start, to=end, frame="polars")
    assert set(candles["market_id"].unique().to_list()) == {env.market_a, env.market_b}
    assert candles.schema["start"] == UTC_MS_POLARS and candles.schema["close"] == pl.Float64
    assert candles.schema["trade_count"] == pl.Int64 and candles["trade_count"].sum() > 0
    cp = free.ohlcv(env.market_b, interval="1m", from_=start, to=end, exact=True)
    assert all(isinstance(v, Decimal) for v in cp["close"].dropna())


def test_export_frames_of_both_venues(env, free):
    day = dt.datetime.now(dt.timezone.utc).date()
    for exchange, market in (("venue_a", env.market_a), ("venue_b", env.market_b)):
        books_pl = free.export("books", exchange, market, day, frame="polars")
        assert books_pl.height > 0 and books_pl.schema["received_at"] == UTC_MS_POLARS
        assert books_pl.schema["price"] == pl.Float64 and books_pl.schema["is_snapshot"] == pl.Boolean
        assert "restart" in books_pl["gap"].drop_nulls().to_list()
        trades_pd = free.export("trades", exchange, market, day.isoformat())
        assert is_text(trades_pd["trade_id"].dtype) and str(trades_pd["executed_at"].dtype) == UTC_MS_PANDAS
        if exchange == "venue_b":
            assert all(t.isdigit() and len(t) > 60 for t in books_pl["asset_id"].unique().to_list())
        exact = free.export("books", exchange, market, day, frame="polars", exact=True)
        assert exact.schema["price"] == pl.Decimal(18, 4)


def test_a_replay_that_ends_in_an_error_raises():
    good = b'{"type":"trade","exchange":"venue_a","market_id":"M","asset_id":null,"seq":null,"venue_ts":null,"received_at":"2026-11-21T19:15:00.000Z","trade_id":"t","taker_side":"buy","outcome":"YES","price":0.53,"size":2}\n'
    assert frames.replay_table(good).num_rows == 1
    with pytest.raises(crossbook.ReplayError, match="database"):
        frames.replay_table(good + b'{"type":"error","detail":"the database failed"}\n')
    empty = frames.convert(frames.replay_table(b""), "polars")
    assert empty.height == 0 and empty.schema["asset_id"] == pl.String


def test_books_rebuilt_from_a_replay_have_the_top_of_book_routes_quotes(env, free, window, replay_pl):
    tops = books.top_of_book(replay_pl)
    assert tops.schema["best_bid"] == pl.Float64
    # Rebuilt quotes of each book, in event order, to look up "the book as it stood at t".
    by_book = {}
    for r in tops.iter_rows(named=True):
        by_book.setdefault((r["exchange"], r["asset_id"]), []).append(r)
    compared = 0
    for exchange, market in (("venue_a", env.market_a), ("venue_b", env.market_b)):
        rows = list(
            free.iterate(
                getattr(free, f"{exchange}_top_of_book"),
                market_id=market,
                start_time=window[0],
                end_time=window[1],
                granularity="1s",
                limit=200,
            )
        )
        assert rows
        for row in rows:
            events = by_book[(exchange, row["asset_id"])]
            times = [int(e["received_at"].timestamp() * 1000) for e in events]
            at = bisect.bisect_right(times, row["timestamp"]) - 1
            assert at >= 0, row
            e = events[at]
            assert e["known"], (row, e)
            got = (e["best_bid"], e["best_bid_size"], e["best_ask"], e["best_ask_size"])
            want = (row["best_bid"], row["best_bid_size"], row["best_ask"], row["best_ask_size"])
            near = [
                (times[i], events[i]["seq"], events[i]["best_bid"], events[i]["best_ask"])
                for i in range(max(0, at - 3), min(len(events), at + 3))
            ]
            assert got == want, (exchange, row, got, want, near, env.restarted_at)
            compared += 1
    assert compared > 20

    # rebuild(): every book at the end of the frame, the last top of each.
    rebuilt = books.rebuild(replay_pl)
    for (exchange, _, asset_id), book in rebuilt.items():
        last = by_book[(exchange, asset_id)][-1]
        assert (book.best_bid() or (None,))[0] == last["best_bid"]
    # A pandas frame gives a pandas answer, with the same quotes.
    tops_pd = books.top_of_book(replay_pl.to_pandas())
    assert isinstance(tops_pd, pd.DataFrame)
    assert tops_pd["best_bid"].fillna(-1).tolist() == tops["best_bid"].fill_null(-1).to_list()
