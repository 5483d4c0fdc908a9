"""OCI Distribution (v1.1) as Arca serves it under `/v2/`: grammar, manifests, errors and the dispatcher.

`handle(Request, backend)` answers one request; the backend (`Backend`, a `typing.Protocol`) is where Arca's
services come in. Nothing here performs I/O.
"""

from arca.protocols.oci.backend import Backend, BlobInfo, PushedManifest, Referrer, StoredManifest, TagPage, UploadState
from arca.protocols.oci.dispatch import MAX_BODY_BYTES, Response, handle
from arca.protocols.oci.errors import OciError
from arca.protocols.oci.grammar import Digest, Reference, RefKind
from arca.protocols.oci.manifests import File, Manifest, parse_manifest
from arca.protocols.oci.routes import Request

__all__ = [
    "MAX_BODY_BYTES",
    "Backend",
    "BlobInfo",
    "Digest",
    "File",
    "Manifest",
    "OciError",
    "PushedManifest",
    "RefKind",
    "Reference",
    "Referrer",
    "Request",
    "Response",
    "StoredManifest",
    "TagPage",
    "UploadState",
    "handle",
    "parse_manifest",
]
