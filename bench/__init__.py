"""`make bench`: AWS calls and in-process latency of Arca's operations, beside the `versioned` library's.

Run with `python -m bench` (see docs/bench.md). Everything runs in this process under moto's `mock_aws`:
no network, fake credentials. The Lambda code lives in `lambdas/`, which is put on sys.path here so that
`python -m bench` works from the repository root without the pytest configuration.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT / "lambdas", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
