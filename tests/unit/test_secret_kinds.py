"""The credential formats people leak today are caught; ordinary code raises nothing.

Every credential here is fake (random or documented examples), built so this file
itself holds none whole.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from contextls.core.secrets import secret_warnings

B64 = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVkcGx1Z2g="
HEX = "0123456789abcdef"

FAKES: dict[str, str] = {
    "YAML password of letters only": "database:\n  user: app\n  password: "
    + "correcthorsebattery\n",
    "JDBC password in the URL": "url=jdbc:mysql://db/app?user=root&pass" + "word=rootpw!!\n",
    "YAML secret_access_key alone": "s3:\n  secret_access_key: "
    + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
    "PuTTY key file": "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n"
    + "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIB\nPrivate-Lines: 1\nAAAAIGB3c2VjcmV0\n",
    "AWS secret access key": "aws_secret_access_key = "
    + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS secret, env style": "export AWS_SECRET_ACCESS_KEY="
    + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "JWT": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "URL with a password": "DATABASE_URL=postgres://admin:" + "s3cr3t-Pass@db.internal:5432/app",
    "Azure AccountKey": "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + B64 * 2,
    "Slack webhook": "https://hooks.slack.com/services/" + "T0AB12CDE/B0FG34HIJ/" + "a1B2c3D4" * 3,
    "Slack app token": "xapp-" + "1-A0123456789-1234567890123-" + HEX * 4,
    "SendGrid": "SG."
    + "abcdefghijklmnopqrstuv"
    + "."
    + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    "Twilio": "TWILIO_KEY=" + "SK" + HEX * 2,
    "Telegram bot": "bot = Bot('" + "123456789:AA" + "Hdqtrivz7vL1k2Xw3yZ4aB5cD6eF7gH8i" + "')",
    "DigitalOcean": "dop_v1_" + HEX * 4,
    "Shopify": "shpat_" + HEX * 2,
    "npm": "//registry.npmjs.org/:_authToken=" + "npm_" + "a1B2c3D4e5F6" * 3,
    "PyPI": "password = "
    + "pypi-AgEIcHlwaS5vcmc"
    + "CJDk3ZjEyYjBhLTRkNmYtNGE0ZC1hYmNmLTQ0ZmFhZjAx",
    "Hugging Face": "HF_TOKEN=" + "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "Discord bot": "client.run('" + "MTA0NTU3NjY4NzY1MzY0MTM1Mg" + ".GqR2bQ." + "a" * 30 + "')",
    "Django SECRET_KEY": "SECRET_KEY = '" + "django-insecure-8c!x@2ks#v9$w^q&z)1l0pa7m4n6b3" + "'",
    "a _PASSWORD assignment": "DB_PASSWORD=" + "Tr0ub4dor&3",
    "YAML password": "database:\n  password: '" + "c0rrect-h0rse!" + "'\n",
    "GitHub fine-grained": "github_pat_" + "11ABCDEFG0" + "abcdefghijklmnopqrstuvwxyz" * 3,
    "OpenAI project key": "sk-proj-" + "abcdefghijklmnopqrstuvwxyz012345" + "6789",
    "Anthropic key": "sk-ant-" + "api03-" + "abcdefghijklmnopqrstuvwxyz012345",
    "a quoted password that starts with a letter": 'password = "' + "hunter2" * 2 + '"',
    "an unquoted _PASSWORD that reads like a name": "DB_PASSWORD=" + "Xk9vQ2mZ" + "7pLr4Tb8",
    "Django SECRET_KEY in a .env": "SECRET_KEY=" + "django-insecure-" + "8f$z!k2m#q9w@x7v&p3r",
    "redis URL with only a password": "REDIS_URL=redis://:" + "s3cr3tPassw0rd" + "@cache:6379/0",
    ".netrc": "machine api.example.com\n  login alice\n  password " + "Zq8xV3" + "mN1pL7\n",
    ".pgpass": "db.internal:5432:appdb:appuser:" + "Vb7nQ2" + "xL9mK4\n",
    "Azure SAS": "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig="
    + "AbCdEf0123456789" * 2 + "AbCd%3D",
    "Azure Service Bus": "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
    + "SharedAccessKey="
    + B64[:44],
    "Azure AD client secret": 'AZURE_CLIENT_SECRET="' + "Ab1~Cd2.Ef3_Gh4-" + 'Ij5~Kl6.Mn7_Op8-Qr9"',
    "GitLab runner token": "token = glrt-" + "AbCdEfGhIjKl" + "MnOpQrStUv",
    "GitLab deploy token": "gldt-" + "AbCdEfGhIjKl" + "MnOpQrStUv",
    "Stripe webhook secret": "STRIPE_WEBHOOK=whsec_" + "AbCdEfGhIjKl" * 2 + "12345",
    "npm _auth": "_auth=" + "YWxpY2U6c2VjcmV0" + "cGFzc3dvcmQxMjM=",
    "Docker config auth": '{"auths": {"https://index.docker.io/v1/": {"auth": "'
    + "YWxpY2U6c2VjcmV0"
    + 'cGFzc3dvcmQxMjM="}}}',
    "HTTP basic credentials": "Authorization: Basic " + "YWxpY2U6c2Vj" + "cmV0cGFzczEy",
    "JDBC password": "jdbc:mysql://db:3306/app?user=alice&password=" + "Zq8xV3" + "mN1pL7",
}


@pytest.mark.parametrize("name", sorted(FAKES))
def test_every_common_format_warns(name: str) -> None:
    warnings = secret_warnings(FAKES[name], "settings.txt")
    assert warnings, name
    secret = FAKES[name].split("=", 1)[-1].strip()[-12:]
    assert all(secret not in warning for warning in warnings)  # never the secret itself


@pytest.mark.parametrize(
    "text",
    [
        "password = getpass.getpass()",
        "password=os.environ['DB_PASSWORD']",
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: <your password here>",
        "PASSWORD=changeme",
        "password = '********'",
        "url = 'http://user:pass@example.com/'",
        "conn = connect(password=self.password)",
        "SECRET_KEY = os.environ.get('SECRET_KEY')",
        "ctx.load_cert_chain(CERTFILE, password=GetPassCallable())",
        "password = user_password2",
        "machine host.domain.com login log password pass",
        "Authorization: Basic <base64 of user:password>",
        "client_secret = settings.CLIENT_SECRET",
        "password:\n  type: string\n  required: true",
        "class User:\n    password: SecretStr\n    password_hash: str",
        "interface Login {\n  password: string;\n}",
        "password: changeme",
    ],
)
def test_placeholders_and_code_that_reads_a_secret_do_not_warn(text: str) -> None:
    assert secret_warnings(text, "app.py") == []


def test_the_standard_library_raises_nothing() -> None:
    """The false-positive budget: Python's own standard library (31 MB, tests included)
    raised no warning before these formats were added, and raises none now (its speed is
    timed in tests/bench/bench_bounds.py)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    texts = []
    for path in root.rglob("*.py"):
        if "site-packages" in path.parts:
            continue
        try:
            texts.append((path, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    size = sum(len(text.encode()) for _, text in texts)
    flagged = [str(path.relative_to(root)) for path, text in texts if secret_warnings(text, "x")]
    assert flagged == []
    assert size > 10_000_000
