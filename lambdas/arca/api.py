"""The operations of the HTTP API (and of direct invocation): parse, call one service method, shape the reply."""

from __future__ import annotations

from typing import Any

from arca import wiring
from arca.domain.errors import ValidationError
from arca.domain.models import (
    AliasBody,
    ArtifactsQuery,
    BlobRef,
    Content,
    PageQuery,
    PruneBody,
    PublishBody,
    PurgeQuery,
    ResolveQuery,
    RollbackBody,
    VersionsQuery,
)
from arca.domain.names import parse_target, parse_version
from arca.http import Operation, Reply, Request
from arca.observability import count_resolve, metrics


def health(request: Request) -> Reply:
    return Reply({"status": "ok"})


def create_upload(request: Request) -> Reply:
    result = wiring.registry().create_upload(request.name, request.parse_body(BlobRef))
    return Reply(result, 200 if result["exists"] else 201)


def put_latest(request: Request) -> Reply:
    return Reply(wiring.registry().put_latest(request.name, request.parse_body(Content)))


def publish(request: Request) -> Reply:
    body = request.parse_body(PublishBody)
    published = wiring.registry().publish(request.name, body.content(), force=body.force)
    if published.created:
        metrics.add_metric(name="VersionsPublished", unit="Count", value=1)
        return Reply({**published.version, "deduplicated": False}, 201)
    return Reply({**published.version, "deduplicated": True}, 200)


def get_artifact(request: Request) -> Reply:
    return Reply(wiring.registry().summary(request.name))


def list_artifacts(request: Request) -> Reply:
    query = request.parse_query(ArtifactsQuery)
    return Reply(
        wiring.registry().list_artifacts(
            prefix=query.prefix, delimiter=query.delimiter, limit=query.limit, token=query.next_token
        )
    )


def list_versions(request: Request) -> Reply:
    query = request.parse_query(VersionsQuery)
    return Reply(
        wiring.registry().list_versions(
            request.name,
            limit=query.limit,
            token=query.next_token,
            order=query.order,
            include_deleted=query.include_deleted,
        )
    )


def get_version(request: Request) -> Reply:
    return Reply(wiring.registry().get_version(request.name, parse_target(request.params["version"])))


def delete_version(request: Request) -> Reply:
    return Reply(wiring.registry().delete_version(request.name, parse_version(request.params["version"])))


def restore_version(request: Request) -> Reply:
    return Reply(wiring.registry().restore_version(request.name, parse_version(request.params["version"])))


def prune(request: Request) -> Reply:
    body = request.parse_body(PruneBody)
    result = wiring.registry().prune(
        request.name, keep_last=body.keep_last, older_than_days=body.older_than_days, dry_run=body.dry_run
    )
    return Reply(result)


def purge(request: Request) -> Reply:
    wiring.registry().purge(request.name, force=request.parse_query(PurgeQuery).force)
    return Reply(None, 204)


def _if_match(request: Request) -> int | None:
    """`If-Match: <revision>`, quoted or not (ETag form); None when absent."""
    raw = request.headers.get("if-match")
    if raw is None:
        return None
    value = raw.strip().removeprefix("W/").strip('"')
    if not value.isdigit():
        raise ValidationError("If-Match must be an alias revision number", field="If-Match")
    return int(value)


def _create_only(request: Request) -> bool:
    raw = request.headers.get("if-none-match")
    if raw is not None and raw.strip() != "*":
        raise ValidationError("If-None-Match supports only *", field="If-None-Match")
    return raw is not None


def _etag(alias: dict[str, Any]) -> dict[str, str]:
    return {"ETag": f'"{alias["revision"]}"'}


def set_alias(request: Request) -> Reply:
    body = request.parse_body(AliasBody)
    alias, created = wiring.aliases().set(
        request.name,
        request.params["alias"],
        body,
        if_match=_if_match(request),
        create_only=_create_only(request),
        identity=request.identity,
    )
    metrics.add_metric(name="AliasChanges", unit="Count", value=1)
    return Reply(alias, 201 if created else 200, _etag(alias))


def get_alias(request: Request) -> Reply:
    alias = wiring.aliases().get(request.name, request.params["alias"])
    return Reply(alias, headers=_etag(alias))


def list_aliases(request: Request) -> Reply:
    return Reply(wiring.aliases().list(request.name))


def delete_alias(request: Request) -> Reply:
    wiring.aliases().delete(
        request.name, request.params["alias"], if_match=_if_match(request), identity=request.identity
    )
    metrics.add_metric(name="AliasChanges", unit="Count", value=1)
    return Reply(None, 204)


def alias_history(request: Request) -> Reply:
    query = request.parse_query(PageQuery)
    return Reply(
        wiring.aliases().history(request.name, request.params["alias"], limit=query.limit, token=query.next_token)
    )


def rollback_alias(request: Request) -> Reply:
    body = request.parse_body(RollbackBody)
    alias = wiring.aliases().rollback(
        request.name,
        request.params["alias"],
        to_revision=body.to_revision,
        reason=body.reason,
        identity=request.identity,
    )
    metrics.add_metric(name="AliasRollbacks", unit="Count", value=1)
    return Reply(alias, headers=_etag(alias))


def _resolve(request: Request) -> dict[str, Any]:
    query = request.parse_query(ResolveQuery)
    result = wiring.aliases().resolve(request.name, request.params["ref"], routing_key=query.routing_key, at=query.at)
    if "alias_revision" in result:
        count_resolve(request.name, result["ref"], result["route"])
    return result


def resolve(request: Request) -> Reply:
    return Reply(_resolve(request))


def resolve_content(request: Request) -> Reply:
    result = _resolve(request)
    return Reply(result if request.direct else None, 302, {"Location": result["download_url"]})


OPERATIONS: dict[str, Operation] = {
    "health": health,
    "create_upload": create_upload,
    "put_latest": put_latest,
    "publish": publish,
    "get_artifact": get_artifact,
    "list_artifacts": list_artifacts,
    "list_versions": list_versions,
    "get_version": get_version,
    "delete_version": delete_version,
    "restore_version": restore_version,
    "prune": prune,
    "purge": purge,
    "set_alias": set_alias,
    "get_alias": get_alias,
    "list_aliases": list_aliases,
    "delete_alias": delete_alias,
    "alias_history": alias_history,
    "rollback_alias": rollback_alias,
    "resolve": resolve,
    "resolve_content": resolve_content,
}
