"""Arca's errors as MLflow's: every failure of the plugin is an `MlflowException` with the error code MLflow's own
stores use for the same situation, never a traceback of the SDK or a silent no-op."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import (
    INTERNAL_ERROR,
    INVALID_PARAMETER_VALUE,
    NOT_IMPLEMENTED,
    PERMISSION_DENIED,
    RESOURCE_ALREADY_EXISTS,
    RESOURCE_CONFLICT,
    RESOURCE_DOES_NOT_EXIST,
    TEMPORARILY_UNAVAILABLE,
)

from arca_client.errors import (
    AccessDeniedError,
    ArcaError,
    ConflictError,
    CredentialsError,
    NotFoundError,
    PayloadTooLargeError,
    PreconditionFailedError,
    ThrottledError,
    TransportError,
    ValidationError,
)

_CODES: tuple[tuple[type[ArcaError], int], ...] = (
    (ValidationError, INVALID_PARAMETER_VALUE),
    (PayloadTooLargeError, INVALID_PARAMETER_VALUE),
    (NotFoundError, RESOURCE_DOES_NOT_EXIST),
    (AccessDeniedError, PERMISSION_DENIED),
    (CredentialsError, PERMISSION_DENIED),
    (ConflictError, RESOURCE_CONFLICT),
    (PreconditionFailedError, RESOURCE_CONFLICT),
    (ThrottledError, TEMPORARILY_UNAVAILABLE),
    (TransportError, TEMPORARILY_UNAVAILABLE),
)


def translate(error: ArcaError, what: str) -> MlflowException:
    """The MlflowException of an SDK error while doing `what` (e.g. "set alias champion of fraud").

    An alias policy's refusal is PERMISSION_DENIED carrying `violations` (each `{rule, message}`); a version an
    alias points at is RESOURCE_CONFLICT carrying `aliases`. The Arca error code is kept as `arca_code`.
    """
    extra: dict[str, Any] = {"arca_code": error.code}
    code = next((c for cls, c in _CODES if isinstance(error, cls)), INTERNAL_ERROR)
    message = f"{what}: {error.message}"
    if error.code == "PolicyViolation":
        code = PERMISSION_DENIED
        violations = error.details.get("violations") or []
        extra["violations"] = violations
        rules = "; ".join(f"{v.get('rule')}: {v.get('message')}" for v in violations if isinstance(v, dict))
        message = f"{what}: Arca's alias policy refuses it ({rules or error.message})"
    elif error.status == 405:
        # The route exists with other methods only: this API predates what the plugin asks of it.
        code = NOT_IMPLEMENTED
        message = f"{what}: this Arca API does not serve it yet ({error.message})"
    elif error.code == "VersionPinnedError":
        extra["aliases"] = error.details.get("aliases") or []
        message += " (move or delete those aliases first: Arca never deletes a version an alias serves)"
    return MlflowException(message, code, **extra)


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Run SDK calls, turning any ArcaError into the MlflowException of `what`."""
    try:
        yield
    except ArcaError as error:
        raise translate(error, what) from error


def unmapped(what: str, instead: str) -> NoReturn:
    """An MLflow operation Arca has no counterpart for (NOT_IMPLEMENTED), with what to do instead."""
    raise MlflowException(f"{what} is not supported by Arca's model registry: {instead}", NOT_IMPLEMENTED)


def invalid(message: str) -> NoReturn:
    raise MlflowException(message, INVALID_PARAMETER_VALUE)


def already_exists(message: str) -> MlflowException:
    return MlflowException(message, RESOURCE_ALREADY_EXISTS)


def not_found(message: str) -> MlflowException:
    return MlflowException(message, RESOURCE_DOES_NOT_EXIST)
