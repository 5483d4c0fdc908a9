"""Trees of files: the path rules, a file entry, the canonical tree manifest and its digest, paging. Pure: no I/O.

A tree is a version's content made of files. Its identity is its *tree manifest*, the RFC 8785 canonical JSON of
`{"files": [{"path", "sha256", "size"}, …]}` in path order, whose SHA-256 is the version's `sha256`. A file's
`content_type` is served with the file but is not part of the manifest, so it is not part of the digest: the types
that are not the default are a document of their own (`types_document`), which the version names (decision 113).

Decision 90, the canonical form and what is refused:
- Path order is the byte order of the UTF-8 paths, which is also Python's order of `str` (code points) and
  DynamoDB's order of string sort keys: one order for the manifest, a listing and a Query of file rows.
- The canonical bytes are `json.dumps(…, ensure_ascii=False, separators=(",", ":"), sort_keys=True)` in UTF-8.
  For this shape that is RFC 8785 exactly: the keys are ASCII (so code-point and UTF-16 order agree), sizes are
  integers below 2^53 (so ECMAScript's number form is the decimal digits), and strings escape `"`, `\\` and
  control characters as ECMAScript does (paths hold no control character; hex digests need no escape).
- An uploaded manifest (a publish by `{tree: <sha256>}`) must be those bytes exactly. An equivalent but
  non-canonical document (whitespace, key order, `\\u00e9` for `é`, files out of order) is refused, 400 naming
  `tree`, with the canonical document's digest in the answer. Accepting it would make the version's `sha256` the
  digest of bytes nobody uploaded, so the stored document and the served one would differ, or the server would
  have to store a second, rewritten document: the content-is-what-it-claims rule is kept by refusing.
- Refused too, each a 400 naming the field and the offending path: a path that breaks the rules (`path_problem`),
  a path listed twice, a path that is a folder of another (`a` and `a/b`), more than 10,000 files, a sha256 that
  is not 64 lower-case hex characters, a size that is not an integer from 0 to 5 TiB (S3's largest object; it
  also keeps every size exact as an ECMAScript number), an unknown key, and JSON that is not strict (duplicate
  keys, NaN). A file may be empty; a tree may have no files (no rule sets a minimum; the CLI refuses to publish
  an empty directory).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

from pydantic import (
    PlainValidator,
    TypeAdapter,
    WithJsonSchema,
)
from pydantic import ValidationError as PydanticValidationError

from arca.domain.errors import ValidationError
from arca.domain.models import DEFAULT_CONTENT_TYPE, ContentType

TREE_MEDIA_TYPE = "application/vnd.arca.tree+json"
# A tree's per-file content types (decision 113): a document of its own, not the manifest the digest covers.
TYPES_MEDIA_TYPE = "application/vnd.arca.tree-types+json"
MAX_FILES = 10_000
# DynamoDB's limit of a sort key, which a file row's path is.
MAX_PATH_BYTES = 1024
# S3's largest object: no file of a tree can be larger.
MAX_FILE_SIZE = 5 * 1024**4

_HEX64 = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_CONTENT_TYPE: TypeAdapter[str] = TypeAdapter(ContentType)
_ENTRY_KEYS = frozenset({"path", "sha256", "size", "content_type"})
_MANIFEST_KEYS = ("path", "sha256", "size")


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file of a tree: where it is, what it holds, and how it is served (None: not given)."""

    path: str
    sha256: str
    size: int
    content_type: str | None = None

    def served_as(self) -> str:
        """The content type the file is served with."""
        return self.content_type or DEFAULT_CONTENT_TYPE

    def answer(self) -> dict[str, Any]:
        """The file as a listing answers it: `{path, sha256, size, content_type}`."""
        return {"path": self.path, "sha256": self.sha256, "size": self.size, "content_type": self.served_as()}


def path_problem(path: str) -> str | None:
    """Why `path` is not a tree path, or None.

    A path is 1 to 1,024 bytes of UTF-8, segments joined by `/`, none empty, `.` or `..` (so no leading, trailing
    or double `/`), and no control character (U+0000 to U+001F, U+007F).
    """
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate, which JSON's \u escapes can spell
        return "a path is UTF-8 text (it holds a lone surrogate)"
    if not 1 <= size <= MAX_PATH_BYTES:
        return f"a path is 1 to {MAX_PATH_BYTES} bytes of UTF-8, this one is {size}"
    if _CONTROL.search(path):
        return "a path holds no control character"
    if path.startswith("/"):
        return "a path does not start with '/'"
    # An empty, "." or ".." segment, found by substring searches: a path may have 512 segments, a tree 10,000 paths.
    framed = f"/{path}/"
    if "//" in framed or "/./" in framed or "/../" in framed:
        segment = next(s for s in path.split("/") if s in ("", ".", ".."))
        return f"a path has no {'empty' if not segment else repr(segment)} segment"
    return None


def check_path(path: object, field: str = "path") -> str:
    """`path` if it is a tree path; ValidationError naming `field` and the path otherwise."""
    if not isinstance(path, str):
        raise ValidationError(f"{field}: must be a string", field=field)
    if problem := path_problem(path):
        raise _refused(field, f"{path!r} is not a file path: {problem}", path)
    return path


def check_prefix(prefix: object, field: str = "prefix") -> str:
    """A listing's `prefix` (a string prefix of paths, not only of folders; empty lists all): refused when no
    path could start with it (over 1,024 bytes, a control character, a lone surrogate)."""
    if not isinstance(prefix, str):
        raise ValidationError(f"{field}: must be a string", field=field)
    try:
        size = len(prefix.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValidationError(f"{field}: is not UTF-8 text", field=field) from None
    if size > MAX_PATH_BYTES:
        raise ValidationError(f"{field}: is longer than a path ({MAX_PATH_BYTES} bytes)", field=field)
    if _CONTROL.search(prefix):
        raise ValidationError(f"{field}: holds a control character", field=field)
    return prefix


def check_entries(entries: Sequence[FileEntry], field: str = "files") -> None:
    """Refuse a list of files that is no tree, naming `field[i].path` and the path: more than MAX_FILES files, a
    bad path, a path listed twice, a path that is a folder of another. The entries' own fields are the caller's
    (`parse_files` checks them)."""
    _check_tree(entries, field, paths=True)


def _check_tree(entries: Sequence[FileEntry], field: str, *, paths: bool) -> None:
    if len(entries) > MAX_FILES:
        raise ValidationError(f"{field}: {len(entries)} files, at most {MAX_FILES}", field=field)
    where: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if paths:
            check_path(entry.path, f"{field}[{index}].path")
        if entry.path in where:
            raise _refused(
                f"{field}[{index}].path",
                f"{entry.path!r} is listed twice (also {field}[{where[entry.path]}].path)",
                entry.path,
            )
        where[entry.path] = index
    # A path is a folder of another when some path starts with it and "/": in path order those come together just
    # after where the path and "/" would sort, so one binary search a path finds the first (not a walk of folders,
    # which would be quadratic in the length of a path).
    ordered = sorted(where)
    for index, entry in enumerate(entries):
        folder = entry.path + "/"
        below = bisect.bisect_left(ordered, folder)
        if below < len(ordered) and ordered[below].startswith(folder):
            inner = ordered[below]
            raise _refused(
                f"{field}[{index}].path",
                f"{entry.path!r} is a file and also a folder of {inner!r} ({field}[{where[inner]}].path)",
                entry.path,
            )


def parse_files(value: object, field: str = "files") -> tuple[FileEntry, ...]:
    """The `files` of a publish body (JSON as parsed), strictly, as entries in the order given; ValidationError
    naming `field[i].<key>` (and the path, once known) for the first problem. See `check_entries` for the tree
    rules; each entry is `{path, sha256, size, content_type?}` (a null content_type is no content_type)."""
    if not isinstance(value, list | tuple):
        raise ValidationError(f"{field}: must be a list of files", field=field)
    if len(value) > MAX_FILES:  # before reading 10,001 entries or more
        raise ValidationError(f"{field}: {len(value)} files, at most {MAX_FILES}", field=field)
    entries = tuple(_entry(item, f"{field}[{index}]") for index, item in enumerate(value))
    _check_tree(entries, field, paths=False)  # each path was checked as its entry was read
    return entries


def _entry(item: object, at: str) -> FileEntry:
    if isinstance(item, FileEntry):  # already parsed (a model built in code)
        item = {"path": item.path, "sha256": item.sha256, "size": item.size, "content_type": item.content_type}
    if not isinstance(item, dict):
        raise ValidationError(f"{at}: must be an object {{path, sha256, size, content_type?}}", field=at)
    for key in item:
        if key not in _ENTRY_KEYS:
            raise ValidationError(f"{at}.{key}: is not a known field", field=f"{at}.{key}")
    for key in _MANIFEST_KEYS:
        if key not in item:
            raise ValidationError(f"{at}.{key}: is required", field=f"{at}.{key}")
    path = check_path(item["path"], f"{at}.path")
    sha256, size, content_type = item["sha256"], item["size"], item.get("content_type")
    if not isinstance(sha256, str) or not _HEX64.fullmatch(sha256):
        raise _refused(f"{at}.sha256", "must be 64 lower-case hex characters", path)
    if type(size) is not int or not 0 <= size <= MAX_FILE_SIZE:
        raise _refused(f"{at}.size", f"must be an integer from 0 to {MAX_FILE_SIZE} (5 TiB)", path)
    if content_type is not None:
        try:
            content_type = _CONTENT_TYPE.validate_python(content_type, strict=True)
        except PydanticValidationError:
            raise _refused(f"{at}.content_type", "must be a media type such as text/plain", path) from None
    return FileEntry(path, sha256, size, content_type)


# A body model's `files` field: the registry's own errors name `files[i].<key>` (pydantic passes them through).
TreeFiles = Annotated[
    tuple[FileEntry, ...],
    PlainValidator(parse_files),
    WithJsonSchema(
        {
            "type": "array",
            "maxItems": MAX_FILES,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "sha256", "size"],
                "properties": {
                    "path": {"type": "string", "minLength": 1, "description": "1-1,024 bytes of UTF-8"},
                    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "size": {"type": "integer", "minimum": 0, "maximum": MAX_FILE_SIZE},
                    "content_type": {"type": "string"},
                },
            },
        }
    ),
]


def path_order(entries: Iterable[FileEntry]) -> list[FileEntry]:
    """The entries in path order (the byte order of UTF-8, which Python's order of str is)."""
    return sorted(entries, key=lambda entry: entry.path)


def canonical_manifest(entries: Iterable[FileEntry]) -> bytes:
    """The canonical tree manifest of valid entries (given in any order): RFC 8785 JSON, UTF-8."""
    files = [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in path_order(entries)]
    return _canonical({"files": files})


def _canonical(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def tree_digest(entries: Iterable[FileEntry]) -> str:
    """The SHA-256 (hex) of the canonical tree manifest: a tree version's `sha256`."""
    return hashlib.sha256(canonical_manifest(entries)).hexdigest()


@dataclass(frozen=True)
class Tree:
    """A valid tree: its files in path order, its manifest's bytes and digest, its count and total size."""

    files: tuple[FileEntry, ...]

    @classmethod
    def of(cls, entries: Iterable[FileEntry], field: str = "files") -> Tree:
        """Check entries given in any order (errors name `field[i]` by that order) and keep them in path order."""
        given = tuple(entries)
        check_entries(given, field)
        return cls(tuple(path_order(given)))

    @cached_property
    def manifest(self) -> bytes:
        return _canonical({"files": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in self.files]})

    @cached_property
    def digest(self) -> str:
        return hashlib.sha256(self.manifest).hexdigest()

    @property
    def count(self) -> int:
        return len(self.files)

    @cached_property
    def size(self) -> int:
        """The sum of the files' sizes: a tree version's `size`."""
        return sum(entry.size for entry in self.files)

    def contents(self) -> dict[str, int]:
        """Each distinct content (sha256) and its size: what is referenced once per tree, however many paths
        hold it."""
        return {entry.sha256: entry.size for entry in self.files}

    def contents_after(self, cursor: str | None, limit: int) -> list[str]:
        """The next `limit` distinct contents in sha256 order after `cursor` (None: from the first): one bounded
        step of counting (or un-counting) a tree's references, whose last sha256 is the next step's cursor, so a
        step repeated after a crash is recognised by the cursor it was to advance."""
        ordered = sorted(self.contents())
        start = bisect.bisect_right(ordered, cursor) if cursor is not None else 0
        return ordered[start : start + limit]


def types_document(files: Iterable[FileEntry]) -> bytes | None:
    """The content types of a tree's files that are not the default, as the canonical JSON document
    `{"content_types": {path: type, …}}` (None when every file is served as the default): what a version keeps
    beside its manifest (decision 113), content-addressed, so two trees typed alike share it."""
    types = {e.path: e.content_type for e in files if e.content_type and e.content_type != DEFAULT_CONTENT_TYPE}
    return _canonical({"content_types": types}) if types else None


def _worst_type_bytes() -> int:
    entry = {'"' * MAX_PATH_BYTES: "a" * 255}
    return len(_canonical(entry))  # its braces stand for the comma and the colon


# No types document is larger (a type for each of 10,000 of the longest paths): one over it is refused unread.
MAX_TYPES_BYTES = len(b'{"content_types":{}}') + MAX_FILES * _worst_type_bytes()


def parse_types(document: bytes, tree: Tree, field: str = "file_types") -> Tree:
    """`tree` typed by an uploaded types document (a publish by `{tree, file_types}`): strict JSON of
    `{"content_types": {path: type, …}}` naming only paths the tree holds, each type a media type. Any spelling is
    taken (the service stores its own canonical form, `types_document`); every refusal is a ValidationError
    naming `field`, with the offending path in its details."""
    if len(document) > MAX_TYPES_BYTES:
        raise ValidationError(
            f"{field}: the document is {len(document)} bytes, more than any tree's types ({MAX_TYPES_BYTES})",
            field=field,
        )
    parsed = _strict_json(document, field)
    if (
        not isinstance(parsed, dict)
        or set(parsed) != {"content_types"}
        or not isinstance(parsed["content_types"], dict)
    ):
        raise ValidationError(
            f'{field}: a types document is a JSON object {{"content_types": {{path: type, ...}}}} and nothing else',
            field=field,
        )
    types: dict[str, Any] = parsed["content_types"]
    held = {entry.path for entry in tree.files}
    for path, content_type in types.items():
        if path not in held:
            raise _refused(field, f"names {path!r}, which the tree does not hold", path)
        try:
            _CONTENT_TYPE.validate_python(content_type, strict=True)
        except PydanticValidationError:
            raise _refused(field, f"the type of {path!r} must be a media type such as text/plain", path) from None
    return Tree(tuple(FileEntry(e.path, e.sha256, e.size, types.get(e.path)) for e in tree.files))


def with_types(tree: Tree, document: bytes) -> Tree:
    """`tree` with the content types of a stored types document (`types_document`): a file it does not name is
    served as the default. The document was written by the service, so it is trusted to be well formed."""
    types: dict[str, str] = json.loads(document.decode("utf-8"))["content_types"]
    return Tree(tuple(FileEntry(e.path, e.sha256, e.size, types.get(e.path)) for e in tree.files))


def _worst_entry_bytes() -> int:
    # A 1,024-byte path of `"` (each escaped as two characters) and the largest size: no entry is longer.
    entry = {"path": '"' * MAX_PATH_BYTES, "sha256": "0" * 64, "size": MAX_FILE_SIZE}
    return len(_canonical(entry)) + 1  # and its comma


# No canonical manifest is larger (10,000 of the longest entries): a document over it is refused unread.
MAX_MANIFEST_BYTES = len(b'{"files":[]}') + MAX_FILES * _worst_entry_bytes()


def parse_manifest(document: bytes, field: str = "tree") -> Tree:
    """An uploaded tree manifest (the content a publish by `{tree: <sha256>}` names), strictly.

    Strict JSON of `{"files": [{path, sha256, size}, …]}` with the tree rules, and the canonical bytes exactly
    (decision 90): every refusal is a ValidationError naming `field`, with the place in the document (`at`, as
    `files[3].path`) and the offending path (`path`) in its details; a non-canonical document's details carry the
    digest its canonical form would have (`canonical_sha256`).
    """
    if len(document) > MAX_MANIFEST_BYTES:
        raise ValidationError(
            f"{field}: the manifest is {len(document)} bytes, more than any tree's ({MAX_MANIFEST_BYTES})", field=field
        )
    parsed = _strict_json(document, field)
    if not isinstance(parsed, dict) or set(parsed) != {"files"}:
        raise ValidationError(
            f'{field}: a tree manifest is a JSON object {{"files": [...]}} and nothing else', field=field
        )
    try:
        entries = _manifest_entries(parsed["files"])
    except ValidationError as error:
        at = error.field or "files"
        raise ValidationError(
            f"{field}: the manifest's {error.message}", field=field, details={**error.details, "at": at}
        ) from None
    tree = Tree(tuple(path_order(entries)))
    if tree.manifest != document:
        raise _not_canonical(document, entries, tree, field)
    return tree


OCI_TITLE = "org.opencontainers.image.title"


def oci_manifest_tree(document: bytes, field: str = "version") -> Tree:
    """The files of a stored OCI manifest (an OCI tree version's document, checked when it was pushed): its config
    then its layers (an index: its manifests), each named by its `org.opencontainers.image.title` annotation, else
    `blobs/sha256/<hex>`, a blob listed twice named where it is first listed, served as its media type."""
    parsed = _strict_json(document, field)
    if not isinstance(parsed, dict):
        raise ValidationError(f"{field}: the manifest is not an OCI manifest", field=field)
    descriptors = [parsed["config"], *parsed["layers"]] if "config" in parsed else list(parsed.get("manifests", []))
    entries: dict[str, FileEntry] = {}
    for descriptor in descriptors:
        sha256 = str(descriptor["digest"]).removeprefix("sha256:")
        if sha256 in entries:
            continue
        title = (descriptor.get("annotations") or {}).get(OCI_TITLE)
        path = title or f"blobs/sha256/{sha256}"
        entries[sha256] = FileEntry(path, sha256, int(descriptor["size"]), descriptor.get("mediaType"))
    return Tree(tuple(path_order(entries.values())))


def _manifest_entries(files: object) -> tuple[FileEntry, ...]:
    for index, item in enumerate(files if isinstance(files, list) else ()):
        if isinstance(item, dict) and "content_type" in item:  # a listing's field, not a manifest's
            at = f"files[{index}].content_type"
            raise ValidationError(f"{at}: is not a field of a tree manifest", field=at)
    return parse_files(files, "files")


def _strict_json(document: bytes, field: str) -> Any:
    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
        return dict(pairs)

    try:
        return json.loads(document.decode("utf-8"), parse_constant=refuse_constant, object_pairs_hook=unique_keys)
    except UnicodeDecodeError:
        raise ValidationError(f"{field}: the manifest is not UTF-8", field=field) from None
    except ValueError as error:
        raise ValidationError(f"{field}: the manifest is not JSON: {error}", field=field) from None
    except RecursionError:  # nesting deeper than the parser goes: no manifest is nested like that
        raise ValidationError(
            f"{field}: the manifest is not a tree manifest (nested too deeply)", field=field
        ) from None


def _not_canonical(document: bytes, entries: Sequence[FileEntry], tree: Tree, field: str) -> ValidationError:
    details: dict[str, Any] = {"canonical_sha256": tree.digest}
    for index in range(1, len(entries)):
        if entries[index].path < entries[index - 1].path:
            path = entries[index].path
            return ValidationError(
                f"{field}: the manifest's files are not in path order (the byte order of UTF-8): "
                f"files[{index}].path {path!r} sorts before files[{index - 1}].path {entries[index - 1].path!r}",
                field=field,
                details={**details, "at": f"files[{index}].path", "path": path},
            )
    canonical = tree.manifest
    offset = next((i for i, (a, b) in enumerate(zip(document, canonical, strict=False)) if a != b), None)
    offset = min(len(document), len(canonical)) if offset is None else offset
    return ValidationError(
        f"{field}: the manifest is not in canonical form (RFC 8785: sorted keys, no whitespace, non-ASCII "
        f"characters as themselves), from byte {offset}; its canonical form's sha256 is {tree.digest}",
        field=field,
        details={**details, "offset": offset},
    )


def files_page(
    files: Sequence[FileEntry], *, prefix: str = "", limit: int, after: str | None = None, max_bytes: int
) -> tuple[list[FileEntry], str | None]:
    """A page of a tree's files (`files` in path order, as `Tree.files`): those whose path starts with `prefix`
    and sorts after `after`, up to `limit` and up to `max_bytes` of their answers' JSON (one at least), and the
    path to continue after (None at the end). A listing read from file rows gets the same order from DynamoDB."""
    if after is not None and not after.startswith(prefix):
        raise ValidationError("next_token: belongs to another listing (another prefix)", field="next_token")
    paths = [entry.path for entry in files]
    start = bisect.bisect_right(paths, after) if after is not None else bisect.bisect_left(paths, prefix)
    page: list[FileEntry] = []
    spent = 0
    for index in range(start, len(files)):
        entry = files[index]
        if not entry.path.startswith(prefix):
            return page, None  # past the prefix's range: path order keeps it contiguous
        if len(page) == limit:
            return page, page[-1].path
        weight = len(json.dumps(entry.answer()))
        if page and spent + weight > max_bytes:
            return page, page[-1].path
        page.append(entry)
        spent += weight
    return page, None


@dataclass(frozen=True)
class TreeContent:
    """A tree to publish or point LATEST at: its files given inline (`files`, in the order of the body) or the
    sha256 of its uploaded canonical tree manifest (`tree`), and how the version is served."""

    files: tuple[FileEntry, ...] | None = None
    tree: str | None = None
    # With `tree`: the sha256 of an uploaded types document (`parse_types`), the files' content types.
    file_types: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    # An OCI manifest (stored verbatim, the version's sha256 its digest) whose files are `files` (its config and
    # layers, or an index's manifests), and its media type, which the version is served as.
    document: bytes | None = None
    media_type: str | None = None

    @property
    def named(self) -> str:
        """The body's field that errors about the tree name."""
        if self.document is not None:
            return "manifest"
        return "files" if self.files is not None else "tree"


def _refused(field: str, reason: str, path: str) -> ValidationError:
    return ValidationError(f"{field}: {reason}", field=field, details={"path": path})
