"""The REST API, defined by an OpenAPI document generated from the route table: every operation IAM-authorised
and a Lambda proxy to its function, the gateway responses in Arca's error shape.

The document is the API's `Body`: API Gateway builds the resources and methods from it, so a route costs no
CloudFormation resource (the stack holds the API, its deployment and stage, and one invoke permission per
function, however many routes there are). A route family (arca.api.routing.Family) is one greedy `{proxy+}`
resource per name depth, with one method per method of its routes: the routes below it cost API Gateway nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from aws_cdk import Aws, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from arca.routes import Family, Route, family_functions

DESCRIPTION = "Arca: a registry for versioned artifacts"

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
GATEWAY_RESPONSES = ("DEFAULT_4XX", "DEFAULT_5XX")
# A body over what API Gateway takes (10 MB) is refused before any function runs, whatever its path: the answer
# carries both shapes, Arca's `error` and OCI's `errors` (SIZE_INVALID, naming the way through), since a gateway
# response's template cannot test the path (it is no VTL, only variable substitution).
_TOO_LARGE_TEMPLATE = (
    '{"error": {"code": "$context.error.responseType", "message": $context.error.messageString, '
    '"request_id": "$context.requestId"}, "errors": [{"code": "SIZE_INVALID", "message": "the request body is over '
    "what API Gateway takes (10 MB); push through `arca proxy`, which uploads blobs of any size to S3"
    '"}]}'
)
BINARY_MEDIA_TYPES = ("application/octet-stream",)
# The security scheme every operation names: SigV4 (IAM authorisation, `AWS_IAM` on each method).
SIGV4 = "sigv4"
_PARAM = re.compile(r"\{(\w+)\+?\}")  # a greedy `{proxy+}` is the parameter `proxy`


def invoke_uri(function: lambda_.IFunction) -> str:
    """The target of a Lambda proxy integration: what `function` is (a function, or later an alias or version, whose
    ARN is then qualified) is decided by the caller of `Api`, and spelled here only."""
    return (
        f"arn:{Aws.PARTITION}:apigateway:{Aws.REGION}:lambda:path/2015-03-31/functions/"
        f"{function.function_arn}/invocations"
    )


def _operation(operation: str, summary: str, path: str, depth: int, uri: str) -> dict[str, Any]:
    return {
        # Operation ids are unique in the document: the route's, then the name's depth past one segment.
        "operationId": operation if depth == 1 else f"{operation}_{depth}",
        "summary": summary,
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in _PARAM.findall(path)
        ],
        "security": [{SIGV4: []}],
        "responses": {"default": {"description": "The function's answer (errors in Arca's error shape)"}},
        "x-amazon-apigateway-integration": {
            "type": "aws_proxy",
            "httpMethod": "POST",
            "uri": uri,
            "passthroughBehavior": "when_no_match",
        },
    }


def _family_operation(family: Family, method: str) -> tuple[str, str]:
    """(operation id, summary) of a family's greedy method."""
    words = [s for s in family.segments if not s.startswith("{")]
    return f"{'_'.join(['family', *words])}_{method.lower()}", f"every {method} below {family.prefix}"


def openapi_body(routes: Iterable[Route], targets: Mapping[str, str], *, title: str) -> dict[str, Any]:
    """The API's OpenAPI 3 definition: each route outside a family at each path `Route.api_paths` spells it (a name
    is one to eight path parameters), each family's greedy resource with one method per method of its routes,
    SigV4-authorised and proxied to `targets[function]` (an invoke URI).

    Only paths, operations and the API Gateway extensions: no schemas, which API Gateway would turn into models of
    its own; the functions validate requests and answer 400 in the error shape (the served /openapi.json documents
    the bodies).
    """
    routes = tuple(routes)
    paths: dict[str, dict[str, Any]] = {}

    def add(method: str, path: str, operation: dict[str, Any]) -> None:
        methods = paths.setdefault(path, {})
        if method.lower() in methods:
            raise ValueError(f"two routes for {method} {path}")
        methods[method.lower()] = operation

    for route in routes:
        if route.family is None:
            for depth, path in enumerate(route.api_paths(), start=1):
                add(
                    route.method, path, _operation(route.operation, route.summary, path, depth, targets[route.function])
                )
    for family, methods in family_functions(routes).items():
        for method, function in sorted(methods.items()):
            operation, summary = _family_operation(family, method)
            for depth, path in enumerate(family.api_paths(), start=1):
                add(method, path, _operation(operation, summary, path, depth, targets[function]))
    return {
        "openapi": "3.0.1",
        "info": {"title": title, "description": DESCRIPTION, "version": "1.0.0"},
        "paths": paths,
        "components": {
            "securitySchemes": {
                SIGV4: {
                    "type": "apiKey",
                    "name": "Authorization",
                    "in": "header",
                    "x-amazon-apigateway-authtype": "awsSigv4",
                }
            }
        },
        # OCI's blob bodies (uploads, session chunks) reach the functions as bytes (base64 in the event), not as text
        # API Gateway would re-encode: oras-py and skopeo send them as application/octet-stream. No JSON route
        # takes that type (a function answers it 415).
        "x-amazon-apigateway-binary-media-types": list(BINARY_MEDIA_TYPES),
        # In the body rather than as AWS::ApiGateway::GatewayResponse resources: a body update may replace what the
        # API holds, and would drop responses the body does not carry.
        "x-amazon-apigateway-gateway-responses": {
            **{
                response_type: {"responseTemplates": {"application/json": _GATEWAY_ERROR_TEMPLATE}}
                for response_type in GATEWAY_RESPONSES
            },
            "REQUEST_TOO_LARGE": {"responseTemplates": {"application/json": _TOO_LARGE_TEMPLATE}},
        },
    }


class Api(Construct):
    """A regional REST API defined by `openapi_body` from the route table (arca.routes).

    `{name}` is expanded to one to eight path parameters (`Route.api_paths`): API Gateway's greedy `{proxy+}`
    can only end a path, so it serves a route family below a reserved word of a name, never the name itself. Each
    function grants API Gateway one invoke permission for the whole API.
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
        # The name is also the document's title, so that whichever API Gateway keeps, metrics (dimension ApiName)
        # and alarms name the same API.
        name = f"Arca-{stage_name}"
        self.body = openapi_body(
            routes, {function: invoke_uri(target) for function, target in functions.items()}, title=name
        )
        # Not "RestApi", the id of the API that had one CloudFormation resource per method: a new API (new id and
        # URL) rather than an update of that one, whose old method resources CloudFormation would delete after the
        # body had defined the same methods (docs/infra.md).
        self.rest_api = apigw.SpecRestApi(
            self,
            "RestApiSpec",
            rest_api_name=name,
            api_definition=apigw.ApiDefinition.from_inline(self.body),
            description=DESCRIPTION,
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Stage logging needs the account's API Gateway CloudWatch role, an account-wide setting per Region
            # that other APIs share: set only on request (retained, since they may rely on it), else assumed.
            cloud_watch_role=account_logging_role,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN if account_logging_role else None,
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
        # CDK names the deployment after a hash of the API's template, body included: a changed API gets a new
        # deployment, which the stage then serves.

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

        # One permission per function for every method of every stage of this API (not one per method, which
        # would be hundreds of resources and a function policy over its size limit).
        for name, function in functions.items():
            lambda_.CfnPermission(
                self,
                f"Invoke{name.capitalize()}",
                action="lambda:InvokeFunction",
                function_name=function.function_arn,
                principal="apigateway.amazonaws.com",
                source_arn=self.rest_api.arn_for_execute_api(),
            )

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

    @property
    def url(self) -> str:
        return self.rest_api.url
