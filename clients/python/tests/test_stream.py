"""The stream client resumes after dropped connections with nothing lost, against an observer that stays on."""

import asyncio

import crossbook
from crossbook.stream import Continuity, Disconnected, Reset, Resumed, Stream

BOOK = ("snapshot", "change", "stale")


def book_events(messages):
    """(market, token, book_seq, type) of every book message."""
    return {
        (m["market_id"], m.get("asset_id"), m["book_seq"], m.type)
        for m in messages
        if m.channel == "book" and m.type in BOOK
    }


def test_a_dropped_stream_resumes_with_nothing_lost(env):
    markets = [env.market_a, env.market_b]

    async def follow(stream):
        await stream.subscribe("book", markets=markets)
        await stream.subscribe("trades", markets=markets)

    async def run():
        got = {"observer": [], "resumer": []}
        done = asyncio.Event()
        async with Stream(env.url, key=env.free) as observer, Stream(env.url, key=env.free) as resumer:
            await follow(observer)
            await follow(resumer)

            async def resume_twice():
                since = 0  # changes since the connection was (re)established
                drops = 0
                connected = True
                async for m in resumer:
                    got["resumer"].append(m)
                    if isinstance(m, Resumed):
                        connected, since = True, 0
                    elif m.type == "change" and connected:
                        since += 1
                        # Cut the connection 40 changes into each connection, twice; then read 40 more.
                        if since == 40 and drops < 2:
                            drops += 1
                            connected = False
                            await resumer.drop()
                        elif since == 40:
                            break
                done.set()

            async def observe():
                async for m in observer:
                    got["observer"].append(m)
                    if done.is_set() and highest(got["observer"]) >= highest(got["resumer"]):
                        break

            await asyncio.wait_for(asyncio.gather(resume_twice(), observe()), 120)
        return got

    got = asyncio.run(run())
    resumer, observer = got["resumer"], got["observer"]
    kinds = [type(m) for m in resumer if isinstance(m, Continuity)]
    reasons = [m.data for m in resumer if isinstance(m, (Disconnected, Resumed, Reset))]
    assert kinds.count(Resumed) == 2, reasons
    # Two drops; a reconnect that the server refused because it had not yet seen the old connection go (a Free
    # key holds two streams) is a third disconnect, retried.
    dropped = [m["reason"] for m in resumer if isinstance(m, Disconnected)]
    assert dropped.count("the connection was lost") == 2, reasons
    assert all(r == "the connection was lost" or "connection limit" in r for r in dropped), reasons
    assert Reset not in kinds and not any(isinstance(m, Continuity) for m in observer if m.type != "not_live")
    # The session's numbering runs on without a hole across both reconnects.
    seqs = [m.seq for m in resumer if m.seq is not None and not (m.type == "error" and m["code"] == "limit_exceeded")]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs

    # Every book event the observer saw between the resumer's first and last is the resumer's too, and back.
    mine, theirs = book_events(resumer), book_events(observer)
    for book in {(m, a) for m, a, _, _ in mine}:
        lo = max(min(s for m, a, s, _ in events if (m, a) == book) for events in (mine, theirs))
        hi = min(max(s for m, a, s, _ in events if (m, a) == book) for events in (mine, theirs))

        def window(events, book=book, lo=lo, hi=hi):
            return {e for e in events if (e[0], e[1]) == book and lo <= e[2] <= hi}

        assert window(mine) == window(theirs), book
        assert hi - lo >= 10, (book, lo, hi)
    # Trades: the resumer's are the observer's over the same stretch.
    ids = lambda ms: [m["trade_id"] for m in ms if m.type == "trade"]  # noqa: E731
    mine_t, theirs_t = ids(resumer), ids(observer)
    if mine_t:
        first, last = theirs_t.index(mine_t[0]), theirs_t.index(mine_t[-1])
        assert mine_t == theirs_t[first : last + 1]


def highest(messages):
    return max((m["book_seq"] for m in messages if m.channel == "book" and m.type == "change"), default=0)


def test_a_lost_session_is_subscribed_again_after_reset(env):
    async def run():
        async with Stream(env.url, key=env.free) as s:
            await s.subscribe("book", markets=[env.market_a])
            async for m in s:
                if m.type == "change":
                    break
            # A resume of a session the server never had: it says reset, and the stream subscribes again.
            s.session = "s_unknown"
            await s.drop()
            seen = []
            async for m in s:
                seen.append(m)
                if m.type == "change" and any(isinstance(x, Reset) for x in seen):
                    break
            return seen

    seen = asyncio.run(asyncio.wait_for(run(), 60))
    reset = next(m for m in seen if isinstance(m, Reset))
    assert reset.resubscribed and "subscribe again" in reset["reason"]
    assert any(m.type == "subscribed" for m in seen[seen.index(reset) :])


def test_a_refused_subscription_is_an_error_message_and_the_stream_goes_on(env):
    async def run():
        async with Stream(env.url, key=env.free) as s:
            await s.subscribe("arbitrage")
            await s.ping()
            seen = []
            async for m in s:
                seen.append(m)
                if m.type == "pong":
                    return seen

    seen = asyncio.run(asyncio.wait_for(run(), 30))
    error = next(m for m in seen if isinstance(m, crossbook.stream.Error))
    assert error["code"] == "entitlement_required" and error["required_plan"] == "trader"
