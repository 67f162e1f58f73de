#!/usr/bin/env bash
# Developer build without pip: compiles pairperm._core into python/pairperm/ so that
# `PYTHONPATH=python pytest` runs against this checkout. (Users and CI use `pip install .`.)
set -euo pipefail
cd "$(dirname "$0")"
cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -Dpybind11_DIR="$(python -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python)" >/dev/null
cmake --build build/dev -j2
cp build/dev/_core*.so python/pairperm/
