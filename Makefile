# Every target runs through uv so the locked environment is used. `make help` lists them.
.DEFAULT_GOAL := help
UV ?= uv
PYTEST_ARGS ?=
# Both cores: many tests wait on subprocess servers and sandboxes; files stay whole on one worker, in collection
# order (tests/conftest.py puts the modules with slow tests first; xdist's default puts one-test modules last).
PYTEST_WORKERS ?= 2

.PHONY: help install run test lint format typecheck imports docs docs-check api-sync api-check ui-build ui-check ui-test ui-e2e bench bench-quick

help: ## List targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

install: ## Create the virtualenv from uv.lock
	$(UV) sync --frozen

run: ## Serve the workbench on 127.0.0.1:8000 (SQLite, local sandbox)
	$(UV) run fleet web

test: ## Run the whole test suite (set FLEET_DATABASE_URL to run it on Postgres)
	$(UV) run --frozen pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --timeout 900 $(PYTEST_ARGS)

lint: ## Ruff lint + format check, mypy, import layers, docs and OpenAPI drift
	$(UV) run --frozen ruff check src tests scripts migrations
	$(UV) run --frozen ruff format --check src tests scripts migrations
	$(UV) run --frozen mypy
	$(UV) run --frozen lint-imports
	$(UV) run --frozen python scripts/gen_docs.py --check
	$(UV) run --frozen python scripts/gen_events_docs.py --check
	$(UV) run --frozen python scripts/gen_openapi.py --check
	$(UV) run --frozen python scripts/gen_error_docs.py --check

format: ## Apply ruff fixes and formatting
	$(UV) run ruff check --fix src tests scripts migrations
	$(UV) run ruff format src tests scripts migrations

docs: ## Regenerate generated docs (configuration, events + JSON Schema)
	$(UV) run python scripts/gen_docs.py
	$(UV) run python scripts/gen_events_docs.py

docs-check: ## Fail when generated docs drift from the code
	$(UV) run --frozen python scripts/gen_docs.py --check
	$(UV) run --frozen python scripts/gen_events_docs.py --check

api-sync: ## Regenerate openapi.yaml from the app
	$(UV) run python scripts/gen_openapi.py

api-check: ## Fail when openapi.yaml drifts from the app
	$(UV) run --frozen python scripts/gen_openapi.py --check

# Web UI (src/frontend -> src/fleet_rlm/ui/dist, committed so `fleet web` needs no Node).
UI := src/frontend
UI_OUT := $(UI)/src/lib/api src/fleet_rlm/ui/dist

ui-build: ## Regenerate API/event types and rebuild the committed web UI (needs Node + npm)
	cd $(UI) && npm run gen && npm run build

ui-check: ## Rebuild the UI from package-lock.json and fail if the committed build or types drift
	cd $(UI) && npm ci --no-audit --no-fund && npm run gen && npm run build
	git diff --exit-code --stat -- $(UI_OUT) || { echo "web UI build is stale: run 'make ui-build' and commit"; exit 1; }
	test -z "$$(git status --porcelain --untracked-files=all -- $(UI_OUT))" || { git status --short -- $(UI_OUT); echo "web UI build is stale: run 'make ui-build' and commit"; exit 1; }

ui-test: ## Unit and component tests of the web UI (Vitest)
	cd $(UI) && npx vitest run

ui-e2e: ## Browser tests: Playwright + system Chromium against a real `fleet web` and the fake LM
	cd $(UI) && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npx playwright test

bench: ## Performance suite: every scenario, printed table + JSON in bench/results/ (Postgres with FLEET_TEST_POSTGRES_URL)
	$(UV) run --frozen fleet-rlm bench perf

bench-quick: ## Performance suite, small sizes (what CI runs; figures only, never asserted)
	$(UV) run --frozen fleet-rlm bench perf --quick
