"""The EventBridge bus the `events` function announces on: source `arca`, detail-type the event type."""

from __future__ import annotations

import json
from typing import Any

from arca.domain.events import Event

SOURCE = "arca"


class DeliveryError(Exception):
    """EventBridge refused the entry (its error code and message); the stream record is retried."""


class Bus:
    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name

    def put(self, event: Event) -> None:
        """One PutEvents entry. PutEvents answers 200 even when an entry failed, so its count is checked."""
        entry = {
            "Source": SOURCE,
            "DetailType": event.type,
            "Detail": json.dumps(event.model_dump(mode="json"), separators=(",", ":")),
            "EventBusName": self.name,
        }
        response = self.client.put_events(Entries=[entry])
        if response.get("FailedEntryCount"):
            failed = response["Entries"][0]
            raise DeliveryError(f"{failed.get('ErrorCode')}: {failed.get('ErrorMessage')}")
