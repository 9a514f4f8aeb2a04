"""Realistic fake credentials of every kind the share redactor knows, and text that must survive it.

None is real: every secret is drawn at import from a seeded generator, and the well-known prefixes are joined at
run time (`_p("gh", "p_")`), so this file holds no literal that a secret scanner would take for a leak.
Each `Case` is one credential in one written form; redacting its text alone counts exactly one of `kind`.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from dataclasses import dataclass

_rng = random.Random(40)
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def _p(*parts: str) -> str:
    """A prefix assembled at run time."""
    return "".join(parts)


def rand(n: int, alphabet: str = ALNUM) -> str:
    """n characters with at least one digit, one lower and one upper letter where the alphabet has them."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        kinds = [set(string.digits), set(string.ascii_lowercase), set(string.ascii_uppercase)]
        if all(set(value) & k for k in kinds if set(alphabet) & k):
            return value


@dataclass(frozen=True)
class Case:
    kind: str
    text: str  # the credential in context
    secret: str  # what must not survive


def _jwt() -> str:
    def part(raw: str) -> str:
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    header, claims = part('{"alg":"HS256","typ":"JWT"}'), part('{"sub":"' + rand(10) + '"}')
    return f"{header}.{claims}.{rand(43, URLSAFE)}"


def _pem(label: str, body_lines: int = 6) -> str:
    body = "\n".join(rand(64, B64) for _ in range(body_lines))
    begin, end = _p("-----BEGIN ", label, " PRIVATE", " KEY-----"), _p("-----END ", label, " PRIVATE", " KEY-----")
    return f"{begin}\n{body}\n{end}"


def _cases() -> list[Case]:
    akid = _p("AK", "IA") + rand(16, UPPER)
    asia = _p("AS", "IA") + rand(16, UPPER)
    aws_secret = rand(40, B64)
    ghp, gho, ghs, ghu = (_p("gh", c, "_") + rand(36) for c in "posu")
    gh_pat = _p("github", "_pat_") + rand(22) + "_" + rand(59)
    glpat = _p("gl", "pat-") + rand(20, URLSAFE)
    sk_live, rk_live, sk_test = (
        _p(a, "_", b, "_") + rand(24) for a, b in (("sk", "live"), ("rk", "live"), ("sk", "test"))
    )
    hf = _p("h", "f_") + rand(34)
    openai_proj = _p("sk", "-proj-") + rand(48, URLSAFE)
    openai_plain = _p("s", "k-") + rand(48)
    anthropic = _p("sk", "-ant-", "api03-") + rand(93, URLSAFE)
    xoxb = _p("xo", "xb-") + f"{rand(12, string.digits)}-{rand(13, string.digits)}-{rand(24)}"
    xoxp = _p("xo", "xp-") + f"{rand(12, string.digits)}-{rand(12, string.digits)}-{rand(32, string.hexdigits[:16])}"
    google = _p("AI", "za") + rand(35, URLSAFE)
    npm = _p("np", "m_") + rand(36)
    pypi = _p("py", "pi-", "AgE") + rand(120, URLSAFE)
    sendgrid = _p("S", "G.") + rand(22, URLSAFE) + "." + rand(43, URLSAFE)
    webhook = _p("https://hooks.", "slack.com/services/") + f"T{rand(8, UPPER)}/B{rand(8, UPPER)}/{rand(24)}"
    jwt = _jwt()
    rsa, openssh = _pem("RSA"), _pem("OPENSSH")
    truncated = _p("-----BEGIN ", "EC PRIVATE", " KEY-----") + "\n" + rand(64, B64) + "\n" + rand(30, B64)
    basic = base64.b64encode(f"deploy:{rand(14)}".encode()).decode()
    bearer = rand(40, URLSAFE)
    password = f"{rand(6)} horse {rand(5)} staple"
    cookie, url_pw, redis_pw = rand(32), rand(16), rand(20)
    fields = [rand(18), rand(12), rand(12), rand(12), rand(12)]
    secrets = [rand(32), rand(24), rand(50, URLSAFE)]
    tokens = [rand(40, URLSAFE), rand(40, URLSAFE), rand(20)]
    api_keys = [rand(32), rand(32), rand(24), rand(32), rand(44, B64)]
    return [
        Case("aws_access_key_id", f"export AWS_ACCESS_KEY_ID={akid}", akid),
        Case("aws_access_key_id", f"temporary creds {asia} expire at noon", asia),
        Case("aws_secret_key", f"AWS_SECRET_ACCESS_KEY={aws_secret}", aws_secret),
        Case("aws_secret_key", f"  aws_secret_access_key: {aws_secret[::-1]}", aws_secret[::-1]),
        Case("github_token", f"git clone with token {ghp}", ghp),
        Case("github_token", f"oauth={gho}", gho),
        Case("github_token", f"installation {ghs}", ghs),
        Case("github_token", f"user-to-server {ghu} works", ghu),
        Case("github_token", f"GH PAT {gh_pat}", gh_pat),
        Case("gitlab_token", f"PRIVATE-TOKEN header value {glpat}", glpat),
        Case("stripe_key", f"stripe.api_key_live = {sk_live!r}", sk_live),
        Case("stripe_key", f"restricted {rk_live}", rk_live),
        Case("stripe_key", f"test mode {sk_test}", sk_test),
        Case("huggingface_token", f"huggingface-cli login --with {hf}", hf),
        Case("openai_key", f"client = OpenAI(api_key={openai_proj!r})", openai_proj),
        Case("openai_key", f"the key {openai_plain} was rotated", openai_plain),
        Case("anthropic_key", f"Anthropic(api_key='{anthropic}')", anthropic),
        Case("slack_token", f"bot {xoxb}", xoxb),
        Case("slack_token", f"user {xoxp}", xoxp),
        Case("slack_webhook", f"POST {webhook}", webhook),
        Case("google_api_key", f"maps?key={google}&q=paris", google),
        Case("npm_token", f"//registry/:_authToken {npm}", npm),
        Case("pypi_token", f"twine upload -p {pypi}", pypi),
        Case("sendgrid_key", f"sg = SendGridAPIClient({sendgrid!r})", sendgrid),
        Case("jwt", f"session cookie value {jwt}", jwt),
        Case("private_key", f"id_rsa:\n{rsa}\nthat's all", rsa.splitlines()[3]),
        Case("private_key", f"key file reads {openssh!r}", openssh.splitlines()[2]),
        Case("private_key", f"preview: {truncated}", truncated.splitlines()[2]),
        Case("authorization_header", f"curl -H 'Authorization: Basic {basic}' https://api", basic),
        Case("authorization_header", f'{{"headers": {{"Authorization": "Bearer {bearer}"}}}}', bearer),
        Case("auth_scheme_token", f"send it as Bearer {bearer[::-1]} please", bearer[::-1]),
        Case("cookie_header", f"Cookie: session={cookie}; theme=dark", cookie),
        Case("url_password", f"DATABASE_URL=postgres://admin:{url_pw}@db.internal:5432/app", url_pw),
        Case("url_password", f"redis://:{redis_pw}@cache:6379/0 is the broker", redis_pw),
        Case("password_field", f"{{'password': '{password}'}}", password),
        Case("password_field", f'{{"db_password": "{fields[0]}"}}', fields[0]),
        Case("password_field", f"DB_PASSWORD={fields[1]}", fields[1]),
        Case("password_field", f"  smtp.passwd: {fields[2]}", fields[2]),
        Case("password_field", f"mysql --password {fields[3]} -u root", fields[3]),
        Case("password_field", f'dbPassword := "{fields[4]}"', fields[4]),
        Case("secret_field", f"client_secret: {secrets[0]}", secrets[0]),
        Case("secret_field", f"clientSecret={secrets[1]}", secrets[1]),
        Case("secret_field", f'"SECRET_KEY": "{secrets[2]}"', secrets[2]),
        Case("token_field", f"access_token={tokens[0]}&expires=3600", tokens[0]),
        Case("token_field", f"refresh-token: {tokens[1]}", tokens[1]),
        Case("token_field", f"auth.token = '{tokens[2]}'", tokens[2]),
        Case("api_key_field", f'{{"api_key": "{api_keys[0]}"}}', api_keys[0]),
        Case("api_key_field", f"X-Api-Key: {api_keys[1]}", api_keys[1]),
        Case("api_key_field", f"apiKey: '{api_keys[2]}'", api_keys[2]),
        Case("api_key_field", f'{{\\"apikey\\": \\"{api_keys[3]}\\"}}', api_keys[3]),
        Case("private_key_field", f"PRIVATE_KEY={api_keys[4]}", api_keys[4]),
    ]


CASES = _cases()

# Text that looks a little like a secret and must come out unchanged (ids the export needs, hashes, prose, code).
COMMIT = "".join(_rng.choice("0123456789abcdef") for _ in range(40))
SHA256 = "".join(_rng.choice("0123456789abcdef") for _ in range(64))
RUN_UUID = str(uuid.UUID(int=_rng.getrandbits(128), version=4))
NEGATIVES = [
    "The tokenizer splits text into tokens; basic arithmetic gives 42.",
    "token distributions and secret sauce recipes; a password manager helps",
    f"fixed in commit {COMMIT} (sha256 {SHA256})",
    f"run {RUN_UUID} and id {uuid.UUID(int=_rng.getrandbits(128)).hex}",
    "max_tokens=4096, token_count: 12, prompt_tokens: 1200",
    "password_file=/etc/app/pw and token_url=https://auth.example.org/token",
    "client = OpenAI(api_key=api_key, base_url=settings.base_url)",
    "password=None; token: ${GITHUB_TOKEN}; api_key=os.environ['OPENAI_API_KEY']; secret: <your secret>",
    "http://localhost:8080/v1 and https://git@github.com/org/repo.git",
    "Bearer bonds and a basic understanding of sk-learn-style estimators",
    "The secret: keep it short.",
    "Authorization: [redacted-key] was already removed",
]
