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
ATTRIBUTE_DEFINITIONS = [
    {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
    {"AttributeName": SORT_KEY, "AttributeType": "S"},
]

# The table's stream feeds the `events` function: new images carry the event items, old images tell a purge's
# tombstone (`purged` newly set) from a later write of it.
STREAM_VIEW_TYPE = "NEW_AND_OLD_IMAGES"


def create_table_request(table_name: str) -> dict[str, object]:
    """The CreateTable request for a local copy of the stack's table (on-demand, like the stack)."""
    return {
        "TableName": table_name,
        "KeySchema": KEY_SCHEMA,
        "AttributeDefinitions": ATTRIBUTE_DEFINITIONS,
        "BillingMode": "PAY_PER_REQUEST",
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": STREAM_VIEW_TYPE},
    }
