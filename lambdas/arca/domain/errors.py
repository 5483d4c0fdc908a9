"""One exception hierarchy; `code` is stable and is also the class name.

The HTTP status of each class lives in one table (`arca.api.errors.STATUS`); direct Lambda invocations
raise the same class, so the invocation's ``errorType`` is the same code.
"""

from __future__ import annotations

from typing import Any


class RegistryError(Exception):
    """Base of every error the registry reports to a caller."""

    def __init__(self, message: str, *, field: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details or {}

    @property
    def code(self) -> str:
        return type(self).__name__


class ValidationError(RegistryError):
    """Bad input: the message names the field and why. Raised before anything is written."""


class NotFoundError(RegistryError):
    pass


class ConflictError(RegistryError):
    """The request cannot be applied to the current state (exists, aliases present, contention)."""


class ContentionError(ConflictError):
    """What was read changed before the write (a lost compare-and-set): read again and retry.

    The one compare-and-set helper (arca.services.retry) retries it; it reaches a caller as a 409 only
    once the attempts are spent.
    """


class IdempotencyKeyTakenError(ConflictError):
    """A concurrent request with the same Idempotency-Key committed first (its answer is then replayed)."""


class IdempotencyKeyReusedError(RegistryError):
    """The Idempotency-Key was used for a different request within its retention (422)."""


class VersionPinnedError(ConflictError):
    """A version is the target of one or more aliases; `details["aliases"]` names them."""


class RolloutMovedError(ContentionError):
    """The rollout moved on or ended since it was read (a repeated step, an abort, a purge)."""


class RolloutRunningError(ConflictError):
    """The alias has a running rollout already (one at a time), or none runs where one is expected."""


class PolicyMovedError(ContentionError):
    """Something an alias policy's verdict read (the policy, a tag, an attestation, the soak alias) changed
    before the write committed: the write is judged again on what is there now."""

    @classmethod
    def judged_again(cls, alias: str) -> PolicyMovedError:
        return cls(f"what the policy of {alias!r} read changed; judged again")


class PolicyViolation(RegistryError):  # not *Error: the code the API names
    """An alias policy refuses the request (403); `details["violations"]` lists every rule broken as
    `{rule, message}`. Nothing is written."""

    @classmethod
    def of(cls, violations: list[dict[str, str]]) -> PolicyViolation:
        rules = ", ".join(v["rule"] for v in violations)
        # Listed at the error's top level (as every error's details) and under `details`.
        details = {"violations": violations, "details": {"violations": violations}}
        return cls(f"the alias's policy refuses this: {rules}", details=details)


class VersionLimitError(ConflictError):
    """The artifact has reached its last version number (999,999)."""


class AliasLimitError(ConflictError):
    """The artifact has as many aliases as it may have (`details["limit"]`); delete one first."""


class AttestationLimitError(ConflictError):
    """The version has as many attestations as it may have (`details["limit"]`)."""


class LeaseLimitError(ConflictError):
    """The artifact (or the version) has as many live consumer leases as it may have (`details["limit"]`)."""


class VersionLeasedError(ConflictError):
    """A version that live consumer leases name is kept; `details["consumers"]` names them."""


class LinkedNameError(ConflictError):
    """The name is a link: a write must go to its target (named in `target`); a read follows it once."""

    def __init__(self, name: str, target: str, *, action: str = "write to") -> None:
        super().__init__(
            f"{name!r} is a link to {target!r}; {action} {target!r} instead", details={"link": name, "target": target}
        )
        self.name = name
        self.target = target


class PreconditionFailedError(RegistryError):
    """If-Match / If-None-Match / expected_version did not hold."""


class PayloadTooLargeError(RegistryError):
    pass


class ThrottledError(RegistryError):
    """AWS kept throttling after our retries."""


class UnsupportedMediaTypeError(RegistryError):
    """A request body sent as something other than JSON."""


class MethodNotAllowed(RegistryError):  # not *Error: the code local mode and clients already know
    """The path exists, with other methods."""


class NotYetImplementedError(RegistryError):
    """A route the API already serves for a feature still to come (it answers nothing else yet)."""


class InternalError(RegistryError):
    """An unexpected failure (a bug or an outage); logged with its traceback, answered as a 500."""


def error_class(code: str) -> type[RegistryError]:
    """The class whose `code` this is (RegistryError itself for an unknown code)."""
    pending: list[type[RegistryError]] = [RegistryError]
    while pending:
        cls = pending.pop()
        if cls.__name__ == code:
            return cls
        pending.extend(cls.__subclasses__())
    return RegistryError
