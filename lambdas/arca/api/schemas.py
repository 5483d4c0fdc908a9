"""The answers only the routes make: liveness, the signing key, a purge that goes on, the error body.

No service or store builds these; what the services return (arca.domain.entities) is answered as it is, with no
second copy of its fields here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Schema(BaseModel):
    # As every model of the package: frozen, its validator and serializer built on first use (defer_build).
    model_config = ConfigDict(frozen=True, defer_build=True)


class Health(_Schema):
    status: Literal["ok"] = "ok"


class PurgeProgress(_Schema):
    """A purge that stopped at its budget: the same DELETE continues it (idempotent)."""

    name: str
    status: Literal["purging"] = "purging"
    message: str = "purge in progress; send the same DELETE again to continue"


class SigningKey(_Schema):
    """The stage's public key: callers pin it and verify the `signature` of version and resolve answers."""

    algorithm: Literal["ECDSA_SHA_256"] = "ECDSA_SHA_256"
    public_key_pem: str = Field(description="the public key (SubjectPublicKeyInfo, PEM): ECC NIST P-256")


class ErrorDetail(_Schema):
    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)  # details such as `aliases` of a 409

    code: str = Field(description="stable error code, e.g. ValidationError, NotFoundError")
    message: str
    request_id: str
    field: str | None = Field(None, description="the input at fault, where there is one")


class ErrorBody(_Schema):
    """Every error answer has this shape."""

    error: ErrorDetail
