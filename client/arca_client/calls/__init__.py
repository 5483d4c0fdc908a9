"""SDK calls by feature: mixin classes of `Client` (arca_client.sdk), using its `_get`/`_call`/`_write`."""
