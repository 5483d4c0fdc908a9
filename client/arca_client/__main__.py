"""`python -m arca_client ...` runs the `arca` command."""

import sys

from arca_client.cli import main

sys.exit(main())
