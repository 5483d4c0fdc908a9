"""One request of the `/hf/…` family in, one answer out: the Hub's read side over an abstract backend.

A revision is resolved once, at the first call of a download (model info, or a single file's resolve), into a
commit id; every later call of a snapshot names that commit, which reads the same version whatever its alias does
meanwhile (a canary's split, a move). The next page of a tree listing names the commit too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from arca.domain.errors import ValidationError
from arca.domain.names import parse_version, validate_alias, validate_name
from arca.protocols.hf.answers import HubJson, dumps, model_info, sibling
from arca.protocols.hf.backend import (
    LATEST,
    Backend,
    EntryNotFound,
    HubNotFound,
    RepoNotFound,
    RevisionNotFound,
    Target,
)
from arca.protocols.hf.commits import COMMIT, commit_id, names, version_of
from arca.protocols.hf.listing import BadCursor, list_tree
from arca.protocols.hf.paths import ModelInfo, Resolve, Tree, is_file_path, parse

MAX_REPO_SEGMENTS = 2  # huggingface_hub's repo ids: a name, or a namespace and a name
# The model info lists every file (`siblings`) while the list stays this small; beyond, it leaves `siblings` out
# and warns (the client's own snapshot reads the paged tree listing, never `siblings`). Lambda answers 6 MB at most.
SIBLINGS_BYTES = 4 * 1024 * 1024
SIBLINGS_PAGE = 1000
_METHODS = ("GET", "HEAD")
_OTHER_REPO_TYPES = ("datasets", "spaces", "kernels")


@dataclass(frozen=True)
class Request:
    """`path` is below the Hub endpoint and percent-encoded as received (`/api/models/a/b/revision/main`);
    `base_url` is the endpoint as the client knows it (`https://…/prod/hf`), for the absolute links of pages;
    `routing_key` picks an alias's canary side for this caller (the caller's identity, so sticky)."""

    method: str
    path: str
    base_url: str
    query: Mapping[str, str] = field(default_factory=dict)
    routing_key: str | None = None


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes = b""


def serve(request: Request, backend: Backend) -> Answer:
    """The Hub's answer to `request`. A miss is a 404 with the `X-Error-Code` the client turns into its own error;
    a bad page cursor a 400. Anything else the backend raises is not the protocol's to answer."""
    route = parse(request.path)
    if route is None:
        return _unknown(request)
    if request.method not in _METHODS:
        return Answer(
            405, {"Allow": ", ".join(_METHODS), "Content-Type": "application/json"}, _error("Method not allowed")
        )
    try:
        if isinstance(route, Resolve):
            return _resolve(route, request, backend)
        if isinstance(route, Tree):
            return _tree(route, request, backend)
        return _model_info(route, request, backend)
    except HubNotFound as miss:
        return not_found(miss, request.method)
    except BadCursor as bad:
        return _body(request, 400, {"error": str(bad)})


def _model_info(route: ModelInfo, request: Request, backend: Backend) -> Answer:
    target, commit = resolve_revision(backend, route.repo, route.revision, request.routing_key)
    siblings = _siblings(backend, route.repo, target, _flag(request.query.get("blobs")))
    answer = model_info(route.repo, target, commit, siblings)
    headers = {}
    if siblings is None:
        headers["X-HF-Warning"] = (
            "arca-siblings; this revision has too many files to list in its model info: list them with "
            "list_repo_tree (snapshot_download does)"
        )
    return _body(request, 200, answer, headers)


def _tree(route: Tree, request: Request, backend: Backend) -> Answer:
    target, commit = resolve_revision(backend, route.repo, route.revision, request.routing_key)
    if route.path and not is_file_path(route.path):
        raise EntryNotFound(f"{route.path!r} is not a path of {route.repo}", commit=commit)
    recursive = _flag(request.query.get("recursive"))
    cursor = request.query.get("cursor")
    page = list_tree(backend, route.repo, target, commit, route.path, recursive=recursive, cursor=cursor)
    if not page.entries and page.cursor is None and cursor is None and route.path:
        raise EntryNotFound(f"no folder {route.path!r} in {route.repo} at {commit}", commit=commit)
    headers = {}
    if page.cursor is not None:
        query = {"recursive": str(recursive).lower(), "expand": request.query.get("expand", "false")}
        query["cursor"] = page.cursor
        suffix = "/" + quote(route.path, safe="") if route.path else ""
        url = f"{request.base_url}/api/models/{route.repo}/tree/{commit}{suffix}?{urlencode(query)}"
        headers["Link"] = f'<{url}>; rel="next"'
    return _body(request, 200, page.entries, headers)


def _resolve(route: Resolve, request: Request, backend: Backend) -> Answer:
    target, commit = resolve_revision(backend, route.repo, route.revision, request.routing_key)
    if not is_file_path(route.path):
        raise EntryNotFound(f"{route.path!r} is not a path of {route.repo}", commit=commit)
    try:
        entry, url = backend.file(route.repo, target, route.path)
    except EntryNotFound as miss:
        raise EntryNotFound(miss.message, commit=commit) from None
    etag = f'"{entry.sha256}"'
    # A redirect to another origin: the client takes these headers from this very answer and never sends its
    # token on. No X-Xet-* header is ever sent: their presence is what switches the client to its Xet protocol.
    headers = {
        "Location": url,
        "X-Repo-Commit": commit,
        "ETag": etag,
        "X-Linked-Etag": etag,
        "X-Linked-Size": str(entry.size),
        "Cache-Control": "no-store",  # the URL is a short-lived bearer token
    }
    return Answer(302, headers)


def resolve_revision(backend: Backend, repo: str, revision: str, routing_key: str | None) -> tuple[Target, str]:
    """The target of `revision` in `repo` and its commit id.

    `revision` is a commit id this protocol answered, `main` (the alias `main` where one exists, else LATEST),
    LATEST, a version number or an alias. Raises RepoNotFound for a name outside the grammar (or of more than two
    segments) and RevisionNotFound for a revision outside it.
    """
    _check_repo(repo)
    if COMMIT.fullmatch(revision):
        return _by_commit(backend, repo, revision), revision
    if revision == "main":
        try:
            target = backend.resolve(repo, "main", routing_key)
        except RevisionNotFound:
            target = backend.resolve(repo, LATEST, routing_key)
    else:
        target = backend.resolve(repo, _ref(revision), routing_key)
    return target, commit_id(repo, target.version, target.sha256)


def _by_commit(backend: Backend, repo: str, commit: str) -> Target:
    version = version_of(commit)
    target = backend.resolve(repo, version if version is not None else LATEST, None)
    if not names(commit, repo, version, target.sha256):
        raise RevisionNotFound(f"{repo} has no commit {commit}")
    return target


def _ref(revision: str) -> int | str:
    if revision == LATEST:
        return LATEST
    try:
        return parse_version(revision, field="revision")
    except ValidationError:
        pass
    try:
        return validate_alias(revision, field="revision")
    except ValidationError:
        raise RevisionNotFound(
            f"{revision!r} is not a revision of Arca (an alias, a version number, a commit id or main)"
        ) from None


def _check_repo(repo: str) -> None:
    try:
        validate_name(repo, field="repo")
    except ValidationError as bad:
        raise RepoNotFound(f"no repository {repo!r}: {bad.message}") from None
    if repo.count("/") >= MAX_REPO_SEGMENTS:
        raise RepoNotFound(f"no repository {repo!r}: a repo id is a name of one or two segments")


def _siblings(backend: Backend, repo: str, target: Target, blobs: bool) -> list[HubJson] | None:
    found: list[HubJson] = []
    size = 0
    token: str | None = None
    while True:
        entries, token = backend.files(repo, target, "", SIBLINGS_PAGE, token)
        for entry in entries:
            item = sibling(entry, blobs)
            size += len(dumps(item)) + 1
            if size > SIBLINGS_BYTES:
                return None
            found.append(item)
        if token is None:
            return found


def not_found(miss: HubNotFound, method: str) -> Answer:
    """The 404 of a miss: `X-Error-Code` (and the message in `X-Error-Message`, since a HEAD answer has no body),
    and `X-Repo-Commit` for a missing entry, which the client caches as known not to exist at that commit."""
    headers = {
        "X-Error-Code": miss.code,
        "X-Error-Message": _header_text(miss.message),
        "Content-Type": "application/json",
    }
    if miss.commit is not None:
        headers["X-Repo-Commit"] = miss.commit
    return Answer(404, headers, b"" if method == "HEAD" else _error(miss.message))


def _unknown(request: Request) -> Answer:
    segments = request.path.removeprefix("/").split("/")
    if segments[:1] == ["api"] and segments[1:2] and segments[1] in _OTHER_REPO_TYPES:
        # The client's other repo types: Arca's artifacts are models, so any other repo is not found.
        return not_found(RepoNotFound(f"Arca serves models only, not {segments[1]}"), request.method)
    return _body(request, 404, {"error": "Not Found"})


def _body(request: Request, status: int, value: object, headers: Mapping[str, str] | None = None) -> Answer:
    body = dumps(value)
    sent = {"Content-Type": "application/json", **(headers or {})}
    return Answer(status, sent, b"" if request.method == "HEAD" else body)


def _error(message: str) -> bytes:
    return dumps({"error": message})


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


def _header_text(text: str) -> str:
    """`text` as a header value: ASCII (others escaped), no control characters."""
    ascii_text = text.encode("ascii", "backslashreplace").decode()
    return "".join(c if " " <= c <= "~" else " " for c in ascii_text)
