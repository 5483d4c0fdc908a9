"""Use cases of aliases and resolve: set (with canary), delete, rollback, history, resolve.

Every alias write is one TransactWriteItems:
- the alias item, put under `attribute_not_exists(pk)` (new) or `revision = :seen` (compare-and-set);
- its history item, `<alias>#<revision>`, put under `attribute_not_exists(pk)`;
- a ConditionCheck that the artifact is live (so no alias appears on an artifact being purged);
- the version items' pins, with net deltas: `ADD pinned_by :alias` (condition: exists and not deleted)
  for new targets, `DELETE pinned_by :alias` for old ones, nothing for a target kept (DynamoDB refuses
  two actions on one item, and a version this alias pins cannot have been deleted meanwhile).
Version deletion conditions on `attribute_not_exists(pinned_by)`, so the two serialise on the version
item: no interleaving leaves an alias on a deleted version.

The alias item carries its targets' sha256, size and content type (versions are immutable), so an
alias resolves with one GetItem and no S3 call; a target of LATEST, which is mutable, costs a second.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from arca.adapters import keys
from arca.adapters.dynamo import Item, TransactionCancelled, Write
from arca.domain.errors import ConflictError, NotFoundError, PreconditionFailedError
from arca.domain.models import AliasBody
from arca.domain.names import parse_target, validate_alias, validate_name
from arca.domain.routing import PRIMARY, choose_route
from arca.domain.versions import LATEST
from arca.service import LIVE_LATEST, Registry, now_iso

TARGET_FIELDS = ("sha256", "size", "content_type")
SPEC_FIELDS = ("version", "secondary_version", "secondary_version_weight", "description")


class _Moved(Exception):
    """The alias changed between our read and our write: read again."""


def alias_view(item: Item) -> dict[str, Any]:
    return {
        "name": item["name"],
        "alias": item["alias"],
        **{f: item.get(f) for f in SPEC_FIELDS},
        "revision": item["revision"],
        "created_at": item.get("created_at"),
        "updated_at": item.get("updated_at"),
        "updated_by": item.get("updated_by"),
        "reason": item.get("reason"),
    }


def history_view(item: Item) -> dict[str, Any]:
    return {
        "revision": item["revision"],
        "action": item["action"],
        **{f: item.get(f) for f in SPEC_FIELDS},
        "deleted": bool(item.get("deleted")),
        "updated_at": item.get("updated_at"),
        "updated_by": item.get("updated_by"),
        "reason": item.get("reason"),
    }


def _numbers(spec: Item | None) -> set[int]:
    """The numbered versions an alias pins (LATEST is never pinned: it cannot be deleted)."""
    if not spec or spec.get("deleted"):
        return set()
    return {v for v in (spec.get("version"), spec.get("secondary_version")) if isinstance(v, int)}


def _require_revision(alias: str, old: Item | None, if_match: int | None) -> None:
    """If-Match: the alias must exist (not as a tombstone) at exactly that revision; 412 otherwise."""
    if if_match is not None and (old is None or old.get("deleted") or old["revision"] != if_match):
        raise PreconditionFailedError(f"alias {alias!r} is not at revision {if_match}", field="If-Match")


class AliasService:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.table = registry.table
        self.blobs = registry.blobs
        self.clock: Callable[[], datetime] = registry.clock

    def _alias(self, name: str, alias: str) -> Item | None:
        validate_name(name)
        validate_alias(alias)
        return self.table.get(keys.alias_key(name, alias))

    def _live_alias(self, name: str, alias: str) -> Item:
        item = self._alias(name, alias)
        if item is None or item.get("deleted"):
            raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
        return item

    def get(self, name: str, alias: str) -> dict[str, Any]:
        return alias_view(self._live_alias(name, alias))

    def list(self, name: str) -> dict[str, Any]:
        self.registry.live_latest(name)
        return {"aliases": [alias_view(i) for i in self.registry.live_aliases(name)]}

    def history(self, name: str, alias: str, *, limit: int, token: str | None) -> dict[str, Any]:
        if self._alias(name, alias) is None:
            raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
        items, next_token = self.registry.query_page(
            keys.history_pk(name),
            f"history:{name}:{alias}",
            limit=limit,
            token=token,
            keep=lambda i: True,
            sk_prefix=keys.history_prefix(alias),
            forward=False,
        )
        return {"history": [history_view(i) for i in items], "next_token": next_token}

    def set(
        self,
        name: str,
        alias: str,
        body: AliasBody,
        *,
        if_match: int | None = None,
        create_only: bool = False,
        identity: str | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Create or move an alias; returns (alias, created). 412 when a precondition does not hold."""
        spec = body.model_dump(include=set(SPEC_FIELDS))
        for attempt in self.registry.attempts():
            old = self._alias(name, alias)
            live = old is not None and not old.get("deleted")
            if create_only and live:
                raise PreconditionFailedError(f"alias {alias!r} exists (If-None-Match: *)", field="If-None-Match")
            _require_revision(alias, old, if_match)
            if body.expected_version is not None and (not live or old["version"] != body.expected_version):  # type: ignore[index]
                raise PreconditionFailedError(
                    f"alias {alias!r} does not point at version {body.expected_version}", field="expected_version"
                )
            try:
                item = self._write(name, alias, spec, old, action="set", reason=body.reason, identity=identity)
            except _Moved:
                if if_match is not None or create_only or body.expected_version is not None:
                    raise PreconditionFailedError(f"alias {alias!r} changed concurrently", field="If-Match") from None
                self.registry.pause(attempt)
                continue
            return alias_view(item), not live
        raise AssertionError("unreachable")

    def delete(self, name: str, alias: str, *, if_match: int | None = None, identity: str | None = None) -> None:
        """Delete an alias; the deletion is a revision in its history, and its versions are released."""
        for attempt in self.registry.attempts():
            old = self._live_alias(name, alias)
            _require_revision(alias, old, if_match)
            try:
                self._write(name, alias, None, old, action="delete", reason=None, identity=identity)
            except _Moved:
                if if_match is not None:
                    raise PreconditionFailedError(f"alias {alias!r} changed concurrently", field="If-Match") from None
                self.registry.pause(attempt)
                continue
            return
        raise AssertionError("unreachable")

    def rollback(
        self, name: str, alias: str, *, to_revision: int | None, reason: str | None, identity: str | None
    ) -> dict[str, Any]:
        """A new revision with the targets of `to_revision` (default: the last one before the current)."""
        for attempt in self.registry.attempts():
            old = self._alias(name, alias)
            if old is None:
                raise NotFoundError(f"artifact {name!r} has no alias {alias!r}")
            record = self._rollback_target(name, alias, old["revision"], to_revision)
            spec = {f: record.get(f) for f in SPEC_FIELDS}
            why = reason or f"rollback to revision {record['revision']}"
            try:
                item = self._write(name, alias, spec, old, action="rollback", reason=why, identity=identity)
            except _Moved:
                self.registry.pause(attempt)
                continue
            return alias_view(item)
        raise AssertionError("unreachable")

    def _rollback_target(self, name: str, alias: str, current: int, to_revision: int | None) -> Item:
        if to_revision is not None:
            if to_revision >= current:
                raise ConflictError(f"to_revision must be before the current revision {current}", field="to_revision")
            record = self.table.get(keys.history_key(name, alias, to_revision))
            if record is None:
                raise NotFoundError(f"alias {alias!r} has no revision {to_revision}", field="to_revision")
            if record.get("deleted"):
                raise ConflictError(f"revision {to_revision} is the alias's deletion", field="to_revision")
            return record
        # Only revisions before the current one, newest first, a few at a time: usually the first page holds it.
        below = (keys.history_key(name, alias, 0)["sk"], keys.history_key(name, alias, current - 1)["sk"])
        for record in self.table.query_all(
            keys.history_pk(name), sk_between=below, forward=False, consistent=True, limit=5
        ):
            if not record.get("deleted"):
                return record
        raise ConflictError(f"alias {alias!r} has no earlier revision to roll back to")

    def _targets(self, name: str, spec: Item) -> dict[str, Item | None]:
        """Content of each numbered target (to carry in the alias item); 409 if missing or deleted."""
        found: dict[str, Item | None] = {"primary": None, "secondary": None}
        for side, field in (("primary", "version"), ("secondary", "secondary_version")):
            number = spec.get(field)
            if not isinstance(number, int):
                continue
            item = self.table.get(keys.version_key(name, number))
            if item is None:
                self.registry.live_latest(name)
                raise ConflictError(f"version {number} does not exist", field=field)
            if item.get("deleted"):
                raise ConflictError(f"version {number} is deleted; restore it first", field=field)
            found[side] = {f: item[f] for f in TARGET_FIELDS}
        return found

    def _write(
        self,
        name: str,
        alias: str,
        spec: Item | None,
        old: Item | None,
        *,
        action: str,
        reason: str | None,
        identity: str | None,
    ) -> Item:
        """One transaction: alias (compare-and-set), history, artifact check, pins. Raises _Moved."""
        now = now_iso(self.clock)
        revision = (old["revision"] if old else 0) + 1
        live_before = old is not None and not old.get("deleted")
        common = {"name": name, "alias": alias, "revision": revision, "updated_at": now, "updated_by": identity}
        if reason is not None:
            common["reason"] = reason
        if spec is None:  # deletion: a tombstone keeps the revision counter going
            item: Item = {"kind": "alias", **common, "deleted": True}
        else:
            if spec.get("secondary_version") is not None and spec.get("secondary_version_weight") is None:
                spec = {**spec, "secondary_version_weight": 0}
            created = old["created_at"] if live_before and old else now
            item = {"kind": "alias", **common, **spec, **self._targets(name, spec), "created_at": created}
            item["deleted"] = False
        item = {k: v for k, v in item.items() if v is not None}
        history = {**item, "kind": "alias-history", "action": action}
        alias_key = keys.alias_key(name, alias)
        writes = [
            Write(
                "alias",
                "Put",
                alias_key,
                item=item,
                condition="attribute_not_exists(pk)" if old is None else "revision = :seen",
                values={} if old is None else {":seen": old["revision"]},
            ),
            Write(
                "history",
                "Put",
                keys.history_key(name, alias, revision),
                item=history,
                condition="attribute_not_exists(pk)",
            ),
        ]
        if spec is not None:
            writes.append(Write("artifact", "ConditionCheck", keys.latest_key(name), condition=LIVE_LATEST))
        new, before = _numbers(item), _numbers(old)
        # Net deltas: pin what is new (only on a live version), release what is left, leave what is kept.
        pins = [(n, "ADD", "attribute_exists(pk) AND deleted = :no") for n in sorted(new - before)]
        pins += [(n, "DELETE", "attribute_exists(pk)") for n in sorted(before - new)]
        for number, verb, condition in pins:
            values: dict[str, Any] = {":me": {alias}, **({":no": False} if verb == "ADD" else {})}
            update = f"{verb} pinned_by :me"
            key = keys.version_key(name, number)
            writes.append(Write(f"v{number}", "Update", key, update=update, condition=condition, values=values))
        try:
            self.table.transact(writes)
        except TransactionCancelled as cancelled:
            if cancelled.failed("alias") or cancelled.failed("history"):
                raise _Moved from None
            if cancelled.failed("artifact"):
                self.registry.live_latest(name)
                raise ConflictError(f"artifact {name!r} is being purged") from None
            number = next(int(n[1:]) for n in cancelled.reasons if n.startswith("v"))
            raise ConflictError(f"version {number} was deleted or removed meanwhile", field="version") from None
        return {**item, **alias_key}

    def resolve(
        self, name: str, ref: str, *, routing_key: str | None = None, at: datetime | None = None
    ) -> dict[str, Any]:
        """Turn a version number, LATEST or an alias (optionally as it stood `at`) into a download."""
        validate_name(name)
        if ref == LATEST or ref.isdigit():
            return self._resolve_version(name, ref)
        validate_alias(ref, field="ref")
        record = self._as_of(name, ref, at) if at is not None else self._live_alias(name, ref)
        route = PRIMARY
        if record.get("secondary_version") is not None:
            route = choose_route(int(record.get("secondary_version_weight", 0)), name, ref, routing_key)
        version = record["version"] if route == PRIMARY else record["secondary_version"]
        content: Item = record.get(route) or {}
        if version == LATEST:
            latest = self.registry.live_latest(name)
            content = {f: latest[f] for f in TARGET_FIELDS}
        return self._resolved(name, ref, version, content, route, record["revision"])

    def _resolve_version(self, name: str, ref: str) -> dict[str, Any]:
        target = parse_target(ref, field="ref")
        if target == LATEST:
            item: Item | None = self.registry.live_latest(name)
        else:
            item = self.table.get(keys.version_key(name, int(target)))
        if item is None or item.get("deleted"):
            raise NotFoundError(f"artifact {name!r} has no live version {target}")
        return self._resolved(name, ref, target, {f: item[f] for f in TARGET_FIELDS}, PRIMARY, None)

    def _as_of(self, name: str, alias: str, at: datetime) -> Item:
        """The alias as it stood at `at`, from its history (newest first, so the first match is it)."""
        validate_alias(alias, field="ref")
        moment = now_iso(lambda: at.astimezone(self.clock().tzinfo))
        for record in self.table.query_all(
            keys.history_pk(name), sk_prefix=keys.history_prefix(alias), forward=False, consistent=True
        ):
            if record["updated_at"] <= moment:
                if record.get("deleted"):
                    break
                return record
        raise NotFoundError(f"alias {alias!r} of {name!r} did not exist at {moment}", field="at")

    def _resolved(
        self, name: str, ref: str, version: Any, target: Item, route: str, revision: int | None
    ) -> dict[str, Any]:
        filename = f"{name.rsplit('/', 1)[-1]}-{version}"
        url, expires_at = self.blobs.presign_download(
            keys.blob_key(name, target["sha256"]), content_type=target["content_type"], filename=filename
        )
        result: dict[str, Any] = {
            "name": name,
            "ref": ref,
            "version": version,
            **target,
            "download_url": url,
            "expires_at": expires_at,
            "route": route,
        }
        if revision is not None:
            result["alias_revision"] = revision
        return result
