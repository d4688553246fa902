#!/bin/sh
# A ptxas wrapper for the tests: appends its arguments to $WRAP_LOG, then
# runs the ptxas $WRAP_PTXAS names. With WRAP_OLD=1 it acts as a ptxas from
# before --split-compile: its --help has no such option, and it refuses it.
echo "$@" >> "$WRAP_LOG"
if [ "$WRAP_OLD" = 1 ]; then
  if [ "$1" = --help ]; then
    "$WRAP_PTXAS" --help | grep -v -e --split-compile
    exit 0
  fi
  for arg in "$@"; do
    if [ "$arg" = --split-compile ]; then
      echo "ptxas fatal   : Unknown option '--split-compile'" >&2
      exit 1
    fi
  done
fi
exec "$WRAP_PTXAS" "$@"
