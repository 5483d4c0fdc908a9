"""What keeps a stage's bytes recoverable and its operators informed: bucket versioning and lifecycle, per-stage
concurrency, alarms with their topic, the dashboard, the API's execution logs and the opt-in account logging role."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Match

from arca.adapters import s3 as blobs
from tests.infra import stages

RESERVED = {
    "arca-publish": 20,
    "arca-alias": 10,
    "arca-resolve": 100,
    "arca-rollout": 5,
    "arca-retention": 1,
    "arca-verify": 5,
    "arca-events": 5,
}


_synth = stages.synth


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {key: value for key, value in template["Resources"].items() if value["Type"] == kind}


def _bucket(template: dict[str, Any]) -> dict[str, Any]:
    (bucket,) = _resources(template, "AWS::S3::Bucket").values()
    return bucket["Properties"]  # type: ignore[no-any-return]


def _rules(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rule["Id"]: rule for rule in _bucket(template)["LifecycleConfiguration"]["Rules"]}


@pytest.mark.parametrize("stage", ["prod", "staging"])
def test_a_retained_bucket_keeps_replaced_and_deleted_bytes_for_the_recovery_window(stage: str) -> None:
    # Given the storage stack of a retained stage
    template = _synth(stage).storage
    # When its bucket is read
    bucket, rules = _bucket(template), _rules(template)
    # Then it is versioned, earlier versions expire after the table's 35-day PITR window, and delete markers left
    # alone are removed
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert rules["ExpireNoncurrentVersions"] == {
        "Id": "ExpireNoncurrentVersions",
        "Status": "Enabled",
        "NoncurrentVersionExpiration": {"NoncurrentDays": 35},
        "ExpiredObjectDeleteMarker": True,
    }


def test_the_dev_bucket_keeps_no_versions() -> None:
    # Given the dev storage stack (deleted with its data)
    template = _synth("dev").storage
    # When its bucket is read
    # Then nothing keeps earlier versions, so emptying it empties it
    assert "VersioningConfiguration" not in _bucket(template)
    assert "ExpireNoncurrentVersions" not in _rules(template)


@pytest.mark.parametrize("stage", ["dev", "prod"])
def test_uploads_never_published_expire_after_a_week(stage: str) -> None:
    # Given the storage stack of a stage
    rules = _rules(_synth(stage).storage)
    # When the lifecycle rule for unpublished uploads is read
    rule = rules["ExpireUnpublishedUploads"]
    # Then it expires objects carrying the tag the functions sign into every upload and clear on publish
    assert rule == {
        "Id": "ExpireUnpublishedUploads",
        "Status": "Enabled",
        "ExpirationInDays": blobs.UPLOAD_EXPIRY_DAYS,
        "TagFilters": [{"Key": blobs.UPLOAD_TAG_KEY, "Value": "uploaded"}],
    }
    assert blobs.UPLOAD_EXPIRY_DAYS == 7
    assert f"{rule['TagFilters'][0]['Key']}={rule['TagFilters'][0]['Value']}" == blobs.UPLOAD_TAG
    # Unfinished multipart uploads are aborted after the same week a resumable upload session lasts
    assert rules["AbortIncompleteMultipartUploads"]["AbortIncompleteMultipartUpload"] == {
        "DaysAfterInitiation": blobs.UPLOAD_EXPIRY_DAYS
    }


def _reserved(template: dict[str, Any]) -> dict[str, int | None]:
    return {
        function["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]: function["Properties"].get(
            "ReservedConcurrentExecutions"
        )
        for function in _resources(template, "AWS::Lambda::Function").values()
    }


def test_a_retained_stage_reserves_its_own_concurrency_per_function() -> None:
    # Given the prod service stack
    # When its functions are read
    # Then each has a reserved concurrency: the stage's ceiling, which no other stage can take or exceed
    assert _reserved(_synth("prod").service) == RESERVED


@pytest.mark.parametrize(("stage", "context"), [("dev", {}), ("prod", {"reserve_concurrency": "false"})])
def test_dev_and_an_opted_out_stage_reserve_no_concurrency(stage: str, context: dict[str, str]) -> None:
    # Given a stage that reserves nothing (dev by default, or -c reserve_concurrency=false)
    template = _synth(stage, **context).service
    # When its functions are read
    # Then none reserves concurrency (an account's small default quota can deploy it)
    assert set(_reserved(template).values()) == {None}


def _alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {key: alarm["Properties"] for key, alarm in _resources(template, "AWS::CloudWatch::Alarm").items()}


def test_alarms_watch_the_api_the_functions_and_the_table_and_notify_the_topic() -> None:
    # Given the dev service stack
    template = _synth("dev").service
    (topic_id,) = _resources(template, "AWS::SNS::Topic")
    (stage_id,) = _resources(template, "AWS::ApiGateway::Stage")
    alarms = _alarms(template)
    # When the alarms' metrics are collected
    watched = {(a.get("Namespace"), a.get("MetricName")) for a in alarms.values()}
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for alarm in alarms.values():
        by_metric.setdefault(alarm.get("MetricName") or "math", []).append(alarm)
    # Then the API's 5xx (of this stage), each function's errors and throttles (the events function's too), the
    # table's system errors and the events' dead letters are watched, and every alarm notifies the topic when
    # it fires and when it clears
    assert ("AWS/ApiGateway", "5XXError") in watched
    (api,) = by_metric["5XXError"]
    assert {"Name": "Stage", "Value": {"Ref": stage_id}} in api["Dimensions"]
    # the three API functions, the rollout driver, the retention sweep, the verifier and the events function
    assert len(by_metric["Errors"]) == len(by_metric["Throttles"]) == 7
    (undelivered,) = by_metric["ApproximateNumberOfMessagesVisible"]
    assert undelivered["Namespace"] == "AWS/SQS" and undelivered["Threshold"] == 1
    assert all(a["Namespace"] == "AWS/Lambda" for a in by_metric["Errors"] + by_metric["Throttles"])
    (system,) = by_metric["math"]
    names = {
        m["MetricStat"]["Metric"]["MetricName"] for m in system["Metrics"] if "MetricStat" in m
    }  # the per-operation metrics summed by the expression
    assert names == {"SystemErrors"}
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == alarm["OKActions"] == [{"Ref": topic_id}]
        assert alarm["TreatMissingData"] == "notBreaching"
    # failed executions of the rollout driver and of the verification of multipart content
    assert [a["Namespace"] for a in by_metric["ExecutionsFailed"]] == ["AWS/States", "AWS/States"]
    assert len(alarms) == 19  # 5xx, errors and throttles of 7 functions, system errors, dead letters, 2 machines


def test_the_alarm_topic_is_an_output_refuses_plain_http_and_a_dashboard_exists() -> None:
    # Given the dev service stack
    template = _synth("dev").service
    (topic_id,) = _resources(template, "AWS::SNS::Topic")
    # When the outputs, the topic policy and the dashboards are read
    (policy,) = _resources(template, "AWS::SNS::TopicPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    (dashboard,) = _resources(template, "AWS::CloudWatch::Dashboard").values()
    # Then the topic's ARN is published, publishing without TLS is denied, and the dashboard graphs the API
    assert template["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": topic_id}
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in statements
    )
    assert "DashboardName" not in dashboard["Properties"]
    assert "5XXError" in json.dumps(dashboard["Properties"]["DashboardBody"])


def test_the_stack_creates_the_api_execution_log_group_with_a_retention_before_the_stage() -> None:
    # Given the dev service stack
    template = _synth("dev").service
    (rest_api_id,) = _resources(template, "AWS::ApiGateway::RestApi")
    (stage,) = _resources(template, "AWS::ApiGateway::Stage").values()
    # When the log group named as API Gateway names execution logs is looked for
    expected = {"Fn::Join": ["", ["API-Gateway-Execution-Logs_", {"Ref": rest_api_id}, "/dev"]]}
    found = [
        (key, group["Properties"])
        for key, group in _resources(template, "AWS::Logs::LogGroup").items()
        if group["Properties"].get("LogGroupName") == expected
    ]
    # Then it exists with a 30-day retention, deleted with the dev stack, and the stage is created after it
    ((group_id, group),) = found
    assert group["RetentionInDays"] == 30
    assert template["Resources"][group_id]["DeletionPolicy"] == "Delete"
    assert group_id in stage["DependsOn"]
    assert stage["Properties"]["MethodSettings"][0]["LoggingLevel"] == "ERROR"


def test_the_account_wide_api_gateway_logging_role_is_set_only_on_request() -> None:
    # Given the dev service stack by default and with -c apigateway_cloudwatch_role=true
    default = _synth("dev").service
    opted_in = _synth("dev", apigateway_cloudwatch_role="true")
    # When their API Gateway account settings are read
    accounts = _resources(opted_in.service, "AWS::ApiGateway::Account")
    # Then only the opted-in stack sets the account's role (retained: other APIs share it), and it stays nag-clean
    assert not _resources(default, "AWS::ApiGateway::Account")
    (account,) = accounts.values()
    assert account["DeletionPolicy"] == "Retain"
    annotations = stages.annotations(opted_in.stage.service)
    assert annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")) == []


def test_a_context_flag_that_is_not_a_boolean_is_refused() -> None:
    # Given a misspelt flag value
    # When the stage is built
    # Then it is refused naming the flag, rather than read as off
    with pytest.raises(ValueError, match="reserve_concurrency"):
        stages.build("prod", context={"reserve_concurrency": "maybe"})
