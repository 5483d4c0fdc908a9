"""Use cases, as siblings over the repository: publishing, reading (and resolving), aliases."""
