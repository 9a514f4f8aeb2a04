"""HTTP transports whose every connection goes to an address the guard checked (no second DNS lookup).

An httpcore network backend sits under the connection pool: for each new connection it resolves the host once
(`netguard.resolve`), checks every answer with the guard when that origin is guarded, and opens the socket to
those checked IP addresses only. TLS and the Host header still use the URL's name (httpcore does the handshake
with the origin's host name over the socket it is given), so certificates are verified as usual. A pooled
connection is reused only for its origin, and a new one passes the same check; redirects are never followed by
our clients. The same backend wraps httpcore (httpx) and httpcore2 (httpx2, used by the MCP SDK): both share
the NetworkBackend interface.

`guarded(host, port)` says which origins must resolve only to public addresses; the others are still pinned
(one lookup per connection) but not refused. Transports are built without proxies: a proxy would resolve the
name itself, unchecked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import anyio.to_thread
import httpx

from fleet_rlm.errors import FleetError
from fleet_rlm.netguard import GuardCodes, checked_addresses

Guarded = Callable[[str, int], bool]
"""(host, port) -> True when connections to it may reach only public addresses."""

T = TypeVar("T")


def always(_host: str, _port: int) -> bool:
    return True


def _addresses(host: str, port: int, guarded: Guarded, codes: GuardCodes, connect_error: type[Exception]) -> Any:
    try:
        return checked_addresses(host, port, allow_private=not guarded(host, port), codes=codes)
    except FleetError as exc:  # the client's own ConnectError, so callers see an ordinary connect failure
        raise connect_error(f"{exc.message} ({exc.code})") from exc


def _first_that_connects(addresses: Iterable[str], connect: Callable[[str], T]) -> T:
    failure: Exception | None = None
    for address in addresses:
        try:
            return connect(address)
        except Exception as exc:  # the library's ConnectError / ConnectTimeout: try the next checked address
            failure = exc
    assert failure is not None, "checked_addresses returns at least one address"
    raise failure


class PinnedBackend:
    """A sync httpcore/httpcore2 NetworkBackend: resolve once, check, connect to the checked IP."""

    def __init__(self, inner: Any, *, guarded: Guarded, codes: GuardCodes, connect_error: type[Exception]) -> None:
        self._inner = inner
        self._guarded = guarded
        self._codes = codes
        self._connect_error = connect_error

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        addresses = _addresses(host, port, self._guarded, self._codes, self._connect_error)
        options = list(socket_options or [])
        return _first_that_connects(
            addresses,
            lambda ip: self._inner.connect_tcp(
                ip, port, timeout=timeout, local_address=local_address, socket_options=options
            ),
        )

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise self._connect_error("unix sockets are not reachable through a pinned transport")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class AsyncPinnedBackend:
    """The async form (AsyncNetworkBackend); the lookup runs in a worker thread."""

    def __init__(self, inner: Any, *, guarded: Guarded, codes: GuardCodes, connect_error: type[Exception]) -> None:
        self._inner = inner
        self._guarded = guarded
        self._codes = codes
        self._connect_error = connect_error

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        addresses = await anyio.to_thread.run_sync(
            _addresses, host, port, self._guarded, self._codes, self._connect_error
        )
        options = list(socket_options or [])
        failure: Exception | None = None
        for ip in addresses:
            try:
                return await self._inner.connect_tcp(
                    ip, port, timeout=timeout, local_address=local_address, socket_options=options
                )
            except Exception as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise self._connect_error("unix sockets are not reachable through a pinned transport")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def pin(transport: T, *, guarded: Guarded = always, codes: GuardCodes = GuardCodes()) -> T:
    """Put the pinned backend under `transport`'s pool (an httpx or httpx2 `HTTPTransport` or
    `AsyncHTTPTransport` built without a proxy) and return it."""
    pool = transport._pool  # type: ignore[attr-defined]
    kind = type(pool).__name__
    if kind not in ("ConnectionPool", "AsyncConnectionPool"):
        raise TypeError(f"cannot pin a {kind} (a proxy resolves names itself)")
    core = importlib.import_module(type(pool).__module__.split(".", 1)[0])  # httpcore or httpcore2
    wrapper = AsyncPinnedBackend if kind.startswith("Async") else PinnedBackend
    pool._network_backend = wrapper(
        pool._network_backend, guarded=guarded, codes=codes, connect_error=core.ConnectError
    )
    return transport


def pinned_transport(
    *, guarded: Guarded = always, codes: GuardCodes = GuardCodes(), **options: Any
) -> httpx.HTTPTransport:
    """An httpx transport whose connections go only to checked addresses (`options`: HTTPTransport's)."""
    return pin(httpx.HTTPTransport(**options), guarded=guarded, codes=codes)


def pinned_async_transport(
    *, guarded: Guarded = always, codes: GuardCodes = GuardCodes(), **options: Any
) -> httpx.AsyncHTTPTransport:
    """The async form of `pinned_transport`."""
    return pin(httpx.AsyncHTTPTransport(**options), guarded=guarded, codes=codes)
