"""Local mode serves every function on threads of one process, sharing Powertools' one metric set: a flush on one
thread never fails another's (as no Lambda request does, one at a time)."""

from __future__ import annotations

import sys
import threading
import warnings

import pytest

from arca.observability import count_request, metrics


def test_requests_counted_and_flushed_on_many_threads_at_once_never_fail(capsys: pytest.CaptureFixture[str]) -> None:
    # Given eight threads that each count a request and flush, as eight functions' handlers do
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def handler() -> None:
        start.wait()
        for _ in range(300):
            try:
                count_request("resolve")
                metrics.flush_metrics()
            except BaseException as error:  # the assertion below names it
                failures.append(error)

    # When they run at once, the interpreter switching threads as often as it can
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no application metrics": another thread flushed this one's
        threads = [threading.Thread(target=handler) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    sys.setswitchinterval(interval)
    capsys.readouterr()
    metrics.clear_metrics()
    # Then no flush failed
    assert failures == []
