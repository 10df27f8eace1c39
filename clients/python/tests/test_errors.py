"""The API's errors arrive as typed exceptions; a 429 is retried after its Retry-After."""

import httpx
import pytest

import crossbook
from crossbook.errors import ApiError


def test_each_error_is_its_own_exception_with_the_body_fields(env, free):
    with pytest.raises(crossbook.EntitlementRequired) as denied:
        free.arbitrage_difference()
    assert (denied.value.status, denied.value.code, denied.value.required_plan) == (
        403,
        "entitlement_required",
        "trader",
    )

    with pytest.raises(crossbook.InvalidParameter) as bad:
        free.venue_a_orderbook(market_id=env.market_a, limit=0)
    assert (bad.value.status, bad.value.param) == (400, "limit")
    assert "limit" in bad.value.detail

    with pytest.raises(crossbook.NotFound) as missing:
        free.gaps(exchange="venue_a", market_id="NO-SUCH-MARKET")
    assert missing.value.status == 404

    with crossbook.Client(env.url, key="cbk_0000000000000000000000000000Zzzz") as stranger:
        with pytest.raises(crossbook.Unauthorized) as who:
            stranger.whale_feed()
    assert who.value.code == "unauthorized"

    with crossbook.Client(env.url) as anonymous:
        with pytest.raises(crossbook.Unauthorized):
            anonymous.venue_a_trades(market_id=env.market_a)
        # A webhook error keeps its envelope in `body`, and its code and detail.
        with pytest.raises(crossbook.Unauthorized) as hooks:
            anonymous.list_webhooks()
    assert hooks.value.body["success"] is False

    # Every error is an ApiError, and a CrossbookError.
    assert issubclass(crossbook.NotFound, ApiError) and issubclass(ApiError, crossbook.CrossbookError)


def test_the_key_comes_from_the_environment_when_not_given(env, monkeypatch):
    monkeypatch.setenv("CROSSBOOK_KEY", env.free)
    monkeypatch.setenv("CROSSBOOK_URL", env.url)
    with crossbook.Client() as c:
        assert c.key == env.free and c.base_url == env.url
        assert c.venue_a_trades(market_id=env.market_a, limit=1)["exchange"] == "venue_a"
    with crossbook.Client(key="") as c:
        with pytest.raises(crossbook.Unauthorized):
            c.venue_a_trades(market_id=env.market_a, limit=1)


def test_a_rate_limited_call_waits_for_retry_after_and_succeeds(env):
    statuses = []

    def seen(response):
        statuses.append(response.status_code)

    http = httpx.Client(base_url=env.url, headers={"X-API-Key": env.limited}, event_hooks={"response": [seen]})
    with crossbook.Client(env.url, key=env.limited, http=http) as c:
        # The customer's requests of the minute, spent: the next is answered 429, retried, then answered.
        for _ in range(400):
            answer = c.whale_feed(limit=1)
            if 429 in statuses:
                break
    assert "trades" in answer
    assert 429 in statuses and statuses[-1] == 200, statuses[-5:]

    with crossbook.Client(env.url, key=env.limited, max_retries=0) as impatient:
        with pytest.raises(crossbook.RateLimited) as limited:
            for _ in range(400):
                impatient.whale_feed(limit=1)
    assert limited.value.retry_after is not None and limited.value.retry_after >= 1
