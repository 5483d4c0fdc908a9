"""CDK entry point: `cdk synth -c stage=<stage>` (default dev); account and region from CDK_DEFAULT_*."""

import os

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.stack import add_stage

# The built-in CloudFormation schema check costs 2-4 s on every synth; CloudFormation validates at deploy anyway.
app = cdk.App(builtin_cloud_formation_validation=False)
stage = app.node.try_get_context("stage") or "dev"
# Two stacks: Arca-<stage>-storage (table, bucket) and Arca-<stage> (functions, API), deployed in that order.
add_stage(
    app,
    stage,
    env=cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")),
)
# Unsuppressed AwsSolutions findings are errors, so `cdk synth` fails on them.
cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
app.synth()
