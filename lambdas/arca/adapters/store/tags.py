"""Tags and search. Tag changes are one transaction each: the tagged item under a compare-and-set on its
`tag_rev`, one index row per changed key, and the artifact live. Search reads the secondary indexes: eventually
consistent, so a change shows there a moment after it is committed.
"""

from __future__ import annotations

from collections.abc import Callable

from boto3.dynamodb.conditions import Attr, ConditionBase

from arca.adapters import keys
from arca.adapters.dynamo import Item, Reason, Table, Update, Write
from arca.adapters.keys import Key
from arca.adapters.store.change import Change as Staged
from arca.adapters.store.conditions import ARTIFACT_IS_LIVE, ITEM_EXISTS
from arca.adapters.store.feed import Feed
from arca.adapters.store.pages import digest, index_page
from arca.adapters.store.records import TARGET_FIELDS, artifact_tag_item
from arca.domain.aggregates import LatestRecord, VersionRecord
from arca.domain.entities import VersionHit
from arca.domain.errors import ConflictError, ContentionError, NotFoundError, RegistryError
from arca.domain.events import ArtifactUpdated, Change, VersionTagged


class TagStore:
    def __init__(self, table: Table, feed: Feed) -> None:
        self.table = table
        self.feed = feed

    def commit(self, change: Staged) -> None:
        """Commit a change staged with these stores (forwarded to the feed, the one place a change commits)."""
        self.feed.commit(change)

    def stage_version_tags(self, change: Staged, seen: VersionRecord, tags: dict[str, str]) -> VersionRecord:
        """Stage the version's tags as `tags` (the merge decided from `seen`), and their index rows.

        Allowed on a soft-deleted version, never on an expired one (ConflictError: it carries no tags). The
        commit raises ContentionError when the tags changed since `seen` was read, NotFoundError when the version
        or the artifact is gone, ConflictError while a purge runs.
        """
        name, number = seen.name, seen.version
        key = keys.version_key(name, number)
        what = f"version {number}"
        change.stage(
            Write(
                "version",
                "Update",
                key,
                update=Update(set={"tags": tags, "tagged_at": change.now}, add={"tag_rev": 1}),
                condition=ITEM_EXISTS & Attr("expired").not_exists() & _tag_rev_condition(seen.tag_rev),
            ),
            refused=lambda reason: _version_refusal(reason, name, what),
        )
        change.stage(
            Write("artifact", "ConditionCheck", keys.latest_key(name), condition=ARTIFACT_IS_LIVE),
            refused=lambda reason: _artifact_refusal(reason, name, what),
        )
        facts = {f: getattr(seen, f) for f in (*TARGET_FIELDS, "created_at")}
        changed = _changed(seen.tags, tags)
        for write in _tag_row_writes(
            changed,
            lambda tag: keys.version_tag_key(name, number, tag),
            lambda tag, value: {
                "kind": "version-tag",
                "name": name,
                "version": number,
                "tag": tag,
                "value": value,
                **facts,
                "gsi1pk": keys.version_tag_search_pk(tag, value),
                "gsi1sk": keys.version_search_sk(name, number),
            },
        ):
            change.stage(write)
        change.announce(Change(VersionTagged(tags=dict(changed)), number))
        return seen.model_copy(update={"tags": tags, "tag_rev": seen.tag_rev + 1})

    def stage_artifact_tags(
        self, change: Staged, seen: LatestRecord, tags: dict[str, str], description: str | None
    ) -> LatestRecord:
        """Stage the artifact's tags and description (kept on LATEST, under its own `tag_rev`), and their rows.

        LATEST's `rev` does not move: tags are not content, so a publish racing this is not sent back.
        The commit raises ContentionError, NotFoundError or ConflictError as `stage_version_tags`.
        """
        name = seen.name
        condition = _tag_rev_condition(seen.tag_rev)
        update = Update(set={"tags": tags, "tagged_at": change.now}, add={"tag_rev": 1})
        if description is None:
            update = update.also(remove=("description",))
        else:
            update = update.also(set={"description": description})
        change.stage(
            Write(
                "artifact",
                "Update",
                keys.latest_key(name),
                update=update,
                condition=ARTIFACT_IS_LIVE & condition,
                compare={"tag_rev": seen.tag_rev or None},
            ),
            refused=lambda reason: _artifact_refusal(reason, name, "the artifact"),
        )
        changed = _changed(seen.tags, tags)
        for write in _tag_row_writes(
            changed,
            lambda tag: keys.artifact_tag_key(name, tag),
            lambda tag, value: artifact_tag_item(name, tag, value),
        ):
            change.stage(write)
        # The description only when it changed (then null for removed), as the tags
        updated = (
            ArtifactUpdated(tags=dict(changed), description=description)
            if description != seen.description
            else ArtifactUpdated(tags=dict(changed))
        )
        change.announce(Change(updated))
        return seen.model_copy(update={"tags": tags, "description": description, "tag_rev": seen.tag_rev + 1})

    def search_versions(
        self, *, sha256: str | None = None, tag: tuple[str, str] | None = None, limit: int, token: str | None
    ) -> tuple[list[VersionHit], str | None]:
        """Every version, registry-wide, holding the content `sha256` or the tag (key, value): one index Query
        a page (more only to fill a page, within the query budget). Soft-deleted versions included, said so.

        A content hit is the version item itself; a tag hit is the tag's index row, completed with the
        version's tags and state by one BatchGetItem a Query (a version purged or untagged since is no hit)."""
        enrich, keep = None, lambda item: True
        if sha256 is not None:
            pk, scope = keys.content_search_pk(sha256), f"search:sha256:{sha256}"
        else:
            assert tag is not None
            pk, scope = keys.version_tag_search_pk(*tag), f"search:tag:{digest(tag)}"
            # The version as it is now still carries the tag (the index may lag a change by a moment).
            enrich, keep = self._with_version_state, lambda item: item.get("tags", {}).get(tag[0]) == tag[1]
        items, next_token = index_page(
            self.table, keys.SEARCH_INDEX, pk, scope, limit=limit, token=token, keep=keep, enrich=enrich
        )
        hits = [
            VersionHit(
                name=i["name"],
                version=int(i.get("version") or i["sk"]),
                deleted=bool(i.get("deleted")),
                tags=i.get("tags") or {},
                **{f: i[f] for f in (*TARGET_FIELDS, "created_at")},
            )
            for i in items
        ]
        return hits, next_token

    def _with_version_state(self, rows: list[Item]) -> list[Item]:
        """Tag index rows with their versions' `tags` and `deleted` (a row whose version is gone gets neither)."""
        wanted = {(r["name"], int(r["version"])) for r in rows}
        found = self.table.batch_get([keys.version_key(*w) for w in sorted(wanted)], projection=("tags", "deleted"))
        state = {(i["pk"], i["sk"]): i for i in found}
        completed = []
        for row in rows:
            version = state.get((row["name"], keys.version_key(row["name"], int(row["version"]))["sk"]))
            if version is not None:
                row = {**row, "tags": version.get("tags") or {}, "deleted": bool(version.get("deleted"))}
            completed.append(row)
        return completed

    def search_artifacts(self, tag: tuple[str, str], *, limit: int, token: str | None) -> tuple[list[str], str | None]:
        """Names of the artifacts carrying the tag (key, value), in name order: one index Query a page."""
        items, next_token = index_page(
            self.table,
            keys.SEARCH_INDEX,
            keys.artifact_tag_search_pk(*tag),
            f"search:artifact-tag:{digest(tag)}",
            limit=limit,
            token=token,
            keep=lambda i: True,
        )
        return [i["name"] for i in items], next_token


def _version_refusal(reason: Reason, name: str, what: str) -> RegistryError | None:
    """The tagged version is gone, or expired; otherwise its tags moved (or the artifact says why)."""
    if reason.item is None:
        return NotFoundError(f"artifact {name!r} has no {what}")
    if reason.item.get("expired"):
        return ConflictError(f"{what} expired: it carries no tags", field="version")
    return None


def _artifact_refusal(reason: Reason, name: str, what: str) -> RegistryError:
    """The artifact is gone or being purged; otherwise the tags of `what` moved."""
    if reason.item is None or reason.item.get("purged"):
        return NotFoundError(f"artifact {name!r} does not exist")
    if reason.item.get("purging"):
        return ConflictError(f"artifact {name!r} is being purged")
    return ContentionError(f"the tags of {what} of {name!r} changed concurrently")


def _tag_rev_condition(seen: int) -> ConditionBase:
    """Compare-and-set on the tags' counter as it was read (absent before the first tag change)."""
    if seen == 0:
        return Attr("tag_rev").not_exists()
    return Attr("tag_rev").eq(seen)


def _tag_row_writes(
    changed: list[tuple[str, str | None]], key_of: Callable[[str], Key], item_of: Callable[[str, str], Item]
) -> list[Write]:
    """One write per changed tag: its index row put with the new value, or deleted for a key removed."""
    return [
        Write(f"tag{i}", "Delete", key_of(tag))
        if value is None
        else Write(f"tag{i}", "Put", key_of(tag), item=item_of(tag, value))
        for i, (tag, value) in enumerate(changed)
    ]


def _changed(before: dict[str, str], after: dict[str, str]) -> list[tuple[str, str | None]]:
    """The keys whose index rows change: (key, new value), None for a removed key."""
    changed: list[tuple[str, str | None]] = [(k, v) for k, v in after.items() if before.get(k) != v]
    changed += [(k, None) for k in before if k not in after]
    return sorted(changed, key=lambda change: change[0])
