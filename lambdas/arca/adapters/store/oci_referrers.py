"""OCI referrers pushed before their subject (decision 112): one item each, `__<name>-ocireferrers` /
`<subject hex>.<referrer hex>`.

The item holds what the attestation will be once a version has the subject's digest (the referrer's artifact type,
digest, size and media type, who pushed it and when); the referrer's bytes are the artifact's content at its digest.
Writing it again is harmless (the same referrer, the same item), and so is deleting it once adopted.
"""

from __future__ import annotations

from dataclasses import dataclass

from arca.adapters import keys
from arca.adapters.dynamo import IfAbsent, Table, Update


@dataclass(frozen=True)
class PendingReferrer:
    subject_sha256: str
    type: str
    sha256: str
    size: int
    media_type: str
    created_at: str
    created_by: str | None


class OciReferrerStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def put(self, name: str, referrer: PendingReferrer) -> None:
        """Record the referrer against its subject's digest (again: the same item)."""
        key = keys.oci_pending_referrer_key(name, referrer.subject_sha256, referrer.sha256)
        self.table.update(
            key,
            Update(
                set={
                    "kind": "oci-pending-referrer",
                    "name": name,
                    "type": referrer.type,
                    "sha256": referrer.sha256,
                    "size": referrer.size,
                    "media_type": referrer.media_type,
                    "created_at": IfAbsent(referrer.created_at),
                    "created_by": referrer.created_by or "",
                }
            ),
        )

    def pending(self, name: str, subject_sha256: str) -> list[PendingReferrer]:
        """Every referrer waiting for this subject, by digest (a consistent Query of the subject's prefix)."""
        items = self.table.query_all(
            keys.oci_referrers_pk(name), sk_prefix=keys.oci_pending_referrers_prefix(subject_sha256), consistent=True
        )
        return [
            PendingReferrer(
                subject_sha256,
                str(item["type"]),
                str(item["sha256"]),
                int(item["size"]),
                str(item["media_type"]),
                str(item["created_at"]),
                str(item["created_by"]) or None,
            )
            for item in items
        ]

    def delete(self, name: str, subject_sha256: str, referrer_sha256: str) -> None:
        self.table.batch_delete([keys.oci_pending_referrer_key(name, subject_sha256, referrer_sha256)])
