"""OCI blob upload sessions: one item each (decision 105), `__<name>-ocisessions` / `<id>`.

The item holds who opened the session (`caller`), how many bytes its staging object holds (`offset`), when it was
opened and a TTL (the table removes an abandoned session; the bucket's lifecycle rule its staging object). Every
append is a compare-and-set on `offset`, so two PATCHes racing on one session never both land: the loser is
answered as an out-of-order chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from boto3.dynamodb.conditions import Attr

from arca.adapters import keys
from arca.adapters.dynamo import ConditionFailed, Table, TransactionCancelled, Update, Write
from arca.adapters.store.conditions import ITEM_NOT_EXIST


@dataclass(frozen=True)
class OciSession:
    name: str
    id: str
    caller: str
    offset: int
    created_at: str


class OciSessionStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def get(self, name: str, session: str) -> OciSession | None:
        """The session (a consistent read), or None."""
        item = self.table.get(keys.oci_session_key(name, session))
        if item is None:
            return None
        return OciSession(name, session, str(item["caller"]), int(item["offset"]), str(item["created_at"]))

    def open(self, session: OciSession, *, ttl: int) -> None:
        """Record a new session (its id is fresh: a collision is a failure)."""
        self.table.update(
            keys.oci_session_key(session.name, session.id),
            Update(
                set={
                    "kind": "oci-upload",
                    "name": session.name,
                    "caller": session.caller,
                    "offset": session.offset,
                    "created_at": session.created_at,
                    "ttl": ttl,
                }
            ),
            condition=ITEM_NOT_EXIST,
        )

    def advance(self, session: OciSession, offset: int) -> bool:
        """Move the session from its offset to `offset`; False when it is no longer at its offset (or gone)."""
        try:
            self.table.update(
                keys.oci_session_key(session.name, session.id),
                Update(set={"offset": offset}),
                condition=Attr("offset").eq(session.offset),
            )
        except ConditionFailed:
            return False
        return True

    def close(self, session: OciSession) -> bool:
        """Delete the session if it is still at its offset; False when it is not (another request moved it)."""
        write = Write(
            "session",
            "Delete",
            keys.oci_session_key(session.name, session.id),
            condition=Attr("offset").eq(session.offset),
        )
        try:
            self.table.transact([write])
        except TransactionCancelled:
            return False
        return True
