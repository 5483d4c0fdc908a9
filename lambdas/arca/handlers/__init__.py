"""Lambda entry points: `arca.handlers.<function>.handler` for publish, alias and resolve (behind the API, built
by arca.handlers.http), rollout (the rollout state machine's step) and events (the table's stream).

Nothing is imported here, so the functions that serve no HTTP route (events, rollout) do not load the app."""
