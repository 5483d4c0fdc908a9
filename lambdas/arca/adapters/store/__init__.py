"""One store per aggregate over the one table: its item shapes, conditions and mappers."""
