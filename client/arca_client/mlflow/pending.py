"""SDK calls of routes the registry plugin needs that the API does not serve yet.

One route proposed here: create an artifact with no version. It belongs in `calls/` once the route exists; until
then it lives here, beside its one client, so that nothing else calls it:

- `PUT /artifacts/{name}` with `{description?, tags?}` and `If-None-Match: *` (proposed): create the artifact with
  no version; 201 with its summary, 412 when it exists.

Trees of files (publish a directory, list a version's files, resolve one file) are served: the plugin calls the
SDK's `publish_directory`, `iter_files` and `resolve_file`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arca_client.calls.http import artifact_path
from arca_client.models import ArtifactSummary
from arca_client.sdk import Client


class RegistryClient(Client):
    """`Client` with the call of an artifact created empty."""

    def create_artifact(
        self, name: str, *, description: str | None = None, tags: Mapping[str, str] | None = None
    ) -> ArtifactSummary:
        """Create `name` with no version. PreconditionFailedError when it exists (nothing is changed then)."""
        body: dict[str, Any] = {}
        if description is not None:
            body["description"] = description
        if tags:
            body["tags"] = dict(tags)
        data, _ = self._write("PUT", artifact_path(name), body=body, headers={"If-None-Match": "*"})
        return ArtifactSummary.from_dict(data)
