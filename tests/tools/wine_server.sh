#!/bin/sh
# Keeps one Wine server alive for the whole Windows test suite.
#
#   wine_server.sh start WINE WINESERVER   (CTest fixture setup)
#   wine_server.sh stop  WINE WINESERVER   (CTest fixture cleanup)
#
# WINEPREFIX names the suite's prefix. Why: each test is its own Wine
# process, and Wine's server quits 3 s after its last client. A test that
# starts at that moment connects to a server that is closing and dies with
# "wine client error:0: recvmsg: Connection reset by peer" before its first
# line (CI, 2026-12-04, step.backend_draw_matches_step_draw). A server
# started with -p and no delay stays until `wineserver -k`.
#
# Wine's service processes (services.exe, winedevice.exe, ...) live as
# long as the server and keep the standard output of the process that
# started them. They are started here, writing to a log file, so that no
# test's output pipe is held open by them and CTest never waits on it.
set -eu
action=${1:?usage: wine_server.sh start|stop WINE WINESERVER}
wine=${2:?wine loader missing}
server=${3:?wineserver missing}
: "${WINEPREFIX:?WINEPREFIX must name the suite prefix}"
log="$WINEPREFIX-boot.log"

case $action in
start)
  : >"$log"
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    # A new prefix: Wine creates it under a server of its own.
    if ! "$wine" wineboot --init </dev/null >>"$log" 2>&1; then
      cat "$log"
      echo "wine_server.sh: wineboot --init failed for $WINEPREFIX" >&2
      exit 1
    fi
  fi
  # Whatever server runs for the prefix (wineboot's, or one a killed run
  # left) gives way; it answers 2 until it has gone.
  "$server" -k 2>/dev/null || true
  tries=0
  until "$server" -p 2>>"$log"; do
    tries=$((tries + 1))
    if [ "$tries" -ge 100 ]; then
      cat "$log"
      echo "wine_server.sh: no persistent wineserver for $WINEPREFIX after 10 s" >&2
      exit 1
    fi
    sleep 0.1
  done
  if ! "$wine" wineboot </dev/null >>"$log" 2>&1; then
    cat "$log"
    echo "wine_server.sh: wineboot failed for $WINEPREFIX" >&2
    exit 1
  fi
  echo "wine server kept for $WINEPREFIX until the suite ends"
  ;;
stop)
  "$server" -k 2>/dev/null || true
  echo "wine server for $WINEPREFIX stopped"
  ;;
*)
  echo "wine_server.sh: unknown action '$action' (start or stop)" >&2
  exit 2
  ;;
esac
