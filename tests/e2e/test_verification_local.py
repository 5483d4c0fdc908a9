"""Local mode runs the background verification of multipart content as the state machine does on AWS: a completion
that answers 202 `verifying` is driven to `complete` by the local server's own thread, and the SDK waits for it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import requests

from arca.services import uploads
from arca_client import Client


def test_content_verified_in_the_background_is_driven_to_complete_and_published(
    arca_url: str, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a server that hashes nothing within the complete request (as for content over 1 GiB)
    monkeypatch.setattr(uploads, "INLINE_LIMIT", 0)
    data = os.urandom(5 * 1024 * 1024 + 4096)
    source = tmp_path / "weights.bin"
    source.write_bytes(data)
    # When the client publishes it in parts
    published = Client(arca_url).publish(unique, str(source), part_size=5 * 1024 * 1024)
    # Then its completion went to the background, the server's thread verified it, and the client published it
    assert published.version.version == 1
    signed = json.loads(published.version.raw["manifest"])
    upload = f"{published.version.sha256}.{signed['parts_sha256']}"
    status = requests.get(f"{arca_url}/artifacts/{unique}/uploads/{upload}", timeout=30).json()
    assert status["state"] == "complete"
    url = requests.get(f"{arca_url}/artifacts/{unique}/resolve/1", timeout=30).json()["download_url"]
    assert requests.get(url, timeout=60).content == data
