"""The REST API: the route table expanded into API Gateway resources, every method IAM-authorised."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from arca.routes import Route

THROTTLING_RATE_LIMIT = 100  # steady requests per second for the stage
THROTTLING_BURST_LIMIT = 200

_F = apigw.AccessLogField
ACCESS_LOG_FORMAT = apigw.AccessLogFormat.custom(
    json.dumps(
        {
            "requestId": _F.context_request_id(),
            "extendedRequestId": _F.context_extended_request_id(),
            "requestTime": _F.context_request_time(),
            "httpMethod": _F.context_http_method(),
            "resourcePath": _F.context_resource_path(),
            "path": _F.context_path(),
            "status": _F.context_status(),
            "protocol": _F.context_protocol(),
            "responseLength": _F.context_response_length(),
            "responseLatency": _F.context_response_latency(),
            "integrationStatus": _F.context_integration_status(),
            "integrationLatency": _F.context_integration_latency(),
            "integrationError": _F.context_integration_error_message(),
            "errorType": _F.context_error_response_type(),
            "sourceIp": _F.context_identity_source_ip(),
            "caller": _F.context_identity_caller(),
            "userArn": _F.context_identity_user_arn(),
            "xrayTraceId": _F.context_xray_trace_id(),
        }
    )
)

# Errors API Gateway answers itself (IAM denial, throttling, unknown path) in Arca's error shape, so a
# client parses one format. messageString is already a quoted JSON string.
_GATEWAY_ERROR_TEMPLATE = (
    '{"error": {"code": "$context.error.responseType", "message": $context.error.messageString, '
    '"request_id": "$context.requestId"}}'
)


class Api(Construct):
    """A regional REST API whose resources and methods come from the route table (arca.routes).

    `{name}` is expanded to one to eight path parameters (`Route.api_paths`): API Gateway's greedy `{proxy+}`
    can only end a path. Resources are shared between routes, each function has one integration, and each
    function grants API Gateway one invoke permission for the whole API rather than one per method.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage_name: str,
        routes: Iterable[Route],
        functions: Mapping[str, lambda_.IFunction],
        removal_policy: RemovalPolicy,
        account_logging_role: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)
        access_logs = logs.LogGroup(
            self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=removal_policy
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            description="Arca: a registry for versioned artifacts",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Stage logging needs the account's API Gateway CloudWatch role, an account-wide setting per Region
            # that other APIs share: set only on request (retained, since they may rely on it), else assumed.
            cloud_watch_role=account_logging_role,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN if account_logging_role else None,
            default_method_options=apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM),
            deploy_options=apigw.StageOptions(
                stage_name=stage_name,
                throttling_rate_limit=THROTTLING_RATE_LIMIT,
                throttling_burst_limit=THROTTLING_BURST_LIMIT,
                tracing_enabled=True,
                metrics_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=ACCESS_LOG_FORMAT,
            ),
        )
        # API Gateway writes execution logs to a group of this exact name, creating it without retention if it is
        # missing: made here first (the stage waits for it), it has the stack's retention and removal policy.
        self.execution_logs = logs.LogGroup(
            self,
            "ExecutionLogs",
            log_group_name=f"API-Gateway-Execution-Logs_{self.rest_api.rest_api_id}/{stage_name}",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=removal_policy,
        )
        self.rest_api.deployment_stage.node.add_dependency(self.execution_logs)
        for response_type in (apigw.ResponseType.DEFAULT_4_XX, apigw.ResponseType.DEFAULT_5_XX):
            self.rest_api.add_gateway_response(
                f"Gateway{response_type.response_type}",
                type=response_type,
                templates={"application/json": _GATEWAY_ERROR_TEMPLATE},
            )

        # scope_permission_to_method=False: one lambda Permission per function for the whole API (CDK adds it
        # once), instead of two per method, which would be hundreds of resources and a policy over its size limit.
        integrations = {
            name: apigw.LambdaIntegration(function, proxy=True, scope_permission_to_method=False)
            for name, function in functions.items()
        }
        for route in routes:
            for path in route.api_paths():
                # resource_for_path reuses the resources created for earlier routes.
                self.rest_api.root.resource_for_path(path).add_method(route.method, integrations[route.function])

        # Suppressions sit on the one resource each rule flags: spread over every method, their metadata
        # alone would add a third to the template.
        NagSuppressions.add_resource_suppressions(
            self.rest_api,
            [
                NagPackSuppression(
                    id="AwsSolutions-APIG2",
                    reason="Bodies and parameters are validated by the functions, which answer 400 in Arca's "
                    "error shape; a request validator would answer in another shape.",
                )
            ],
        )
        NagSuppressions.add_resource_suppressions(
            self.rest_api.deployment_stage,
            [
                NagPackSuppression(
                    id="AwsSolutions-APIG3",
                    reason="Every method requires SigV4 (IAM); WAF is left to the deployer's account policy.",
                )
            ],
        )
        if account_logging_role:
            NagSuppressions.add_resource_suppressions(
                self.rest_api.node.find_child("CloudWatchRole"),
                [
                    NagPackSuppression(
                        id="AwsSolutions-IAM4",
                        reason="AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy for the account's "
                        "API Gateway logging role.",
                        applies_to=[
                            "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                            "AmazonAPIGatewayPushToCloudWatchLogs"
                        ],
                    )
                ],
            )
        # COG4 is reported once per method; one stack-level entry covers them (the stack has no Cognito at all).
        NagSuppressions.add_stack_suppressions(
            Stack.of(self),
            [
                NagPackSuppression(
                    id="AwsSolutions-COG4", reason="Callers are IAM principals (SigV4), not Cognito users."
                )
            ],
        )

    @property
    def url(self) -> str:
        return self.rest_api.url
