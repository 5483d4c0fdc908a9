"""Registry-wide search of versions (resolve function)."""

from arca.api.dependencies import SearchingService
from arca.api.params import Limit, NextToken, Sha256Filter, TagFilter, answers
from arca.api.routing import Router
from arca.domain.entities import HitPage

router = Router()


@router.get("/versions", responses=answers(200, 400, 503), tags=["reads"])
def search_versions(
    searching: SearchingService,
    sha256: Sha256Filter = None,
    tag: TagFilter = None,
    limit: Limit = 100,
    next_token: NextToken = None,
) -> HitPage:
    """Registry-wide search: every version holding the content `sha256`, or the tag (one of the two)."""
    return searching.search_versions(sha256=sha256, tags=tag, limit=limit, token=next_token)
