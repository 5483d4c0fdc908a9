"""The bodies that publish content or point LATEST at it: a blob (`sha256`, `size`) or a tree of files (`files`
inline, or `tree` by reference to its uploaded manifest, arca.domain.trees)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator, model_validator

from arca.domain.errors import ValidationError
from arca.domain.models import Content, ContentType, MetadataKey, Sha256, metadata_fits
from arca.domain.trees import TreeContent, TreeFiles


class PublishBody(BaseModel):
    """`POST …/versions` (and the same content for `PUT …/latest`, `LatestBody`): an empty body snapshots LATEST;
    content sets LATEST and publishes it in one step. Content is one of: a blob (`sha256` and `size`), a tree given
    inline (`files`), or a tree by reference (`tree`, the sha256 of its uploaded canonical tree manifest).

    A tree's `content_type` is always TREE_MEDIA_TYPE (decision 95): one given with `files` or `tree` is accepted and
    not used, so a body written for a blob works unchanged for a tree.
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    sha256: Sha256 | None = None
    size: Annotated[StrictInt, Field(ge=0)] | None = None
    files: TreeFiles | None = None
    tree: Annotated[Sha256, Field(description="sha256 of an uploaded canonical tree manifest")] | None = None
    file_types: (
        Annotated[
            Sha256,
            Field(
                description='with `tree`: sha256 of an uploaded `{"content_types": {path: type}}`, the types its '
                "files are served as"
            ),
        ]
        | None
    ) = None
    content_type: ContentType | None = None
    metadata: dict[MetadataKey, StrictStr] | None = None
    force: StrictBool = False

    _metadata_fits = field_validator("metadata")(metadata_fits)

    @model_validator(mode="after")
    def _content_is_whole(self) -> PublishBody:
        # Raised as the registry's own error (pydantic passes it through) so that it names its field.
        given = [f for f in ("sha256", "files", "tree") if getattr(self, f) is not None]
        if len(given) > 1:
            raise ValidationError(
                f"{given[1]}: give one of sha256 (a blob), files or tree (a tree), not {' and '.join(given)}",
                field=given[1],
            )
        if self.file_types is not None and given != ["tree"]:
            raise ValidationError(
                "file_types: is given with tree (a tree by reference); with files, each file's content_type",
                field="file_types",
            )
        if given and given[0] != "sha256" and self.size is not None:
            raise ValidationError(
                f"size: is a blob's; a tree's size is the sum of its files' (not given with {given[0]})", field="size"
            )
        if not given and self.size is not None:
            raise ValidationError("sha256: is required with size (give both to publish content)", field="sha256")
        if given == ["sha256"] and self.size is None:
            raise ValidationError(
                "size: is required with sha256 (give both to publish content, neither to publish LATEST)", field="size"
            )
        if not given and (self.content_type is not None or self.metadata is not None):
            raise ValidationError("sha256: is required with content_type or metadata", field="sha256")
        return self

    def tree_content(self) -> TreeContent | None:
        """The tree to publish (None: a blob, or a snapshot of LATEST)."""
        if self.files is None and self.tree is None:
            return None
        return TreeContent(files=self.files, tree=self.tree, file_types=self.file_types, metadata=self.metadata or {})

    def content(self) -> Content | None:
        """The blob to publish (None: a tree, or a snapshot of LATEST)."""
        if self.sha256 is None:
            return None
        return Content.model_validate(
            self.model_dump(include={"sha256", "size", "content_type", "metadata"}, exclude_none=True)
        )


class LatestBody(PublishBody):
    """`PUT …/latest`: a blob (`sha256`, `size`) or a tree (`files` or `tree`); `force` has no meaning here."""

    @model_validator(mode="after")
    def _some_content(self) -> LatestBody:
        if self.sha256 is None and self.files is None and self.tree is None:
            raise ValidationError("sha256: is required (or files, or tree, for a tree)", field="sha256")
        if self.force:
            raise ValidationError("force: is a publish's field, not LATEST's", field="force")
        return self
