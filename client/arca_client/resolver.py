"""`Resolver`: resolve an alias for a running consumer, cheaply, and keep working while Arca does not answer.

A deploy path that calls the registry on every start makes the registry its single point of failure. A
`Resolver` answers from memory while its answer is fresh, refreshes it in the background, and when Arca is
unreachable or failing (no answer, 5xx, throttling) keeps serving the last good answer, flagged `stale` and
logged as a warning, never silently. The last good answer is kept on disk too, so a process that restarts
during an outage still resolves. With a `consumer`, it also keeps that consumer's lease on the version it
serves: taken when the version changes, renewed in the background before it lapses, never more often than
that (a lease is one write; resolving stays one read and writes nothing).

Staleness is bounded while Arca answers: an answer is served from memory for `fresh_for` seconds (default
30), then served while a background refresh runs, and past `max_stale` seconds (default 300; at most a day)
`resolve()` refreshes before it answers. Only when Arca cannot answer is an older answer served, with `stale`
set. An answer Arca gives with authority (the alias was deleted: 404; access denied: 403) is raised, not
papered over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from arca_client.errors import ArcaError, ServerError, ThrottledError, TransportError
from arca_client.models import Lease, Resolution

log = logging.getLogger("arca.resolver")

DEFAULT_FRESH_FOR = 30.0
DEFAULT_MAX_STALE = 300.0
MAX_STALE_BOUND = 86_400.0
DEFAULT_LEASE_TTL = 86_400
# A lease is renewed once this share of its time-to-live has passed (jittered ±10%): a day's lease every ~12 h.
RENEW_AT = 0.5
# While Arca does not answer, how often a resolve (or the background thread) asks it again.
RETRY_UNREACHABLE = 5.0


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "arca" / "resolver"


class Resolving(Protocol):
    """What a Resolver needs of a client (`arca_client.Client` is one)."""

    endpoint: str

    def resolve(self, name: str, ref: Any = ..., *, routing_key: str | None = None, at: Any = None) -> Resolution: ...

    def lease(
        self,
        name: str,
        consumer: str,
        version: int,
        *,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> Lease: ...


@dataclass(frozen=True)
class Resolved:
    """An answer of `Resolver.resolve`: the resolution, when it was fetched (epoch seconds), and `stale` when Arca
    could not be asked for a newer one (then `error` says why)."""

    resolution: Resolution
    fetched_at: float
    stale: bool = False
    error: str | None = None

    @property
    def version(self) -> int | str:
        return self.resolution.version

    @property
    def download_url(self) -> str:
        return self.resolution.download_url


def unreachable(error: BaseException) -> bool:
    """Arca did not answer with authority: no connection, a timeout, a 5xx or throttling. Serve the last answer."""
    return isinstance(error, TransportError | ServerError | ThrottledError) or (
        isinstance(error, ArcaError) and error.status is None
    )


class Resolver:
    """Resolves `name@ref` for one consumer (see the module docstring). Thread-safe; `close()` stops its thread."""

    def __init__(
        self,
        client: Resolving,
        name: str,
        ref: str = "LATEST",
        *,
        consumer: str | None = None,
        routing_key: str | None = None,
        fresh_for: float = DEFAULT_FRESH_FOR,
        max_stale: float = DEFAULT_MAX_STALE,
        lease_ttl: int = DEFAULT_LEASE_TTL,
        labels: Mapping[str, str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        background: bool = True,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
    ) -> None:
        if not 0 < fresh_for <= max_stale <= MAX_STALE_BOUND:
            raise ValueError(f"need 0 < fresh_for <= max_stale <= {MAX_STALE_BOUND:.0f} s")
        self.client = client
        self.name, self.ref = name, ref
        self.consumer = consumer
        self.routing_key = routing_key if routing_key is not None else consumer
        self.fresh_for, self.max_stale = fresh_for, max_stale
        self.lease_ttl, self.labels = lease_ttl, dict(labels) if labels is not None else None
        self._clock = clock
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._refreshing = threading.Lock()
        self._answer: Resolved | None = None
        self._leased: tuple[int, float] | None = None  # (version, renew after) of the lease held
        # The consumer's lease as Arca last answered it, and why the last attempt to take or renew it failed
        # (None once one succeeds): what a caller shows; the Resolver itself only tries again at the next refresh.
        self.lease: Lease | None = None
        self.lease_error: ArcaError | None = None
        self._path = self._cache_path(Path(cache_dir) if cache_dir is not None else default_cache_dir())
        self._attempted = float("-inf")  # when Arca was last asked
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._answer = self._load()
        if background:
            self._thread = threading.Thread(target=self._run, name=f"arca-resolver-{name}@{ref}", daemon=True)
            self._thread.start()

    def resolve(self) -> Resolved:
        """The current answer: from memory while fresh (no request), else refreshed (see the module docstring).

        While Arca cannot answer, the last good answer is served from memory (`stale`), and Arca is asked again
        at most every RETRY_UNREACHABLE seconds. Raises the API's error when Arca answers with authority (e.g.
        NotFoundError), and the transport's error when Arca is unreachable and no answer was ever kept.
        """
        answer = self._answer
        if answer is not None:
            now = self._clock()
            if answer.stale:
                if now - self._attempted < RETRY_UNREACHABLE:
                    return answer
            else:
                age = now - answer.fetched_at
                if age < self.fresh_for:
                    return answer
                if age < self.max_stale:
                    self._kick()
                    return answer
        return self.refresh()

    def refresh(self) -> Resolved:
        """Ask Arca now. When it cannot answer, the last good answer comes back with `stale` set (and a warning);
        with none kept, the error is raised."""
        with self._refreshing:
            self._attempted = self._clock()
            try:
                resolution = self.client.resolve(self.name, self.ref, routing_key=self.routing_key)
            except ArcaError as error:
                if not unreachable(error):
                    raise
                return self._stale(error)
            fresh = Resolved(resolution, self._clock())
            with self._lock:
                self._answer = fresh
            self._save(fresh)
            self._keep_lease(resolution)
            return fresh

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Resolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stale(self, error: ArcaError) -> Resolved:
        last = self._answer
        if last is None:
            raise error
        stale = Resolved(last.resolution, last.fetched_at, stale=True, error=str(error))
        with self._lock:
            self._answer = stale
        age = self._clock() - last.fetched_at
        log.warning(
            "arca unreachable (%s); serving %s@%s = version %s, fetched %.0f s ago",
            error,
            self.name,
            self.ref,
            last.resolution.version,
            age,
        )
        return stale

    def _kick(self) -> None:
        """Refresh in the background now (the thread's next turn), or inline when there is no thread."""
        if self._thread is None:
            with contextlib.suppress(ArcaError):
                self.refresh()
        else:
            self._wake.set()

    def _run(self) -> None:
        """The background turn: refresh once the answer is no longer fresh, renew the lease when due."""
        while not self._stop.is_set():
            answer = self._answer
            due = self.fresh_for if answer is None else answer.fetched_at + self.fresh_for - self._clock()
            if answer is not None and answer.stale:
                due = min(self.fresh_for, RETRY_UNREACHABLE)  # while Arca is away, ask again every few seconds
            self._wake.wait(timeout=max(0.05, due))
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.refresh()
            except ArcaError as error:  # an authoritative refusal: keep the last answer, say so, try again later
                log.warning("arca refused resolving %s@%s: %s", self.name, self.ref, error)

    def _keep_lease(self, resolution: Resolution) -> None:
        """Take the consumer's lease on the version served when it changed, renew it when due; a failure is
        logged and tried again at the next refresh (the answer is served regardless)."""
        if self.consumer is None or not isinstance(resolution.version, int):
            return
        held = self._leased
        now = self._clock()
        if held is not None and held[0] == resolution.version and now < held[1]:
            return
        try:
            lease = self.client.lease(
                self.name, self.consumer, resolution.version, ttl_seconds=self.lease_ttl, labels=self.labels
            )
        except ArcaError as error:
            log.warning("could not lease %s version %s for %s: %s", self.name, resolution.version, self.consumer, error)
            self.lease_error = error
            return
        self.lease, self.lease_error = lease, None
        jitter = self._rng.uniform(0.9, 1.1)
        self._leased = (resolution.version, now + self.lease_ttl * RENEW_AT * jitter)

    def _cache_path(self, directory: Path) -> Path:
        key = json.dumps([self.client.endpoint, self.name, self.ref, self.routing_key])
        return directory / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")

    def _load(self) -> Resolved | None:
        """The last good answer a previous process kept, served as stale until Arca answers."""
        try:
            kept = json.loads(self._path.read_text())
            return Resolved(Resolution.from_dict(kept["resolution"]), float(kept["fetched_at"]), stale=True)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save(self, answer: Resolved) -> None:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self._path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"resolution": answer.resolution.raw, "fetched_at": answer.fetched_at}))
            os.replace(temporary, self._path)
        except OSError as error:  # a read-only disk must not break resolving
            log.warning("could not keep the answer in %s: %s", self._path, error)
