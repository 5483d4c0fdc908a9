"""The deploy test's own machinery (deploy/run.py), without LocalStack: its resource check and its cleanup."""

from __future__ import annotations

import subprocess
import sys
import time

import boto3
import pytest
from botocore.stub import Stubber

from deploy import run

TEMPLATE = {"Resources": {"Table": {"Type": "AWS::DynamoDB::Table"}, "Api": {"Type": "AWS::ApiGateway::RestApi"}}}


def _summary(logical_id: str, status: str) -> dict[str, object]:
    return {
        "LogicalResourceId": logical_id,
        "ResourceType": "AWS::X::Y",
        "ResourceStatus": status,
        "LastUpdatedTimestamp": "2026-11-24T00:00:00Z",
    }


def _stack(status: str = "CREATE_COMPLETE") -> dict[str, object]:
    return {"StackName": "S", "StackStatus": status, "CreationTime": "2026-11-24T00:00:00Z"}


@pytest.fixture
def cloudformation():
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    with Stubber(client) as stubber:
        yield client, stubber


def test_check_resources_passes_when_every_template_resource_is_create_complete(cloudformation):
    # Given
    client, stubber = cloudformation
    stubber.add_response("describe_stacks", {"Stacks": [_stack()]})
    summaries = [_summary("Table", "CREATE_COMPLETE"), _summary("Api", "CREATE_COMPLETE")]
    stubber.add_response("list_stack_resources", {"StackResourceSummaries": summaries})
    # When
    counts = run.check_resources({"S": TEMPLATE}, client)
    # Then
    assert counts == {"S": 2}


def test_check_resources_names_a_failed_and_a_missing_resource(cloudformation):
    # Given: the API failed and the table is not in the stack at all
    client, stubber = cloudformation
    stubber.add_response("describe_stacks", {"Stacks": [_stack("CREATE_FAILED")]})
    stubber.add_response("list_stack_resources", {"StackResourceSummaries": [_summary("Api", "CREATE_FAILED")]})
    # When
    with pytest.raises(run.CheckError) as raised:
        run.check_resources({"S": TEMPLATE}, client)
    # Then
    message = str(raised.value)
    assert "S: stack CREATE_FAILED" in message
    assert "Api (AWS::ApiGateway::RestApi) CREATE_FAILED" in message
    assert "Table (AWS::DynamoDB::Table) was never created" in message


def test_api_endpoint_is_the_stage_on_localstacks_gateway():
    url = "https://abc123.execute-api.localhost.localstack.cloud:4566/dev/"
    assert run.api_endpoint(url) == f"{run.ENDPOINT}/_aws/execute-api/abc123/dev"


def test_stop_kills_a_process_a_child_moved_to_a_session_of_its_own():
    # Given: a leader that ignores SIGTERM, whose child left the group with setsid (as DynamoDB Local does)
    script = "import os, signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    script += "subprocess.Popen(['sleep', '60'], start_new_session=True); print('up', flush=True); time.sleep(60)"
    leader = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    assert leader.stdout is not None and leader.stdout.readline() == b"up\n"
    tree = run._descendants(leader.pid)
    assert len(tree) == 1
    # When
    began = time.monotonic()
    run.stop(leader, grace=0.5)
    # Then: both are gone, long before their minute of sleep (the grace period and a little; a loaded machine
    # may take seconds of that little)
    assert leader.returncode is not None
    assert not any(run._alive(pid, began) for pid, began in tree.items())
    assert time.monotonic() - began < 30
