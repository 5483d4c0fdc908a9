"""The Hugging Face Hub's read side, as `huggingface_hub` calls it: model info, tree listings, file resolves.

`serve(request, backend)` answers one request of the `/hf/…` path family. A revision is resolved once, to a
commit id (`commits`): a stable 40-hex id per version that names the version and the digest of its tree, so every
later call of a snapshot reads that one version with no index beyond the version itself.
"""

from arca.protocols.hf.backend import (
    Backend,
    EntryNotFound,
    FileEntry,
    HubNotFound,
    RepoNotFound,
    RevisionNotFound,
    Target,
)
from arca.protocols.hf.dispatch import Answer, Request, serve

__all__ = [
    "Answer",
    "Backend",
    "EntryNotFound",
    "FileEntry",
    "HubNotFound",
    "RepoNotFound",
    "Request",
    "RevisionNotFound",
    "Target",
    "serve",
]
