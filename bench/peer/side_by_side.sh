#!/usr/bin/env bash
# The cockpit and turm side by side on the peer site's fake Slurm, in one run:
#   bench/peer/side_by_side.sh            # N = 10000 and 100000, 60 s each, turm then cockpit
#   NS="10000" DURATION=30 bench/peer/side_by_side.sh
# Each tool runs alone in a detached tmux pane (peerbench.py run); the pairs alternate so both
# see the same machine load. FAKE_SLURM_EPOCH fixes the queue's submit times (a real
# cluster's do not move; the shared harness's fake slides them with the clock, so every row
# changes between polls: STILL=0 measures that); FAKE_SLURM_CHURN (CHURN, default 0.01) moves
# 1 % of the queue a minute, as a real site's flow does. Then `peerbench.py report` writes RESULTS.md
# here and bench/peer/poll_cost.py measures a nothing-changed poll against reading squeue.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${PEER_VENV:-/tmp/peer-venv}
[ -x "$VENV/bin/turm" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q turm==0.17.0; }
# the console script next to the interpreter, as a venv has it: a version manager's shim
# (pyenv's `cockpit` is a bash script that runs pyenv) would add its own start-up to the
# cockpit's first rows
PYBIN=$(python3 -c 'import os, sys; print(os.path.dirname(sys.executable))')
if [ -z "${COCKPIT:-}" ]; then
  COCKPIT=cockpit
  [ -x "$PYBIN/cockpit" ] && COCKPIT="$PYBIN/cockpit"
fi
CONF=$(mktemp /tmp/cockpit-peer-XXXXXX.toml)
# a fresh user's state (the incident store, acks): not what other runs left in ~/.local/state
export XDG_STATE_HOME=$(mktemp -d /tmp/cockpit-peer-state-XXXXXX)
trap 'rm -rf "$CONF" "$XDG_STATE_HOME"' EXIT
printf '[clusters.fake]\ntransport = "local"\ninterval = 5\n' > "$CONF"
if [ "${STILL:-1}" = 1 ]; then export FAKE_SLURM_EPOCH=$(date +%s); fi
# a real site's flow (#33): 1 % of the queue leaves per minute and as many jobs arrive
# (CHURN=0 for the still queue of rounds 5-9)
export FAKE_SLURM_CHURN=${CHURN:-0.01}
export PEER_VERSION_TURM="$("$VENV/bin/turm" --version)"
for n in ${NS:-10000 100000}; do
  N=$n LABEL="turm" PEER_VERSION="$PEER_VERSION_TURM" OUT="$HERE/out/turm-$n" \
    "$HERE/run_peer.sh" "$VENV/bin/turm"
  N=$n LABEL="cockpit interval 5" PEER_VERSION="" OUT="$HERE/out/cockpit-$n" \
    "$HERE/run_peer.sh" $COCKPIT --config "$CONF"
  # the floor under any Python + Textual TUI: squeue's lines in one Static, nothing parsed
  N=$n DURATION=${FLOOR_DURATION:-20} LABEL="textual floor" PEER_VERSION="" \
    OUT="$HERE/out/floor-$n" "$HERE/run_peer.sh" "$PYBIN/python3" "$HERE/textual_floor.py"
done
python3 "$HERE/peerbench.py" report
for n in ${NS:-10000 100000}; do
  python3 "$HERE/poll_cost.py" --jobs "$n" --situation still --json
  python3 "$HERE/poll_cost.py" --jobs "$n" --situation churn --json
done
