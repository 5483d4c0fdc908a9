"""`make bench`: AWS calls and in-process latency of Arca's operations, beside the `versioned` library's,
and the cold start of the resolve function.

Run with `python -m bench` from the repository root (see docs/bench.md). Everything runs in this process under
moto's `mock_aws`: no network, fake credentials. The Lambda package `arca` is installed into the venv.
"""
