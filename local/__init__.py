"""Arca on one machine: the real Lambda handlers behind a small HTTP server, on DynamoDB Local and moto.

`python -m local.server` (what `make local` runs) serves the API; `local.services.running_services` and
`local.server.running_arca` are the same pieces as context managers, for the end-to-end tests.
"""
