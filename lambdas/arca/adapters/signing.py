"""The stage's signing key in KMS: an asymmetric ECC_NIST_P256 key that never leaves KMS.

`kms:Sign` (the publish function's grant) signs a manifest; `kms:GetPublicKey` (the resolve function's) shows the
public half, which callers pin. KMS returns the signature DER-encoded and the public key as DER
SubjectPublicKeyInfo, which becomes PEM without any cryptography library (the Lambda runtime has none).
"""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from arca.adapters.faults import reraise
from arca.domain.signing import ALGORITHM


class KmsSigner:
    """Signs with one KMS key (its ARN). The client is built on first use; the public key is read once."""

    def __init__(self, client: Callable[[], Any], key_id: str) -> None:
        self._factory = client
        self._client: Any = None
        self.key_id = key_id
        self._pem: str | None = None

    def _kms(self) -> Any:
        if self._client is None:
            self._client = self._factory()
        return self._client

    def sign(self, message: bytes) -> str:
        """Raises ThrottledError when KMS is over its request quota (a 503 the caller may retry)."""
        try:
            answer = self._kms().sign(KeyId=self.key_id, Message=message, MessageType="RAW", SigningAlgorithm=ALGORITHM)
        except ClientError as error:
            reraise(error, "KMS")
        return base64.b64encode(answer["Signature"]).decode()

    def public_key_pem(self) -> str:
        if self._pem is None:
            try:
                der = self._kms().get_public_key(KeyId=self.key_id)["PublicKey"]
            except ClientError as error:
                reraise(error, "KMS")
            body = "\n".join(textwrap.wrap(base64.b64encode(der).decode(), 64))
            self._pem = f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n"
        return self._pem
