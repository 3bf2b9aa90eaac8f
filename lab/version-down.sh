#!/usr/bin/env bash
# version-down.sh -- stop what version-up.sh 24|26 started, and only that: each daemon by the
# pid in its pid file after checking /proc/PID/comm (the host lab runs the same program
# names: never kill by name), then unmount the root's mounts.  The root and its cached
# tarball stay, so the next version-up.sh is fast.
#
#   version-down.sh 24|26      (no argument: both)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$HERE/lib.sh"  # alive PIDFILE COMM

down() {
  local V=$1 STATE=/tmp/slurmv$1 ROOT=/tmp/slurmv$1-root
  local RUN=$STATE/run
  say() { printf '[version-down %s %s] %s\n' "$V" "$(date +%T)" "$*" >&2; }
  stop() {
    local spec f c p i pids=() names=()
    for spec in "$@"; do
      f=${spec% *}; c=${spec##* }
      # Debian's slurmctld is an alternatives link: a re-exec'ed one runs as slurmctld-wlm
      if alive "$f" "$c" || alive "$f" "$c-wlm"; then
        p=$(cat "$f"); kill -TERM "$p" 2>/dev/null; pids+=("$p"); names+=("$(cat "/proc/$p/comm")")
      fi
      rm -f "$f"
    done
    [ ${#pids[@]} -gt 0 ] || return 0
    for ((i = 0; i < 80; i++)); do
      local left=0
      for p in "${pids[@]}"; do [ -d "/proc/$p" ] && left=1; done
      [ $left = 0 ] && break; sleep 0.25
    done
    for i in "${!pids[@]}"; do
      p=${pids[$i]}
      if [ -d "/proc/$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "${names[$i]}" ]; then
        say "${names[$i]} ($p) ignored SIGTERM: SIGKILL"; kill -KILL "$p" 2>/dev/null
      fi
      say "stopped ${names[$i]} ($p)"
    done
  }
  if { alive "$RUN/slurmctld.pid" slurmctld || alive "$RUN/slurmctld.pid" slurmctld-wlm; } &&
    [ -x "$STATE/bin/squeue" ]; then
    jobs=$("$STATE/bin/squeue" -h -t PD,R,CG,S,CF -o %i 2>/dev/null | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
      say "cancelling jobs: $jobs"
      # shellcheck disable=SC2086
      "$STATE/bin/scancel" $jobs 2>/dev/null
      for ((i = 0; i < 60; i++)); do
        [ -z "$("$STATE/bin/squeue" -h -t R,CG -o %i 2>/dev/null)" ] && break; sleep 0.5
      done
    fi
  fi
  stop "$RUN/sshd.pid sshd" "$RUN/slurmrestd.pid slurmrestd"
  local specs=() f
  for f in "$RUN"/slurmd-*.pid; do [ -e "$f" ] && specs+=("$f slurmd"); done
  [ ${#specs[@]} -gt 0 ] && stop "${specs[@]}"
  stop "$RUN/slurmctld.pid slurmctld"
  stop "$RUN/slurmdbd.pid slurmdbd"
  stop "$ROOT/run/munge/munged.pid munged"
  local m
  for m in "$ROOT/run/mysqld" "$ROOT$STATE" "$ROOT/sys/fs/cgroup" "$ROOT/sys" "$ROOT/dev" "$ROOT/proc"; do
    mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
  done
  rm -f "$STATE/env.sh" "$STATE/ssh/env.sh" "$STATE/accounting"
  return 0
}

case "${1:-all}" in
  24 | 26) down "$1" ;;
  all) down 24; down 26 ;;
  *) echo "usage: $0 [24|26]" >&2; exit 2 ;;
esac
exit 0
