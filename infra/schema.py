"""The table's key schema: one definition for the CDK table, the local server and the tests.

Plain data, no CDK imports, so local/ and tests/ can create an identical table in DynamoDB Local or
moto; tests/infra asserts that the synthesized template says the same.
"""

PARTITION_KEY = "pk"
SORT_KEY = "sk"

KEY_SCHEMA = [
    {"AttributeName": PARTITION_KEY, "KeyType": "HASH"},
    {"AttributeName": SORT_KEY, "KeyType": "RANGE"},
]
# Search (decision 32 of docs/decisions.md): `gsi1` answers "which versions hold this content / this tag" and
# "which artifacts carry this tag" across the registry; `gsi2` orders an artifact's versions by creation time.
# Both are sparse: only version items and tag rows carry their attributes.
SEARCH_INDEX = "gsi1"
TIME_INDEX = "gsi2"
INDEXES = {SEARCH_INDEX: ("gsi1pk", "gsi1sk"), TIME_INDEX: ("gsi2pk", "gsi2sk")}
GLOBAL_SECONDARY_INDEXES = [
    {
        "IndexName": index,
        "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"}, {"AttributeName": range_key, "KeyType": "RANGE"}],
        # ALL: a page of hits is answered from the index alone, one Query, no GetItem per hit.
        "Projection": {"ProjectionType": "ALL"},
    }
    for index, (hash_key, range_key) in INDEXES.items()
]
ATTRIBUTE_DEFINITIONS = [
    {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
    {"AttributeName": SORT_KEY, "AttributeType": "S"},
    *({"AttributeName": a, "AttributeType": "S"} for pair in INDEXES.values() for a in pair),
]

# The table's stream feeds the `events` function: new images carry the event items, old images tell a purge's
# tombstone (`purged` newly set) from a later write of it.
STREAM_VIEW_TYPE = "NEW_AND_OLD_IMAGES"


def create_table_request(table_name: str, *, stream: bool = True) -> dict[str, object]:
    """The CreateTable request for a local copy of the stack's table (on-demand, like the stack).

    `stream=False` leaves the stream out, for in-process moto where nothing reads it: moto deep-copies a table,
    its stream records included, for each item of every transaction (to roll back), so a stream makes each
    transaction slower the more writes came before it.
    """
    request: dict[str, object] = {
        "TableName": table_name,
        "KeySchema": KEY_SCHEMA,
        "AttributeDefinitions": ATTRIBUTE_DEFINITIONS,
        "GlobalSecondaryIndexes": GLOBAL_SECONDARY_INDEXES,
        "BillingMode": "PAY_PER_REQUEST",
    }
    if stream:
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": STREAM_VIEW_TYPE}
    return request
