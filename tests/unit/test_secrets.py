"""Secret-looking files and text: what is caught, and that ordinary code is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextls.core.secrets import is_secret_path, secret_warnings

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.production",
        "prod.env",
        "server.pem",
        "tls.key",
        "id_rsa",
        "id_ed25519",
        ".netrc",
        ".npmrc",
        "credentials",
        "credentials.json",
        "secrets.yaml",
        "main.tfvars",
    ],
)
def test_credential_files_are_recognised(name: str) -> None:
    assert is_secret_path(Path("some/dir") / name)


@pytest.mark.parametrize(
    "name",
    [
        "app.py",
        "env.py",
        "environment.md",
        "keys.py",
        "README.md",
        "secrets.py",
        ".env.example",
        ".env.sample",
        "id_rsa.pub",
        "id_ed25519.pub",
    ],
)
def test_ordinary_files_are_not(name: str) -> None:
    assert not is_secret_path(name)


GITHUB = "ghp_" + "a1B2c3D4e5" * 4
OPENAI = "sk-proj-" + "Ab3" * 15


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n", "a private key", "b3BlbnNz"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n", "a private key", "MIIEow"),
        ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "an AWS access key id", "AKIAIOSF"),
        (f"token: {GITHUB}", "a GitHub token", GITHUB),
        (f"OPENAI_API_KEY={OPENAI}", "an OpenAI or Anthropic API key", OPENAI),
        ("SLACK=xoxb-1234567890-abcdefghij", "a Slack token", "xoxb-123"),
        (
            'api_key = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"',
            "a password or token assignment",
            "9f8e7d",
        ),
        ("DB_PASSWORD=Zx81Qq0Lm2Vb7Nc4Kd9Jh", "a password", "Zx81Qq"),
        ("STRIPE=sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "a Stripe secret key", "4eC39Hq"),
        ("key: AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "a Google API key", "SyD-9t"),
    ],
)
def test_secret_text_is_named_but_not_shown(text: str, kind: str, secret: str) -> None:
    (warning,) = secret_warnings(text, "notes.txt")
    assert kind in warning and "notes.txt" in warning
    assert secret not in warning


@pytest.mark.parametrize(
    "text",
    [
        "XAKIAIOSFODNN7EXAMPLE",  # inside a longer word
        "task_live_" + "4eC39HqLyjWDarjtT1zdp7dc",  # k_live_ not after r or s
        "desk-" + "a" * 40,  # sk- inside a word
        "password = short",  # too short to be a secret
    ],
)
def test_look_alikes_raise_no_warning(text: str) -> None:
    assert secret_warnings(text, "notes.txt") == []


def test_this_repositorys_own_code_raises_no_warning() -> None:
    sources = [
        path
        for folder in ("server", "clients", "editors/emacs", "scripts")
        for path in (REPOSITORY / folder).rglob("*")
        if path.is_file() and path.suffix in (".py", ".el", ".sh", ".md", ".toml", ".json")
    ]
    assert len(sources) > 50
    flagged = [path for path in sources if secret_warnings(path.read_text(), str(path))]
    assert flagged == []
