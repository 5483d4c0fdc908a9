"""The SDK's calls, one mixin per feature, each a base of `arca_client.Client`."""
