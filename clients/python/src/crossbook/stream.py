"""The live stream (`/v1/stream`) as an async iterator that resumes by itself after a dropped connection.

    async with crossbook.Stream(key="cbk_…") as stream:
        await stream.subscribe("book", markets=["KXBTCW-…"])
        async for message in stream:
            if isinstance(message, crossbook.stream.Continuity):
                ...  # the stream says something about what the client holds: a stale book, a reset, a resume
            else:
                ...  # message.type: snapshot, change, trade, opportunity, whale, venue…

When the connection drops, the stream reconnects with the session's `resume_from` (and `resume_pos` once the
server numbers its messages by the bus's position), so the server sends what the client missed, in order, then
`resumed`. When it cannot (the session expired, or its buffer no longer holds what was missed), the server says
`reset`; when the session itself was lost the stream subscribes again to everything it followed. Either way the
iterator yields the event, so nothing is missed silently.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set
from urllib.parse import urlencode, urlsplit, urlunsplit

from .errors import StreamError
from ._http import DEFAULT_BASE_URL


@dataclass
class Message:
    """A server message: `type`, `channel`, the session's `seq`, and the whole message in `data`."""

    type: str
    channel: str
    seq: Optional[int]
    data: Dict[str, Any] = field(repr=False)

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)

    @property
    def pos(self) -> Optional[int]:
        """Where the message stands among the bus's events (api processes of a deployment with a bus)."""
        return self.data.get("pos")


class Continuity(Message):
    """A message about continuity: what the client holds may be incomplete or stale from here."""


class Stale(Continuity):
    """`stale`: a book lost continuity (`book_seq`, `cause`) and is unknown until its next `snapshot`."""


class Gap(Continuity):
    """The `status` channel's `gap`: books of a venue lost continuity (`exchange`, `cause`, `books`)."""


class NotLive(Continuity):
    """`not_live`: a subscribed market has no book held now (`reason` `closed` or `no_book`)."""


class Lagged(Continuity):
    """`lagged`: the service fell behind its event bus; `missed` messages were lost, fresh snapshots follow."""


class Reset(Continuity):
    """`reset`: a resume could not send what was missed (`reason`); fresh snapshots follow.

    `resubscribed` is true when the session itself was lost and the stream subscribed again to everything.
    """

    resubscribed: bool = False


class Resumed(Continuity):
    """`resumed`: after a reconnect, every missed message came first; nothing was lost."""


class Disconnected(Continuity):
    """The connection dropped (`reason`); the stream is reconnecting and will say `resumed` or `reset`."""


class Error(Message):
    """An `error` the server sent for a client message (`code`, `detail`); the connection stays open."""


_TYPES = {
    "stale": Stale,
    "gap": Gap,
    "not_live": NotLive,
    "lagged": Lagged,
    "reset": Reset,
    "resumed": Resumed,
    "error": Error,
}


def parse(data: Dict[str, Any]) -> Message:
    """The typed object of one server message."""
    kind = data.get("type", "")
    cls = _TYPES.get(kind, Message)
    return cls(type=kind, channel=data.get("channel", ""), seq=data.get("seq"), data=data)


def _ws_url(base_url: str) -> str:
    parts = urlsplit(base_url.rstrip("/"))
    scheme = {"https": "wss", "http": "ws"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path + "/v1/stream", "", ""))


class Stream:
    """The live stream, subscribed with `subscribe`, read with `async for`, resumed after drops.

    `reconnect_timeout`: how long to keep trying to reconnect before the iteration raises the last error.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        key: Optional[str] = None,
        *,
        reconnect_timeout: float = 60.0,
        open_timeout: float = 10.0,
    ) -> None:
        self.base_url = (base_url or os.environ.get("CROSSBOOK_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.key = key if key is not None else os.environ.get("CROSSBOOK_KEY")
        self.reconnect_timeout = reconnect_timeout
        self.open_timeout = open_timeout
        #: The session's id (from `welcome`), the last `seq` and `pos` received: what a resume sends.
        self.session: Optional[str] = None
        self.last_seq: Optional[int] = None
        self.last_pos: Optional[int] = None
        #: channel -> the markets followed (`None`: every market of the channel).
        self.subscriptions: Dict[str, Optional[Set[str]]] = {}
        self._ws: Any = None
        self._pending: List[Message] = []
        self._closed = False
        self._resubscribe = False

    async def __aenter__(self) -> "Stream":
        await self._reconnect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def connect(self) -> None:
        """Opens the connection once (a new session, or the resume of the current one); `async with` retries."""
        import websockets

        query: Dict[str, Any] = {}
        if self.session is not None and self.last_seq is not None:
            query = {"session": self.session, "resume_from": self.last_seq}
            if self.last_pos is not None:
                query["resume_pos"] = self.last_pos
        url = _ws_url(self.base_url) + (f"?{urlencode(query)}" if query else "")
        headers = {"X-API-Key": self.key} if self.key else {}
        self._ws = await websockets.connect(
            url, additional_headers=headers, open_timeout=self.open_timeout, max_size=None, ping_interval=None
        )

    async def close(self) -> None:
        """Closes the stream for good (the server keeps the session for a resume for a while)."""
        self._closed = True
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    async def subscribe(self, channel: str, markets: Optional[Sequence[str]] = None) -> None:
        """Follows `channel` (`book`, `trades`, `arbitrage`, `whales`, `status`), for `markets` where it takes them."""
        await self._send(_op("subscribe", channel, markets))
        current = self.subscriptions.get(channel, set())
        if markets is None:
            self.subscriptions[channel] = None
        elif current is not None:
            self.subscriptions[channel] = current | set(markets)

    async def unsubscribe(self, channel: str, markets: Optional[Sequence[str]] = None) -> None:
        """Stops following `channel`, or only `markets` of it."""
        await self._send(_op("unsubscribe", channel, markets))
        if markets is None:
            self.subscriptions.pop(channel, None)
        elif self.subscriptions.get(channel) is not None:
            self.subscriptions[channel] = self.subscriptions[channel] - set(markets)  # type: ignore[operator]

    async def ping(self) -> None:
        await self._send({"op": "ping"})

    async def drop(self) -> None:
        """Cuts the connection as a network failure would; the next read reconnects and resumes."""
        if self._ws is not None:
            self._ws.transport.abort()

    async def _send(self, message: Dict[str, Any]) -> None:
        if self._ws is None:
            await self.connect()
        await self._ws.send(json.dumps(message))

    def __aiter__(self) -> "Stream":
        return self

    async def __anext__(self) -> Message:
        import websockets

        while True:
            if self._pending:
                return self._pending.pop(0)
            if self._closed:
                raise StopAsyncIteration
            if self._ws is None:
                await self._reconnect()
            try:
                text = await self._ws.recv()
            except websockets.ConnectionClosed as e:
                if self._closed:
                    raise StopAsyncIteration from None
                self._ws = None
                reason = f"{e.rcvd.code} {e.rcvd.reason}" if e.rcvd else "the connection was lost"
                return Disconnected("disconnected", "control", None, {"type": "disconnected", "reason": reason})
            try:
                data = json.loads(text)
            except ValueError:
                continue
            message = self._track(data)
            if message is not None:
                return message

    def _track(self, data: Dict[str, Any]) -> Optional[Message]:
        seq = data.get("seq")
        # A connection refused over the plan's stream limit sends one error (numbered 1, of no session) and
        # closes: it says nothing of the session, whose position is kept for the next try.
        refused = data.get("type") == "error" and data.get("code") == "limit_exceeded" and seq == 1
        if isinstance(seq, int) and not refused:
            self.last_seq = seq
        if isinstance(data.get("pos"), int):
            self.last_pos = data["pos"]
        kind = data.get("type")
        if kind == "welcome":
            new = data.get("session")
            # A welcome after a reconnect with another session: the old one is gone, and its subscriptions.
            self._resubscribe = self.session is not None and new != self.session and bool(self.subscriptions)
            self.session = new
        message = parse(data)
        if isinstance(message, Reset) and self._resubscribe:
            self._resubscribe = False
            message.resubscribed = True
            asyncio.get_running_loop().create_task(self._subscribe_again())
        return message

    async def _subscribe_again(self) -> None:
        for channel, markets in list(self.subscriptions.items()):
            await self._send(_op("subscribe", channel, sorted(markets) if markets is not None else None))

    async def _reconnect(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_timeout
        delay = 0.1
        while True:
            try:
                await self.connect()
                return
            except Exception as e:
                response = getattr(e, "response", None)
                status = getattr(response, "status_code", None)
                # A refusal that waiting will not change (a bad key, a missing route) ends the stream at once.
                if status in (400, 401, 403, 404) or loop.time() + delay > deadline:
                    raise StreamError("connect_failed", f"could not connect: {e}") from e
                wait = delay * (0.5 + random.random())
                if status == 429:
                    # Over the rate limit, or too many streams from one address: as long as the server says.
                    try:
                        wait = max(wait, float(response.headers.get("Retry-After", 1)))
                    except (TypeError, ValueError):
                        pass
                await asyncio.sleep(wait)
                delay = min(delay * 2, 5.0)


def _op(op: str, channel: str, markets: Optional[Sequence[str]]) -> Dict[str, Any]:
    message: Dict[str, Any] = {"op": op, "channel": channel}
    if markets is not None:
        message["markets"] = list(markets)
    return message


__all__ = [
    "Stream",
    "Message",
    "Continuity",
    "Stale",
    "Gap",
    "NotLive",
    "Lagged",
    "Reset",
    "Resumed",
    "Disconnected",
    "Error",
    "parse",
]
