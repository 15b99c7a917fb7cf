#!/usr/bin/env bash
# A process must hold ONE copy of the preemption core: its signal slots, SIGINT/SIGTERM handlers and
# control-thread registry are process-global, and two copies (one linked statically into a program,
# one inside libgpreempt.so) install competing handlers and lose each other's slots.
# For each program given, counts the definitions of the core's signal-slot registry in the program
# and in every shared library the dynamic loader would load for it: exactly one is allowed.
# Usage: check_core_linked_once.sh <program>...
set -euo pipefail
registry=signals.cpp:g_slots  # for the message; the symbol is the demangled name below
fail=0
for prog in "$@"; do
  count=0
  where=()
  # ldd lists what the loader would map, in load order; the program itself comes first.
  for obj in "$prog" $(ldd "$prog" | awk '$3 ~ /^\// {print $3}'); do
    n=$(nm -C "$obj" 2>/dev/null | grep -c 'gpreempt::preempt::(anonymous namespace)::g_slots$' || true)
    if [ "$n" -gt 0 ]; then count=$((count + n)); where+=("$obj"); fi
  done
  if [ "$count" -ne 1 ]; then
    echo "$prog: $count copies of the core's signal-slot registry ($registry) in: ${where[*]:-nothing}" >&2
    fail=1
  else
    echo "$prog: one core (${where[0]})"
  fi
done
exit $fail
