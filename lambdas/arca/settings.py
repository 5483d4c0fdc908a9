"""Environment read once. The names are set by the CDK stack (infra/functions.py) and local/server.py."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Settings:
    table_name: str
    bucket_name: str
    download_url_ttl: int = 900
    upload_url_ttl: int = 900
    purge_max_calls: int = 2000
    # The rollout driver's state machine; unset in local mode, where the local server drives rollouts.
    rollout_state_machine_arn: str | None = None
    # The background verification's state machine; unset in local mode, where the local server drives it.
    verify_state_machine_arn: str | None = None
    # The stage's asymmetric KMS key (publish signs with it, resolve shows its public key).
    signing_key_arn: str | None = None


@cache
def settings() -> Settings:
    return Settings(
        table_name=os.environ["ARCA_TABLE_NAME"],
        bucket_name=os.environ["ARCA_BUCKET_NAME"],
        download_url_ttl=int(os.environ.get("ARCA_DOWNLOAD_URL_TTL", "900")),
        upload_url_ttl=int(os.environ.get("ARCA_UPLOAD_URL_TTL", "900")),
        purge_max_calls=int(os.environ.get("ARCA_PURGE_MAX_CALLS", "2000")),
        rollout_state_machine_arn=os.environ.get("ARCA_ROLLOUT_STATE_MACHINE_ARN") or None,
        verify_state_machine_arn=os.environ.get("ARCA_VERIFY_STATE_MACHINE_ARN") or None,
        signing_key_arn=os.environ.get("ARCA_SIGNING_KEY_ARN") or None,
    )


@cache
def event_bus_name() -> str:
    """The bus the `events` function puts on (that function has no table or bucket settings to read)."""
    return os.environ["ARCA_EVENT_BUS_NAME"]
