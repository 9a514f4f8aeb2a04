"""Check a `/url` or `/repo` target when it is entered, so a bad one is refused at once, not when the turn runs.

The server checks again when it loads the context (its policy is the one that counts). Here: URL syntax and
scheme; repository URL shape (https, or file:// only when private targets are allowed; local paths refused);
and, when the chat runs the embedded server (its settings are this process's), the same address policy
(`url_allow_private`) the server applies. A host that cannot be resolved from here is left to the server.
"""

from __future__ import annotations

from fleet_rlm.errors import ALLOW_PRIVATE_URLS, FleetError
from fleet_rlm.netguard import ALLOWED_SCHEMES, GuardCodes
from fleet_rlm.runtime.context.failures import REPO_BLOCKED, URL_BLOCKED, context_error
from fleet_rlm.runtime.context.netguard import CONTEXT_CODES, REPO_CODES, check_url

ALLOW_ACTION = f"an administrator can set {ALLOW_PRIVATE_URLS} to allow localhost and private addresses"


def check_url_target(url: str, *, allow_private: bool | None, codes: GuardCodes = CONTEXT_CODES) -> None:
    """Raise the server's `context_url_blocked` error for a target it would refuse.

    `allow_private` is the server's policy when known (embedded server), None for a remote server (then only
    the syntax and scheme are checked here).
    """
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ALLOWED_SCHEMES:
        check_url(url, allow_private=True, codes=codes)  # raises the scheme/syntax refusal without resolving
        return
    if allow_private is None:
        _syntax_only(url)
        return
    try:
        check_url(url, allow_private=allow_private, codes=codes)
    except FleetError as exc:
        if exc.code == codes.failed:  # unresolvable from this machine: the server decides
            return
        raise


def _syntax_only(url: str) -> None:
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise _invalid(url) from exc
    if not parsed.host:
        raise _invalid(url)


def _invalid(url: str) -> FleetError:
    return context_error(URL_BLOCKED, f"invalid URL {url[:200]!r}", "give an http(s) URL with a host")


def check_repo_target(url: str, *, allow_private: bool | None) -> None:
    """Raise `context_repo_blocked` for a repository target the server would refuse."""
    if url.startswith("https://"):
        check_url_target(url, allow_private=allow_private, codes=REPO_CODES)
        return
    if url.startswith("file://") and allow_private is not False:
        return  # allowed only with url_allow_private; a remote server decides
    raise context_error(
        REPO_BLOCKED,
        f"repository {url[:200]!r} is not allowed",
        "give an https:// URL of a public repository (ssh, git:// and local paths are refused; for file:// "
        f"repositories {ALLOW_ACTION.removeprefix('an administrator can ')})",
        status=403,
    )
