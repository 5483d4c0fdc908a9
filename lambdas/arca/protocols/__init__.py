"""The wire formats of other ecosystems' clients, served over Arca's own reads.

Each protocol is pure: it parses that ecosystem's requests, asks an abstract backend (a `typing.Protocol` the
services implement) and builds that ecosystem's answers. No boto3, no stores, no HTTP framework: a route of `api/`
hands it a request and sends back its answer.
"""
