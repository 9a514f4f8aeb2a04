"""Download a URL for context: bounded in size and time, every redirect hop re-checked by the SSRF guard.

Each hop connects to an address the guard approved (the URL's host is swapped for that IP; the original name
still goes out as the Host header and TLS SNI, so certificates are verified against it). Proxies from the
environment are ignored: they would make the connection on our behalf, unchecked.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import httpx

from fleet_rlm.runtime.context.failures import URL_FAILED, URL_TOO_LARGE, cancelled, context_error
from fleet_rlm.runtime.context.netguard import AddressPolicy, CheckedTarget, check_url
from fleet_rlm.runtime.contracts import CancelToken

MAX_REDIRECTS = 5
USER_AGENT = "fleet-rlm context loader"


@dataclass
class Fetched:
    url: str
    final_url: str
    status: int
    content_type: str | None
    data: bytes
    redirects: list[str] = field(default_factory=list)


def fetch_url(
    url: str,
    *,
    allow_private: bool,
    max_bytes: int,
    timeout_s: float,
    cancel: CancelToken | None = None,
    address_allowed: AddressPolicy | None = None,
) -> Fetched:
    """GET `url` following up to MAX_REDIRECTS redirects; the body must fit in `max_bytes`."""
    deadline = time.monotonic() + timeout_s
    current = url
    redirects: list[str] = []
    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=timeout) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            if cancel is not None and cancel.cancelled:
                raise cancelled(f"download of {url}")
            target = check_url(current, allow_private=allow_private, address_allowed=address_allowed)
            try:
                with contextlib.closing(_open(client, target)) as response:
                    if response.is_redirect and "location" in response.headers:
                        current = str(target.url.join(response.headers["location"]))
                        redirects.append(current)
                        continue
                    if response.status_code >= 400:
                        raise context_error(
                            URL_FAILED,
                            f"{url} answered HTTP {response.status_code}",
                            status=502,
                            url=url,
                            http_status=response.status_code,
                        )
                    data = _read_body(response, url=url, max_bytes=max_bytes, deadline=deadline, cancel=cancel)
                    return Fetched(
                        url=url,
                        final_url=str(target.url),
                        status=response.status_code,
                        content_type=response.headers.get("content-type"),
                        data=data,
                        redirects=redirects,
                    )
            except httpx.TimeoutException as exc:
                raise _timed_out(url, timeout_s) from exc
            except httpx.HTTPError as exc:
                raise context_error(
                    URL_FAILED,
                    f"fetching {url} failed: {type(exc).__name__}: {str(exc)[:200]}",
                    status=502,
                    url=url,
                ) from exc
    raise context_error(
        URL_FAILED,
        f"{url} redirected more than {MAX_REDIRECTS} times",
        status=502,
        url=url,
    )


def _open(client: httpx.Client, target: CheckedTarget) -> httpx.Response:
    """Send the GET to the first checked address that accepts a connection (IPv6 may be unroutable)."""
    headers = {"Host": _host_header(target.url), "User-Agent": USER_AGENT, "Accept": "*/*"}
    extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
    for index, address in enumerate(target.addresses):
        request = client.build_request(
            "GET", target.url.copy_with(host=address), headers=headers, extensions=extensions
        )
        try:
            return client.send(request, stream=True)
        except httpx.ConnectError:
            if index == len(target.addresses) - 1:
                raise
    raise AssertionError("check_url returns at least one address")


def _read_body(
    response: httpx.Response, *, url: str, max_bytes: int, deadline: float, cancel: CancelToken | None
) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(url, max_bytes)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if cancel is not None and cancel.cancelled:
            raise cancelled(f"download of {url}")
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(url, max_bytes)
        if time.monotonic() > deadline:
            raise _timed_out(url, None)
        chunks.append(chunk)
    return b"".join(chunks)


def _host_header(url: httpx.URL) -> str:
    return url.netloc.decode("ascii")


def _too_large(url: str, max_bytes: int) -> Exception:
    return context_error(
        URL_TOO_LARGE,
        f"{url} is larger than {max_bytes} bytes",
        "download it and upload the file, or raise url_max_bytes",
        status=413,
        url=url,
        max_bytes=max_bytes,
    )


def _timed_out(url: str, timeout_s: float | None) -> Exception:
    limit = f" after {timeout_s:g} s" if timeout_s else ""
    return context_error(
        URL_FAILED,
        f"fetching {url} timed out{limit}",
        status=504,
        url=url,
    )
