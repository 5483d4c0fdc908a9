"""Use cases, as siblings over the stores (arca.adapters.store): publishing, reading (and resolving), aliases."""
