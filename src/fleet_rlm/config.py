"""Settings: one flat model read from the environment, `.env` and an optional TOML policy file.

Secrets (API keys, signing keys) come only from the environment or `.env`; the TOML policy file may hold
limits, modes and backends but is rejected if it names a secret. Every field here is documented in
docs/configuration.md, which `scripts/gen_docs.py` regenerates and a test keeps in sync.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from fleet_rlm.budgets import (
    BatchConcurrency,
    MaxDepth,
    MaxIters,
    MaxLLMCalls,
    MaxOutputChars,
    TurnBudgets,
    TurnTimeoutS,
)
from fleet_rlm.mcp_servers import MCP_LIMIT, SERVERS_HELP, McpServers

ExecutionMode = Literal["auto", "direct", "tools", "rlm"]
SandboxBackend = Literal["local", "daytona"]
AuthMode = Literal["none", "token", "oidc"]

DEFAULT_POLICY_FILE = Path("config/fleet.toml")

# Fields that may never come from the TOML policy file (it is meant to be committed and shared).
SECRET_FIELDS = frozenset(
    {
        "jwt_secret",
        "secret_key",
        "lm_api_key",
        "delegate_lm_api_key",
        "daytona_api_key",
        "database_url",
    }
)


MIN_JWT_SECRET_BYTES = 32


def split_list(value: str | None) -> list[str]:
    """The entries of a comma-separated setting, stripped, empty ones dropped."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class ConfigError(ValueError):
    """A setting or the policy file is wrong; the message says which and what to do."""


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """Every user-visible setting. Environment names are `FLEET_<FIELD>` unless an alias says otherwise."""

    model_config = SettingsConfigDict(
        env_prefix="FLEET_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        populate_by_name=True,
    )

    # --- storage -------------------------------------------------------------------------------------------
    data_dir: Path = Field(default=Path("~/.fleet-rlm"), description="Holds fleet.db (SQLite), workspaces/, logs/.")
    database_url: str | None = Field(
        default=None,
        description=(
            "SQLAlchemy async URL. Empty means SQLite at <data_dir>/fleet.db. "
            "Postgres: postgresql+asyncpg://user:pass@host:5432/db (run `fleet-rlm db upgrade` first)."
        ),
    )
    config: Path | None = Field(default=None, description="TOML policy file (default config/fleet.toml).")

    # --- server --------------------------------------------------------------------------------------------
    host: str = Field(default="127.0.0.1", description="Address `fleet web` and `serve-api` bind to.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port `fleet web` and `serve-api` bind to.")
    log_level: Literal["debug", "info", "warning", "error"] = Field(default="info", description="Server log level.")
    allowed_hosts: str | None = Field(
        default=None,
        description=(
            "Comma-separated extra `Host` names the server answers to (loopback names, `host` and the address a "
            "request arrived on are always allowed); `*` allows any. Set the public name when binding 0.0.0.0."
        ),
    )
    allowed_origins: str | None = Field(
        default=None,
        description=(
            "Comma-separated extra browser origins (scheme://host[:port]) allowed to open WebSockets and send "
            "POST/PUT/PATCH/DELETE, e.g. a separately served UI; the server's own origin is always allowed."
        ),
    )
    shutdown_grace_s: float = Field(
        default=10.0,
        ge=0,
        description="On SIGTERM/Ctrl-C, how long running turns may finish (no new turns start meanwhile) before "
        "they are stopped and recorded `interrupted`.",
    )
    http_header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="A connection must send a request's complete headers within this time, or it is closed "
        "(slow-header clients cannot hold sockets).",
    )
    http_keep_alive_s: int = Field(default=5, ge=1, description="Idle keep-alive connections are closed after this.")
    http_max_connections: int | None = Field(
        default=None, ge=1, description="Concurrent connections and tasks before new ones get 503 (unset: no limit)."
    )
    ws_compression: bool = Field(
        default=False,
        description="Offer permessage-deflate on WebSockets (off: events are small, it costs ~290 KB a socket).",
    )
    cli_server: Literal["local", "inprocess"] = Field(
        default="local",
        description=(
            "How the CLI reaches its server without --url-server: local (a loopback server started on first use "
            "and reused until idle) or inprocess (the app inside the CLI process, as before)."
        ),
    )
    local_server_idle_s: float = Field(
        default=900.0, gt=0, description="The CLI's local server stops after this many idle seconds."
    )

    # --- auth ----------------------------------------------------------------------------------------------
    auth_mode: AuthMode = Field(
        default="none",
        description="none (one local user, loopback only), token (HS256 JWT) or oidc (JWKS).",
    )
    jwt_secret: SecretStr | None = Field(default=None, description="HS256 signing key for auth_mode=token.")
    oidc_jwks_url: str | None = Field(default=None, description="JWKS URL for auth_mode=oidc.")
    oidc_issuer: str | None = Field(default=None, description="Expected `iss` for auth_mode=oidc.")
    oidc_audience: str | None = Field(default=None, description="Expected `aud` for auth_mode=oidc.")
    admin_users: str | None = Field(
        default=None,
        description="Comma-separated user names (token `sub`) who are admins in token/oidc modes (see security.md).",
    )
    oidc_admin_claim: str | None = Field(
        default=None, description="auth_mode=oidc: a claim (e.g. groups, roles) that makes a user an admin..."
    )
    oidc_admin_value: str | None = Field(
        default=None, description="...when it equals, or is a list containing, this value (e.g. fleet-admin)."
    )
    allow_private_lm_bases: bool = Field(
        default=False,
        description="token/oidc: allow LLM profiles whose api_base is loopback, private or link-local.",
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="Fernet key encrypting stored secrets (API keys, profile and MCP header values); when unset a "
        "0600 key file is created in data_dir.",
    )

    # --- models (names users already know from dspy tooling) ----------------------------------------------
    lm_model: str | None = Field(
        default=None,
        validation_alias=_env("FLEET_LM_MODEL", "DSPY_LM_MODEL"),
        description="Root model, any LiteLLM model string (env DSPY_LM_MODEL).",
    )
    lm_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=_env("FLEET_LM_API_KEY", "DSPY_LLM_API_KEY", "DSPY_LM_API_KEY"),
        description="API key of the root model (env DSPY_LLM_API_KEY).",
    )
    lm_api_base: str | None = Field(
        default=None,
        validation_alias=_env("FLEET_LM_API_BASE", "DSPY_LM_API_BASE"),
        description="Base URL of the root model's API (env DSPY_LM_API_BASE).",
    )
    delegate_lm_model: str | None = Field(
        default=None,
        validation_alias=_env("FLEET_DELEGATE_LM_MODEL", "DSPY_DELEGATE_LM_MODEL"),
        description="Sub-LM for llm_query and children (env DSPY_DELEGATE_LM_MODEL); defaults to the root model.",
    )
    delegate_lm_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=_env("FLEET_DELEGATE_LM_API_KEY", "DSPY_DELEGATE_LM_API_KEY"),
        description="API key of the sub-LM (env DSPY_DELEGATE_LM_API_KEY).",
    )
    delegate_lm_api_base: str | None = Field(
        default=None,
        validation_alias=_env("FLEET_DELEGATE_LM_API_BASE", "DSPY_DELEGATE_LM_API_BASE"),
        description="Base URL of the sub-LM's API (env DSPY_DELEGATE_LM_API_BASE).",
    )
    lm_timeout_s: float = Field(default=120.0, gt=0, description="Timeout of one LM request, seconds.")
    lm_num_retries: int = Field(default=3, ge=0, description="Retries (with backoff) on 429/5xx/timeouts.")

    # --- turns ---------------------------------------------------------------------------------------------
    default_mode: ExecutionMode = Field(default="auto", description="Execution mode when a turn names none.")
    # bounds: fleet_rlm.budgets (the same for users' runtime settings and a turn's own fields)
    max_iters: MaxIters = Field(default=20, description="RLM iterations per turn.")
    max_llm_calls: MaxLLMCalls = Field(default=200, description="LM calls per turn, shared with children.")
    max_depth: MaxDepth = Field(default=2, description="Deepest level of rlm_query children.")
    turn_timeout_s: TurnTimeoutS = Field(default=1800.0, description="Wall-clock limit of one turn, seconds.")
    batch_concurrency: BatchConcurrency = Field(default=8, description="Parallel sub-LM calls in llm_query_batched.")
    rlm_context_threshold_chars: int = Field(
        default=200_000, ge=0, description="In auto mode, contexts at least this large always go to rlm."
    )
    execution: Literal["inline", "queue"] = Field(
        default="inline",
        description="inline: a turn runs in the server that receives it (the only mode on SQLite). queue (Postgres): "
        "turns and optimization runs wait in a Procrastinate queue for `fleet-rlm worker` processes.",
    )
    run_heartbeat_s: float = Field(default=5.0, gt=0, description="How often a running turn stamps its heartbeat.")
    turn_processes: int | None = Field(
        default=None,
        ge=0,
        le=64,
        description="Worker processes that run turns; unset: one per core (at most 8) for `fleet web` and `serve-api`, "
        "so live events stay prompt while turns compute, and 0 for the CLI's local server. 0: threads of the API "
        "process (no workers to start, but under concurrent turns delivery queues behind their computation).",
    )
    recording_enabled: bool = Field(
        default=True, description="Record every LM request and response of a run (for `fleet-rlm replay`)."
    )
    recording_max_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=0,
        description="Request and response bytes recorded per run; later calls are noted by hash only.",
    )
    run_stale_after_s: float = Field(
        default=30.0, gt=0, description="A running run without a heartbeat this long is marked interrupted."
    )
    upload_max_bytes: int = Field(default=50 * 1024 * 1024, ge=1, description="Largest accepted upload.")
    url_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1, description="Largest URL body fetched.")
    context_max_chars: int = Field(default=200_000_000, ge=1, description="Total characters of one turn's context.")
    context_dir_max_chars: int = Field(
        default=2_000_000, ge=1, description="Text inlined from one workspace directory given as context."
    )
    url_timeout_s: float = Field(default=30.0, gt=0, description="Time to fetch one URL, redirects included.")
    repo_timeout_s: float = Field(default=180.0, gt=0, description="Time limit of one repository clone.")
    repo_max_bytes: int = Field(default=500 * 1024 * 1024, ge=1, description="Largest clone kept in a workspace.")
    url_allow_private: bool = Field(default=False, description="Allow URL context from loopback and private addresses.")

    # --- MCP servers as tools (docs/mcp.md) -----------------------------------------------------------------
    mcp_servers: McpServers = Field(default=[], description=SERVERS_HELP)
    mcp_tool_timeout_s: float = Field(default=30.0, gt=0, description="Time limit of one MCP tool call.")
    mcp_connect_timeout_s: float = Field(default=20.0, gt=0, description="Time to start/connect an MCP server.")
    mcp_allow_private_urls: bool = Field(
        default=False, description="token/oidc: allow users' MCP server URLs on loopback or private addresses."
    )
    mcp_result_max_bytes: int = Field(default=8 << 20, ge=1 << 16, le=1 << 28, description=MCP_LIMIT % "bytes")
    mcp_result_max_depth: int = Field(default=64, ge=4, le=200, description=MCP_LIMIT % "levels of nesting")
    mcp_result_max_items: int = Field(default=200_000, ge=1000, le=5_000_000, description=MCP_LIMIT % "JSON values")

    # --- document limits (untrusted uploads, URL bodies and workspace files converted to text) --------------
    document_max_uncompressed_mb: int = Field(
        default=256, ge=1, description="Refuse a zip-based document (DOCX, ...) that inflates to more, MiB."
    )
    document_max_entries: int = Field(default=10_000, ge=1, description="Refuse an archive with more entries.")
    document_max_compression_ratio: float = Field(
        default=100.0, gt=1, description="Refuse an archive entry over 1 MiB that inflates more than this many times."
    )
    document_max_nesting: int = Field(
        default=2, ge=0, description="Deepest archive nested inside a document (an embedded spreadsheet is 1)."
    )
    document_max_pages: int = Field(default=5_000, ge=1, description="Refuse a PDF with more pages.")
    document_convert_timeout_s: float = Field(
        default=60.0, gt=0, description="Wall-clock and CPU limit of converting one PDF/DOCX/large HTML, seconds."
    )
    document_convert_memory_mb: int = Field(
        default=1024, ge=128, description="Address-space limit of the document converter process, MiB."
    )

    # --- sandbox -------------------------------------------------------------------------------------------
    sandbox_backend: SandboxBackend = Field(default="local", description="local (default) or daytona.")
    sandbox_require_isolation: bool = Field(
        default=False, description="Refuse to run code when bubblewrap isolation is unavailable."
    )
    sandbox_isolation: Literal["auto", "bubblewrap", "reduced"] = Field(
        default="auto", description="auto uses bubblewrap when installed; reduced forces limits-only mode."
    )
    sandbox_interrupt_grace_s: float = Field(
        default=3.0, gt=0, description="After a cell's timeout interrupt, wait this long before killing."
    )
    sandbox_tmp_mb: int = Field(default=256, ge=16, description="Size of a sandbox's private /tmp, MiB.")
    sandbox_memory_mb: int = Field(default=1024, ge=64, description="Address-space limit of a worker, MiB.")
    sandbox_cpu_seconds: int = Field(default=600, ge=1, description="CPU-time limit of a worker, seconds.")
    sandbox_max_processes: int = Field(default=64, ge=1, description="Process/thread limit inside a sandbox.")
    sandbox_max_file_mb: int = Field(default=512, ge=1, description="Largest file a sandbox may write, MiB.")
    sandbox_cell_timeout_s: float = Field(default=120.0, gt=0, description="Wall-clock limit of one cell.")
    sandbox_output_max_chars: MaxOutputChars = Field(
        default=20_000, description="Output kept per cell (head + tail; the rest is counted)."
    )
    sandbox_pool_size: int = Field(default=2, ge=0, description="Pre-started local workers kept warm.")
    sandbox_idle_timeout_s: float = Field(
        default=900.0, gt=0, description="A session's sandbox is released after this idle time."
    )

    # --- daytona -------------------------------------------------------------------------------------------
    daytona_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=_env("DAYTONA_API_KEY", "FLEET_DAYTONA_API_KEY"),
        description="Daytona API key (env DAYTONA_API_KEY).",
    )
    daytona_api_url: str | None = Field(
        default=None,
        validation_alias=_env("DAYTONA_API_URL", "FLEET_DAYTONA_API_URL"),
        description="Daytona API URL (env DAYTONA_API_URL).",
    )
    daytona_target: str | None = Field(
        default=None,
        validation_alias=_env("DAYTONA_TARGET", "FLEET_DAYTONA_TARGET"),
        description="Daytona target region (env DAYTONA_TARGET).",
    )
    daytona_snapshot: str = Field(
        default="fleet-rlm-worker", description="Snapshot with the worker baked in (daytona-snapshot)."
    )
    daytona_volume: str = Field(default="fleet-rlm-workspaces", description="Volume holding durable roots.")
    daytona_network_block_all: bool = Field(default=True, description="Block all sandbox egress.")
    daytona_network_allow_list: str | None = Field(
        default=None, description="Comma-separated CIDRs sandboxes may reach (overrides block-all)."
    )
    daytona_auto_stop_minutes: int = Field(default=15, ge=0, description="Stop idle sandboxes after this.")
    daytona_auto_delete_minutes: int = Field(default=60, ge=-1, description="Delete stopped sandboxes after.")

    # --- tracing (OpenTelemetry) ----------------------------------------------------------------------------
    otel_enabled: bool | None = Field(
        default=None,
        description="Export every run as an OpenTelemetry trace (OTLP/HTTP). Unset: on when "
        "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; the standard OTEL_* variables "
        "set endpoint, headers, timeout, sampler, service name and queue size (docs/tracing.md).",
    )
    otel_capture_content: bool = Field(
        default=False,
        description="Put prompts, completions, code, REPL output, tool arguments and answers on spans "
        "(off: only models, roles, sizes, tokens and timings).",
    )
    otel_trace_url_template: str | None = Field(
        default=None,
        description="Link from a run to its trace, e.g. http://localhost:16686/trace/{trace_id}; "
        "{trace_id} and {span_id} are filled in and the API returns it as the run's trace_url.",
    )

    @field_validator("jwt_secret", mode="after")
    @classmethod
    def _strong_jwt_secret(cls, value: SecretStr | None) -> SecretStr | None:
        secret = value.get_secret_value() if value is not None else ""
        if secret and len(secret.encode()) < MIN_JWT_SECRET_BYTES:
            raise ValueError(
                f"FLEET_JWT_SECRET must be at least {MIN_JWT_SECRET_BYTES} bytes "
                "(generate one with `python -c 'import secrets; print(secrets.token_urlsafe(48))'`)"
            )
        return value

    @field_validator("allowed_origins", mode="after")
    @classmethod
    def _origins_are_origins(cls, value: str | None) -> str | None:
        for origin in split_list(value):
            scheme, _, rest = origin.partition("://")
            if scheme not in ("http", "https") or not rest or "/" in rest:
                raise ValueError(f"{origin!r} is not an origin; write scheme://host[:port] without a path")
        return value

    @field_validator("otel_trace_url_template", mode="after")
    @classmethod
    def _trace_link(cls, value: str | None) -> str | None:
        if value and (not value.startswith(("http://", "https://")) or "{trace_id}" not in value):
            raise ValueError("FLEET_OTEL_TRACE_URL_TEMPLATE must be an http(s) URL containing {trace_id}")
        return value or None

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand_data_dir(cls, value: Path) -> Path:
        return value.expanduser()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, dotenv_settings, PolicyFileSource(settings_cls))

    # --- derived -------------------------------------------------------------------------------------------
    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{self.data_dir / 'fleet.db'}"

    @property
    def database_kind(self) -> Literal["sqlite", "postgresql"]:
        return "sqlite" if self.resolved_database_url.startswith("sqlite") else "postgresql"

    @property
    def workspaces_dir(self) -> Path:
        return self.data_dir / "workspaces"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def model_configured(self) -> bool:
        return bool(self.lm_model)

    def turn_budgets(self) -> TurnBudgets:
        """The server's default budgets of a turn (users' runtime settings and a turn's fields go on top)."""
        return TurnBudgets(
            max_iters=self.max_iters,
            max_llm_calls=self.max_llm_calls,
            max_depth=self.max_depth,
            turn_timeout_s=self.turn_timeout_s,
            batch_concurrency=self.batch_concurrency,
            max_output_chars=self.sandbox_output_max_chars,
        )

    @property
    def admin_user_names(self) -> frozenset[str]:
        return frozenset(name.strip() for name in (self.admin_users or "").split(",") if name.strip())


class PolicyFileSource(PydanticBaseSettingsSource):
    """Reads the TOML policy file; `[sandbox] backend = "local"` maps to the flat field `sandbox_backend`."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls)
        self._values = load_policy_file(policy_file_path())

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._values)


def policy_file_path() -> Path | None:
    explicit = os.environ.get("FLEET_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"FLEET_CONFIG points at {path}, which is not a file; fix the path or unset it.")
        return path
    return DEFAULT_POLICY_FILE if DEFAULT_POLICY_FILE.is_file() else None


def load_policy_file(path: Path | None) -> dict[str, Any]:
    """Flatten one level of TOML tables into field names and refuse secrets and unknown keys."""
    if path is None:
        return {}
    import tomllib  # only when a policy file exists: every CLI call loads settings

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read policy file {path}: {exc}") from exc
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, dict):
            for sub_key, sub_value in value.items():
                flat[f"{key}_{sub_key}"] = sub_value
        else:
            flat[key] = value
    known = set(Settings.model_fields)
    for name in flat:
        if name in SECRET_FIELDS:
            raise ConfigError(f"policy file {path} sets '{name}', a secret; set it in the environment instead.")
        if name not in known:
            raise ConfigError(f"policy file {path} has unknown setting '{name}'; see docs/configuration.md.")
    return flat


def load_settings(**overrides: Any) -> Settings:
    """Build settings from every source; raises ConfigError with a one-line message on bad input."""
    from pydantic import ValidationError

    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "settings"
        raise ConfigError(f"invalid setting {where}: {first.get('msg')}") from exc


def env_names(field_name: str) -> list[str]:
    """The environment variable names that set a field, for docs and error messages."""
    info = Settings.model_fields[field_name]
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [f"FLEET_{field_name.upper()}"]
