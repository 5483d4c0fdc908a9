"""ArcaStack: storage, the three functions, the REST API and the outputs a client needs."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, RemovalPolicy, Stack
from constructs import Construct

from arca.routes import FUNCTIONS, ROUTES
from infra.api import Api
from infra.functions import Functions
from infra.storage import Storage

# Stages whose data may be thrown away with the stack; every other stage keeps its table and bucket.
DISPOSABLE_STAGES = frozenset({"dev"})


class ArcaStack(Stack):
    """One stage of Arca. Resource names are left to CloudFormation and published as outputs."""

    def __init__(self, scope: Construct, construct_id: str, *, stage: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, description=f"Arca artifact registry ({stage})", **kwargs)
        retain = stage not in DISPOSABLE_STAGES
        removal_policy = RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY

        self.storage = Storage(self, "Storage", retain=retain)
        self.functions = Functions(
            self, "Functions", table=self.storage.table, bucket=self.storage.bucket, removal_policy=removal_policy
        )
        missing = set(FUNCTIONS) - set(self.functions.by_name)
        if missing:
            raise ValueError(f"routes name functions the stack does not build: {sorted(missing)}")
        self.api = Api(
            self,
            "Api",
            stage_name=stage,
            routes=ROUTES,
            functions=self.functions.by_name,
            removal_policy=removal_policy,
        )

        CfnOutput(self, "ApiUrl", value=self.api.url, description="Base URL of the stage (SigV4, service execute-api)")
        CfnOutput(self, "TableName", value=self.storage.table.table_name)
        CfnOutput(self, "BucketName", value=self.storage.bucket.bucket_name)
        for name, function in self.functions.by_name.items():
            CfnOutput(self, f"{name.capitalize()}FunctionName", value=function.function_name)
