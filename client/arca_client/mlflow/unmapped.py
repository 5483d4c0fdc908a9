"""What MLflow's registry asks that Arca does not map: each is an MlflowException (NOT_IMPLEMENTED) saying what to
do instead, never a silent no-op. (MLflow's AbstractStore implements prompts on registered models with reserved
tags, and refuses webhooks with a bare NotImplementedError; neither would do here.)"""

from __future__ import annotations

from typing import Any, NoReturn

from arca_client.mlflow.errors import unmapped

_PROMPTS = (
    "Prompts are not kept in Arca: keep them in MLflow's own registry (a tracking server), or publish prompt files "
    "as an artifact of their own"
)
_WEBHOOKS = "subscribe to Arca's events instead (its EventBridge bus, or GET /artifacts/{name}/events)"


def _prompts(what: str) -> NoReturn:
    unmapped(what, _PROMPTS)


def _webhooks(what: str) -> NoReturn:
    unmapped(what, _WEBHOOKS)


class Unmapped:
    """The refusals, as a base of the store (each overrides the AbstractStore method of its name)."""

    # Prompts.
    def create_prompt(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("create_prompt")

    def search_prompts(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("search_prompts")

    def delete_prompt(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("delete_prompt")

    def set_prompt_tag(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("set_prompt_tag")

    def delete_prompt_tag(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("delete_prompt_tag")

    def get_prompt(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("get_prompt")

    def create_prompt_version(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("create_prompt_version")

    def get_prompt_version(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("get_prompt_version")

    def delete_prompt_version(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("delete_prompt_version")

    def get_prompt_version_by_alias(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("get_prompt_version_by_alias")

    def set_prompt_alias(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("set_prompt_alias")

    def delete_prompt_alias(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("delete_prompt_alias")

    def search_prompt_versions(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("search_prompt_versions")

    def link_prompts_to_trace(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("link_prompts_to_trace")

    def set_prompt_version_tag(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("set_prompt_version_tag")

    def delete_prompt_version_tag(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("delete_prompt_version_tag")

    def link_prompt_version_to_model(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("link_prompt_version_to_model")

    def link_prompt_version_to_run(self, *args: Any, **kwargs: Any) -> NoReturn:
        _prompts("link_prompt_version_to_run")

    # Webhooks.
    def create_webhook(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("create_webhook")

    def get_webhook(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("get_webhook")

    def list_webhooks(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("list_webhooks")

    def list_webhooks_by_event(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("list_webhooks_by_event")

    def update_webhook(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("update_webhook")

    def delete_webhook(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("delete_webhook")

    def test_webhook(self, *args: Any, **kwargs: Any) -> NoReturn:
        _webhooks("test_webhook")
