"""A tool server's headers (a bearer token among them) encrypted at rest with Fernet (the `cryptography` package).

The key is derived from COACH_SECRET_KEY with HKDF, for this use alone: the API never returns the headers, only
their names; changing the secret key makes stored headers unreadable (the server then reports that they must
be entered again, and calls go without them refused rather than sent unauthenticated).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


class SecretUnreadable(Exception):
    pass


class Secrets:
    """`purpose`: each use its own key (a workspace's LLM API key uses b"coach llm api key", services/llm_provider)."""

    def __init__(self, secret_key: str, purpose: bytes = b"coach tool server headers"):
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(secret_key.encode("utf-8"))
        self._fernet = Fernet(base64.urlsafe_b64encode(key))

    def seal(self, value: dict[str, Any]) -> str:
        return self._fernet.encrypt(json.dumps(value, sort_keys=True).encode("utf-8")).decode("ascii")

    def open(self, token: str) -> dict[str, Any]:
        if not token:
            return {}
        try:
            return json.loads(self._fernet.decrypt(token.encode("ascii")))
        except InvalidToken as exc:
            raise SecretUnreadable(
                "this server's stored headers cannot be decrypted (was COACH_SECRET_KEY changed?): enter them again"
            ) from exc
