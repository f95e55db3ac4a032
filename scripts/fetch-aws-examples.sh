#!/usr/bin/env bash
# Fetches the two AWS hyperparameter-tuning notebooks that compat.aws_notebooks runs
# (tests/compat/aws_notebooks_test.py) from github.com/aws/amazon-sagemaker-examples, into DIR
# (default: $AMT_AWS_EXAMPLES, else ./amazon-sagemaker-examples), and prints the line to export.
# They are AWS's (Apache-2.0) and are not part of this repository; this needs the network.
#
#   scripts/fetch-aws-examples.sh ~/amazon-sagemaker-examples
#   export AMT_AWS_EXAMPLES=~/amazon-sagemaker-examples   # then: ctest -R compat.aws_notebooks
#
# A shallow, sparse checkout of one commit (the last with both notebooks in
# hyperparameter_tuning/; the direct-marketing one was removed from the repository after it):
#   hyperparameter_tuning/xgboost_direct_marketing/
#       hpo_xgboost_direct_marketing_sagemaker_python_sdk.ipynb
#   hyperparameter_tuning/pytorch_mnist/hpo_pytorch_mnist.ipynb and mnist.py
# Without git, or when the fetch fails, the three files are downloaded one by one with curl.
set -euo pipefail

DEST=${1:-${AMT_AWS_EXAMPLES:-amazon-sagemaker-examples}}
REPO=${AMT_AWS_EXAMPLES_REPO:-https://github.com/aws/amazon-sagemaker-examples.git}
COMMIT=c4da8588e467aaeb33330c00d60d098c1055b07c
FOLDERS=(hyperparameter_tuning/xgboost_direct_marketing hyperparameter_tuning/pytorch_mnist)
FILES=("${FOLDERS[0]}/hpo_xgboost_direct_marketing_sagemaker_python_sdk.ipynb"
       "${FOLDERS[1]}/hpo_pytorch_mnist.ipynb" "${FOLDERS[1]}/mnist.py")

with_git() {
  command -v git > /dev/null || return 1
  if [ ! -d "$DEST/.git" ]; then
    git init -q "$DEST"
    git -C "$DEST" remote add origin "$REPO"
  fi
  git -C "$DEST" sparse-checkout set "${FOLDERS[@]}"
  git -C "$DEST" fetch -q --depth 1 --filter=blob:none origin "$COMMIT"
  git -C "$DEST" -c advice.detachedHead=false checkout -q FETCH_HEAD
}

with_curl() {
  local base=https://raw.githubusercontent.com/aws/amazon-sagemaker-examples/$COMMIT
  for file in "${FILES[@]}"; do
    mkdir -p "$DEST/$(dirname "$file")"
    curl -fsSL -o "$DEST/$file" "$base/$file"
  done
}

if ! with_git; then
  echo "git could not fetch $COMMIT from $REPO; downloading the files with curl" >&2
  with_curl
fi
for file in "${FILES[@]}"; do
  [ -f "$DEST/$file" ] || { echo "missing: $DEST/$file" >&2; exit 1; }
done
echo "export AMT_AWS_EXAMPLES=$(cd "$DEST" && pwd)"
