#!/usr/bin/env bash
# Fault soak of the runtime: for each path (engine, small, exec, p2p) and
# rank count (2, 4), SOAK_ITERS jobs (default 100) of bench/soak/soak_rank
# under `strata run`; once every rank has joined, after a random 0-400 ms,
# one random rank gets SIGKILL (odd tries) or SIGSTOP (even tries).
# Pass: no job outlives its bound (a hang), every survivor reports a typed
# error (TIMEOUT, PEER) from a call that lasted at most 2 × SOAK_DEADLINE,
# no wrong result, and nothing of the job is left in /dev/shm.
# Usage: soak.sh STRATA_BIN SOAK_RANK_BIN   (env: SOAK_ITERS, SOAK_PATHS,
# SOAK_SIZES, SOAK_DEADLINE). Exit 0 when every try passed.
set -u
S=${1:?strata binary}; PROG=${2:?soak_rank binary}
iters=${SOAK_ITERS:-100}; D=${SOAK_DEADLINE:-1}
paths=${SOAK_PATHS:-engine small exec p2p}; sizes=${SOAK_SIZES:-2 4}
grace=$(awk -v d="$D" 'BEGIN { print 2 * d + 1 }')
bound=$(awk -v d="$D" -v g="$grace" 'BEGIN { print 2 * d + g + 5 }')  # s after the signal
tmp=$(mktemp -d "${TMPDIR:-/tmp}/strata-soak.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
later() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
ST_TIMEOUT=-7 ST_PEER=-8  # strata_status_t (include/strata/common.h)
fails=0
printf '%-7s %2s %5s %5s %5s %5s %5s %9s\n' path P tries hangs bad leftover skip max_s
for path in $paths; do
  for P in $sizes; do
    hangs=0 bad=0 left=0 skip=0 max=0
    for t in $(seq 1 "$iters"); do
      out=$tmp/out; : > "$out"
      SOAK_PATH=$path SOAK_DEADLINE=$D STRATA_TIMEOUT=10 "$S" run -n "$P" --grace "$grace" "$PROG" \
        > "$out" 2> "$tmp/err" &
      L=$!
      t_end=$(awk -v t="$(now)" 'BEGIN { printf "%.3f", t + 20 }')
      while [ "$(grep -c '^ready' "$out")" -lt "$P" ] && kill -0 $L 2>/dev/null && later "$t_end" "$(now)"; do
        sleep 0.02
      done
      if [ "$(grep -c '^ready' "$out")" -lt "$P" ]; then  # start-up failed (load): not a soak try
        # the ranks first: killed launchers leave them running (a healthy job
        # that loops for ever and starves the later tries)
        skip=$((skip + 1)); pkill -KILL -P $L 2>/dev/null; kill -KILL $L 2>/dev/null
        wait $L 2>/dev/null; continue
      fi
      sleep "0.$(printf '%03d' $((RANDOM % 400)))"
      victim=$((RANDOM % P)); sig=$([ $((t % 2)) = 1 ] && echo KILL || echo STOP)
      vpid=$(awk -v r="$victim" '$1 == "ready" && $2 == r { print $3 }' "$out")
      hash=$(awk '$1 == "ready" { print $4; exit }' "$out")
      kill -"$sig" "$vpid"
      t_end=$(awk -v t="$(now)" -v b="$bound" 'BEGIN { printf "%.3f", t + b }')
      hung=0
      while kill -0 $L 2>/dev/null; do
        # survivors all reported: end a stopped victim instead of waiting for the grace period
        if [ "$sig" = STOP ] && [ "$(grep -c '^done' "$out")" -ge $((P - 1)) ]; then
          kill -KILL "$vpid" 2>/dev/null
        fi
        if later "$(now)" "$t_end"; then
          hung=1; pkill -KILL -P $L 2>/dev/null; kill -KILL $L 2>/dev/null; break
        fi
        sleep 0.02
      done
      wait $L 2>/dev/null
      [ $hung = 1 ] && { hangs=$((hangs + 1)); echo "HANG: $path P=$P try $t $sig rank $victim"; }
      # survivors: one `done` line each, a typed error, within 2 × D
      ok=$(awk -v v="$victim" -v d="$D" -v to="$ST_TIMEOUT" -v pe="$ST_PEER" '
        $1 == "done" && $2 != v { n++; if (($3 == to || $3 == pe) && $4 <= 2 * d && $6 == 0) good++
                                  if ($4 > m) m = $4 }
        END { printf "%d %d %.3f", n, good, m }' "$out")
      set -- $ok
      if [ "$1" != $((P - 1)) ] || [ "$2" != $((P - 1)) ]; then
        bad=$((bad + 1)); echo "BAD: $path P=$P try $t $sig rank $victim:"; sed 's/^/  /' "$out"
      fi
      later "$3" "$max" && max=$3
      if ls /dev/shm/strata-"$hash"-* > /dev/null 2>&1; then
        left=$((left + 1)); echo "LEFTOVER: $path P=$P try $t: $(ls /dev/shm/strata-"$hash"-*)"
        rm -f /dev/shm/strata-"$hash"-*
      fi
    done
    printf '%-7s %2s %5s %5s %5s %5s %5s %9s\n' "$path" "$P" "$iters" $hangs $bad $left $skip "$max"
    fails=$((fails + hangs + bad + left))
  done
done
[ $fails = 0 ] && echo "soak: pass" || echo "soak: $fails failing tries"
[ $fails = 0 ]
