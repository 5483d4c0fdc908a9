"""Lambda SnapStart runtime hooks for the functions behind the API (docs/decisions.md, "SnapStart").

With SnapStart, a published version runs its initialisation once, Lambda snapshots the memory, and every cold
start resumes a copy of that snapshot. Before the snapshot the function builds what is the same for every
instance: the handler and its app (imported), the services and their clients (the service models loaded and
parsed, the client classes made). After a restore it makes new what must differ per instance or may have
expired: Python's `random` is reseeded (it was seeded once, before the snapshot, so every copy would draw the
same retry jitter and routes), and the clients are built again on a new botocore session that keeps only the
loaded service models, so credentials are resolved in the restored environment and no connection, credential
or cache of the snapshot is used. No AWS call is made before the snapshot: no connection exists to capture.

Outside SnapStart (local mode, tests, functions without it) `register` does nothing: the runtime's
`snapshot_restore_py` module is absent or its hooks never run.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import boto3
import botocore.session

from arca import wiring

Hook = Callable[[], None]


def before_snapshot() -> None:
    """Build the services and their clients: the snapshot then holds the loaded service models (and the read
    services, which are built on first use otherwise)."""
    services = wiring.services()
    assert services.reading is not None and services.resolving is not None


def after_restore() -> None:
    """New randomness, a new botocore session (sharing the loaded service models) and new clients."""
    random.seed()
    loader = boto3.DEFAULT_SESSION._session.get_component("data_loader") if boto3.DEFAULT_SESSION else None
    session = botocore.session.get_session()
    if loader is not None:
        session.register_component("data_loader", loader)
    boto3.setup_default_session(botocore_session=session)
    wiring.reset()
    wiring.services()


def register(runtime: Any = None, *, prepare: Hook | None = None) -> bool:
    """Register the hooks with the runtime's `snapshot_restore_py` (injectable in tests); False where absent.
    `prepare` runs before the snapshot too (the function's routers, which it would otherwise import on first use)."""
    if runtime is None:
        try:
            import snapshot_restore_py as runtime  # type: ignore[no-redef]
        except ImportError:
            return False
    if prepare is not None:
        runtime.register_before_snapshot(prepare)
    runtime.register_before_snapshot(before_snapshot)
    runtime.register_after_restore(after_restore)
    return True
