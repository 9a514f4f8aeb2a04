"""Share exports: HTML (one file, the tree, escaped, redacted, CSP), Markdown (fenced, escaped) and JSON; no key
or auth header in any format; identities and host paths replaced by default in the shared forms."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

from .isolation import assert_error, bearer, token_settings
from .share_seed import API_KEY, HOSTILE, seed_shared_session

SECRET_BITS = (API_KEY, "abcDEF0123456789xyz")
ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "header", "h1", "h2", "h3", "div", "section"}
ALLOWED_TAGS |= {"ul", "li", "details", "summary", "span", "i", "pre", "img", "footer"}


def _tags(page: str) -> list[tuple[str, list[str]]]:
    """Every element of the page with its attribute names, as a browser's tokenizer sees them."""
    found: list[tuple[str, list[str]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [name for name, _ in attrs]))

    Collect().feed(page)
    return found


def _configured(settings: Settings) -> Settings:
    return settings.model_copy(update={"lm_api_key": SecretStr(API_KEY), "lm_model": "openai/fake"})


def test_html_export_is_one_safe_redacted_file_with_the_tree(settings: Settings) -> None:
    configured = _configured(settings)
    with TestClient(create_app(configured)) as client:
        sid, run_id = seed_shared_session(client, configured)
        me = client.get("/api/v1/auth/me").json()
        response = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "html"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-disposition"] == f'attachment; filename="fleet-session-{sid}.html"'
    assert "default-src 'none'" in response.headers["content-security-policy"]
    page = response.text
    assert '<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;; style-src' in page
    tags = _tags(page)
    assert {tag for tag, _ in tags} <= ALLOWED_TAGS, {tag for tag, _ in tags} - ALLOWED_TAGS
    assert not [attr for _, attrs in tags for attr in attrs if attr.startswith("on")]
    assert "&lt;script&gt;document.title=&quot;pwned&quot;" in page  # shown, as text
    assert "&lt;/pre&gt;&lt;b&gt;not bold&lt;/b&gt;" in page
    assert not re.search(r"(src|href)=\"(?!data:image/png;base64,)", page)  # nothing to fetch, only data: images
    assert "@import" not in page and "url(" not in page
    for secret in SECRET_BITS:
        assert secret not in page
    assert str(configured.data_dir) not in page and me["id"] not in page and me["workspace_id"] not in page
    assert "Redaction" in page and "configured_secret: " in page and "host_path: " in page
    for shape in ("Iteration 1", "llm_query_batched", "2 prompts", "Child RLM · depth 1", "search_docs"):
        assert shape in page, shape
    child_block = page[page.index("Child RLM · depth 1") :]
    assert "summarise part one" in child_block and "child output line" in child_block
    assert 'style="left:' in page and "rate limited" in page
    assert "data:image/png;base64,iVBOR" in page and "not a valid image of its type" in page
    assert "# Notes" in page and run_id in page


class Outline(HTMLParser):
    """The page's trace tree as [kind, title, children], read from its markup as a browser nests it."""

    def __init__(self) -> None:
        super().__init__()
        self.root: list[Any] = []
        self.stack: list[tuple[str, list[Any]]] = [("", self.root)]
        self.title: list[Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in ("div", "details") and "node" in classes:
            kind = next(c[2:] for c in classes if c.startswith("k-"))
            entry: list[Any] = [kind, "", []]
            self.stack[-1][1].append(entry)
            self.stack.append((tag, entry[2]))
            self._entry = entry
        elif tag in ("div", "details"):
            self.stack.append((tag, self.stack[-1][1]))
        if tag == "span" and "title" in classes:
            self.title = self._entry

    def handle_endtag(self, tag: str) -> None:
        if tag in ("div", "details"):
            self.stack.pop()
        if tag == "span":
            self.title = None

    def handle_data(self, data: str) -> None:
        if self.title is not None and not self.title[1]:
            self.title[1] = data.strip()


def test_html_export_draws_the_workbench_tree_for_any_width(settings: Settings) -> None:
    configured = _configured(settings)
    with TestClient(create_app(configured)) as client:
        sid, _ = seed_shared_session(client, configured)
        page = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "html"}).text
    parser = Outline()
    parser.feed(page[page.index('<div class="tree">') : page.index('<div class="answer"')])
    cell = [
        ["batch", "llm_query_batched", [["sub_lm", "Sub-LM #1", []], ["sub_lm", "Sub-LM #2", []]]],
        ["child", "Child RLM · depth 1", [["iteration", "Iteration 1", [["code", "REPL cell", []]]]]],
        ["tool", "search_docs", []],
    ]
    assert parser.root == [["event", "Route: rlm", []], ["iteration", "Iteration 1", [["code", "REPL cell", cell]]]]
    for raw in ("turn_started", "turn_finished", ">final<", ">usage<", ">status<"):
        assert raw not in page, raw  # lifecycle events are the run itself, not steps
    assert "@media (max-width:640px)" in page and "grid-template-columns:minmax(0,1fr)" in page
    assert "Steps are grouped as in the workbench" in page


def test_markdown_export_fences_and_escapes(settings: Settings) -> None:
    configured = _configured(settings)
    with TestClient(create_app(configured)) as client:
        sid, _ = seed_shared_session(client, configured)
        response = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "markdown"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/markdown")
    text = response.text
    for secret in SECRET_BITS:
        assert secret not in text
    assert str(configured.data_dir) not in text
    assert text.startswith("# Share me &lt;script&gt;")
    assert "## Turn 1" in text and "<details>" in text and "**Answer**" in text
    outside_fences = re.sub(r"(?ms)^\s*(`{3,})[a-z]*\n.*?^\s*\1\s*$", "", text)
    assert "<script" not in outside_fences and "<img" not in outside_fences
    assert "**llm\\_query\\_batched** · 2 prompts" in text and "**Child RLM · depth 1** · summarise part one" in text


def test_json_export_is_the_bundle_without_secrets(settings: Settings) -> None:
    configured = _configured(settings)
    with TestClient(create_app(configured)) as client:
        sid, run_id = seed_shared_session(client, configured)
        me = client.get("/api/v1/auth/me").json()
        plain = client.get(f"/api/v1/sessions/{sid}/export")
        redacted = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "json", "redact": "true"})
        kept = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "html", "redact": "false"})
        bad = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "pdf"})
    bundle = plain.json()
    assert bundle["format"] == "fleet-rlm.session-export/1" and bundle["runs"][0]["id"] == run_id
    assert plain.headers["content-disposition"] == f'attachment; filename="fleet-session-{sid}.json"'
    for secret in SECRET_BITS:
        assert secret not in plain.text and secret not in redacted.text and secret not in kept.text
    assert bundle["session"]["workspace_id"] == me["workspace_id"]  # the archival bundle keeps identities
    assert redacted.json()["session"]["workspace_id"] == "workspace-1" and me["id"] not in redacted.text
    assert str(configured.data_dir) in kept.text and "were kept" in kept.text
    assert json.dumps(HOSTILE)[1:-1] in plain.text
    assert_error(bad, 422, "invalid_input")


def test_only_the_owner_can_export(settings: Settings) -> None:
    configured = token_settings(settings)
    with TestClient(create_app(configured)) as client:
        alice, bob = bearer(configured, "alice"), bearer(configured, "bob")
        sid = client.post("/api/v1/sessions", json={"title": "mine"}, headers=alice).json()["id"]
        for fmt in ("json", "html", "markdown"):
            assert_error(client.get(f"/api/v1/sessions/{sid}/export?format={fmt}", headers=bob), 404, "not_found")
        page = client.get(f"/api/v1/sessions/{sid}/export?format=html", headers=alice)
        assert page.status_code == 200 and "alice" not in page.text
