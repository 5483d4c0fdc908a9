"""The SDK's API calls, one mixin class per group of operations over the HTTP core of `calls.http`.

`arca_client.sdk.Client` composes them. A new group of calls is a module here with a class deriving from
`HttpCalls` (using `_get`, `_write`, `_call` and `_pages`), added to `Client`'s bases.
"""
