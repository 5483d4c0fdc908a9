"""What every caller may ask whatever its grants (resolve function): liveness and the stage's signing key."""

from arca.api.dependencies import SignerService
from arca.api.params import answers
from arca.api.routing import Router
from arca.api.schemas import Health, SigningKey
from arca.domain.errors import NotFoundError

router = Router()


@router.get("/health", responses=answers(200), tags=["reads"])
def health() -> Health:
    """Liveness."""
    return Health()


@router.get("/signing-key", responses=answers(200, 503), tags=["reads"])
def signing_key(signer: SignerService) -> SigningKey:
    """The stage's public key: version and resolve answers carry a `manifest` and its `signature` by this key."""
    if signer is None:
        raise NotFoundError("this stage has no signing key")
    return SigningKey(public_key_pem=signer.public_key_pem())
