"""The SnapStart runtime hooks (arca.snapstart): what is built before the snapshot, what is made new after it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from types import SimpleNamespace

import boto3
import pytest

from arca import snapstart, wiring
from tests.helpers import FAKE_AWS_ENV


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for key, value in {**FAKE_AWS_ENV, "ARCA_TABLE_NAME": "arca", "ARCA_BUCKET_NAME": "arca"}.items():
        monkeypatch.setenv(key, value)
    wiring.reset()
    yield monkeypatch
    wiring.reset()
    boto3.setup_default_session()


def test_register_hands_both_hooks_to_the_runtime_and_is_a_no_op_without_it() -> None:
    registered: list[tuple[str, object]] = []
    runtime = SimpleNamespace(
        register_before_snapshot=lambda hook: registered.append(("before", hook)),
        register_after_restore=lambda hook: registered.append(("after", hook)),
    )
    assert snapstart.register(runtime) is True
    assert registered == [("before", snapstart.before_snapshot), ("after", snapstart.after_restore)]
    # Outside Lambda the runtime module is absent
    assert snapstart.register() is False


def test_before_the_snapshot_the_services_and_their_clients_are_built_without_any_call(
    environment: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    boto3.setup_default_session()
    boto3.DEFAULT_SESSION.events.register("before-call.*.*", lambda event_name, **_: calls.append(event_name))  # type: ignore[union-attr]
    # When
    snapstart.before_snapshot()
    # Then the snapshot holds them, and no connection was opened to hold
    assert wiring.services() is wiring.services()
    assert wiring.services().stores.table.client.meta.service_model.service_name == "dynamodb"
    assert calls == []


def test_after_a_restore_randomness_credentials_and_clients_are_new(environment: pytest.MonkeyPatch) -> None:
    # Given the state a snapshot captured: random's state, clients with the credentials of that moment
    snapstart.before_snapshot()
    captured = wiring.services()
    loader = boto3.DEFAULT_SESSION._session.get_component("data_loader")  # type: ignore[union-attr]
    random.seed(42)
    state = random.getstate()
    # When two copies restore it, each in an environment with credentials of its own
    draws = []
    for key in ("AKIARESTOREDONE", "AKIARESTOREDTWO"):
        random.setstate(state)
        environment.setenv("AWS_ACCESS_KEY_ID", key)
        snapstart.after_restore()
        draws.append(random.random())
        # Then each copy's clients are new and sign with the credentials of the restored environment
        restored = wiring.services()
        assert restored is not captured
        credentials = restored.stores.table.client._request_signer._credentials
        assert credentials.access_key == key
        assert restored.blobs.client._request_signer._credentials.access_key == key
        # while the service models loaded before the snapshot are kept
        assert boto3.DEFAULT_SESSION._session.get_component("data_loader") is loader  # type: ignore[union-attr]
    # And the two copies draw different numbers (the same state, restored without reseeding, would not)
    assert draws[0] != draws[1]
    random.setstate(state)
    first = random.random()
    random.setstate(state)
    assert random.random() == first
