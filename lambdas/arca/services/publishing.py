"""Publishing: uploads, LATEST, publish (a version's delete, restore, prune and purge: arca.services.removal).

Invariants (the stores name the conditions; docs/access-patterns.md lists them):
- A version number is taken only by advancing LATEST's `newest` counter under the condition that LATEST
  is as it was read, in the same transaction that puts the version: concurrent publishers never share or
  skip a number; a loser re-reads and retries (Policy.compare_and_set).
- Purge leaves LATEST as a tombstone that keeps `newest`, so numbers are never reused (arca.services.removal).
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from arca.adapters import keys
from arca.adapters.multipart import Multipart
from arca.adapters.s3 import NOT_UPLOADED, Blobs
from arca.adapters.store.artifacts import COUNT_BATCH, ArtifactStore
from arca.adapters.store.change import Change
from arca.adapters.store.receipts import ReceiptStore
from arca.adapters.store.uploads import COMPLETE, Layout, UploadStore
from arca.adapters.store.versions import VersionStore
from arca.domain.aggregates import LatestRecord, VersionRecord
from arca.domain.entities import Latest, Published, Summary, Upload, Version
from arca.domain.errors import (
    ConflictError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationError,
    VersionLimitError,
)
from arca.domain.models import MAX_BLOB_SIZE, BlobRef, Content, StoredContent
from arca.domain.receipts import Seal
from arca.domain.signing import Signed, Signer, manifest
from arca.domain.trees import (
    MAX_MANIFEST_BYTES,
    MAX_TYPES_BYTES,
    TREE_MEDIA_TYPE,
    TYPES_MEDIA_TYPE,
    FileEntry,
    Tree,
    TreeContent,
    parse_manifest,
    parse_types,
    types_document,
)
from arca.domain.versions import MAX_VERSION
from arca.services.collection import Collected, Collection
from arca.services.reading import Reading, refuse_link
from arca.services.retry import Policy

# A tree's files are checked in S3 (one HeadObject each) this many at a time.
TREE_CHECKS = 16
# A 409 for a tree whose files are not all uploaded names at most this many of their paths (it counts them all).
MISSING_NAMED = 100


@dataclass(frozen=True)
class PublishingStores:
    """What publishing writes and reads: the artifact, its versions, idempotency records and multipart layouts."""

    artifacts: ArtifactStore
    versions: VersionStore
    receipts: ReceiptStore
    layouts: UploadStore


class Publishing:
    def __init__(
        self,
        stores: PublishingStores,
        blobs: Blobs,
        reading: Reading,
        policy: Policy,
        signer: Signer | None = None,
        *,
        collection: Collection,
    ) -> None:
        self.artifacts = stores.artifacts
        self.versions = stores.versions
        self.receipts = stores.receipts
        self.layouts = stores.layouts
        self.blobs = blobs
        self.reading = reading
        self.policy = policy
        self.multipart = Multipart(blobs)
        self.signer = signer
        self.collection = collection

    def create_artifact(
        self,
        name: str,
        *,
        description: str | None = None,
        tags: dict[str, str] | None = None,
        seal: Seal | None = None,
        identity: str | None = None,
    ) -> Summary:
        """Create `name` with no version yet, with its description and tags (decision 111); a purged name too
        (its version numbers go on). ConflictError (field name) when it exists, LinkedNameError for a link.

        With `seal`, its record (the route's rendering of the summary) is written in the same transaction.
        """

        def attempt() -> Summary:
            seen = self.artifacts.latest(name)
            refuse_link(name, seen)
            if seen is not None and seen.purging:
                raise ConflictError(f"artifact {name!r} is being purged", field="name")
            change = Change(name, by=identity, now=self.policy.now())
            written = self.artifacts.stage_created(change, seen, description=description, tags=dict(tags or {}))
            summary = self.reading.summary_of(written)
            change.seal(seal, summary)
            self.artifacts.commit(change)
            return summary

        return self.policy.compare_and_set(attempt)

    def create_upload(self, name: str, blob: BlobRef) -> Upload:
        """Where to upload a blob: `exists` when these very bytes are stored already, published or not, else a
        presigned PUT that can only create the object (Blobs.presign_upload).

        Unsigned headers on stored bytes still answer `exists`: publishing rewrites the object without them.
        Other bytes at the blob's key, or an expired upload awaiting removal, are a ConflictError: no upload
        could replace them. So are stored bytes that retention is removing (no publish could reference them):
        a collection abandoned by an invocation that has ended is finished here, and the upload goes ahead.
        """
        _check_size(blob.size)
        refuse_link(name, self.artifacts.latest(name))
        key = keys.blob_key(name, blob.sha256)
        stored = self.blobs.stored(key, blob.sha256, blob.size)
        if stored and self._collected(name, blob.sha256):
            # It deleted the object versions it had claimed; bytes uploaded since (a versioned bucket) are still here.
            stored = self.blobs.stored(key, blob.sha256, blob.size)
        if stored:
            return Upload(exists=True, sha256=blob.sha256, size=blob.size)
        return Upload(
            exists=False, sha256=blob.sha256, size=blob.size, upload=self.blobs.presign_upload(key, blob.sha256)
        )

    def _collected(self, name: str, sha256: str) -> bool:
        """Whether an abandoned collection of stored bytes was finished just now (False: none holds them);
        ConflictError while a collection holds them."""
        held = self.collection.abandoned(name, sha256)
        if held is None:
            return False
        if self.collection.finish(name, sha256, held) is Collected.REMOVED:
            return True
        raise ConflictError(
            f"retention is removing the content {sha256} (since {held.claimed_at}); upload it again once it is "
            f"gone, at the latest after {self.collection.retry_after(held)}",
            field="sha256",
            details={"collecting": True},
        )

    def put_latest(
        self, name: str, content: Content | TreeContent, *, seal: Seal | None = None, identity: str | None = None
    ) -> Latest:
        """Point LATEST at an uploaded blob (verified in S3 first); creates the artifact if new.

        With `seal`, its record (the route's rendering of LATEST as written) is written in the same transaction.
        """
        return self._set_latest(name, self._checked(name, content), seal=seal, identity=identity).entity()

    def _locate(self, name: str, content: Content) -> StoredContent:
        """`content` as stored, checked and kept (no longer an unpublished upload), with its layout.

        Its single PUT when there is one (one HeadObject: a layout never displaces it), else its newest verified
        multipart layout in this artifact (one Query of its layouts, then the HeadObject of that one's object).
        Multipart content is referenced by its sha256 alone, and only once its SHA-256 was checked (`complete`):
        ConflictError naming the state of its newest layout otherwise (`uploading`, `verifying`, `failed`).
        """
        if content.size <= MAX_BLOB_SIZE:
            key = keys.blob_key(name, content.sha256)
            stat = self.blobs.stat(key)
            if stat is not None:
                self.blobs.keep(key, self.blobs.verify(key, content.sha256, content.size, stat=stat))
                return StoredContent.model_validate(content.model_dump())
        layout = self._layout(name, content)
        key = keys.multipart_blob_key(name, content.sha256, layout.parts_sha256)
        self.blobs.keep(key, self.multipart.verify(key, content.size, layout.parts_sha256), in_parts=True)
        extra = {"part_size": layout.part_size, "parts_sha256": layout.parts_sha256}
        return StoredContent.model_validate({**content.model_dump(), **extra})

    def _locate_tree(self, name: str, request: TreeContent, trees: list[Tree]) -> StoredContent:
        """A tree as stored: every file's content checked and kept (as `_locate` does for a blob), then its
        canonical manifest stored as the content at the tree's digest (put by the service for `files`, the
        upload itself for `tree`), checked and kept. The tree's `size` is its files' sum, not its manifest's.

        ConflictError naming the paths whose content is not uploaded (or not verified yet), ValidationError
        naming the path whose content has another size, before anything is written.
        """
        if request.files is not None:
            tree = Tree.of(request.files)
            given = {entry.path: index for index, entry in enumerate(request.files)}
        else:
            assert request.tree is not None
            uploaded = self._uploaded(name, request.tree, "tree", "tree manifest", MAX_MANIFEST_BYTES)
            tree = parse_manifest(uploaded, field="tree")
            if request.file_types is not None:
                document = self._uploaded(name, request.file_types, "file_types", "types document", MAX_TYPES_BYTES)
                tree = parse_types(document, tree, field="file_types")
            given = {entry.path: index for index, entry in enumerate(tree.files)}
        first: dict[str, FileEntry] = {}  # each content once, by the first path (in path order) that holds it
        holders: dict[str, list[str]] = {}
        for entry in tree.files:
            first.setdefault(entry.sha256, entry)
            holders.setdefault(entry.sha256, []).append(entry.path)
        # Each check runs in a copy of this context (tracing, and whatever the caller's context carries).
        with ThreadPoolExecutor(TREE_CHECKS) as pool:
            checks = [
                pool.submit(contextvars.copy_context().run, self._file_problem, name, entry) for entry in first.values()
            ]
            problems = {sha256: check.result() for sha256, check in zip(first, checks, strict=True)}
        missing = sorted(p for s, problem in problems.items() if isinstance(problem, ConflictError) for p in holders[s])
        if missing:
            shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            raise ConflictError(
                f"{request.named}: the content of {len(missing)} file(s) is not uploaded (or not verified yet) for "
                f"this artifact: {shown}; POST …/uploads each first",
                field=request.named,
                details={"paths": missing[:MISSING_NAMED], "missing": len(missing)},
            )
        for sha256, problem in problems.items():
            if isinstance(problem, ValidationError):
                entry = first[sha256]
                at = f"files[{given[entry.path]}].{problem.field or 'size'}"
                where = at if request.files is not None else request.named
                raise ValidationError(
                    f"{where}: {entry.path!r}: {problem.message}", field=where, details={"path": entry.path, "at": at}
                )
        trees.append(tree)
        document, media_type = tree.manifest, TREE_MEDIA_TYPE
        # The files' content types are kept beside the manifest, in a document of their own (decision 113); an OCI
        # manifest carries its own (each descriptor's media type), so it needs none.
        types = types_document(tree.files)
        if request.document is not None:  # an OCI manifest: its own bytes are the version's document
            document, media_type, types = request.document, request.media_type or TREE_MEDIA_TYPE, None
        digest = self._store_document(name, document, media_type)
        return StoredContent(
            sha256=digest,
            size=tree.size,
            content_type=media_type,
            metadata=request.metadata,
            files=tree.count,
            file_types=self._store_document(name, types, TYPES_MEDIA_TYPE) if types is not None else None,
        )

    def _store_document(self, name: str, document: bytes, media_type: str) -> str:
        """Store a document the service writes (a tree's manifest or types) as the content at its digest, or keep the
        one stored there after checking it; its sha256."""
        digest = hashlib.sha256(document).hexdigest()
        key = keys.blob_key(name, digest)
        stat = self.blobs.stat(key)
        if stat is None:
            self.blobs.put(key, document, content_type=media_type)
        else:
            self.blobs.keep(key, self.blobs.verify(key, digest, len(document), stat=stat))
        return digest

    def _file_problem(self, name: str, entry: FileEntry) -> Exception | None:
        """Why a file's content cannot be referenced (None: it is stored, checked and kept)."""
        try:
            self._locate(name, Content(sha256=entry.sha256, size=entry.size))
        except (ConflictError, ValidationError) as problem:
            return problem
        except PayloadTooLargeError:  # over one PUT's size and no multipart layout: never uploaded
            return ConflictError(NOT_UPLOADED, field="sha256")
        return None

    def _uploaded(self, name: str, sha256: str, field: str, what: str, most: int) -> bytes:
        """The bytes of an uploaded document a publish names (a tree manifest, a types document): its single PUT,
        else its verified multipart layout. ConflictError naming `field` when it is not uploaded, ValidationError
        when it is over `most` bytes (no such document is larger)."""
        key = keys.blob_key(name, sha256)
        stat = self.blobs.stat(key)
        if stat is None:
            layouts = [layout for layout in self.layouts.layouts(name, sha256) if layout.state == COMPLETE]
            if not layouts:
                raise ConflictError(f"{field}: {NOT_UPLOADED}", field=field)
            key = keys.multipart_blob_key(name, sha256, layouts[0].parts_sha256)
            stat = self.blobs.stat(key)
            if stat is None:
                raise ConflictError(f"{field}: {NOT_UPLOADED}", field=field)
        if stat.size > most:
            raise ValidationError(
                f"{field}: the content is {stat.size} bytes, more than any {what} ({most})", field=field
            )
        document = self.blobs.read(key)
        if hashlib.sha256(document).hexdigest() != sha256:
            raise ConflictError(f"{field}: {NOT_UPLOADED}", field=field)
        return document

    def _layout(self, name: str, content: Content) -> Layout:
        layouts = self.layouts.layouts(name, content.sha256)
        verified = [layout for layout in layouts if layout.state == COMPLETE]
        if verified:
            return verified[0]
        if layouts:
            state = layouts[0].state
            raise ConflictError(
                f"the multipart upload of {content.sha256} is {state}: {_NOT_YET[state]}",
                field="sha256",
                details={"state": state, "upload": f"{content.sha256}.{layouts[0].parts_sha256}"},
            )
        _check_size(content.size)
        raise ConflictError(NOT_UPLOADED, field="sha256")

    def _set_latest(
        self, name: str, checked: _Checked, *, seal: Seal | None = None, identity: str | None = None
    ) -> LatestRecord:
        def attempt() -> LatestRecord:
            latest = checked.read()
            change = Change(name, by=identity, now=self.policy.now())
            written = self.artifacts.stage_latest(change, latest, checked.content)
            assert isinstance(written, LatestRecord)
            change.seal(seal, written.entity())
            self.artifacts.commit(change)
            return written

        return self.policy.compare_and_set(attempt)

    def _checked(self, name: str, content: Content | TreeContent) -> _Checked:
        """Check the blob in S3, and return it with the reader of LATEST for the compare-and-set tries.

        LATEST is read before the check, and purge deletes blobs only after its mark has advanced `rev`:
        a write conditioned on a reading made before the check cannot commit over a blob that a purge
        deleted after it. Retention's collections fence the same way: each claim and each finish advances
        LATEST's `collections`, and the write holds only while it is as read (ArtifactStore.stage_latest). A
        reading that shows a purge or a collection since the check (`purges` or `collections` moved) checks
        again, so every compare-and-set try is conditioned on a reading its check followed.
        """
        seen = self.artifacts.latest(name)
        refuse_link(name, seen)
        if isinstance(content, TreeContent):
            # The files' contents are counted once checked, before the write: a reference is never missing from a
            # count while a tree holds it (decision 98); a write that then fails leaves them counted, never less.
            trees: list[Tree] = []
            checked = _Checked(
                name, lambda: self._locate_tree(name, content, trees), lambda: self.artifacts.latest(name), seen
            )
            # A types document is counted with them (never collected while a version could name it).
            types = [checked.content.file_types] if checked.content.file_types is not None else []
            count_contents(self.artifacts, name, sorted({*trees[-1].contents(), *types}), now=self.policy.now())
            return checked
        return _Checked(name, lambda: self._locate(name, content), lambda: self.artifacts.latest(name), seen)

    def publish(
        self,
        name: str,
        content: Content | TreeContent | None,
        *,
        force: bool = False,
        seal: Seal | None = None,
        identity: str | None = None,
    ) -> Published:
        """Snapshot LATEST (content None) or set LATEST to `content` and snapshot it, in one transaction.

        Deduplicates onto the newest version when it has the same sha256 and is not deleted, unless
        `force`. With `seal`, its record (the route's rendering of the Published, `deduplicated` or not) is
        written in the transaction that makes the version (alone when nothing changes). Raises
        NotFoundError (no LATEST to snapshot), VersionLimitError, ConflictError.
        """
        checked = self._checked(name, content) if content is not None else None

        def attempt() -> Published:
            latest = checked.read() if checked is not None else self.artifacts.latest(name)
            stored = checked.content if checked is not None else None
            refuse_link(name, latest)
            if content is None and (latest is None or latest.purged):
                raise NotFoundError(f"artifact {name!r} has no LATEST to publish; PUT …/latest first")
            if stored is None and latest is not None and latest.sha256 is None:
                raise NotFoundError(
                    f"artifact {name!r} has no version yet and no LATEST to publish; PUT …/latest first"
                )
            if stored is None:
                assert latest is not None
                snapshot = StoredContent.model_validate({f: getattr(latest, f) for f in StoredContent.model_fields})
            else:
                snapshot = stored
            newest = latest.newest if latest else 0
            if latest is not None and not force and newest and latest.newest_sha256 == snapshot.sha256:
                existing = self.versions.version(name, newest)
                if existing is not None and not existing.deleted:
                    # The idempotency record keeps the answer without the part hashes (up to 650 KB of them would
                    # not fit its item); a replay answers part_size and part_count, GET version the hashes.
                    same = Published(**existing.entity().model_dump(), deduplicated=True)
                    # LATEST is written only when it holds other bytes: a body that differs only in its content
                    # type or metadata changes nothing (the answer is the version as it was published).
                    if checked is not None and stored is not None and not _holds(latest, stored):
                        kept = seal.of(lambda _: same) if seal else None
                        self._set_latest(name, checked, seal=kept, identity=identity)
                    elif seal is not None:
                        self.receipts.put_receipt(seal, same)
                    return self._with_parts(same, existing)
            if newest >= MAX_VERSION:
                raise VersionLimitError(f"artifact {name!r} has reached version {MAX_VERSION}, the last one")
            made = seal.of(lambda v: Published(**v.model_dump(), deduplicated=False)) if seal else None
            now = self.policy.now()
            # Signed before the transaction that makes the version: no version ever exists unsigned.
            text = manifest(
                name,
                newest + 1,
                snapshot.sha256,
                snapshot.size,
                now,
                part_size=snapshot.part_size,
                parts_sha256=snapshot.parts_sha256,
            )
            signed = self._sign(text)
            change = Change(name, by=identity, now=now)
            version = self.artifacts.stage_latest(change, latest, snapshot, publish_as=newest + 1, signed=signed)
            assert isinstance(version, VersionRecord)
            answer = version.entity()
            change.seal(made, answer)
            self.artifacts.commit(change)
            return self._with_parts(Published(**answer.model_dump(), deduplicated=False), version)

        return self.policy.compare_and_set(attempt)

    def _with_parts(self, published: Published, version: VersionRecord) -> Published:
        """The answer of a publish carries the part hashes of multipart content, as GET version does."""
        with_parts = self.reading.with_parts(version)
        return (
            published.model_copy(update={"parts": with_parts.parts}) if isinstance(with_parts, Version) else published
        )

    def _sign(self, text: str) -> Signed:
        if self.signer is None:  # the stack always configures the key: refuse rather than publish unsigned
            raise RuntimeError("no signing key is configured (ARCA_SIGNING_KEY_ARN)")
        return Signed(text, self.signer.sign(text.encode()))


class _Checked:
    """Content as checked in S3 (`content`, with its layout), and LATEST read for each compare-and-set try after a
    check it follows (Publishing._checked)."""

    def __init__(
        self,
        name: str,
        locate: Callable[[], StoredContent],
        latest: Callable[[], LatestRecord | None],
        seen: LatestRecord | None,
    ) -> None:
        self._locate = locate
        self._latest = latest
        self.content = locate()
        self._fences = _fences(seen)

    def read(self) -> LatestRecord | None:
        latest = self._latest()
        if latest is not None and _fences(latest) != self._fences:
            self.content = self._locate()
            self._fences = _fences(latest)
        return latest


# What a reference to multipart content that is not verified yet must wait for, by the state of its newest layout.
_NOT_YET = {
    "uploading": "complete it first (POST …/uploads/{id}/complete)",
    "verifying": "its SHA-256 is being checked (GET …/uploads/{id} shows how far); reference it once complete",
    "failed": "its parts do not make content with this sha256; nothing may reference it",
}


def _fences(latest: LatestRecord | None) -> tuple[int, int]:
    """What a blob check must follow: the purges and the collections LATEST has seen."""
    return (latest.purges, latest.collections) if latest is not None else (0, 0)


def _holds(latest: LatestRecord, content: StoredContent) -> bool:
    """Whether LATEST holds exactly these bytes, in this layout."""
    return all(getattr(latest, f) == getattr(content, f) for f in ("sha256", "size", "part_size", "parts_sha256"))


def _check_size(size: int) -> None:
    if size > MAX_BLOB_SIZE:
        raise PayloadTooLargeError(f"size {size} is over the {MAX_BLOB_SIZE}-byte limit of one upload", field="size")


def count_contents(artifacts: ArtifactStore, name: str, contents: list[str], *, now: str) -> None:
    """Add a reference to each content's blob count (a tree's files, before the write that makes the tree), one
    change of COUNT_BATCH at a time (ArtifactStore.stage_counts): ConflictError naming a content a collection holds;
    what earlier changes counted stays counted (over-counted, never under)."""
    for start in range(0, len(contents), COUNT_BATCH):
        change = Change(name, by=None, now=now)
        artifacts.stage_counts(change, contents[start : start + COUNT_BATCH])
        artifacts.commit(change)
