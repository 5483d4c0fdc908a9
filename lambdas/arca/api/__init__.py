"""The HTTP API: one Powertools router per Lambda function, each operation declared once with typed parameters."""
