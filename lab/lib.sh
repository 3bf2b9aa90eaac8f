# lib.sh -- helpers sourced by slurm-up.sh and slurm-down.sh (not run on its own).

# alive PIDFILE COMM -> true when the pid in PIDFILE runs a process named COMM
# (checked through /proc/PID/comm, so a recycled pid never counts as ours)
alive() {
  local p
  [ -s "$1" ] || return 1
  p=$(cat "$1" 2>/dev/null) || return 1
  [[ $p =~ ^[0-9]+$ ]] && [ -d "/proc/$p" ] || return 1
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]
}
