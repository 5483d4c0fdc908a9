"""Scoped access: IAM grants of `execute-api:Invoke` on a name prefix, for the principals a platform team manages.

Every method of the API requires SigV4 (IAM), so IAM is the permission system: a grant is a list of method
ARNs `arn:<partition>:execute-api:<region>:<account>:<api-id>/<stage>/<METHOD>/<path>`. IAM's `*` matches any
characters, `/` included, so each grant spells two ARNs per route: the prefix's own name (`artifacts/team-a/…`)
and the names below it (`artifacts/team-a/*/…`). The `/` after the prefix is what keeps `team-a` from matching
`team-ab`: a name is whole segments, and a prefix is a name.

What a prefix grant cannot narrow (IAM sees the path, not the query string) is left out, and documented:
- `GET /artifacts` lists every name in the registry (names and link targets, no content): granted only with
  `list_names=True`.
- `GET /versions` (registry-wide search) is never part of a prefix grant.
- A tagged OCI manifest push (`PUT /v2/<name>/manifests/<tag>`) moves an alias and publishes: an alias manager's.
- Creating a link (`PUT …/link`) lets the prefix's readers read the link's target, wherever it lies: it is a
  grant of its own (`grant_link_management`), never part of the publisher's.
- Creating an artifact with no version (`PUT /artifacts/<name>`, decision 111): below the prefix its ARN is
  `PUT artifacts/<prefix>/*`, which IAM cannot tell from every other PUT there (LATEST, retention, aliases, links),
  so it is a grant of its own (`grant_create`) for whoever holds the publisher's, the alias manager's and the link
  manager's grants on the prefix already. A publisher makes an artifact by publishing its first version.
"""

from __future__ import annotations

import re

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from cdk_nag import NagPackSuppression, NagSuppressions, RegexAppliesTo
from constructs import Construct

from arca.domain.consumers import CONSUMER_PATTERN
from arca.domain.names import NAME_PATTERN, RESERVED_SEGMENTS

Grant = list[tuple[str, str]]  # (method, path without the leading `/`)
_NAME = re.compile(NAME_PATTERN)


def check_prefix(prefix: str) -> str:
    """A prefix is an artifact name (whole segments, no `*`, no reserved word); ValueError otherwise."""
    if not _NAME.fullmatch(prefix) or any(s in RESERVED_SEGMENTS for s in prefix.split("/")):
        raise ValueError(f"prefix {prefix!r} must be an artifact name: segments of [a-z0-9._-] joined by '/'")
    return prefix


def _under(prefix: str, method: str, suffixes: tuple[str, ...]) -> Grant:
    """The routes `suffixes` of the name `prefix` itself and of every name below it."""
    check_prefix(prefix)
    base = f"artifacts/{prefix}"
    return [(method, f"{name}{suffix}") for suffix in suffixes for name in (base, f"{base}/*")]


def _oci(prefix: str, method: str, suffixes: tuple[str, ...]) -> Grant:
    """The OCI routes `suffixes` of the repository `prefix` itself and of every name below it (`v2/<name>/…`)."""
    check_prefix(prefix)
    base = f"v2/{prefix}"
    return [(method, f"{name}{suffix}") for suffix in suffixes for name in (base, f"{base}/*")]


def reader_paths(prefix: str, *, list_names: bool = False) -> Grant:
    """Every read of the names under `prefix` (summary, versions, aliases, history, resolve, content), through
    links under it too; `/health`, `/openapi.json` and `/signing-key` (to verify what it reads); `GET /artifacts`
    (every name) only with `list_names`. Through OCI: `GET /v2/` and every GET and HEAD of its repositories; through
    the Hugging Face routes: its repos' reads (`hf_reader_paths`)."""
    grant = [("GET", f"artifacts/{check_prefix(prefix)}"), ("GET", f"artifacts/{prefix}/*")]
    grant += [("GET", "health"), ("GET", "openapi.json"), ("GET", "signing-key")]
    grant += [("GET", "v2"), ("GET", f"v2/{prefix}/*"), ("HEAD", f"v2/{prefix}/*")]
    return grant + hf_reader_paths(prefix) + ([("GET", "artifacts")] if list_names else [])


def hf_reader_paths(prefix: str) -> Grant:
    """The Hugging Face read side of the names under `prefix` (a repo is a name): its model info and tree listings
    under `hf/api/models/`, its files under `hf/<repo>/resolve/`. A prefix whose first segment is `api` gets the
    first only: IAM's `*` spans `/`, so `hf/api/*` would reach every repo's model info."""
    check_prefix(prefix)
    grant: Grant = [("GET", f"hf/api/models/{prefix}"), ("GET", f"hf/api/models/{prefix}/*")]
    if prefix.split("/")[0] != "api":
        grant += [(method, f"hf/{prefix}/*") for method in ("GET", "HEAD")]
    return grant


def publisher_paths(prefix: str) -> Grant:
    """Uploads, LATEST, publishing, attestations, tags, version delete/restore, prune, retention and purge under
    `prefix`.

    Purge of a name below the prefix is `DELETE artifacts/<prefix>/*`, which IAM cannot tell from the other
    deletes under it: a publisher may also delete aliases and links there (removing, never exposing). It
    cannot create a link (PUT …/link) nor move an alias (PUT …/aliases/…). A multipart upload's status
    (`GET …/uploads/{id}`) is a read, so readers may ask it too: its URLs can only upload the parts the publisher
    declared, bytes a reader would already need to hold.
    """
    return [
        *_under(
            prefix,
            "POST",
            (
                "/uploads",
                "/uploads/*/complete",
                "/versions",
                "/versions/*/restore",
                "/versions/*/attestations",
                "/prune",
                "/retention/apply",
            ),
        ),
        *_under(prefix, "PUT", ("/latest", "/retention")),
        # Tags and description: the artifact's own, and its versions' (the only PATCH routes).
        ("PATCH", f"artifacts/{prefix}"),
        ("PATCH", f"artifacts/{prefix}/*"),
        ("DELETE", f"artifacts/{prefix}"),
        ("DELETE", f"artifacts/{prefix}/*"),
        # OCI: blob uploads (monolithic and sessions), a manifest pushed by its digest (a publish that moves no
        # alias), and the deletes (a tag, a manifest, a session), as the REST deletes under the prefix.
        *_oci(prefix, "POST", ("/blobs/uploads",)),
        *_oci(prefix, "PATCH", ("/blobs/uploads/*",)),
        *_oci(prefix, "PUT", ("/blobs/uploads/*", "/manifests/sha256:*")),
        ("DELETE", f"v2/{prefix}/*"),
    ]


def alias_manager_paths(prefix: str) -> Grant:
    """Alias writes, rollbacks, rollouts (`PUT`/`DELETE …/aliases/<alias>/rollout`), policies and promotions (their
    requests, approvals and rejections) under `prefix`. An alias's policy narrows further who may do what.

    A manifest pushed with a tag through OCI moves an alias (and publishes the manifest, whose blobs a publisher
    uploaded): IAM sees only the path, which does not tell a tag from a digest but by its `sha256:`, so a tagged
    push is an alias manager's (decision 103)."""
    return [
        *_under(prefix, "PUT", ("/aliases/*",)),
        *_oci(prefix, "PUT", ("/manifests/*",)),
        *_under(prefix, "DELETE", ("/aliases/*",)),
        *_under(prefix, "POST", ("/aliases/*/rollback", "/aliases/*/promotions", "/aliases/*/promotions/*")),
    ]


def link_manager_paths(prefix: str) -> Grant:
    """Link writes under `prefix`. A link may point anywhere, and readers of `prefix` read through it: give this
    only to whoever may decide what those readers see (it is read access to the whole registry for them)."""
    return [*_under(prefix, "PUT", ("/link",)), *_under(prefix, "DELETE", ("/link",))]


def creator_paths(prefix: str) -> Grant:
    """Creating artifacts with no version yet under `prefix` (`PUT artifacts/<name>`). IAM's `*` spans `/`, so the
    same ARNs allow every PUT below the prefix (LATEST, retention, aliases, links): give it only to whoever holds
    the publisher's, alias manager's and link manager's grants on `prefix` (the module's docstring)."""
    return [("PUT", f"artifacts/{check_prefix(prefix)}"), ("PUT", f"artifacts/{prefix}/*")]


def consumer_paths(prefix: str, *, consumer: str | None = None) -> Grant:
    """What a consumer (a deployment that runs versions of artifacts under `prefix`) needs and nothing more: resolve
    (and its content), list the leases, take, renew and release leases. Its lease writes name the consumer id in the
    path, so a grant on one id (`consumer`) keeps a consumer from taking or releasing another's lease."""
    if consumer is not None and not re.fullmatch(CONSUMER_PATTERN, consumer):
        raise ValueError(f"consumer {consumer!r} is not a consumer id ({CONSUMER_PATTERN})")
    leases = (f"/consumers/{consumer or '*'}",)
    return [
        *_under(prefix, "GET", ("/resolve/*", "/consumers")),
        *_under(prefix, "PUT", leases),
        *_under(prefix, "DELETE", leases),
    ]


class ApiAccess:
    """Grants on one stage of the API, for roles, users or groups (any iam.IGrantable)."""

    def __init__(self, rest_api: apigw.RestApiBase, stage_name: str) -> None:
        self.rest_api = rest_api
        self.stage_name = stage_name

    def arns(self, grant: Grant) -> list[str]:
        return [self.rest_api.arn_for_execute_api(method, f"/{path}", self.stage_name) for method, path in grant]

    def _grant(self, grantee: iam.IGrantable, grant: Grant) -> iam.Grant:
        granted = iam.Grant.add_to_principal(
            grantee=grantee, actions=["execute-api:Invoke"], resource_arns=self.arns(grant)
        )
        if isinstance(grantee, Construct):
            # Only this API's method ARNs: the wildcards are the names below the prefix and the path parameters.
            NagSuppressions.add_resource_suppressions(
                grantee,
                [
                    NagPackSuppression(
                        id="AwsSolutions-IAM5",
                        reason="A prefix grant: `*` stands for the names below the prefix and for path parameters "
                        "(versions, aliases) of this API's own methods.",
                        applies_to=[
                            RegexAppliesTo(
                                regex=r"/^Resource::arn:(<AWS::Partition>|aws[\w-]*):execute-api:.*:<ApiRestApi\w+>\/.*$/"
                            )
                        ],
                    )
                ],
                apply_to_children=True,
            )
        return granted

    def grant_read(self, grantee: iam.IGrantable, prefix: str, *, list_names: bool = False) -> iam.Grant:
        return self._grant(grantee, reader_paths(prefix, list_names=list_names))

    def grant_publish(self, grantee: iam.IGrantable, prefix: str) -> iam.Grant:
        return self._grant(grantee, publisher_paths(prefix))

    def grant_alias_management(self, grantee: iam.IGrantable, prefix: str) -> iam.Grant:
        return self._grant(grantee, alias_manager_paths(prefix))

    def grant_link_management(self, grantee: iam.IGrantable, prefix: str) -> iam.Grant:
        return self._grant(grantee, link_manager_paths(prefix))

    def grant_create(self, grantee: iam.IGrantable, prefix: str) -> iam.Grant:
        """Create artifacts with no version yet under `prefix`: every PUT below it as well (`creator_paths`)."""
        return self._grant(grantee, creator_paths(prefix))

    def grant_consume(self, grantee: iam.IGrantable, prefix: str, *, consumer: str | None = None) -> iam.Grant:
        """Resolve and lease under `prefix`; with `consumer`, take and release only that consumer's leases."""
        return self._grant(grantee, consumer_paths(prefix, consumer=consumer))
