"""The Hugging Face Hub's read side under `/hf/` (resolve function): a repo is an artifact name of one or two
segments, a file's path has any number. Placeholders until the feature lands: each answers 501 and is left out of
the document."""

from arca.api.routing import Router
from arca.domain.errors import NotYetImplementedError

router = Router()

_LATER = "the Hugging Face API is not served yet"


@router.route("/hf/api/models/<repo>/revision/<revision>", "GET", stub=True)
def hf_model_info(repo: str, revision: str) -> None:
    """A model's info at a revision (`sha`, `siblings`)."""
    raise NotYetImplementedError(_LATER)


@router.route("/hf/api/models/<repo>/tree/<revision>/<path>", "GET", stub=True)
def hf_tree(repo: str, revision: str, path: str) -> None:
    """The files under a path at a revision."""
    raise NotYetImplementedError(_LATER)


@router.route("/hf/<repo>/resolve/<revision>/<filename>", "GET", stub=True)
def hf_get_file(repo: str, revision: str, filename: str) -> None:
    """A redirect to one file."""
    raise NotYetImplementedError(_LATER)


@router.route("/hf/<repo>/resolve/<revision>/<filename>", "HEAD", stub=True)
def hf_head_file(repo: str, revision: str, filename: str) -> None:
    """A file's headers (commit, ETag, size)."""
    raise NotYetImplementedError(_LATER)
