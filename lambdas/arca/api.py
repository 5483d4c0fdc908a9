"""The operations of the HTTP API (and of direct invocation): parse, call one service method, shape the reply."""

from __future__ import annotations

from arca import wiring
from arca.domain.errors import NotImplementedYetError
from arca.domain.models import ArtifactsQuery, BlobRef, Content, PruneBody, PublishBody, PurgeQuery, VersionsQuery
from arca.domain.names import parse_target, parse_version
from arca.http import Operation, Reply, Request
from arca.observability import metrics


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


def not_yet(request: Request) -> Reply:
    raise NotImplementedYetError("aliases and resolve are not implemented yet")


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
    **dict.fromkeys(
        (
            "set_alias",
            "get_alias",
            "list_aliases",
            "delete_alias",
            "alias_history",
            "rollback_alias",
            "resolve",
            "resolve_content",
        ),
        not_yet,
    ),
}
