"""The table and the bucket: every item and every blob of the registry, and how the service stack finds them."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_ssm as ssm
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from infra.schema import ATTRIBUTE_DEFINITIONS, GLOBAL_SECONDARY_INDEXES, PARTITION_KEY, SORT_KEY, STREAM_VIEW_TYPE

_ATTRIBUTE_TYPES = {
    "S": dynamodb.AttributeType.STRING,
    "N": dynamodb.AttributeType.NUMBER,
    "B": dynamodb.AttributeType.BINARY,
}


def _key(name: str) -> dynamodb.Attribute:
    """A key attribute typed as infra/schema.py declares it, so the local copies and the stack cannot drift."""
    declared = next(d["AttributeType"] for d in ATTRIBUTE_DEFINITIONS if d["AttributeName"] == name)
    return dynamodb.Attribute(name=name, type=_ATTRIBUTE_TYPES[declared])


# The table's point-in-time recovery window: deleted or replaced bytes stay as long as the rows can come back.
NONCURRENT_VERSION_DAYS = 35
# An upload carries this tag (signed into its presigned PUT) until it is published; after a week an upload
# nobody published is abandoned. The key, value and days are those of the functions' S3 adapter, which never
# publishes an upload old enough for this rule and removes the tag of young ones before referencing them.
UPLOAD_TAG = ("arca:state", "uploaded")
UNPUBLISHED_UPLOAD_DAYS = 7


def _lifecycle_rules(retain: bool) -> list[s3.LifecycleRule]:
    rules = [
        # Clients upload straight to S3; an abandoned multipart upload would be billed forever. A week, as an
        # unpublished upload: a large upload may be resumed for that long (the functions hand out no URL for a
        # session older than six days).
        s3.LifecycleRule(
            id="AbortIncompleteMultipartUploads",
            abort_incomplete_multipart_upload_after=Duration.days(UNPUBLISHED_UPLOAD_DAYS),
        ),
        s3.LifecycleRule(
            id="ExpireUnpublishedUploads",
            tag_filters=dict([UPLOAD_TAG]),
            expiration=Duration.days(UNPUBLISHED_UPLOAD_DAYS),
        ),
    ]
    if retain:
        rules.append(
            s3.LifecycleRule(
                id="ExpireNoncurrentVersions",
                noncurrent_version_expiration=Duration.days(NONCURRENT_VERSION_DAYS),
                # Once its noncurrent versions are gone, a delete marker is the only thing left: drop it too.
                expired_object_delete_marker=True,
            )
        )
    return rules


class Storage(Construct):
    """One DynamoDB table (key schema from infra/schema.py) and one private, content-addressed S3 bucket.

    `retain` keeps both (and guards the table with deletion protection) when the stack is deleted; it is off
    only for throw-away stages. A bucket that is not retained must be emptied before the stack can be deleted:
    auto-delete would add a custom-resource Lambda for a convenience only dev needs.
    """

    def __init__(self, scope: Construct, construct_id: str, *, retain: bool) -> None:
        super().__init__(scope, construct_id)
        removal_policy = RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY

        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_key(PARTITION_KEY),
            sort_key=_key(SORT_KEY),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            # Idempotency records carry `ttl` (epoch seconds, 24 h on); the code also ignores expired ones.
            time_to_live_attribute="ttl",
            stream=dynamodb.StreamViewType(STREAM_VIEW_TYPE),
            deletion_protection=retain,
            removal_policy=removal_policy,
        )
        for index in GLOBAL_SECONDARY_INDEXES:
            hash_key, range_key = (k["AttributeName"] for k in index["KeySchema"])
            self.table.add_global_secondary_index(
                index_name=index["IndexName"],
                partition_key=_key(hash_key),
                sort_key=_key(range_key),
                projection_type=dynamodb.ProjectionType[index["Projection"]["ProjectionType"]],
            )

        self.bucket = s3.Bucket(
            self,
            "Bucket",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            enforce_ssl=True,
            encryption=s3.BucketEncryption.S3_MANAGED,
            # Retained stages keep every object's earlier versions for the point-in-time recovery window of the
            # table: a purge, a bad deploy or a compromised role that deletes bytes leaves them recoverable, as
            # PITR brings back the rows that point at them. A disposable stage has nothing worth keeping.
            versioned=retain,
            lifecycle_rules=_lifecycle_rules(retain),
            removal_policy=removal_policy,
        )
        # The stage's signing key (docs/decisions.md): versions are signed with it, so it lives and goes with the
        # data. Asymmetric keys cannot rotate automatically: a new key is a new stage key that clients re-pin.
        self.signing_key = kms.Key(
            self,
            "SigningKey",
            key_spec=kms.KeySpec.ECC_NIST_P256,
            key_usage=kms.KeyUsage.SIGN_VERIFY,
            description="Arca: signs the manifest of every version published (ECDSA SHA-256)",
            removal_policy=removal_policy,
        )
        NagSuppressions.add_resource_suppressions(
            self.bucket,
            [
                NagPackSuppression(
                    id="AwsSolutions-S1",
                    reason="Access goes through presigned URLs issued by the IAM-authorised API, which logs every "
                    "request; S3 server access logs would need a second bucket for little extra insight.",
                )
            ],
        )


@dataclass(frozen=True)
class StorageParameters:
    """The SSM parameter names through which the storage stack hands its resources to the service stack.

    The service stack reads them as CloudFormation parameters of type `AWS::SSM::Parameter::Value<String>`,
    resolved on every deploy: no CloudFormation export ties the two stacks together, so the storage stack can
    be updated whatever the service stack uses. A resource the service needs later (a stream ARN, an event
    bus name) gets a field here, which changes the storage stack once, on purpose.
    """

    table_name: str
    bucket_name: str
    stream_arn: str
    signing_key_arn: str

    @classmethod
    def for_stage(cls, stage: str) -> StorageParameters:
        prefix = f"/arca/{stage}/storage"
        return cls(
            table_name=f"{prefix}/table-name",
            bucket_name=f"{prefix}/bucket-name",
            stream_arn=f"{prefix}/stream-arn",
            signing_key_arn=f"{prefix}/signing-key-arn",
        )

    def publish(self, scope: Construct, storage: Storage) -> None:
        """Write the storage resources' names into the parameters (the only physical names Arca chooses)."""
        for construct_id, name, value in (
            ("TableNameParameter", self.table_name, storage.table.table_name),
            ("BucketNameParameter", self.bucket_name, storage.bucket.bucket_name),
            ("StreamArnParameter", self.stream_arn, str(storage.table.table_stream_arn)),
            ("SigningKeyArnParameter", self.signing_key_arn, storage.signing_key.key_arn),
        ):
            ssm.StringParameter(
                scope,
                construct_id,
                parameter_name=name,
                string_value=value,
                description="Read by the Arca service stack at deploy time",
            )
