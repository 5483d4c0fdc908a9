"""Synthesizing a stage for the infra tests, as `cdk synth` would.

The apps get cdk.json's context, as the CDK CLI does (App() alone ignores cdk.json, and the feature flags in it
change the templates), and the AWS Solutions checks, as app.py attaches them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
from aws_cdk import cx_api
from aws_cdk.assertions import Annotations
from cdk_nag import AwsSolutionsChecks

from infra.functions import ASSET_DIR, SPECS, FunctionSpec
from infra.stack import ArcaStage, add_stage

CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"
PROD_ENV = cdk.Environment(account="123456789012", region="eu-west-1")
# Context the CDK CLI adds to every synth: path metadata on each resource and the CDKMetadata resource.
CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True, "aws:cdk:version-reporting": True}


@dataclass(frozen=True)
class Synthesized:
    stage: ArcaStage
    storage: dict[str, Any]
    service: dict[str, Any]


def build(
    stage: str,
    *,
    outdir: Path | None = None,
    context: dict[str, Any] | None = None,
    specs: Iterable[FunctionSpec] = SPECS,
    code_dir: Path = ASSET_DIR,
) -> tuple[cdk.App, ArcaStage]:
    """An app holding both stacks of `stage`; dev is environment-agnostic, as an offline synth."""
    full_context = {**json.loads(CDK_JSON.read_text())["context"], "stage": stage, **(context or {})}
    app = cdk.App(
        context=full_context,
        outdir=str(outdir) if outdir else None,
        builtin_cloud_formation_validation=False,
    )
    arca = add_stage(app, stage, env=None if stage == "dev" else PROD_ENV, specs=specs, code_dir=code_dir)
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    return app, arca


@functools.cache
def synth(stage: str, **context: str) -> Synthesized:
    """Both templates of `stage` built with `context`, synthesized once per test process whoever asks: one app
    synth gives both stacks' templates (Template.from_stack would synthesize the whole app again per stack).

    Shared: a test must not add constructs to the stage it gets (build its own with `build` to do that)."""
    app, arca = build(stage, context=dict(context) or None)
    assembly = app.synth()
    return Synthesized(
        stage=arca,
        storage=_template(assembly, arca.storage),
        service=_template(assembly, arca.service),
    )


@functools.cache
def annotations(stack: cdk.Stack) -> Annotations:
    """The annotations (cdk-nag's findings, CDK's warnings) of a stack of a shared stage, read once."""
    return Annotations.from_stack(stack)


def _template(assembly: cx_api.CloudAssembly, stack: cdk.Stack) -> dict[str, Any]:
    path = Path(assembly.get_stack_artifact(stack.artifact_id).template_full_path)
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def template_files(outdir: Path, *, context: dict[str, Any] | None = None, **options: Any) -> tuple[bytes, bytes]:
    """The storage and service template files of dev, written as `cdk synth` writes them (with CLI_CONTEXT)."""
    app, arca = build("dev", outdir=outdir, context={**CLI_CONTEXT, **(context or {})}, **options)
    assembly = app.synth()
    storage = Path(assembly.get_stack_artifact(arca.storage.artifact_id).template_full_path).read_bytes()
    service = Path(assembly.get_stack_artifact(arca.service.artifact_id).template_full_path).read_bytes()
    return storage, service
