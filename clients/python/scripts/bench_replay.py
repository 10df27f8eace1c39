#!/usr/bin/env python3
"""Reads a replay into a polars frame with `Client.replay` and prints the figures, for the service's bench.

    bench_replay.py BASE_URL KEY FROM_MS TO_MS MARKET...   (run by `crossbook-bench replay --python N`)

Prints messages a second from the request to the finished frame, the frame's rows and size, and the
interpreter's peak resident memory above what it held before the call (`ru_maxrss`).
"""

import resource
import sys
import time

import crossbook


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    base, key, start, end, *markets = sys.argv[1:]
    client = crossbook.Client(base, key=key, timeout=600)
    import polars  # noqa: F401  (imported before the clock starts, as a notebook has it)

    before = rss_mib()
    t = time.perf_counter()
    frame = client.replay(markets, int(start), int(end), frame="polars")
    took = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    messages = frame.select(["market_id", "seq", "type", "trade_id"]).unique().height
    print(
        f"{messages} messages, {frame.height} rows in {took:.2f} s: {messages / took:,.0f} messages/s into polars; "
        f"frame {frame.estimated_size() / 2**20:.0f} MiB; resident memory before {before:.0f} MiB, "
        f"peak {peak:.0f} MiB (+{peak - before:.0f}), after {rss_mib():.0f} MiB"
    )


if __name__ == "__main__":
    main()
