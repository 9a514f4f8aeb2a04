"""`python -m fleet_rlm.testing.fake_daytona --port N`: serve the fake Daytona API until interrupted."""

from __future__ import annotations

import argparse
from pathlib import Path

from .server import DEFAULT_SNAPSHOTS, FakeDaytonaServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake Daytona API + toolbox server (for tests; not secure).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--api-key", default=None, help="bearer key to require (random when omitted)")
    parser.add_argument("--root", type=Path, default=None, help="directory for sandboxes and volumes")
    parser.add_argument("--snapshot", action="append", default=None, help="pre-registered snapshot name")
    args = parser.parse_args(argv)
    snapshots = tuple(args.snapshot) if args.snapshot else DEFAULT_SNAPSHOTS
    server = FakeDaytonaServer(
        api_key=args.api_key, host=args.host, port=args.port, root=args.root, snapshots=snapshots
    )
    print(f"DAYTONA_API_URL={server.api_url}", flush=True)
    print(f"DAYTONA_API_KEY={server.api_key}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
