"""One store per aggregate over the registry's table."""
