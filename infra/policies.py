"""`python -m infra.policies` (`make policies`): each function's IAM statements, from the synthesized service
stack, written to local/policies.json for local mode and the tests (local/iam.py checks every AWS call a function
makes against them; local mode installs no CDK, so it cannot synthesize).

The template's ARNs are CloudFormation expressions; each becomes a string with placeholders that local/iam.py
resolves to the names it runs with: `${Partition}`, `${Region}`, `${AccountId}`, `${TableName}`, `${BucketName}`,
`${EventBusArn}`, `${RolloutStateMachineArn}`, `${VerifyStateMachineArn}`, `${SigningKeyArn}`. Anything else (log
groups, the stream, the driver function) becomes `${Unresolved:…}`, which matches nothing locally: the functions
make no such call themselves.
An infra test fails when the committed file is not what the template says now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent.parent / "local" / "policies.json"
_PSEUDO = {"AWS::Partition": "Partition", "AWS::Region": "Region", "AWS::AccountId": "AccountId"}


def _resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {key: value for key, value in template["Resources"].items() if value["Type"] == kind}


class _Renderer:
    """CloudFormation expressions of the template -> strings with placeholders."""

    def __init__(self, template: dict[str, Any], storage_parameters: dict[str, str]) -> None:
        self.names: dict[str, str] = {}
        for logical_id, parameter in template.get("Parameters", {}).items():
            placeholder = storage_parameters.get(str(parameter.get("Default")))
            if placeholder is not None:
                self.names[logical_id] = placeholder
        for logical_id in _resources(template, "AWS::StepFunctions::StateMachine"):
            verifies = logical_id.startswith("Verification")
            self.names[logical_id] = "VerifyStateMachineArn" if verifies else "RolloutStateMachineArn"
        self.arns = dict.fromkeys(_resources(template, "AWS::Events::EventBus"), "EventBusArn")

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict) and set(value) == {"Fn::Join"}:
            separator, parts = value["Fn::Join"]
            return separator.join(self(part) for part in parts)
        if isinstance(value, dict) and set(value) == {"Ref"}:
            ref = value["Ref"]
            name = _PSEUDO.get(ref) or self.names.get(ref)
            return f"${{{name}}}" if name else f"${{Unresolved:{ref}}}"
        if isinstance(value, dict) and set(value) == {"Fn::GetAtt"}:
            logical_id, attribute = value["Fn::GetAtt"]
            if attribute == "Arn" and logical_id in self.arns:
                return f"${{{self.arns[logical_id]}}}"
            return f"${{Unresolved:{logical_id}.{attribute}}}"
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        raise ValueError(f"cannot render {value!r}")


def function_policies(template: dict[str, Any], storage_parameters: dict[str, str]) -> dict[str, Any]:
    """Function name (its POWERTOOLS_SERVICE_NAME without `arca-`) -> every statement of its role's policies.

    `storage_parameters` maps the SSM parameter names the service stack reads to their placeholders.
    """
    render = _Renderer(template, storage_parameters)
    policies = _resources(template, "AWS::IAM::Policy").values()
    functions: dict[str, Any] = {}
    for function in _resources(template, "AWS::Lambda::Function").values():
        properties = function["Properties"]
        service = properties.get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME", "")
        if not service.startswith("arca-"):
            continue
        role_id = properties["Role"]["Fn::GetAtt"][0]
        role = template["Resources"][role_id]["Properties"]
        if role.get("ManagedPolicyArns"):
            raise ValueError(f"{role_id} has managed policies, which local/iam.py cannot read")
        documents = [p["PolicyDocument"] for p in role.get("Policies", [])]
        documents += [
            p["Properties"]["PolicyDocument"] for p in policies if {"Ref": role_id} in p["Properties"]["Roles"]
        ]
        statements = []
        for document in documents:
            for statement in document["Statement"]:
                rendered = render(statement)
                for element in ("Action", "Resource"):
                    if not isinstance(rendered[element], list):
                        rendered[element] = [rendered[element]]
                statements.append(rendered)
        functions[service.removeprefix("arca-")] = statements
    return dict(sorted(functions.items()))


def document(template: dict[str, Any]) -> str:
    """The text of local/policies.json for the dev service template."""
    from infra.storage import StorageParameters

    stage = StorageParameters.for_stage("dev")
    parameters = {
        stage.table_name: "TableName",
        stage.bucket_name: "BucketName",
        stage.stream_arn: "TableStreamArn",
        stage.signing_key_arn: "SigningKeyArn",
    }
    body = {
        "generated_by": "make policies (python -m infra.policies) from the dev service stack: do not edit",
        "functions": function_policies(template, parameters),
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def synth_dev_service() -> dict[str, Any]:
    """The dev service stack's template, synthesized with cdk.json's context as `cdk synth` does."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.stack import add_stage

    cdk_json = Path(__file__).resolve().parent.parent / "cdk.json"
    app = cdk.App(context={**json.loads(cdk_json.read_text())["context"], "stage": "dev"})
    stage = add_stage(app, "dev")
    return dict(Template.from_stack(stage.service).to_json())


def main() -> None:
    OUTPUT.write_text(document(synth_dev_service()))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
