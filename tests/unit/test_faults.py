"""The one translation of another service's error: its own throttling codes only, anything else as it was."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from arca.adapters.faults import THROTTLING, reraise
from arca.domain.errors import ThrottledError


def _error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "m"}}, "Operation")


@pytest.mark.parametrize(("service", "code"), [(s, c) for s, codes in THROTTLING.items() for c in sorted(codes)])
def test_a_services_throttling_is_a_throttled_error_caused_by_it(service: str, code: str) -> None:
    error = _error(code)
    with pytest.raises(ThrottledError) as raised:
        reraise(error, service)  # type: ignore[arg-type]
    assert raised.value.message == f"{service} is busy; retry later"
    assert raised.value.details == {"aws_code": code}
    assert raised.value.__cause__ is error


@pytest.mark.parametrize(("service", "code"), [("KMS", "503"), ("CloudWatch", "SlowDown"), ("S3", "AccessDenied")])
def test_any_other_error_is_raised_as_it_was(service: str, code: str) -> None:
    # Given an error that is not this service's throttling (a bare 503 is S3's alone)
    error = _error(code)
    # Then it is raised itself, not caused by itself
    with pytest.raises(ClientError) as raised:
        reraise(error, service)  # type: ignore[arg-type]
    assert raised.value is error
    assert raised.value.__cause__ is None
