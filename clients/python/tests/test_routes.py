"""Every route of the API, called through the generated methods, answers the model its method declares."""

import asyncio
import datetime as dt
import inspect
import json

import pytest

import crossbook
from crossbook import models
from crossbook._routes import AsyncRoutes, SyncRoutes

from conftest import eventually, now_ms

ROUTES = sorted(n for n, f in inspect.getmembers(SyncRoutes, inspect.isfunction) if not n.startswith("_"))


def conforms(value, annotation: str, where: str) -> None:
    """`value` has every required field of the model named by `annotation` (`List[X]`, `X`, `Optional[X]`)."""
    annotation = annotation.strip()
    for wrapper in ("Optional[", "List["):
        if annotation.startswith(wrapper):
            inner = annotation[len(wrapper) : -1]
            if wrapper == "List[":
                assert isinstance(value, list), f"{where}: not a list: {value!r:.200}"
                for i, item in enumerate(value):
                    conforms(item, inner, f"{where}[{i}]")
            elif value is not None:
                conforms(value, inner, where)
            return
    model = getattr(models, annotation, None)
    if model is None or not hasattr(model, "__required_keys__"):
        return
    assert isinstance(value, dict), f"{where}: not an object: {value!r:.200}"
    missing = sorted(k for k in model.__required_keys__ if k not in value)
    assert not missing, f"{where}: {annotation} without {missing}: {json.dumps(value)[:300]}"


class Recorder:
    """Calls routes by name, checks each answer against its declared model, and remembers what was called."""

    def __init__(self, client):
        self.client = client
        self.called = set()

    def __call__(self, name, *args, **kwargs):
        method = getattr(self.client, name)
        value = method(*args, **kwargs)
        if inspect.isgenerator(value):
            value = list(value)
        if isinstance(value, (dict, list)):
            conforms(value, _annotation_text(getattr(SyncRoutes, name)), name)
        self.called.add(name)
        return value


def _annotation_text(fn) -> str:
    return inspect.signature(fn).return_annotation


def test_every_route_answers_its_documented_model(env, trader, tmp_path):
    call = Recorder(trader)
    a, b = env.market_a, env.market_b
    now = now_ms()
    since = env.recorded_from - 60_000

    # Service routes.
    assert call("healthz")["status"]
    call("readyz")
    assert "crossbook_" in call("metrics")
    assert "<html" in call("docs_page").lower()
    doc = call("openapi")
    assert doc["openapi"].startswith("3.")

    # Search.
    assert call("search", q="bitcoin")
    markets = call("search_markets", q="btc", exchange="venue_a", limit=5)
    assert markets and all(m["exchange"] == "venue_a" for m in markets)
    events = call("search_events", q="bitcoin", exchange="venue_b", series_id="10231", limit=1)
    call("search_series", exchange="venue_a")
    call("recent_markets", limit=3)
    call("recent_events", limit=3)
    market_a = call("search_markets", q=a, exchange="venue_a", limit=1)[0]
    assert market_a["market_id"] == a
    event_a = market_a["event_id"]
    assert a in [m["market_id"] for m in call("event_markets", event_a)]

    # Historical data, both venues.
    rows = call("venue_a_orderbook", market_id=a, limit=2)["snapshots"]
    assert rows and rows[0]["market_id"] == a
    assert call("venue_b_orderbook", market_id=b, limit=2)["snapshots"][0]["asset_id"].isdigit()
    call("unified_orderbook", exchange="venue_a", market_id=a, format="unified", limit=2)
    call("venue_a_top_of_book", market_id=a, limit=2)
    call("venue_b_top_of_book", market_id=b, limit=2)
    call("venue_a_trades", market_id=a, limit=2)
    call("venue_b_trades", market_id=b, limit=2)
    call("venue_a_execution_price", market_id=a, side="yes", size=5, time=now)
    call("venue_b_execution_price", market_id=b, side="yes", size=5, time=now)
    call("gaps", exchange="venue_a", market_id=a)
    candles = call("markets_ohlcv", market_ids=[a, b], interval="5m")
    assert [m["market_id"] for m in candles["markets"]] == [a, b]
    call("event_ohlcv", event_a, interval="1h")
    messages = call("replay_messages", market_id=[f"venue_a:{a}"], start_time=since, end_time=now)
    assert messages[0]["type"] == "book_snapshot"
    day = dt.datetime.now(dt.timezone.utc).date()
    assert call("export_books", exchange="venue_a", market_id=a, date=day)[:2] == b"\x1f\x8b"  # gzip CSV
    assert call("export_trades", exchange="venue_b", market_id=b, date=day, format="parquet")[:4] == b"PAR1"

    # Arbitrage.
    call("arbitrage_current", min_net_cents=0)
    call("arbitrage_difference")
    call("arbitrage_history", limit=5)
    call("arbitrage_pairs", limit=5)

    # Backtests: a run over the recorded minutes, read back when done, then deleted.
    run = call("create_backtest", body={"from": since, "to": now})
    assert run["status"] in ("running", "done")
    done = eventually(
        "the backtest to finish", 60, lambda: (r := call("get_backtest", run["id"]))["status"] != "running" and r
    )
    assert done["status"] == "done", done
    assert run["id"] in [r["id"] for r in call("list_backtests")["backtests"]]
    assert "id" in call("backtest_trades", run["id"]).splitlines()[0].split(",")
    assert call("delete_backtest", run["id"]) is None
    with pytest.raises(crossbook.NotFound):
        trader.get_backtest(run["id"])

    # Whales: public feed, and a watched event added, changed and removed both ways.
    call("whale_public_feed", limit=5)
    call("whale_public_events")
    call("whale_feed", limit=5)
    call("whale_stats", period="24h")
    call("whale_markets")
    call("whale_event_trades", event_a)
    call("whale_event_stats", event_a)
    call("whale_market_trades", a)
    call("whale_market_stats", a)
    added = call("watch_event", body={"exchange": "venue_a", "event_ticker": event_a, "whale_threshold_usd": 2500})
    assert added["id"] in [e["id"] for e in call("whale_watched_events")["tracked_events"]]
    call("update_watched_event", added["id"], body={"whale_threshold_usd": 3000})
    call("unwatch_event", added["id"])
    by_url = call("watch_event_by_url", body={"url": events[0]["url"]})
    call("unwatch_event_by_ticker", "venue_b", by_url["event_ticker"])

    # Webhooks: registered, read, changed, tested, its log, removed (delivery is verified in test_webhooks).
    created = call("create_webhook", "arbitrage", body={"url": "http://127.0.0.1:9/hook", "enabled": False})
    assert len(created["data"]["secret"]) == 64
    call("get_webhook", "arbitrage")
    call("list_webhooks")
    call("update_webhook", "arbitrage", body={"url": "http://127.0.0.1:9/other", "enabled": False})
    call("test_webhook", "arbitrage")
    assert call("webhook_deliveries", "arbitrage")["data"]
    call("delete_webhook", "arbitrage")

    assert sorted(call.called) == ROUTES, f"not called: {sorted(set(ROUTES) - call.called)}"


def test_the_async_client_has_every_route_and_pages_with_async_for(env):
    async_routes = sorted(n for n, f in inspect.getmembers(AsyncRoutes, inspect.isfunction) if not n.startswith("_"))
    assert async_routes == ROUTES

    async def run():
        async with crossbook.AsyncClient(env.url, key=env.free) as c:
            markets = await c.search_markets(q="btc", exchange="venue_b", limit=2)
            assert markets and markets[0]["exchange"] == "venue_b"
            window = dict(start_time=env.recorded_from, end_time=env.recorded_from + 20_000, granularity="1s")
            seen = [row async for row in c.iterate(c.venue_a_orderbook, market_id=env.market_a, limit=3, **window)]
            whole = await c.venue_a_orderbook(market_id=env.market_a, limit=200, **window)
            assert len(seen) > 3 and seen == whole["snapshots"]
            lines = [
                m
                async for m in c.replay_messages(
                    market_id=f"venue_b:{env.market_b}", start_time=env.recorded_from, end_time=env.recorded_from + 5000
                )
            ]
            assert lines and lines[0]["type"] == "book_snapshot" and lines[0]["asset_id"].isdigit()
            frame = await c.replay(
                f"venue_a:{env.market_a}", env.recorded_from, env.recorded_from + 5000, frame="polars"
            )
            assert frame.height > 0

    asyncio.run(run())


def test_pages_walk_keys_and_offsets_without_repeating_a_row(env, free):
    # pagination_key: a range read 7 rows a page equals the same range read in one page.
    start, end = env.recorded_from, env.recorded_from + 20_000
    whole = free.venue_b_orderbook(market_id=env.market_b, start_time=start, end_time=end, granularity="1s", limit=200)
    assert not whole["pagination"]["has_more"]
    walked = list(
        free.iterate(
            free.venue_b_orderbook, market_id=env.market_b, start_time=start, end_time=end, granularity="1s", limit=7
        )
    )
    assert len(walked) > 7
    assert walked == whole["snapshots"]
    assert len(
        list(
            free.pages(
                free.venue_b_orderbook,
                market_id=env.market_b,
                start_time=start,
                end_time=end,
                granularity="1s",
                limit=7,
            )
        )
    ) == -(-len(walked) // 7)
    # offset: series (a catalog that holds still) in pages of 2 are the rows of one page, in order.
    one = free.search_series(limit=50)
    paged = list(free.iterate(free.search_series, limit=2))
    assert len(one) > 4 and len(one) < 50
    assert [m["series_id"] for m in paged] == [m["series_id"] for m in one]
    with pytest.raises(ValueError, match="not a paged route"):
        list(free.iterate(free.healthz))
