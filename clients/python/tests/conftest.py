"""The package's tests run against a real `crossbook serve --simulate`, started by the service's test suite
(`crates/server/tests/it/python_client.rs`), which passes its address, keys and markets in the environment.

By hand: start `crossbook serve --simulate`, then set CROSSBOOK_TEST_URL, CROSSBOOK_TEST_FREE,
CROSSBOOK_TEST_BUILDER, CROSSBOOK_TEST_TRADER, CROSSBOOK_TEST_LIMITED (another Free key), CROSSBOOK_TEST_MARKET_A
and CROSSBOOK_TEST_MARKET_B (open markets of each venue with books), CROSSBOOK_TEST_RECORDED_FROM and
CROSSBOOK_TEST_RESTARTED_AT and CROSSBOOK_TEST_RECORDED_TO (Unix ms: when recording began, when the service was
restarted, and a time after that up to which everything received is stored).
"""

import os
import time

import pytest

import crossbook

NEEDED = "URL FREE BUILDER TRADER LIMITED MARKET_A MARKET_B RECORDED_FROM RESTARTED_AT RECORDED_TO".split()


class Env:
    def __init__(self) -> None:
        missing = [n for n in NEEDED if not os.environ.get(f"CROSSBOOK_TEST_{n}")]
        if missing:
            pytest.fail(f"set CROSSBOOK_TEST_{', CROSSBOOK_TEST_'.join(missing)} (see tests/conftest.py)")
        get = lambda n: os.environ[f"CROSSBOOK_TEST_{n}"]  # noqa: E731
        self.url = get("URL").rstrip("/")
        self.free, self.builder, self.trader, self.limited = get("FREE"), get("BUILDER"), get("TRADER"), get("LIMITED")
        self.market_a, self.market_b = get("MARKET_A"), get("MARKET_B")
        self.recorded_from = int(get("RECORDED_FROM"))
        self.restarted_at = int(get("RESTARTED_AT"))
        self.recorded_to = int(get("RECORDED_TO"))


@pytest.fixture(scope="session")
def env() -> Env:
    return Env()


@pytest.fixture(scope="session")
def trader(env: Env) -> crossbook.Client:
    with crossbook.Client(env.url, key=env.trader) as c:
        yield c


@pytest.fixture(scope="session")
def free(env: Env) -> crossbook.Client:
    with crossbook.Client(env.url, key=env.free) as c:
        yield c


def eventually(what, seconds, check):
    """Calls `check` until it returns a true value (returned), failing after `seconds` with the last value."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.2)
    pytest.fail(f"{what}: not within {seconds} s (last: {last!r})")


def now_ms() -> int:
    return int(time.time() * 1000)
