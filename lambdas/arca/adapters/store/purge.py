"""Purge: the mark on LATEST, the removal of every row of the artifact page by page, and its tombstone."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Table, TransactionCancelled, Update, Write
from arca.adapters.store.conditions import ITEM_EXISTS, at_most, below
from arca.adapters.store.pages import PURGE_PAGE
from arca.adapters.store.records import unlisting_rows
from arca.domain.errors import ConflictError, LinkedNameError, NotFoundError


class PurgeStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def mark_purging(
        self,
        name: str,
        *,
        token: str,
        force: bool,
        now: str,
        aliases: Callable[[], list[str]],
        links: Callable[[], list[str]],
    ) -> None:
        """Set the `purging` mark, owned by `token`; after it, publishes and alias writes fail.

        Without `force` the mark is set only under `alias_count <= 0` (the count the alias transactions
        keep on LATEST), so "no aliases" and the mark are one condition, and a plain purge never takes
        over a forced one's mark. A re-run takes over its own kind of mark (a crashed or budget-stopped
        purge is continued by calling again). Setting the mark advances `rev`, so a publish that read
        LATEST before it fails its condition. Raises NotFoundError (absent or purged), AliasesExistError-like
        ConflictError (details: the aliases, or the links: read by `aliases` and `links` only then, to name them)
        or ConflictError (a forced purge holds the mark).
        """
        condition = ITEM_EXISTS & Attr("purged").not_exists()
        if not force:
            plain = Attr("purging").not_exists() | Attr("purging_force").not_exists() | Attr("purging_force").eq(False)
            condition = condition & at_most("alias_count", 0) & at_most("link_count", 0) & plain
        try:
            self.table.update(
                keys.latest_key(name),
                Update(set={"purging": token, "purging_at": now, "purging_force": force}, add={"rev": 1}),
                condition=condition,
            )
        except ConditionFailed as failed:
            if failed.item is not None and failed.item.get("link"):
                raise LinkedNameError(name, failed.item["link"]) from None
            if failed.item is None or failed.item.get("purged"):
                raise NotFoundError(f"artifact {name!r} does not exist") from None
            if failed.item.get("purging") and failed.item.get("purging_force"):
                raise ConflictError(
                    f"a forced purge of {name!r} is running; purge with force=true to continue"
                ) from None
            if int(failed.item.get("alias_count", 0)) > 0:
                live = aliases()
                raise ConflictError(
                    f"artifact {name!r} has aliases ({', '.join(live)}); delete them or purge with force=true",
                    details={"aliases": live},
                ) from None
            if int(failed.item.get("link_count", 0)) > 0:
                linked = links()
                raise ConflictError(
                    f"artifact {name!r} is the target of links ({', '.join(linked)}); delete them or purge with "
                    "force=true",
                    details={"links": linked},
                ) from None
            raise ConflictError(f"artifact {name!r} changed during the purge; retry") from None

    def clear_purging(self, name: str, *, token: str) -> None:
        """Remove the mark only if this purge still owns it (never another purge's)."""
        with contextlib.suppress(ConditionFailed):
            self.table.update(
                keys.latest_key(name),
                Update(remove=("purging", "purging_at", "purging_force"), add={"rev": 1}),
                condition=Attr("purging").eq(token),
            )

    def delete_rows(
        self,
        name: str,
        *,
        spend: Callable[[], bool] = lambda: True,
        released: list[str] | None = None,
        now: str = "",
    ) -> bool:
        """Delete the artifact's leases, events, history, alias and version items page by page (idempotent).

        Reads are strongly consistent, so every row committed before the mark is seen. `spend` is asked
        before each page's BatchWriteItem call; False stops early and this returns False (call again). The
        consumers of the live leases (`expires_at` after `now`) deleted are appended to `released`, read from the
        pages the deletion reads anyway.
        """
        # History before aliases before versions: a purge stopped midway leaves no history without its
        # alias and no alias on a missing version. Tag rows go first: none outlives its version.
        # Rollouts first too: once its item is gone, a running rollout's next write fails its own condition.
        partitions = (
            (keys.consumers_pk(name), None),
            (keys.uploads_pk(name), None),
            (keys.oci_sessions_pk(name), None),
            (keys.oci_referrers_pk(name), None),
            (keys.retention_pk(name), None),
            (keys.blobs_pk(name), None),
            (keys.rollout_pk(name), None),
            (keys.events_pk(name), None),
            (keys.tags_pk(name), None),
            (keys.history_pk(name), None),
            (keys.alias_pk(name), None),
        )
        for pk, bounds in (*partitions, (name, keys.VERSIONS)):
            start = None
            aliases = pk == keys.alias_pk(name)
            leases = pk == keys.consumers_pk(name)
            projection = "pk, sk, revision" if aliases else "pk, sk, expires_at" if leases else "pk, sk"
            while True:
                page = self.table.query(
                    pk,
                    sk_between=bounds,
                    projection=projection,
                    consistent=True,
                    limit=PURGE_PAGE,
                    start=start,
                )
                if page.items:
                    if not spend():
                        return False
                    if aliases:
                        self._raise_revision_base(name, max(int(i["revision"]) for i in page.items))
                    self.table.batch_delete([{"pk": i["pk"], "sk": i["sk"]} for i in page.items])
                    if leases and released is not None:
                        released.extend(i["sk"] for i in page.items if str(i.get("expires_at", "")) > now)
                if page.last_key is None:
                    break
                start = page.last_key
        return True

    def _raise_revision_base(self, name: str, revision: int) -> None:
        """Keep on LATEST (and so on its tombstone) the highest alias revision a purge removes, before removing
        it: an alias made after the purge numbers its revisions on from there, so a revision number (an ETag)
        never names two states of one alias."""
        with contextlib.suppress(ConditionFailed):
            self.table.update(
                keys.latest_key(name),
                Update(set={"revision_base": revision}),
                condition=ITEM_EXISTS & below("revision_base", revision),
            )

    def finish_purge(self, name: str, *, token: str, now: str) -> bool:
        """Turn LATEST into a tombstone that keeps the counter and drop the listing rows, in one transaction.

        Conditioned on the mark still being this purge's: False when another purge took it over (that one
        finishes). The tombstone advances `rev` and `purges`, and resets `alias_count` and `link_count` (a forced
        purge removed the links first).
        """
        writes = [
            Write(
                "latest",
                "Update",
                keys.latest_key(name),
                update=Update(
                    set={"purged": now, "version_count": 0, "deleted_count": 0, "alias_count": 0, "link_count": 0},
                    remove=(
                        "purging",
                        "purging_at",
                        "purging_force",
                        "sha256",
                        "size",
                        "content_type",
                        "metadata",
                        "newest_sha256",
                        "part_size",
                        "parts_sha256",
                        "tags",
                        "description",
                        "tag_rev",
                        "manifest",
                        "signature",
                    ),
                    add={"rev": 1, "purges": 1},
                ),
                condition=Attr("purging").eq(token),
            ),
            *unlisting_rows(name),
        ]
        try:
            self.table.transact(writes)
        except TransactionCancelled:
            return False
        return True
