"""IAM on this machine: every AWS call a function makes is checked against that function's role, as synthesized.

The roles come from local/policies.json (written from the synthesized service stack by `make policies`; an infra
test fails when it no longer says what the template says). Each call of a function's clients is turned into the
IAM requests AWS would authorise (a transaction item by item, with its partition key and the attributes it
touches), and each request is evaluated against the function's statements: actions and resources with their
wildcards, and the conditions the template uses (ForAllValues / ForAnyValue, StringLike / StringEquals and their
negations, IfExists). An explicit Deny wins; no Allow is an implicit deny. A refused call answers as AWS answers
it: a ClientError `AccessDeniedException` (`AccessDenied` for S3), which the code translates as on AWS.

The calling function is the context variable FUNCTION, set around each handler invocation (`acting_as`). A call
with no function set, or a call this module cannot map to IAM requests, is refused too (fail closed): a new kind
of call then needs a mapping here, and nothing escapes the check.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

log = logging.getLogger("arca.local")
POLICIES = Path(__file__).with_name("policies.json")
LOCAL_ACCOUNT = "000000000000"
DEFAULT_REGION = "us-east-1"
# The function whose role authorises the calls made now (one handler invocation).
FUNCTION: contextvars.ContextVar[str | None] = contextvars.ContextVar("arca_iam_function", default=None)
# A Query or GetItem without a projection reads every attribute: `*` stands for "all", which no list of names
# allows (as on AWS, where an attribute-limited role must name the attributes it reads).
ALL_ATTRIBUTES = "*"

Context = Mapping[str, tuple[str, ...]]


class UnattributedCallError(RuntimeError):
    """A function's client made a call while no function was set: every invocation path must set one."""


class UnmappedCallError(RuntimeError):
    """A call this module does not know the IAM requests of: add its mapping (fail closed)."""


@dataclass(frozen=True)
class Request:
    """One authorisation AWS makes: an action on a resource, with the request's condition keys."""

    action: str
    resource: str
    context: Context = field(default_factory=dict)

    def __str__(self) -> str:
        keys = ", ".join(f"{k}={list(v)}" for k, v in sorted(self.context.items()))
        return f"{self.action} on {self.resource}" + (f" ({keys})" if keys else "")


# Evaluation.


@cache
def _wildcard(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """IAM's wildcards: `*` any run of characters, `?` any one; everything else literal."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(body, re.S | (re.I if ignore_case else 0))


def _like(value: str, pattern: str) -> bool:
    return _wildcard(pattern).fullmatch(value) is not None


_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda value, pattern: value == pattern,
    "StringLike": _like,
    "ArnEquals": lambda value, pattern: value == pattern,
    "ArnLike": _like,
}
_NEGATED = {
    "StringNotEquals": "StringEquals",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _condition_holds(operator: str, key: str, expected: Sequence[str], context: Context) -> bool:
    """One operator on one key: the policy's values are alternatives (OR)."""
    qualifier, _, name = operator.rpartition(":")
    if_exists = name.endswith("IfExists")
    name = name.removesuffix("IfExists")
    negated = name in _NEGATED
    base = _OPERATORS.get(_NEGATED.get(name, name))
    if base is None or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise ValueError(f"condition operator {operator} is not supported here: add it to local/iam.py")

    def matches(value: str) -> bool:
        hit = any(base(value, pattern) for pattern in expected)
        return not hit if negated else hit

    values = context.get(key)
    if qualifier == "ForAllValues":
        return values is None or all(matches(v) for v in values)
    if qualifier == "ForAnyValue":
        return values is not None and any(matches(v) for v in values)
    if values is None:
        # A missing key matches nothing; a negated operator then holds (as on AWS), and so does IfExists.
        return if_exists or negated
    return all(matches(v) for v in values) if negated else any(matches(v) for v in values)


def statement_applies(statement: Mapping[str, Any], request: Request) -> bool:
    """Whether the statement's actions, resources and conditions all cover the request (its Effect aside)."""
    unsupported = set(statement) - {"Sid", "Effect", "Action", "Resource", "Condition"}
    if unsupported:
        raise ValueError(f"statement elements {sorted(unsupported)} are not supported here: add them to local/iam.py")
    if not any(_wildcard(a, ignore_case=True).fullmatch(request.action) for a in _as_list(statement["Action"])):
        return False
    if not any(_wildcard(r).fullmatch(request.resource) for r in _as_list(statement["Resource"])):
        return False
    return all(
        _condition_holds(operator, key, [str(v) for v in _as_list(values)], request.context)
        for operator, keys in statement.get("Condition", {}).items()
        for key, values in keys.items()
    )


def decide(statements: Iterable[Mapping[str, Any]], request: Request) -> str:
    """ "Allow", "Deny" (an explicit Deny applies) or "ImplicitDeny" (no Allow applies)."""
    applying = [s["Effect"] for s in statements if statement_applies(s, request)]
    if "Deny" in applying:
        return "Deny"
    return "Allow" if "Allow" in applying else "ImplicitDeny"


# Calls to IAM requests.


@dataclass(frozen=True)
class Names:
    """What the policies' placeholders stand for here: the Region, the account and the stage's resources."""

    table: str
    bucket: str
    region: str = DEFAULT_REGION
    account: str = LOCAL_ACCOUNT
    event_bus: str | None = None
    state_machine_arn: str | None = None
    verify_state_machine_arn: str | None = None
    signing_key_arn: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> Names:
        return cls(
            table=environ.get("ARCA_TABLE_NAME", ""),
            bucket=environ.get("ARCA_BUCKET_NAME", ""),
            region=environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
            event_bus=environ.get("ARCA_EVENT_BUS_NAME") or None,
            state_machine_arn=environ.get("ARCA_ROLLOUT_STATE_MACHINE_ARN") or None,
            verify_state_machine_arn=environ.get("ARCA_VERIFY_STATE_MACHINE_ARN") or None,
            signing_key_arn=environ.get("ARCA_SIGNING_KEY_ARN") or None,
        )

    def placeholders(self) -> dict[str, str]:
        # A resource the stage does not have here resolves to a value no ARN matches.
        missing = "\x00absent"
        bus = f"arn:aws:events:{self.region}:{self.account}:event-bus/{self.event_bus}" if self.event_bus else missing
        return {
            "Partition": "aws",
            "Region": self.region,
            "AccountId": self.account,
            "TableName": self.table,
            "BucketName": self.bucket,
            "EventBusArn": bus,
            "RolloutStateMachineArn": self.state_machine_arn or missing,
            "VerifyStateMachineArn": self.verify_state_machine_arn or missing,
            "SigningKeyArn": self.signing_key_arn or missing,
        }

    def table_arn(self, table: str) -> str:
        return table if table.startswith("arn:") else f"arn:aws:dynamodb:{self.region}:{self.account}:table/{table}"


_KEYWORDS = frozenset(
    {"SET", "REMOVE", "ADD", "DELETE", "AND", "OR", "NOT", "BETWEEN", "IN"}
    | {"attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains", "size"}
    | {"if_not_exists", "list_append"}
)
_VALUE = re.compile(r":[A-Za-z0-9_]+")
_NAME = re.compile(r"#?[A-Za-z_][A-Za-z0-9_]*")
_PATH_TAIL = re.compile(r"(\.#?[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+")


def expression_attributes(expression: str | None, names: Mapping[str, str] | None = None) -> set[str]:
    """The top-level attribute names an expression reads or writes (`a.b[0]` is `a`; `#n` is resolved)."""
    if not expression:
        return set()
    text = _PATH_TAIL.sub("", _VALUE.sub(" ", expression))
    found = set()
    for token in _NAME.findall(text):
        if token.startswith("#"):
            found.add((names or {})[token])
        elif token not in _KEYWORDS and token.upper() not in _KEYWORDS:
            found.add(token)
    return found


def _plain(value: Any) -> str:
    """A key value as IAM sees it: the string (or number) inside a DynamoDB AttributeValue."""
    if isinstance(value, dict):
        ((_, inner),) = value.items()
        return str(inner)
    return str(value)


def _item_request(action: str, body: Mapping[str, Any], names: Names) -> Request:
    key = body.get("Key") or body.get("Item") or {}
    attributes = set(key)
    expression_names = body.get("ExpressionAttributeNames")
    for part in ("UpdateExpression", "ConditionExpression", "ProjectionExpression"):
        attributes |= expression_attributes(body.get(part), expression_names)
    if action in ("dynamodb:GetItem", "dynamodb:BatchGetItem") and not body.get("ProjectionExpression"):
        attributes.add(ALL_ATTRIBUTES)
    context: dict[str, tuple[str, ...]] = {"dynamodb:Attributes": tuple(sorted(attributes))}
    if "pk" in key:
        context["dynamodb:LeadingKeys"] = (_plain(key["pk"]),)
    if body.get("ReturnValues"):
        context["dynamodb:ReturnValues"] = (str(body["ReturnValues"]),)
    return Request(action, names.table_arn(body["TableName"]), context)


_TRANSACTION_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def _dynamodb(operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    if operation in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
        return [_item_request(f"dynamodb:{operation}", params, names)]
    if operation == "TransactWriteItems":
        found = []
        for entry in params["TransactItems"]:
            ((kind, body),) = entry.items()
            found.append(_item_request(_TRANSACTION_ACTIONS[kind], body, names))
        return found
    if operation == "BatchWriteItem":
        return [
            _item_request("dynamodb:BatchWriteItem", {"TableName": table, **next(iter(write.values()))}, names)
            for table, writes in params["RequestItems"].items()
            for write in writes
        ]
    if operation == "BatchGetItem":
        # Authorised per table, each key as a read of its item (its leading key, and every attribute unless
        # projected).
        return [
            _item_request(
                "dynamodb:BatchGetItem",
                {"TableName": table, "Key": key, **{k: v for k, v in reads.items() if k != "Keys"}},
                names,
            )
            for table, reads in params["RequestItems"].items()
            for key in reads["Keys"]
        ]
    if operation == "Query":
        resource = names.table_arn(params["TableName"])
        if params.get("IndexName"):
            resource += f"/index/{params['IndexName']}"
        expression_names = params.get("ExpressionAttributeNames")
        attributes = set()
        for part in ("KeyConditionExpression", "FilterExpression", "ProjectionExpression"):
            attributes |= expression_attributes(params.get(part), expression_names)
        if not params.get("ProjectionExpression") and params.get("Select") != "COUNT":
            attributes.add(ALL_ATTRIBUTES)
        context: dict[str, tuple[str, ...]] = {"dynamodb:Attributes": tuple(sorted(attributes))}
        if params.get("Select"):
            context["dynamodb:Select"] = (str(params["Select"]),)
        if not params.get("IndexName"):
            leading = _leading_key(params, expression_names)
            if leading is not None:
                context["dynamodb:LeadingKeys"] = (leading,)
        return [Request("dynamodb:Query", resource, context)]
    raise UnmappedCallError(f"no IAM mapping for DynamoDB {operation}: add one to local/iam.py")


def _leading_key(params: Mapping[str, Any], expression_names: Mapping[str, str] | None) -> str | None:
    """The partition a table Query reads: the value its key condition gives `pk`."""
    for left, right in re.findall(
        r"(#?[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(:[A-Za-z0-9_]+)", params["KeyConditionExpression"]
    ):
        name = (expression_names or {}).get(left, left)
        if name == "pk":
            return _plain(params["ExpressionAttributeValues"][right])
    return None


_S3_OBJECT_ACTIONS = {
    "GetObject": ("s3:GetObject",),
    "HeadObject": ("s3:GetObject",),
    "DeleteObject": ("s3:DeleteObject",),
    "DeleteObjectTagging": ("s3:DeleteObjectTagging",),
    "PutObjectTagging": ("s3:PutObjectTagging",),
    "GetObjectTagging": ("s3:GetObjectTagging",),
    # Multipart uploads: every step that writes the object is s3:PutObject; listing and aborting have their own.
    "UploadPart": ("s3:PutObject",),
    "CompleteMultipartUpload": ("s3:PutObject",),
    "ListParts": ("s3:ListMultipartUploadParts",),
    "AbortMultipartUpload": ("s3:AbortMultipartUpload",),
}


def _s3(operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    bucket = f"arn:aws:s3:::{params['Bucket']}"
    if operation in _S3_OBJECT_ACTIONS:
        return [Request(action, f"{bucket}/{params['Key']}") for action in _S3_OBJECT_ACTIONS[operation]]
    if operation in ("PutObject", "CreateMultipartUpload"):
        # Tags sent with the object need PutObjectTagging too.
        actions = ("s3:PutObject", "s3:PutObjectTagging") if params.get("Tagging") else ("s3:PutObject",)
        return [Request(action, f"{bucket}/{params['Key']}") for action in actions]
    if operation == "CopyObject":
        # Reads the source (and its tags when copied with it), writes the target (and tags when it sets them).
        source = params["CopySource"]
        if isinstance(source, str):
            source_bucket, _, source_key = source.lstrip("/").partition("/")
        else:
            source_bucket, source_key = source["Bucket"], source["Key"]
        source_arn = f"arn:aws:s3:::{source_bucket}/{source_key}"
        found = [Request("s3:GetObject", source_arn), Request("s3:PutObject", f"{bucket}/{params['Key']}")]
        if params.get("TaggingDirective", "COPY") == "COPY":
            found.append(Request("s3:GetObjectTagging", source_arn))
        if params.get("Tagging"):
            found.append(Request("s3:PutObjectTagging", f"{bucket}/{params['Key']}"))
        return found
    if operation == "DeleteObjects":
        # Deleting a version by its id is an action of its own.
        return [
            Request("s3:DeleteObjectVersion" if o.get("VersionId") else "s3:DeleteObject", f"{bucket}/{o['Key']}")
            for o in params["Delete"]["Objects"]
        ]
    if operation in ("ListObjectsV2", "ListObjects", "ListObjectVersions"):
        context = {"s3:prefix": (str(params["Prefix"]),)} if params.get("Prefix") is not None else {}
        action = "s3:ListBucketVersions" if operation == "ListObjectVersions" else "s3:ListBucket"
        return [Request(action, bucket, context)]
    raise UnmappedCallError(f"no IAM mapping for S3 {operation}: add one to local/iam.py")


def _events(operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    if operation != "PutEvents":
        raise UnmappedCallError(f"no IAM mapping for EventBridge {operation}: add one to local/iam.py")
    found = []
    for entry in params["Entries"]:
        bus = entry.get("EventBusName") or "default"
        arn = bus if bus.startswith("arn:") else f"arn:aws:events:{names.region}:{names.account}:event-bus/{bus}"
        context = {"events:source": (str(entry.get("Source")),), "events:detail-type": (str(entry.get("DetailType")),)}
        found.append(Request("events:PutEvents", arn, context))
    return found


def _states(operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    if operation != "StartExecution":
        raise UnmappedCallError(f"no IAM mapping for Step Functions {operation}: add one to local/iam.py")
    return [Request("states:StartExecution", str(params["stateMachineArn"]))]


def _cloudwatch(operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    if operation != "DescribeAlarms":
        raise UnmappedCallError(f"no IAM mapping for CloudWatch {operation}: add one to local/iam.py")
    prefix = f"arn:aws:cloudwatch:{names.region}:{names.account}:alarm:"
    return [Request("cloudwatch:DescribeAlarms", prefix + name) for name in params.get("AlarmNames") or ["*"]]


_KMS_ACTIONS = frozenset({"Sign", "GetPublicKey"})


def _kms(operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    if operation not in _KMS_ACTIONS:
        raise UnmappedCallError(f"no IAM mapping for KMS {operation}: add one to local/iam.py")
    key = str(params["KeyId"])
    arn = key if key.startswith("arn:") else f"arn:aws:kms:{names.region}:{names.account}:key/{key}"
    return [Request(f"kms:{operation}", arn)]


# botocore's service ids (hyphenated) -> the mapping of their calls.
_SERVICES: dict[str, Callable[[str, Mapping[str, Any], Names], list[Request]]] = {
    "dynamodb": _dynamodb,
    "s3": _s3,
    "eventbridge": _events,
    "sfn": _states,
    "cloudwatch": _cloudwatch,
    "kms": _kms,
}


def requests_of(service: str, operation: str, params: Mapping[str, Any], names: Names) -> list[Request]:
    """The IAM requests one API call needs (`service` as botocore's hyphenated service id)."""
    mapping = _SERVICES.get(service)
    if mapping is None:
        raise UnmappedCallError(f"no IAM mapping for {service}: add one to local/iam.py")
    return mapping(operation, params, names)


# The policies.


def load_policies(path: Path = POLICIES) -> dict[str, list[dict[str, Any]]]:
    """Function name -> its role's statements, with placeholders (`${TableName}`, …) for the stage's ARNs."""
    data: dict[str, list[dict[str, Any]]] = json.loads(path.read_text())["functions"]
    return data


def resolve(statements: Sequence[Mapping[str, Any]], names: Names) -> list[dict[str, Any]]:
    """The statements with every `${Placeholder}` replaced by its value here."""
    values = names.placeholders()

    def substitute(value: Any) -> Any:
        if isinstance(value, str):
            return re.sub(r"\$\{([A-Za-z]+(?::[^}]*)?)\}", lambda m: values.get(m.group(1), "\x00absent"), value)
        if isinstance(value, list):
            return [substitute(v) for v in value]
        if isinstance(value, dict):
            return {k: substitute(v) for k, v in value.items()}
        return value

    return [substitute(dict(s)) for s in statements]


# The check, on the functions' clients.


def _denied(service: str, function: str, request: Request, decision: str) -> tuple[AWSResponse, dict[str, Any]]:
    code = "AccessDenied" if service == "s3" else "AccessDeniedException"
    why = "an explicit deny" if decision == "Deny" else "no identity-based policy allows"
    message = f"the {function} function's role is not authorized to perform {request}: {why} it"
    parsed = {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": 403 if service == "s3" else 400},
    }
    return AWSResponse("", 403 if service == "s3" else 400, {}, None), parsed


class Checker:
    """botocore handlers for the functions' clients: each call is evaluated against the calling function's role.

    `denials` keeps every refusal (function, request), for tests and for the local server's log.
    """

    def __init__(
        self,
        policies: Mapping[str, list[dict[str, Any]]] | None = None,
        names: Callable[[], Names] = Names.from_environ,
    ) -> None:
        self.policies = dict(policies) if policies is not None else load_policies()
        self.names = names
        self.denials: list[tuple[str, Request]] = []
        self._resolved: dict[tuple[str, Names], list[dict[str, Any]]] = {}

    def statements(self, function: str, names: Names) -> list[dict[str, Any]]:
        if (function, names) not in self._resolved:
            if function not in self.policies:
                raise UnattributedCallError(f"no policy for a function named {function!r} in {POLICIES.name}")
            self._resolved[(function, names)] = resolve(self.policies[function], names)
        return self._resolved[(function, names)]

    def refusal(self, service: str, operation: str, params: Mapping[str, Any]) -> tuple[str, Request, str] | None:
        """The first request of the call the calling function's role does not allow: (function, request, decision)."""
        function = FUNCTION.get()
        if function is None:
            raise UnattributedCallError(
                f"{service} {operation} was called with no function set: run handlers under local.iam.acting_as"
            )
        names = self.names()
        statements = self.statements(function, names)
        for request in requests_of(service, operation, params, names):
            decision = decide(statements, request)
            if decision != "Allow":
                self.denials.append((function, request))
                log.warning("IAM: the %s function may not call %s: %s (%s)", function, operation, request, decision)
                return function, request, decision
        return None

    def before_parameter_build(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        service = model.service_model.service_id.hyphenize()
        if context.get("is_presign_request"):
            # A presigned URL carries its signer's permissions: checked when signed (AWS checks it when used).
            found = self.refusal(service, model.name, params)
            if found is not None:
                response = _denied(service, *found)[1]
                raise ClientError(response, model.name)  # type: ignore[arg-type,unused-ignore]
            return
        context["arca_iam_params"] = params

    def before_call(self, model: Any, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
        service = model.service_model.service_id.hyphenize()
        found = self.refusal(service, model.name, context["arca_iam_params"])
        return None if found is None else _denied(service, *found)

    def handlers(self) -> list[tuple[str, Callable[..., Any]]]:
        return [("before-parameter-build", self.before_parameter_build), ("before-call", self.before_call)]


@contextlib.contextmanager
def acting_as(function: str) -> Iterator[None]:
    """The calls made meanwhile (in this thread or task) are `function`'s, authorised by its role."""
    token = FUNCTION.set(function)
    try:
        yield
    finally:
        FUNCTION.reset(token)


@contextlib.contextmanager
def checking(checker: Checker | None = None) -> Iterator[Checker]:
    """Every client the functions build meanwhile (arca.wiring.client) checks its calls with `checker`."""
    from arca import wiring

    checker = checker or Checker()
    handlers = checker.handlers()
    wiring.CLIENT_HANDLERS.extend(handlers)
    wiring.reset()
    try:
        yield checker
    finally:
        for handler in handlers:
            wiring.CLIENT_HANDLERS.remove(handler)
        wiring.reset()
