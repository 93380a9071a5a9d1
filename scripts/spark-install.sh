#!/usr/bin/env bash
# Installs the pinned pyspark (a complete Spark: its jars, bin/spark-submit and the
# Spark Connect server) into .venv/, where `--engine spark` and the Spark tests find it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYSPARK_VERSION=4.1.4   # also in src/spark/server.ts (PINNED_PYSPARK); runs on Java 17
if [ -x .venv/bin/python ] && .venv/bin/python -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$PYSPARK_VERSION')" 2>/dev/null; then
  echo "pyspark $PYSPARK_VERSION already in .venv"
  exit 0
fi
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check "pyspark==$PYSPARK_VERSION"
echo "installed pyspark $PYSPARK_VERSION into .venv"
