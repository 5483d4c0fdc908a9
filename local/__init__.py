"""Arca on one machine: the real Lambda handlers behind a small HTTP server, on DynamoDB Local and moto.

`python -m local.server` (what `make local` runs) serves the API; `local.services.running_services` and
`local.server.running_arca` are the same pieces as context managers, for the end-to-end tests.
"""

import sys
from pathlib import Path

# The Lambda asset root is on sys.path on AWS (Code.from_asset("lambdas")); make `import arca` work the
# same way here, however the server was started.
_LAMBDAS = str(Path(__file__).resolve().parents[1] / "lambdas")
if _LAMBDAS not in sys.path:
    sys.path.insert(0, _LAMBDAS)
