"""The reference model: one artifact as the contract describes it, in memory, with no I/O.

Each operation returns the answers the contract allows (`Option`s: a status, what the answer must say, and
what it does to the model), never the answer the code happens to give. Where the contract leaves a choice
open (which of two errors comes first, whether lowering a canary's weight "moves" an alias under approvals),
every allowed answer is an option and the model follows the one given. An option that only the unfixed code
gives names its rule (`pending`, see tests/model/pending.py) and is offered only while that rule is pending.

Time is counted in days (`State.day`); the state machine's clock moves 25 hours a day, so "younger than
N days" and "N days after" never fall on a boundary.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.model.pending import pending

ACCOUNT = "000000000000"
Target = int | str  # a version number or "LATEST"


def user(name: str) -> str:
    return f"arn:aws:iam::{ACCOUNT}:user/{name}"


def session(role: str, name: str) -> str:
    return f"arn:aws:sts::{ACCOUNT}:assumed-role/{role}/{name}"


# Who acts: three people, and two sessions of one assumed role (one principal, two spellings).
IDENTITIES = {
    "alice": user("alice"),
    "bob": user("bob"),
    "carol": user("carol"),
    "ci-run": session("deployer", "ci-run-1"),
    "ci-approve": session("deployer", "ci-run-1-approve"),
}
# allowed_principals as the machine writes them. Only globs whose meaning for an assumed role's session no
# reading of the contract disputes: users' ARNs (which no session matches) and the lone `*` (anyone).
GLOBS = {
    "anyone": (),
    "star": ("*",),
    "alice": (user("alice"),),
    "alice+bob": (user("alice"), user("bob")),
    "users": ("arn:aws:iam::*:user/*",),
}


def principal(identity: str) -> str:
    """One principal, however spelt: an assumed role's sessions are the role."""
    found = re.fullmatch(r"arn:aws:sts::(\d+):assumed-role/([^/]+)/[^/]+", identity)
    return f"arn:aws:iam::{found[1]}:role/{found[2]}" if found else identity


def allowed(globs: Iterable[str], identity: str) -> bool:
    """ARN patterns: `*` within one segment (segments split at `:` and `/`); a lone `*` means anyone."""
    globs = tuple(globs)
    if not globs or "*" in globs:
        return True
    return any(re.fullmatch("[^:/]*".join(map(re.escape, g.split("*"))), identity) for g in globs)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Content:
    sha256: str
    size: int
    content_type: str = "application/octet-stream"
    metadata: tuple[tuple[str, str], ...] = ()


@dataclass
class Version:
    number: int
    content: Content
    created: int  # the day
    deleted: bool = False
    deleted_day: int | None = None
    expired: bool = False
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Revision:
    """One revision of an alias: its targets, or its deletion."""

    primary: Target | None = None
    secondary: Target | None = None
    weight: int | None = None
    deleted: bool = False
    by: str | None = None

    def targets(self) -> set[Target]:
        return {t for t in (self.primary, self.secondary) if t is not None}

    def serves(self) -> tuple[Target | None, Target | None, int | None]:
        return self.primary, self.secondary, self.weight


@dataclass(frozen=True)
class Policy:
    allowed: tuple[str, ...] = ()
    require_tags: tuple[tuple[str, str], ...] = ()
    approvals: int = 0

    def has_rules(self) -> bool:
        """Rules beyond allowed_principals (the ones an alias on LATEST cannot take)."""
        return bool(self.require_tags) or self.approvals > 0


@dataclass
class Promotion:
    id: str
    alias: str
    version: int
    requested_by: str
    day: int
    approvals: list[str] = field(default_factory=list)
    state: str = "pending"


@dataclass(frozen=True)
class Retention:
    keep_last: int
    keep_days: int | None = None
    keep_tags: tuple[tuple[str, str], ...] = ()
    rollback_window: int = 5
    expire_after_days: int = 30


@dataclass(frozen=True)
class Option:
    """One answer the contract allows: its status, what its body must say (`check` raises AssertionError), what
    it does to the model (`effect`, given the body), and for a 403 the violated rules: `must` all be named and
    nothing beyond `must | may`. `pending` names the unfixed rule this option exists for."""

    status: int
    effect: Callable[[Any], None] | None = None
    check: Callable[[Any], None] | None = None
    must: frozenset[str] = frozenset()
    may: frozenset[str] = frozenset()
    pending: str | None = None
    why: str = ""


Options = list[Option]


def refused(status: int, why: str, pending_rule: str | None = None) -> Option:
    return Option(status, why=why, pending=pending_rule)


def violation(must: Iterable[str], may: Iterable[str] = (), why: str = "", pending_rule: str | None = None) -> Option:
    return Option(403, must=frozenset(must), may=frozenset(may), why=why, pending=pending_rule)


def if_pending(rule: str, options: Iterable[Option]) -> Options:
    """The answers the unfixed code gives for `rule`, while it is pending (none once it is fixed)."""
    return [o for o in options if o.pending == rule] if pending(rule) else []


class State:
    """One artifact: its uploaded bytes, LATEST, versions, aliases (with history), alias policies, promotions,
    the retention policy, and the day; and the operations on content, versions and tags (the alias and
    retention rules are tests/model/guards.py and tests/model/retention.py)."""

    def __init__(self) -> None:
        self.stored: set[str] = set()  # bytes in S3 for this artifact
        self.latest: Content | None = None
        self.versions: dict[int, Version] = {}
        self.aliases: dict[str, list[Revision]] = {}
        self.policies: dict[str, Policy] = {}
        self.promotions: list[Promotion] = []
        self.retention: Retention | None = None
        self.day = 0

    # What the model knows.

    @property
    def exists(self) -> bool:
        return self.latest is not None

    @property
    def newest(self) -> int:
        return max(self.versions, default=0)

    def live_alias(self, alias: str) -> Revision | None:
        history = self.aliases.get(alias)
        return history[-1] if history and not history[-1].deleted else None

    def pinned_by(self, number: int) -> list[str]:
        return sorted(a for a in self.aliases if number in ((self.live_alias(a) or Revision()).targets()))

    def references(self) -> dict[str, int]:
        """Each content's references: the versions (soft-deleted too, not expired) and LATEST holding it."""
        found: dict[str, int] = {}
        for v in self.versions.values():
            if not v.expired:
                found[v.content.sha256] = found.get(v.content.sha256, 0) + 1
        if self.latest is not None:
            found[self.latest.sha256] = found.get(self.latest.sha256, 0) + 1
        return found

    def content_of(self, target: Target) -> Content | None:
        if target == "LATEST":
            return self.latest
        version = self.versions.get(int(target))
        return version.content if version and not version.expired else None

    def tagged(self, target: Target, tags: Iterable[tuple[str, str]]) -> bool:
        """Whether `target` carries every tag (LATEST is mutable and carries none)."""
        version = self.versions.get(target) if isinstance(target, int) else None
        return version is not None and all(version.tags.get(k) == v for k, v in tags)

    def promotion_state(self, promotion: Promotion) -> str:
        """A pending promotion seven days old or more is expired (the clock moves 25 hours a day)."""
        if promotion.state == "pending" and self.day - promotion.day >= 7:
            return "expired"
        return promotion.state

    # Uploads, LATEST and publishing.

    def upload(self, sha256: str) -> Options:
        if sha256 in self.stored:
            return [Option(200, check=lambda b: _eq(b["exists"], True, "exists"))]
        return [
            Option(201, effect=lambda _: self.stored.add(sha256), check=lambda b: _eq(b["exists"], False, "exists"))
        ]

    def missing_bytes(self, content: Content) -> Options | None:
        """A reference to content never uploaded (or collected since) writes nothing."""
        if content.sha256 in self.stored:
            return None
        return [refused(s, "the content is not uploaded") for s in (409, 400, 404)]

    def put_latest(self, content: Content) -> Options:
        missing = self.missing_bytes(content)
        if missing is not None:
            return missing

        def effect(_: Any) -> None:
            self.latest = content

        def check(body: Any) -> None:
            _content(body, content)
            _eq(body["newest_version"], self.newest or None, "newest_version")

        return [Option(200, effect=effect, check=check)]

    def publish(self, content: Content | None, *, force: bool) -> Options:
        """One step (with content: LATEST is set too) or a snapshot of LATEST (None)."""
        if content is None:
            if self.latest is None:
                return [refused(404, "no LATEST to snapshot")]
            content = self.latest
        else:
            missing = self.missing_bytes(content)
            if missing is not None:
                return missing
        snapshot = content
        options: Options = []
        newest = self.versions.get(self.newest)
        if newest is not None and not force and newest.content.sha256 == snapshot.sha256 and not newest.expired:
            same = newest

            def deduplicated(_: Any) -> None:
                # LATEST already holding these bytes is left as it is: other content type or metadata change nothing
                if self.latest is None or self.latest.sha256 != snapshot.sha256:
                    self.latest = snapshot

            def check_same(body: Any) -> None:
                _eq(body["deduplicated"], True, "deduplicated")
                _eq(body["version"], same.number, "version")

            dedup = Option(200, effect=deduplicated, check=check_same, why="the newest version has this content")
            if not newest.deleted:
                return [dedup]
            options.append(dedup)  # the newest is soft-deleted: whether it "has that content" is open
        number = self.newest + 1

        def made(_: Any) -> None:
            self.latest = snapshot
            self.versions[number] = Version(number, snapshot, created=self.day)

        def check_made(body: Any) -> None:
            _eq(body["deduplicated"], False, "deduplicated")
            _eq(body["version"], number, "version")
            _content(body, snapshot)
            _eq(body["deleted"], False, "deleted")
            _eq(body["tags"], {}, "tags")

        return [Option(201, effect=made, check=check_made), *options]

    # Versions.

    def delete_version(self, number: int) -> Options:
        version = self.versions.get(number)
        if version is None:
            return [refused(404, "no such version")]
        if version.expired or version.deleted:
            return [Option(200, check=lambda b: _eq(b["version"], number, "version"), why="already deleted")]
        if self.pinned_by(number):
            return [refused(409, f"pinned by {self.pinned_by(number)}")]

        def effect(_: Any) -> None:
            version.deleted, version.deleted_day = True, self.day

        return [Option(200, effect=effect, check=lambda b: _eq(b["deleted"], True, "deleted"))]

    def restore_version(self, number: int) -> Options:
        version = self.versions.get(number)
        if version is None:
            return [refused(404, "no such version")]
        if version.expired:
            return [refused(409, "an expired version is never restored")]

        def effect(_: Any) -> None:
            version.deleted, version.deleted_day = False, None

        return [Option(200, effect=effect, check=lambda b: _eq(b["deleted"], False, "deleted"))]

    def tag_version(self, number: int, key: str, value: str | None) -> Options:
        version = self.versions.get(number)
        if version is None:
            return [refused(404, "no such version")]

        def effect(_: Any) -> None:
            if value is None:
                version.tags.pop(key, None)
            else:
                version.tags[key] = value

        if version.expired:
            # The unfixed code writes the tag on the expired version; the model keeps it there, so that the
            # searches can be checked against what the code holds while the rule is pending.
            return [
                refused(409, "an expired version carries no tags"),
                *if_pending(
                    "expired-no-tags",
                    [Option(200, effect=effect, pending="expired-no-tags", why="a tag written on an expired version")],
                ),
            ]

        def check(body: Any) -> None:
            expected = dict(version.tags)
            if value is None:
                expected.pop(key, None)
            else:
                expected[key] = value
            _eq(body["tags"], expected, "tags")

        return [Option(200, effect=effect, check=check)]

    def tag_hits(self, key: str, value: str, *, include_deleted: bool) -> tuple[set[int], set[int]]:
        """The versions a tag search answers (those carrying the tag: an expired one carries none), and those it
        may answer too: expired versions the unfixed code left tagged, while expired-no-tags is pending."""
        must, may = set(), set()
        for v in self.versions.values():
            if v.tags.get(key) == value and (include_deleted or not v.deleted):
                (may if v.expired else must).add(v.number)
        return must, may if pending("expired-no-tags") else set()


def _eq(got: Any, expected: Any, what: str) -> None:
    assert got == expected, f"{what}: answered {got!r}, the model says {expected!r}"


def _content(body: Any, content: Content) -> None:
    _eq(body["sha256"], content.sha256, "sha256")
    _eq(body["size"], content.size, "size")
    _eq(body["content_type"], content.content_type, "content_type")
    _eq(body["metadata"], dict(content.metadata), "metadata")
