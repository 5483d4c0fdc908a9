"""An artifact created with no version yet in the SDK and the CLI: `Client.create_artifact`, `arca create`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arca_client import ArtifactSummary, ConflictError
from tests.client.test_cli_unit import FakeClient, run
from tests.client.test_sdk import Harness, error, h

__all__ = ["h"]  # the SDK tests' fixture


def summary(**extra: Any) -> dict[str, Any]:
    return {
        "name": "team/model",
        "latest": {"name": "team/model", "version": "LATEST", "sha256": None},
        "newest_version": None,
        "counts": {"versions": 0, "deleted_versions": 0, "aliases": 0},
        "created_at": "t",
        "updated_at": "t",
        **extra,
    }


def test_sdk_create_artifact_puts_the_description_and_tags_under_one_idempotency_key(h: Harness) -> None:
    # Given an answer lost to a 503 first
    created = summary(description="draft", tags={"team": "risk"})
    h.answer((503, error("ServiceUnavailable")), (201, created))
    # When
    found = h.client.create_artifact("team/model", description="draft", tags={"team": "risk"})
    # Then one PUT of the body, sent again under the same key, and the summary with no version
    assert [(s.method, s.path) for s in h.sent] == [("PUT", "/artifacts/team/model")] * 2
    assert h.sent[0].json() == {"description": "draft", "tags": {"team": "risk"}}
    assert h.sent[0].headers["Idempotency-Key"] == h.sent[1].headers["Idempotency-Key"]
    assert (found.newest_version, found.latest.sha256, found.counts.versions) == (None, None, 0)
    assert (found.description, found.tags) == ("draft", {"team": "risk"})


def test_sdk_create_artifact_sends_an_empty_body_and_maps_409(h: Harness) -> None:
    h.answer((201, summary()), (409, error("ConflictError", "exists already", field="name", exists=True)))
    h.client.create_artifact("team/model")
    with pytest.raises(ConflictError) as exists:
        h.client.create_artifact("team/model")
    assert h.sent[0].json() == {}
    assert (exists.value.field, exists.value.details) == ("name", {"exists": True})


def test_cli_create_passes_description_and_tags(capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeClient(create_artifact=ArtifactSummary.from_dict(summary(description="draft", tags={"team": "risk"})))
    code, _ = run(["create", "team/model", "--description", "draft", "--tag", "team=risk", "--tag", "a=b"], fake)
    assert code == 0
    assert fake.called("create_artifact") == (
        ("team/model",),
        {"description": "draft", "tags": {"team": "risk", "a": "b"}},
    )
    out = capsys.readouterr().out
    assert "none yet" in out and "team=risk" in out


def test_cli_create_json_and_a_conflict_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeClient(create_artifact=ArtifactSummary.from_dict(summary()))
    assert run(["--json", "create", "team/model"], fake)[0] == 0
    assert json.loads(capsys.readouterr().out)["newest_version"] is None
    refused = FakeClient(error=ConflictError("exists already", status=409, field="name"))
    assert run(["create", "team/model"], refused)[0] == 3


def test_cli_show_of_an_artifact_with_no_version_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeClient(get_artifact=ArtifactSummary.from_dict(summary(description="draft")))
    assert run(["show", "team/model"], fake)[0] == 0
    out = capsys.readouterr().out
    assert "no versions yet" in out and "no content yet" in out
