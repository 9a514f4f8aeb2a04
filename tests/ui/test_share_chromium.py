"""The shared HTML export in real Chromium (Playwright, the system browser) with the network off: the tree and
the answer render, collapsing works, nothing is requested, and the hostile markup in the session stays text."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from tests.api.share_seed import API_KEY, HOSTILE, seed_shared_session

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs the system Chromium")


@pytest.fixture
def exported(settings: Settings, tmp_path: Path) -> Path:
    configured = settings.model_copy(update={"lm_api_key": SecretStr(API_KEY), "lm_model": "openai/fake"})
    with TestClient(create_app(configured)) as client:
        sid, _ = seed_shared_session(client, configured)
        response = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "html"})
    assert response.status_code == 200, response.text
    path = tmp_path / "shared.html"
    path.write_bytes(response.content)
    return path


@pytest.fixture
def page() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, chromium_sandbox=False, args=["--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(offline=True, java_script_enabled=True)
        try:
            yield context.new_page()
        finally:
            context.close()
            browser.close()


def test_offline_export_renders_the_tree_and_requests_nothing(exported: Path, page) -> None:  # type: ignore[no-untyped-def]
    url = exported.as_uri()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text) if message.type == "error" else None)
    response = page.goto(url)
    assert response is not None and response.ok
    page.wait_for_load_state("load")

    assert requests == [url]  # the document itself, nothing else (no fonts, images, styles or scripts)
    assert page.evaluate("performance.getEntriesByType('resource').length") == 0
    assert page.locator("details.run").count() == 1
    tree = page.locator("details.run .tree")
    for shape in ("Iteration 1", "llm_query_batched", "2 prompts", "Child RLM · depth 1", "search_docs"):
        assert tree.get_by_text(shape, exact=False).first.is_visible(), shape
    child = page.locator("details.k-child")
    assert child.locator("details.k-iteration").count() == 1  # the child's own iteration is nested under it
    assert child.get_by_text("child output line", exact=True).is_visible()  # the cell's output, open
    answer = page.locator(".answer pre")
    assert answer.is_visible() and answer.inner_text() == "The answer is 42 </pre><b>not bold</b>"
    assert page.locator(".redaction li").count() >= 2
    bars = page.locator(".bar")
    assert bars.count() >= 8 and bars.first.bounding_box()["width"] > 0  # the waterfall is laid out

    batch = page.locator("details.k-batch").first
    assert batch.locator("details.k-sub_lm").first.is_visible()
    batch.locator(":scope > summary").click()  # native collapsing, no script needed
    assert not batch.locator("details.k-sub_lm").first.is_visible()

    assert page.locator("script").count() == 0 and page.locator("[onerror]").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.title() == f"Share me {HOSTILE} · fleet-rlm"  # the title is the text, not what a script set
    assert page.get_by_text('<script>document.title="pwned"', exact=False).first.is_visible()  # shown as text
    assert API_KEY not in page.content()
    assert page.locator("img").count() == 1  # the verified PNG; the fake one is not inlined
    assert page.locator("img").evaluate("img => img.complete && img.naturalWidth") == 1
    assert not [v for v in violations if "Content Security Policy" in v], violations
