"""The rule table for secrets in shared text: what a credential looks like, one rule per kind.

Three families, applied in this order (each sees the text the ones before left; a value already replaced is not
replaced or counted again):

1. FORMAT_RULES: the well-known token formats (AWS access key ids, GitHub, GitLab, Stripe, Hugging Face,
   Anthropic, OpenAI-style `sk-` keys, Slack, Google, npm, PyPI, SendGrid, JWTs, PEM private key blocks). The
   whole match is replaced. A PEM block without its END line (a truncated preview) is replaced to the end of
   the text.
2. CONTEXT_RULES: a value identified by what stands before it: the `Authorization` / `Cookie` header value, a
   bare `Bearer` / `Basic` / `Token` credential, the password of a URL's `user:password@`. Only the value (the
   `secret` group) is replaced.
3. KEY_RULE: a value assigned to a secret-looking key name, counted as the kind KEY_NAMES gives the name
   (`password_field`, `token_field`...). A name *ends* with one of the table's words
   (`db_password`, `AWS_SECRET_ACCESS_KEY`, `clientSecret`, `x-api-key`, `auth.token`): any prefix, any
   separator (`_`, `-`, `.`, camelCase), any case. Assignment forms: `=`, `:`, `:=`, `=>`, with or without
   quotes around the name and the value (env files, shell, YAML, JSON, Python dicts and kwargs, JSON escaped
   inside a string), and CLI flags (`--password hunter2`). `is_placeholder` keeps references and stand-ins
   (`None`, `${DB_PASSWORD}`, `<your key>`, `os.environ[...]`, `api_key=api_key`) as they are.

`key_kind(name)` applies KEY_NAMES (and the header names Authorization, Cookie) to a structured key, a JSON
object's key: its string value goes whole.

Every rule carries `triggers`, lowercase substrings of which the text must hold one before its pattern runs, and
may carry `needs` (the text must also hold a `:`, `=`, `@`...): cheap scans that keep an export of ordinary text
fast. Every pattern is linear in its text: a quantifier that may fail after a scan (a lookahead, a URL's scheme and
userinfo, a key name) is bounded, so hostile sandbox output cannot make an export quadratic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_QUOTED = 4  # a quoted value shorter than this is not taken for a secret ('' and 'x' are placeholders)
MIN_UNQUOTED = 6  # an unquoted one shorter than this is more likely a word of prose ("token: the")


@dataclass(frozen=True)
class Rule:
    kind: str  # the name counted in the export's `redactions` (KEY_RULE: the kind its key name has)
    pattern: re.Pattern[str]  # replaces its `secret` group when it has one, else the whole match
    triggers: tuple[str, ...]  # lowercase substrings: the text must hold one (compared lowercased)
    needs: tuple[str, ...] = ()  # and one of these, as written (a separator the pattern cannot match without)


def _rule(kind: str, pattern: str, *triggers: str, flags: int = 0, needs: tuple[str, ...] = ()) -> Rule:
    return Rule(kind, re.compile(pattern, flags), triggers, needs)


FORMAT_RULES: tuple[Rule, ...] = (
    _rule(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)",
        "private key",
        flags=re.DOTALL | re.IGNORECASE,
    ),
    _rule("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", "akia", "asia", "abia", "acca"),
    _rule(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
    ),
    _rule("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}", "glpat-"),
    _rule(
        "stripe_key",
        r"\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})",
        "_live_",
        "_test_",
        "whsec_",
    ),
    _rule("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", "hf_"),
    _rule("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-"),
    # OpenAI (sk-..., sk-proj-..., sk-svcacct-...) and the providers and proxies that copied the shape
    # (DeepSeek, LiteLLM virtual keys, Langfuse sk-lf-); a digit is required so `sk-learn-style-names` stay
    _rule("openai_key", r"\bsk-(?=[A-Za-z0-9_-]{0,64}\d)[A-Za-z0-9_-]{16,}", "sk-"),
    _rule("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", "xox"),
    _rule("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{16,}", "hooks.slack.com"),
    _rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", "aiza"),
    _rule("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _rule("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", "pypi-"),
    _rule("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", "sg."),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyj"),
)

CONTEXT_RULES: tuple[Rule, ...] = (
    _rule(
        "authorization_header",
        r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:basic|bearer|token|digest|negotiate|apikey)\s+)?(?P<secret>[^\s\"',;]{4,})",
        "authorization",
        needs=(":", "="),
    ),
    _rule(
        "cookie_header",
        r"(?i)\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?(?P<secret>[^\r\n\"']{6,})",
        "cookie",
        needs=(":", "="),
    ),
    _rule(
        "auth_scheme_token",
        r"\b(?i:bearer|basic|token)\s+(?P<secret>(?=[A-Za-z0-9._~+/-]{0,64}(?:\d|[a-z][A-Z]))[A-Za-z0-9._~+/-]{12,}=*)",
        "bearer",
        "basic",
        "token",
    ),
    _rule(
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.-]{0,31}://[^/\s:@\"'<>]{0,256}:(?P<secret>[^/\s@\"'<>]{1,256})@",
        "://",
        needs=("@",),
    ),
)

# key-name rules: (kind, the words a key name may end with, as a regex alternation; separators are `[_.-]?`)
S = r"[_.-]?"
KEY_NAMES: tuple[tuple[str, str], ...] = (
    ("aws_secret_key", rf"aws{S}secret(?:{S}access)?{S}key|secret{S}access{S}key"),
    ("private_key_field", rf"private{S}key"),
    ("password_field", r"passw(?:or)?d|passphrase"),
    ("secret_field", rf"secret(?:{S}key)?|credentials?"),
    ("token_field", r"token"),
    ("api_key_field", rf"api{S}key|access{S}key|auth{S}key|app{S}key|master{S}key|signing{S}key|encryption{S}key"),
)
KEY_TRIGGERS = ("passw", "passphrase", "secret", "credential", "token", "key")


def _key_pattern(names: str) -> re.Pattern[str]:
    quote = r"(?:\\?[\"'`])?"
    name = rf"(?<![\w.-])(?:(?P<dash>--)|{quote})(?P<name>[A-Za-z0-9_.-]{{0,100}}?(?:{names}))"
    separator = rf"(?(dash)(?:\s*=\s*|\s+)|{quote}\s*(?:=>|:=|=|:)\s*)"  # `--flag value` only after dashes
    value = (
        r"(?:\\?(?P<open>[\"']))?(?P<secret>"
        rf"(?<=\")(?:[^\"\\\n]|\\(?!\")){{{MIN_QUOTED},}}"  # double-quoted (stops at an escaped quote too)
        rf"|(?<=')(?:[^'\\\n]|\\(?!')){{{MIN_QUOTED},}}"  # single-quoted
        rf"|(?<![\"'])[^\s\"'`,;&{{}}\[\]()<>]{{{MIN_UNQUOTED},}})"  # bare, up to a space or punctuation
    )
    return re.compile(rf"(?i){name}{separator}{value}")


KEY_NAME_KIND = "key_name"  # the key rule's kind: resolved per match by `key_kind` of its `name` group
KEY_RULE = Rule(KEY_NAME_KIND, _key_pattern("|".join(names for _, names in KEY_NAMES)), KEY_TRIGGERS, (":", "=", "--"))
RULES: tuple[Rule, ...] = FORMAT_RULES + CONTEXT_RULES + (KEY_RULE,)
KINDS = tuple(rule.kind for rule in FORMAT_RULES + CONTEXT_RULES) + tuple(kind for kind, _ in KEY_NAMES)

_KEY_NAMES = tuple((kind, re.compile(rf"(?i)[A-Za-z0-9_.-]*?(?:{names})")) for kind, names in KEY_NAMES)
PLACEHOLDERS = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "redacted", "changeme", "required", "optional", "string"}
)
PLACEHOLDER_START = ("$", "<", "{", "%", "*", "...", "os.", "env.", "process.env", "getenv", "[redacted")
REFERENCE = re.compile(r"(?=.*[._])[a-z_]+(?:\.[a-z_]+)*")  # api_key, self.token, settings.db_password: code


HEADER_KEYS = {"authorization": "authorization_header", "proxy-authorization": "authorization_header"}
HEADER_KEYS |= {"cookie": "cookie_header", "set-cookie": "cookie_header"}


def key_kind(name: str) -> str | None:
    """The kind of secret a structured key names (`password`, `OPENAI_API_KEY`, `clientSecret`, a header dict's
    `Authorization` or `Cookie`), or None."""
    if name.lower() in HEADER_KEYS:
        return HEADER_KEYS[name.lower()]
    for kind, pattern in _KEY_NAMES:
        if pattern.fullmatch(name):
            return kind
    return None


def is_placeholder(value: str, *, key: str = "", bare: bool = False) -> bool:
    """A value that stands for a secret without being one: too short, a null, a template, or (`bare`: written
    without quotes, as code is) the key's own name or a lowercase variable reference (`api_key=api_key`)."""
    lowered = value.strip().lower()
    if len(lowered) < MIN_QUOTED or lowered in PLACEHOLDERS or lowered.startswith(PLACEHOLDER_START):
        return True
    if not bare:
        return False
    return lowered == key.strip("\"'`-").lower() or REFERENCE.fullmatch(value) is not None
