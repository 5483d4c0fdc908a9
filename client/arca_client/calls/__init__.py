"""The SDK's calls, one mixin of `Client` per feature."""
