"""The web UI is served by `create_app` from the committed build: no Node needed at run time."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.ui import dist_dir, index_file


def test_the_committed_build_is_present() -> None:
    index = index_file()
    assert index is not None, "src/fleet_rlm/ui/dist/index.html is missing: run `make ui-build` and commit it"
    assert any((dist_dir() / "assets").glob("*.js"))


def test_root_and_app_redirect_to_the_workspace(settings: Settings) -> None:
    with TestClient(create_app(settings), follow_redirects=False) as client:
        for path in ("/", "/app"):
            response = client.get(path)
            assert response.status_code == 307
            assert response.headers["location"] == "/app/workspace"


def test_deep_links_get_index_html_that_is_revalidated(settings: Settings) -> None:
    expected = index_file().read_text()  # type: ignore[union-attr]
    with TestClient(create_app(settings)) as client:
        for path in ("/app/workspace", "/app/workspace/abc123", "/app/optimization", "/app/volumes", "/app/settings"):
            response = client.get(path)
            assert response.status_code == 200, path
            assert response.headers["content-type"].startswith("text/html")
            assert response.headers["cache-control"] == "no-cache"
            assert response.text == expected


def test_hashed_assets_are_cached_for_a_year_and_referenced_by_index(settings: Settings) -> None:
    index = index_file().read_text()  # type: ignore[union-attr]
    referenced = re.findall(r'(?:src|href)="(/app/assets/[^"]+)"', index)
    assert referenced, "index.html references no /app/assets/ files"
    with TestClient(create_app(settings)) as client:
        for url in referenced:
            response = client.get(url)
            assert response.status_code == 200, url
            assert "immutable" in response.headers["cache-control"]
            assert response.content == (dist_dir() / url.removeprefix("/app/")).read_bytes()
        missing = client.get("/app/assets/nope-123.js")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "not_found"


def test_api_routes_win_over_the_spa_and_stay_out_of_openapi(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/v1/info").json()["name"] == "fleet-rlm"
        assert client.get("/api/v1/nope").status_code == 404
        paths = client.get("/openapi.json").json()["paths"]
        assert not any(path == "/" or path.startswith("/app") for path in paths)
