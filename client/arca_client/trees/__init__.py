"""Versions that are trees of files, on the client's side: a directory walked into tree entries (hashed in
parallel, with a cache), the uploads and the publish body it needs, where a download puts each file, and the
difference between two trees. No request is made here; the SDK and the CLI make them.

    files = walk("model/", exclude=["*.pyc"], cache=HashCache.default())
    plan = plan_upload(files, held={f.sha256 for f in newest_tree})  # each content once, only what is missing
    form = publish_form(files)                                       # {files: [...]} or {tree: <sha256>}
    placements = plan_download(entries, "out/")                      # kept: files already right
"""

from arca_client.trees.diff import Changed, TreeDiff, tree_diff
from arca_client.trees.directory import Found, LocalFile, guess_content_type, hash_files, scan, walk
from arca_client.trees.download import DownloadPlan, Placement, plan_download, receive
from arca_client.trees.globs import Selector
from arca_client.trees.hashcache import HashCache, cache_dir
from arca_client.trees.manifest import (
    MAX_FILES,
    MAX_PATH_BYTES,
    TREE_MEDIA_TYPE,
    TreeEntry,
    TreeError,
    canonical_manifest,
    check_tree,
    entries_from_listing,
    parse_manifest,
    path_order,
    path_problem,
    tree_digest,
    types_document,
)
from arca_client.trees.plan import PublishForm, Upload, UploadPlan, plan_upload, publish_form

__all__ = [
    "MAX_FILES",
    "MAX_PATH_BYTES",
    "TREE_MEDIA_TYPE",
    "Changed",
    "DownloadPlan",
    "Found",
    "HashCache",
    "LocalFile",
    "Placement",
    "PublishForm",
    "Selector",
    "TreeDiff",
    "TreeEntry",
    "TreeError",
    "Upload",
    "UploadPlan",
    "cache_dir",
    "canonical_manifest",
    "check_tree",
    "entries_from_listing",
    "guess_content_type",
    "hash_files",
    "parse_manifest",
    "path_order",
    "path_problem",
    "plan_download",
    "plan_upload",
    "publish_form",
    "receive",
    "scan",
    "tree_diff",
    "tree_digest",
    "types_document",
    "walk",
]
