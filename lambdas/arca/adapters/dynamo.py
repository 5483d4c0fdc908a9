"""The DynamoDB adapter: typed (de)serialisation, named transaction items, and AWS error translation.

Every AWS error from DynamoDB passes through `Table._call`, the one place where error codes are read:
- throttling and transaction conflicts are retried with full jitter, then become ThrottledError (503);
- a failed condition becomes ConditionFailed carrying the item as it was (ALL_OLD);
- a transaction cancelled by a condition becomes TransactionCancelled with each reason under its item's
  name, so the service can say *which* condition failed; one cancelled for any other reason (an item over
  400 KB, a collection over its size limit) becomes TransactionRejected, never mistaken for a conflict;
- a key value DynamoDB refuses (empty, or over its size limit: a forged page token) becomes ValidationError
  (400), and so is caught before it is sent: DynamoDB Local does not enforce the sizes, so local mode fails
  as AWS does;
- anything else is re-raised untouched (it is a bug or an outage, and ends as a logged 500).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeAlias

from boto3.dynamodb.conditions import ConditionBase, ConditionExpressionBuilder, Key
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from arca.adapters.faults import aws_code
from arca.domain.errors import ThrottledError, ValidationError

Item = dict[str, Any]
# A condition: built with boto3's condition builders (`Attr(...)`, `&`, `|`, `~`), rendered per request.
Condition: TypeAlias = ConditionBase
_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
        "TransactionConflictException",
        "InternalServerError",
    }
)
# Cancellation reasons that say nothing about our conditions: the same request may simply be retried.
RETRYABLE_REASONS = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "None"})
CONDITION_FAILED = "ConditionalCheckFailed"
# DynamoDB's limits on a key attribute's value, in UTF-8 bytes, for the table's key and its indexes' keys
# (infra/schema.py): a partition key value 1 to 2,048 bytes, a sort key value 1 to 1,024.
MAX_PARTITION_KEY_BYTES = 2048
MAX_SORT_KEY_BYTES = 1024
KEY_LIMITS = {
    "pk": MAX_PARTITION_KEY_BYTES,
    "sk": MAX_SORT_KEY_BYTES,
    "gsi1pk": MAX_PARTITION_KEY_BYTES,
    "gsi1sk": MAX_SORT_KEY_BYTES,
    "gsi2pk": MAX_PARTITION_KEY_BYTES,
    "gsi2sk": MAX_SORT_KEY_BYTES,
}
# How DynamoDB's ValidationException words a key value it refuses (an empty one, or one over its size).
_KEY_REFUSALS = (
    "size of hashkey",
    "size of rangekey",
    "range keys has exceeded",
    "starting key is invalid",
    "empty string",
)


def key_fault(values: Mapping[str, Any]) -> str | None:
    """Why DynamoDB would refuse the key attributes among `values` (None: it would not)."""
    for attribute, limit in KEY_LIMITS.items():
        value = values.get(attribute)
        if not isinstance(value, str):
            continue
        if not value:
            return f"the key attribute {attribute} is empty"
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > limit:
            return f"the key attribute {attribute} is {size} bytes, over DynamoDB's {limit}"
    return None


def check_key(values: Mapping[str, Any]) -> None:
    """Raise ValidationError for key attributes DynamoDB would refuse, before any request is sent."""
    fault = key_fault(values)
    if fault is not None:
        raise ValidationError(f"a key DynamoDB would refuse: {fault}")


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(_to_dynamo(v)) for k, v in item.items()}


def deserialize(item: Mapping[str, Any] | None) -> Item | None:
    if item is None:
        return None
    return {k: _from_dynamo(_deserializer.deserialize(v)) for k, v in item.items()}


def _to_dynamo(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _to_dynamo(v) for k, v in value.items()}
    return value


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, set):
        return {_from_dynamo(v) for v in value}
    return value


class ConditionFailed(Exception):
    """A single-item write's condition did not hold. `item` is the item as it was (None: absent)."""

    def __init__(self, item: Item | None) -> None:
        super().__init__("condition failed")
        self.item = item


@dataclass(frozen=True)
class Reason:
    code: str
    item: Item | None


class TransactionRejected(Exception):
    """DynamoDB refused a transaction for a reason that is not a condition (e.g. ValidationError: an item over
    400 KB; ItemCollectionSizeLimitExceeded). Not the caller's race: it ends as a logged 500 naming the reason."""

    def __init__(self, reasons: dict[str, Reason]) -> None:
        super().__init__("transaction rejected: " + ", ".join(f"{name}: {r.code}" for name, r in reasons.items()))
        self.reasons = reasons


class TransactionCancelled(Exception):
    """A transaction failed on a condition; `reasons` maps each failed item's name to its reason."""

    def __init__(self, reasons: dict[str, Reason]) -> None:
        super().__init__(", ".join(f"{name}: {r.code}" for name, r in reasons.items()))
        self.reasons = reasons

    def failed(self, name: str) -> Reason | None:
        reason = self.reasons.get(name)
        return reason if reason is not None and reason.code == CONDITION_FAILED else None


def expressions(update: Update | None, condition: Condition | None) -> dict[str, Any]:
    """A write's UpdateExpression, ConditionExpression and their placeholders, as one request's parameters.

    The update renders its own placeholders (`#u0`, `:u0`, ...); a builder condition is rendered here by boto3's
    ConditionExpressionBuilder, whose placeholders (`#n0`, `:v0`, ...) are of another shape, so the two never
    clash. An empty update is refused (ValueError): DynamoDB refuses an empty UpdateExpression.
    """
    body: dict[str, Any] = {}
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    if update is not None:
        body["UpdateExpression"], names, values = update.render()
    if condition is not None:
        built = ConditionExpressionBuilder().build_expression(condition)
        body["ConditionExpression"] = built.condition_expression
        names.update(built.attribute_name_placeholders)
        values.update(built.attribute_value_placeholders)
    if names:
        body["ExpressionAttributeNames"] = names
    if values:
        body["ExpressionAttributeValues"] = serialize(values)
    return body


def key_condition(
    partition: tuple[str, str],
    sort_key: str,
    *,
    between: tuple[str, str] | None = None,
    prefix: str | None = None,
    at_least: str | None = None,
) -> Condition:
    """A Query's key condition, built with boto3's `Key`: the partition (`(attribute, value)`) and, at most one
    of them, the sort key `between` two values (inclusive), starting with `prefix` (an empty one bounds
    nothing), or `at_least` a value."""
    attribute, value = partition
    condition: Condition = Key(attribute).eq(value)
    if between is not None:
        condition = condition & Key(sort_key).between(*between)
    elif prefix:
        condition = condition & Key(sort_key).begins_with(prefix)
    elif at_least is not None:
        condition = condition & Key(sort_key).gte(at_least)
    return condition


def key_expressions(condition: Condition, names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A Query's KeyConditionExpression and its placeholders, rendered by boto3's ConditionExpressionBuilder
    (`#n0`, `:v0`, ...), with the projection's own `names` (words such as `#state`, never that shape)."""
    built = ConditionExpressionBuilder().build_expression(condition, is_key_condition=True)
    return {
        "KeyConditionExpression": built.condition_expression,
        "ExpressionAttributeNames": {**built.attribute_name_placeholders, **(names or {})},
        "ExpressionAttributeValues": serialize(built.attribute_value_placeholders),
    }


@dataclass(frozen=True)
class IfAbsent:
    """A value SET only where the attribute is absent (`a = if_not_exists(a, :value)`): a write repeated keeps
    the first one."""

    value: Any


@dataclass(frozen=True)
class Update:
    """An UpdateExpression as typed actions, attribute name -> plain Python value: `set` (a value, or `IfAbsent`),
    `remove` (names), `add` (a number added, or a set's members), `delete` (a set's members taken away), e.g.
    `Update(set={"link": target}, add={"rev": 1})`. It renders its own placeholders (`render`), every attribute
    by name so that no reserved word needs care; a write is extended by `also` (the event feed's `last_event`),
    never by editing text. An attribute is named by one action only (DynamoDB refuses overlapping paths)."""

    set: Mapping[str, Any] = field(default_factory=dict)
    remove: Sequence[str] = ()
    add: Mapping[str, Any] = field(default_factory=dict)
    delete: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.remove, str):
            raise TypeError("remove takes attribute names (a tuple), not one string")
        # Copies, so that the update stays what it was when made whatever its caller does to its mappings.
        object.__setattr__(self, "set", dict(self.set))
        object.__setattr__(self, "remove", tuple(self.remove))
        object.__setattr__(self, "add", dict(self.add))
        object.__setattr__(self, "delete", dict(self.delete))
        named = [*self.set, *self.remove, *self.add, *self.delete]
        twice = sorted({a for a in named if named.count(a) > 1})
        if twice:
            raise ValueError(f"an update names {twice} in more than one action")

    def __bool__(self) -> bool:
        return bool(self.set or self.remove or self.add or self.delete)

    def also(
        self,
        *,
        set: Mapping[str, Any] | None = None,
        remove: Sequence[str] = (),
        add: Mapping[str, Any] | None = None,
        delete: Mapping[str, Any] | None = None,
    ) -> Update:
        """This update with more actions; an attribute it names already is refused (ValueError), never replaced."""
        more = Update(set=set or {}, remove=remove, add=add or {}, delete=delete or {})
        overlap = self._names() & more._names()
        if overlap:
            raise ValueError(f"the update names {sorted(overlap)} already")
        return Update(
            set={**self.set, **more.set},
            remove=(*self.remove, *more.remove),
            add={**self.add, **more.add},
            delete={**self.delete, **more.delete},
        )

    def _names(self) -> frozenset[str]:
        return frozenset((*self.set, *self.remove, *self.add, *self.delete))

    def render(self) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The UpdateExpression, its ExpressionAttributeNames and its (plain Python) ExpressionAttributeValues.

        Names are `#u0`, `#u1`, ... (one per attribute), values `:u0`, `:u1`, ... (one per value): never the shape
        of ConditionExpressionBuilder's `#n0`/`:v0`. Clauses go SET, REMOVE, ADD, DELETE, each in the order given.
        """
        if not self:
            raise ValueError("an update with no action: DynamoDB refuses an empty UpdateExpression")
        names: dict[str, str] = {}
        values: dict[str, Any] = {}

        def name(attribute: str) -> str:
            placeholder = f"#u{len(names)}"
            names[placeholder] = attribute
            return placeholder

        def value(plain: Any) -> str:
            placeholder = f":u{len(values)}"
            values[placeholder] = plain
            return placeholder

        sets = []
        for attribute, given in self.set.items():
            placeholder = name(attribute)
            if isinstance(given, IfAbsent):
                sets.append(f"{placeholder} = if_not_exists({placeholder}, {value(given.value)})")
            else:
                sets.append(f"{placeholder} = {value(given)}")
        removes = [name(a) for a in self.remove]
        adds = [f"{name(a)} {value(v)}" for a, v in self.add.items()]
        deletes = [f"{name(a)} {value(v)}" for a, v in self.delete.items()]
        clauses = (("SET", sets), ("REMOVE", removes), ("ADD", adds), ("DELETE", deletes))
        return " ".join(f"{verb} {', '.join(parts)}" for verb, parts in clauses if parts), names, values


@dataclass
class Write:
    """One named item of a TransactWriteItems call.

    `kind` is Put, Update, Delete or ConditionCheck. `update` (an Update's only) is typed actions rendering their
    own placeholders; `condition` is built with boto3's condition builders (its placeholders are generated when
    the request is built); the name is only ours, used to read cancellation reasons. `compare` names the
    attributes the condition compares with the values read (a compare-and-set: `{"rev": 7}`; None for one that
    must be absent), so a cancellation can say whether what was read moved.
    """

    name: str
    kind: str
    key: Mapping[str, str]
    item: Mapping[str, Any] | None = None
    update: Update | None = None
    condition: Condition | None = None
    compare: dict[str, Any] = field(default_factory=dict)

    def request(self, table_name: str) -> dict[str, Any]:
        body: dict[str, Any] = {"TableName": table_name, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        check_key({**(self.item or {}), **self.key} if self.kind == "Put" else self.key)
        if self.kind == "Put":
            body["Item"] = serialize({**(self.item or {}), **self.key})
        else:
            body["Key"] = serialize(self.key)
        body.update(expressions(self.update, self.condition))
        return {self.kind: body}


@dataclass
class Page:
    items: list[Item]
    last_key: dict[str, str] | None


class Table:
    """One DynamoDB table through an injected low-level client."""

    def __init__(
        self,
        client: Any,
        table_name: str,
        *,
        max_attempts: int = 6,
        base_delay: float = 0.05,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.name = table_name
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self._sleep = sleep
        self._rng = rng or random.Random()

    def _call(self, operation: str, item_names: Sequence[str] = (), **kwargs: Any) -> dict[str, Any]:
        """Run one API call with the retry and translation policy of the module docstring.

        `item_names` names the items of a transaction, in order, for its cancellation reasons.
        """
        for attempt in range(1, self.max_attempts + 1):
            try:
                response: dict[str, Any] = getattr(self.client, operation)(**kwargs)
                return response
            except ClientError as error:
                code = aws_code(error)
                message = str(error.response.get("Error", {}).get("Message", ""))
                if code == "ValidationException" and any(r in message.lower() for r in _KEY_REFUSALS):
                    raise ValidationError(f"a key DynamoDB refused: {message}") from error
                if code == "ConditionalCheckFailedException":
                    raise ConditionFailed(deserialize(error.response.get("Item"))) from None
                if code == "TransactionCanceledException":
                    reasons = error.response.get("CancellationReasons") or []
                    codes = {r.get("Code", "None") for r in reasons}
                    if codes - RETRYABLE_REASONS - {CONDITION_FAILED}:
                        named = self._cancelled(item_names, reasons).reasons
                        raise TransactionRejected(
                            {n: r for n, r in named.items() if r.code not in RETRYABLE_REASONS | {CONDITION_FAILED}}
                        ) from error
                    if CONDITION_FAILED in codes:
                        raise self._cancelled(item_names, reasons) from None
                elif code not in RETRYABLE_CODES:
                    raise
                if attempt == self.max_attempts:
                    raise ThrottledError(
                        f"DynamoDB is busy ({code}); retry later", details={"aws_code": code}
                    ) from error
                # Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter").
                self._sleep(self._rng.uniform(0, self.base_delay * 2**attempt))
        raise AssertionError("unreachable")

    @staticmethod
    def _cancelled(names: Sequence[str], reasons: list[dict[str, Any]]) -> TransactionCancelled:
        named: dict[str, Reason] = {}
        for index, reason in enumerate(reasons):
            code = reason.get("Code", "None")
            if code != "None":
                key = names[index] if index < len(names) else str(index)
                named[key] = Reason(code, deserialize(reason.get("Item")))
        return TransactionCancelled(named)

    def get(self, key: Mapping[str, str], *, consistent: bool = True) -> Item | None:
        check_key(key)
        response = self._call("get_item", TableName=self.name, Key=serialize(key), ConsistentRead=consistent)
        return deserialize(response.get("Item"))

    def query(
        self,
        pk: str,
        *,
        sk_between: tuple[str, str] | None = None,
        sk_prefix: str | None = None,
        sk_from: str | None = None,
        forward: bool = True,
        limit: int | None = None,
        start: Mapping[str, str] | None = None,
        consistent: bool = False,
        projection: str | None = None,
        names: dict[str, str] | None = None,
    ) -> Page:
        """One page of one partition, optionally bounded on the sort key."""
        bounds = sk_between or (sk_prefix or sk_from,)
        check_key({"pk": pk, **(start or {})})
        for bound in bounds:
            if bound:
                check_key({"sk": bound})
        condition = key_condition(("pk", pk), "sk", between=sk_between, prefix=sk_prefix, at_least=sk_from)
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            **key_expressions(condition, names),
            "ScanIndexForward": forward,
            "ConsistentRead": consistent,
        }
        if limit is not None:
            kwargs["Limit"] = limit
        if start is not None:
            kwargs["ExclusiveStartKey"] = serialize(start)
        if projection is not None:
            kwargs["ProjectionExpression"] = projection
        response = self._call("query", **kwargs)
        last = deserialize(response.get("LastEvaluatedKey"))
        return Page(
            items=[deserialize(i) or {} for i in response.get("Items", [])],
            last_key={"pk": last["pk"], "sk": last["sk"]} if last else None,
        )

    def query_index(
        self,
        index: str,
        keys: tuple[str, str],
        pk: str,
        *,
        sk_between: tuple[str, str] | None = None,
        sk_prefix: str | None = None,
        forward: bool = True,
        limit: int | None = None,
        start: Mapping[str, str] | None = None,
    ) -> Page:
        """One page of a global secondary index (`keys`: its hash and range attribute), eventually consistent.

        The page's `last_key` holds the table's key and the index's, as DynamoDB needs them to go on.
        """
        hash_key, range_key = keys
        check_key({hash_key: pk, **(start or {})})
        for bound in sk_between or (sk_prefix,):
            if bound:
                check_key({range_key: bound})
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "IndexName": index,
            **key_expressions(key_condition((hash_key, pk), range_key, between=sk_between, prefix=sk_prefix)),
            "ScanIndexForward": forward,
        }
        if limit is not None:
            kwargs["Limit"] = limit
        if start is not None:
            kwargs["ExclusiveStartKey"] = serialize(start)
        response = self._call("query", **kwargs)
        last = deserialize(response.get("LastEvaluatedKey"))
        return Page(
            items=[deserialize(i) or {} for i in response.get("Items", [])],
            last_key={k: str(last[k]) for k in ("pk", "sk", hash_key, range_key)} if last else None,
        )

    def query_all(self, pk: str, **kwargs: Any) -> Iterator[Item]:
        """Every item of a partition (or sort-key range), page after page."""
        start = None
        while True:
            page = self.query(pk, start=start, **kwargs)
            yield from page.items
            if page.last_key is None:
                return
            start = page.last_key

    def update(self, key: Mapping[str, str], update: Update, *, condition: Condition | None = None) -> Item:
        """UpdateItem returning the new item; raises ConditionFailed with the old one. `condition` as Write's."""
        check_key(key)
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "Key": serialize(key),
            "ReturnValues": "ALL_NEW",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **expressions(update, condition),
        }
        return deserialize(self._call("update_item", **kwargs).get("Attributes")) or {}

    def transact(self, writes: Sequence[Write]) -> None:
        """One TransactWriteItems: all of `writes` or none. Raises TransactionCancelled by item name."""
        names = [w.name for w in writes]
        if len(set(names)) != len(names):
            raise ValueError(f"transaction item names must be unique: {names}")
        self._call("transact_write_items", names, TransactItems=[w.request(self.name) for w in writes])

    def batch_get(self, keys: Sequence[Mapping[str, str]], *, projection: Sequence[str]) -> list[Item]:
        """The items at `keys` (those that exist, in no particular order), strongly consistent, read 100 at a
        time (BatchGetItem's limit) with only the `projection` attributes (and the key); unprocessed keys are
        re-sent after a full-jitter pause, ThrottledError after `max_attempts` rounds."""
        names = {f"#a{i}": a for i, a in enumerate(("pk", "sk", *projection))}
        found: list[Item] = []
        for key in keys:
            check_key(key)
        for start in range(0, len(keys), 100):
            pending: dict[str, Any] = {
                self.name: {
                    "Keys": [serialize(k) for k in keys[start : start + 100]],
                    "ConsistentRead": True,
                    "ProjectionExpression": ", ".join(names),
                    "ExpressionAttributeNames": names,
                }
            }
            for response in self._until_processed("batch_get_item", pending, "UnprocessedKeys", "keys"):
                found += [deserialize(i) or {} for i in response.get("Responses", {}).get(self.name, [])]
        return found

    def batch_delete(self, keys: Sequence[Mapping[str, str]]) -> None:
        """Delete items 25 at a time (BatchWriteItem's limit), re-sending unprocessed ones.

        Unprocessed items mean the partition is busy: they are re-sent after a full-jitter pause, and
        after `max_attempts` rounds still unprocessed, ThrottledError (503; the delete is safe to repeat).
        """
        for key in keys:
            check_key(key)
        for start in range(0, len(keys), 25):
            pending: dict[str, Any] = {
                self.name: [{"DeleteRequest": {"Key": serialize(k)}} for k in keys[start : start + 25]]
            }
            for _ in self._until_processed("batch_write_item", pending, "UnprocessedItems", "items"):
                pass

    def _until_processed(
        self, operation: str, pending: dict[str, Any], unprocessed: str, what: str
    ) -> Iterator[dict[str, Any]]:
        """Send one batch request, and again with what DynamoDB left `unprocessed` after a full-jitter pause,
        yielding each response; ThrottledError when some is still left after `max_attempts` rounds."""
        for attempt in range(1, self.max_attempts + 1):
            response = self._call(operation, RequestItems=pending)
            yield response
            pending = response.get(unprocessed) or {}
            if not pending:
                return
            if attempt == self.max_attempts:
                raise ThrottledError(f"DynamoDB left {what} unprocessed; retry later")
            self._sleep(self._rng.uniform(0, self.base_delay * 2**attempt))
