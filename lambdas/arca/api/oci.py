"""OCI Distribution under `/v2/`: a repository is an artifact name (any number of `/`), a tag an alias, a manifest a
version. Reads go to the resolve function, writes to the publish function (one function per method of the family).
Placeholders until the feature lands: each answers 501 and is left out of the document."""

from arca.api.routing import Router
from arca.domain.errors import NotYetImplementedError

reads = Router()
writes = Router()

_LATER = "the OCI Distribution API is not served yet"


@reads.route("/v2", "GET", stub=True)
def oci_base() -> None:
    """The registry's API version check."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/manifests/<reference>", "GET", stub=True)
def oci_get_manifest(name: str, reference: str) -> None:
    """A manifest, by tag or digest."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/manifests/<reference>", "HEAD", stub=True)
def oci_head_manifest(name: str, reference: str) -> None:
    """Whether a manifest exists, by tag or digest."""
    raise NotYetImplementedError(_LATER)


@writes.route("/v2/<name>/manifests/<reference>", "PUT", stub=True)
def oci_put_manifest(name: str, reference: str) -> None:
    """Push a manifest: publish a version, and with a tag point that alias at it."""
    raise NotYetImplementedError(_LATER)


@writes.route("/v2/<name>/manifests/<reference>", "DELETE", stub=True)
def oci_delete_manifest(name: str, reference: str) -> None:
    """Delete a tag, or a manifest by digest."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/blobs/<digest>", "GET", stub=True)
def oci_get_blob(name: str, digest: str) -> None:
    """A blob: a redirect to its presigned URL."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/blobs/<digest>", "HEAD", stub=True)
def oci_head_blob(name: str, digest: str) -> None:
    """Whether a blob is stored."""
    raise NotYetImplementedError(_LATER)


@writes.route("/v2/<name>/blobs/uploads", "POST", stub=True)
def oci_start_upload(name: str) -> None:
    """Start a blob upload (monolithic with `?digest=`)."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/blobs/uploads/<upload>", "GET", stub=True)
def oci_get_upload(name: str, upload: str) -> None:
    """An upload session's progress."""
    raise NotYetImplementedError(_LATER)


@writes.route("/v2/<name>/blobs/uploads/<upload>", "PATCH", stub=True)
def oci_patch_upload(name: str, upload: str) -> None:
    """A chunk of an upload."""
    raise NotYetImplementedError(_LATER)


@writes.route("/v2/<name>/blobs/uploads/<upload>", "PUT", stub=True)
def oci_finish_upload(name: str, upload: str) -> None:
    """Finish an upload with its digest."""
    raise NotYetImplementedError(_LATER)


@writes.route("/v2/<name>/blobs/uploads/<upload>", "DELETE", stub=True)
def oci_cancel_upload(name: str, upload: str) -> None:
    """Cancel an upload."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/tags/list", "GET", stub=True)
def oci_tags(name: str) -> None:
    """The repository's tags."""
    raise NotYetImplementedError(_LATER)


@reads.route("/v2/<name>/referrers/<digest>", "GET", stub=True)
def oci_referrers(name: str, digest: str) -> None:
    """The manifests whose subject is this digest."""
    raise NotYetImplementedError(_LATER)
