# shellcheck shell=bash
# Start, watch and stop the cluster's processes (sourced by cluster.sh).
# Each process runs in its own session (setsid), logs to logs/<name>.log and has pids/<name>.pid.
# Every command line names the cluster directory, which is how stop recognises its own processes
# and never signals a stranger that reused a pid.

proc_start() {
  local name=$1; shift
  # shellcheck disable=SC2154 # cluster_dir: a global of tools/cluster.sh, which sources this file
  setsid "$@" >> "$cluster_dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$cluster_dir/pids/$name.pid"
  grep -qx "$name" "$cluster_dir/pids/order" 2>/dev/null || echo "$name" >> "$cluster_dir/pids/order"
  # The command line, NUL-separated, so that restart can run it again exactly.
  printf '%s\0' "$@" > "$cluster_dir/pids/$name.cmd"
}

# proc_stop <name>: SIGTERM to the process group, SIGKILL after 10 s.
proc_stop() {
  local name=$1 pid
  proc_alive "$name" || return 0
  pid=$(proc_pid "$name")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 10))
  while proc_alive "$name" && ((SECONDS < deadline)); do sleep 0.1; done
  if proc_alive "$name"; then
    echo "cluster: $name did not stop on SIGTERM; killing it" >&2
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    while proc_alive "$name"; do sleep 0.1; done
  fi
}

# proc_restart <name>: stops the process (if it runs) and starts it again with the command line it was
# started with.
proc_restart() {
  local name=$1
  local -a command_line
  [[ -f $cluster_dir/pids/$name.cmd ]] || { echo "cluster: no component '$name' in $cluster_dir" >&2; return 1; }
  mapfile -d '' -t command_line < "$cluster_dir/pids/$name.cmd"
  proc_stop "$name"
  echo "--- restarted at $(date -u +%FT%TZ) ---" >> "$cluster_dir/logs/$name.log"
  proc_start "$name" "${command_line[@]}"
}

proc_pid() { cat "$cluster_dir/pids/$1.pid" 2>/dev/null || true; }

# proc_alive <name>: the recorded pid runs and its command line mentions this cluster's directory.
# A process in the middle of exec (just started: setsid becoming the component) reads back an empty command
# line for a moment, as a zombie does: read again while the process is there and not a zombie, so a component
# that has only just been started is never taken for one that exited.
proc_alive() {
  local pid stat state cmdline tries
  pid=$(proc_pid "$1")
  [[ -n $pid ]] || return 1
  for ((tries = 0; tries < 20; tries++)); do
    stat=$(cat "/proc/$pid/stat" 2> /dev/null) || return 1
    state=${stat##*) }
    state=${state%% *}
    [[ $state != Z && $state != X ]] || return 1
    cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null) || return 1
    # (An explicit status: a bare return in the EXIT trap, which stops what a failed start started, would
    # return the status the script was exiting with.)
    if [[ -n $cmdline ]]; then
      if [[ $cmdline == *"$cluster_dir"* ]]; then return 0; fi
      return 1
    fi
    sleep 0.05
  done
  return 1
}

proc_log_tail() {
  echo "--- last lines of $cluster_dir/logs/$1.log ---" >&2
  tail -n 15 "$cluster_dir/logs/$1.log" >&2 || true
}

# proc_wait_until <name> <what> <command...>: polls the command until it succeeds, the process dies or
# the start timeout passes; the last two fail with the component's log tail.
proc_wait_until() {
  local name=$1 what=$2; shift 2
  # shellcheck disable=SC2154 # start_timeout: a global of tools/cluster.sh, which sources this file
  local deadline=$((SECONDS + start_timeout))
  until "$@" > /dev/null 2>&1; do
    if ! proc_alive "$name"; then
      echo "cluster: $name exited while waiting for $what" >&2
      proc_log_tail "$name"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "cluster: timed out after ${start_timeout}s waiting for $what" >&2
      proc_log_tail "$name"
      return 1
    fi
    sleep 0.2
  done
}

# proc_stop_all: stops every recorded process, newest first: SIGTERM, then SIGKILL after 10 s.
proc_stop_all() {
  local order=$cluster_dir/pids/order name pid
  [[ -f $order ]] || return 0
  for name in $(tac "$order"); do
    proc_alive "$name" || continue
    pid=$(proc_pid "$name")
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  local deadline=$((SECONDS + 10))
  for name in $(tac "$order"); do
    while proc_alive "$name" && ((SECONDS < deadline)); do sleep 0.1; done
    if proc_alive "$name"; then
      pid=$(proc_pid "$name")
      echo "cluster: $name did not stop on SIGTERM; killing it" >&2
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$cluster_dir/pids"
}
