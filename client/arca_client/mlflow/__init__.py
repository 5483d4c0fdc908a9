"""MLflow's model registry over Arca: `pip install 'arca-client[mlflow]'`, then
`mlflow.set_registry_uri("arca+http://127.0.0.1:3000")` (or `arca+https://…` for a deployed API, signed with SigV4 as
the CLI signs).

MLflow finds the registry store (`store.ArcaRegistryStore`) and the artifact repository of a version's files
(`artifacts.ArcaArtifactRepository`) through its plugin entry points `mlflow.model_registry_store` and
`mlflow.artifact_repository`, for the schemes `arca+http` and `arca+https`. This package imports MLflow: it is
never imported by the CLI or the SDK.
"""
