"""`arca events` and the SDK's feed end to end, against the local server."""

from __future__ import annotations

import io
import threading
from pathlib import Path

from arca_client import Client
from tests.e2e.test_cli import Cli, cli  # noqa: F401 (the fixture)


def test_events_lists_the_feed_and_goes_on_after_an_id(cli: Cli, unique: str, tmp_path: Path) -> None:  # noqa: F811
    # Given an artifact published twice
    name = f"{unique}/cli-events"
    for data in ("one", "two"):
        source = tmp_path / f"{data}.txt"
        source.write_text(data)
        assert cli("publish", name, str(source)).code == 0
    # When its events are listed, then listed after the second
    everything = cli("--json", "events", name)
    after = cli("--json", "events", name, "--after", everything.json()[1]["id"])
    plain = cli("events", name)
    # Then
    assert everything.code == after.code == plain.code == 0
    assert [e["type"] for e in everything.json()] == [
        "latest.updated",
        "version.published",
        "latest.updated",
        "version.published",
    ]
    assert after.json() == everything.json()[2:]
    assert len(plain.out.splitlines()) == 1 + 4 and "version.published" in plain.out  # a header, then the events
    assert plain.out.startswith("WHEN (UTC)")


def test_follow_yields_events_committed_while_following(arca_url: str, unique: str) -> None:
    # Given a follower started on an artifact with one version
    name = f"{unique}/followed"
    client = Client(arca_url, sign=False)
    client.publish(name, io.BytesIO(b"first"))
    followed = client.follow_events(name, poll=0.05, max_poll=0.2)
    seen = [next(followed), next(followed)]

    # When a second version is published meanwhile
    def later() -> None:
        Client(arca_url, sign=False).publish(name, io.BytesIO(b"second"))

    writer = threading.Timer(0.3, later)
    writer.start()
    seen += [next(followed), next(followed)]
    writer.join()
    # Then the follower got the new events, in order, after the old ones
    assert [(e.type, e.version) for e in seen] == [
        ("latest.updated", "LATEST"),
        ("version.published", 1),
        ("latest.updated", "LATEST"),
        ("version.published", 2),
    ]
