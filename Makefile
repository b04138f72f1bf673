# The two commands of the README: `make demo` and `make test`.
# Both install what is missing first (scripts/install-deps.sh).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
# Build outside the clone so later clones on this machine reuse the build.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/underlay/target

.PHONY: deps demo test build bench lint
deps:
	@scripts/install-deps.sh

build: deps
	cargo build --release

demo: build
	$(CARGO_TARGET_DIR)/release/underlay demo

test: deps
	scripts/python-venv.sh
	cargo test --workspace --all-targets
	cargo test --workspace --doc
	scripts/test-python-format.sh
	scripts/test-python-sdk.sh
	scripts/test-cpp-sdk.sh

lint: deps
	cargo fmt --all -- --check
	scripts/import-graph
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

bench: deps
	cargo bench --workspace
