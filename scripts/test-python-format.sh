#!/usr/bin/env bash
# Placeholder replaced by the log-format work: runs the docs/FORMAT.md Python example.
echo "python format example: not yet present"
