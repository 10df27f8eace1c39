"""Order books rebuilt from a replay frame or an export's books frame.

    frame = client.replay([...], start, end, frame="polars")
    tops = crossbook.books.top_of_book(frame)      # the best quotes after every book event, as a frame
    books = crossbook.books.rebuild(frame)         # every book as it stood at the frame's end (or `at=`)

The rules are the replay's: a book's snapshot replaces it, each change sets a level's size (0 removes it), and a
gap leaves the book unknown until its next snapshot. A venue_a book is the YES side: its asks are derived from
the NO bids (YES ask = 1 − NO bid), as the top-of-book route derives them, so the rebuilt top of book is that
route's at the same times.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Dict, Iterator, List, Optional, Tuple

Key = Tuple[str, str, Optional[str]]


class Book:
    """One book: a venue_a market (`bids` and `no_bids`) or one venue_b token (`bids` and `asks`)."""

    __slots__ = ("exchange", "market_id", "asset_id", "bids", "asks", "no_bids", "known", "seq", "time")

    def __init__(self, exchange: str, market_id: str, asset_id: Optional[str]) -> None:
        self.exchange = exchange
        self.market_id = market_id
        self.asset_id = asset_id
        #: price -> size, per side.
        self.bids: Dict[Any, Any] = {}
        self.asks: Dict[Any, Any] = {}
        self.no_bids: Dict[Any, Any] = {}
        #: False from a gap until the next snapshot: the book is not known then.
        self.known = False
        self.seq: Optional[int] = None
        self.time: Any = None

    def side(self, name: str) -> Dict[Any, Any]:
        return {"bid": self.bids, "ask": self.asks, "no_bid": self.no_bids}[name]

    def best_bid(self) -> Optional[Tuple[Any, Any]]:
        """(price, size) of the best bid, or `None`."""
        if not self.known or not self.bids:
            return None
        price = max(self.bids)
        return price, self.bids[price]

    def best_ask(self) -> Optional[Tuple[Any, Any]]:
        """(price, size) of the best ask; on venue_a, 1 − the best NO bid, with its size."""
        if not self.known:
            return None
        if self.exchange == "venue_a":
            if not self.no_bids:
                return None
            no = max(self.no_bids)
            return _one_minus(no), self.no_bids[no]
        if not self.asks:
            return None
        price = min(self.asks)
        return price, self.asks[price]


def _one_minus(price: Any) -> Any:
    if isinstance(price, Decimal):
        return Decimal(1) - price
    # Prices have four decimals: rounding there gives the float the service's own four-decimal text parses to.
    return round(1.0 - price, 4)


def _columns(frame: Any) -> Tuple[Dict[str, List[Any]], str]:
    """The frame's columns as lists, and which library it came from (so answers come back in kind)."""
    module = type(frame).__module__.split(".")[0]
    if module == "polars":
        table = frame.to_arrow()
    elif module == "pandas":
        import pyarrow as pa

        table = pa.Table.from_pandas(frame, preserve_index=False)
    else:
        table = frame
        module = "arrow"
    names = [
        n
        for n in ("type", "exchange", "market_id", "asset_id", "seq", "received_at", "side", "price", "size")
        + ("is_snapshot", "gap")
        if n in table.column_names
    ]
    return {n: table[n].to_pylist() for n in names}, module


def _events(cols: Dict[str, List[Any]]) -> Iterator[Tuple[str, Key, Optional[int], Any, List[Tuple[Any, Any, Any]]]]:
    """The book events of a replay or export frame, each once: (kind, book, seq, time, levels)."""
    n = len(cols["market_id"])
    export = "type" not in cols
    i = 0
    while i < n:
        if export:
            gap = cols["gap"][i]
            kind = "gap" if gap else ("book_snapshot" if cols["is_snapshot"][i] else "book_change")
        else:
            kind = cols["type"][i]
        asset = cols["asset_id"][i] or None
        key = (cols["exchange"][i], cols["market_id"][i], asset)
        seq = cols["seq"][i]
        j = i + 1
        if kind in ("book_snapshot", "book_change"):
            # A message's rows are consecutive and share the book and its event number.
            while (
                j < n
                and cols["seq"][j] == seq
                and cols["market_id"][j] == key[1]
                and (cols["asset_id"][j] or None) == asset
            ):
                if not export and cols["type"][j] != kind:
                    break
                if export and (bool(cols["is_snapshot"][j]) != (kind == "book_snapshot") or cols["gap"][j]):
                    break
                j += 1
        levels = [
            (cols["side"][r], cols["price"][r], cols["size"][r]) for r in range(i, j) if cols["side"][r] is not None
        ]
        levels = [lv for lv in levels if lv[0] != ""]
        yield kind, key, seq, cols["received_at"][i], levels
        i = j


def _apply(
    books: Dict[Key, Book], kind: str, key: Key, seq: Any, at: Any, levels: List[Tuple[Any, Any, Any]]
) -> Optional[Book]:
    if kind not in ("book_snapshot", "book_change", "gap"):
        return None
    book = books.get(key)
    if book is None:
        book = books[key] = Book(*key)
    if kind == "gap":
        book.known = False
    elif kind == "book_snapshot":
        book.bids.clear()
        book.asks.clear()
        book.no_bids.clear()
        book.known = True
    for side, price, size in levels:
        ladder = book.side(side)
        if size == 0:
            ladder.pop(price, None)
        else:
            ladder[price] = size
    book.seq = seq
    book.time = at
    return book


def rebuild(frame: Any, at: Any = None) -> Dict[Key, Book]:
    """Every book of the frame as it stood after its last event (at or before `at`, a timestamp, when given).

    Keyed by `(exchange, market_id, asset_id)`; `asset_id` is `None` on venue_a.
    """
    cols, _ = _columns(frame)
    books: Dict[Key, Book] = {}
    for kind, key, seq, time, levels in _events(cols):
        if at is not None and time is not None and time > at:
            break
        _apply(books, kind, key, seq, time, levels)
    return books


def top_of_book(frame: Any) -> Any:
    """The best quotes after every book event of the frame, as a frame of the same library.

    Columns: `exchange`, `market_id`, `asset_id`, `seq`, `received_at`, `best_bid`, `best_bid_size`, `best_ask`,
    `best_ask_size`, `mid`, `spread` (null where a side is empty, and every quote null while the book is
    unknown: after a gap until the next snapshot) and `known`.
    """
    import pyarrow as pa

    from .frames import convert

    cols, module = _columns(frame)
    books: Dict[Key, Book] = {}
    out: Dict[str, List[Any]] = {
        k: []
        for k in (
            "exchange market_id asset_id seq received_at best_bid best_bid_size best_ask best_ask_size mid spread known"
        ).split()
    }
    for kind, key, seq, time, levels in _events(cols):
        book = _apply(books, kind, key, seq, time, levels)
        if book is None:
            continue
        bid, ask = book.best_bid(), book.best_ask()
        out["exchange"].append(key[0])
        out["market_id"].append(key[1])
        out["asset_id"].append(key[2])
        out["seq"].append(seq)
        out["received_at"].append(time)
        out["best_bid"].append(bid[0] if bid else None)
        out["best_bid_size"].append(bid[1] if bid else None)
        out["best_ask"].append(ask[0] if ask else None)
        out["best_ask_size"].append(ask[1] if ask else None)
        both = bid is not None and ask is not None
        out["mid"].append(_mid(bid[0], ask[0]) if both else None)  # type: ignore[index]
        out["spread"].append(_spread(bid[0], ask[0]) if both else None)  # type: ignore[index]
        out["known"].append(book.known)
    from .frames import _ts

    times = pa.array(out.pop("received_at"), _ts())
    table = pa.table(out).add_column(4, "received_at", times)
    return convert(table, "pandas" if module == "pandas" else "polars" if module == "polars" else "arrow")


def _mid(bid: Any, ask: Any) -> Any:
    if isinstance(bid, Decimal):
        return (bid + ask) / 2
    return round((bid + ask) / 2, 5)


def _spread(bid: Any, ask: Any) -> Any:
    if isinstance(bid, Decimal):
        return ask - bid
    return round(ask - bid, 4)
