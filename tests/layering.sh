#!/usr/bin/env bash
# Each module may include only the internal headers of the modules below it
# (DESIGN.md), and tools/ only public headers. Fails naming the offending line.
set -u
root=$1
order=(util link topo sched sim comm plan probe verdict report)
# Allowed lower modules per module (beyond itself).
declare -A allowed=(
  [util]=""
  [link]="util"
  [topo]="util link"
  [sched]="util link topo"
  [sim]="util link topo sched"
  [comm]="util link topo sched"
  [plan]="util link topo sched sim"
  [probe]="util link topo sched comm"
  [verdict]="util link topo sched sim plan"
  [report]="util link topo sched sim comm plan probe verdict"
)
bad=0
for m in "${order[@]}"; do
  [ -d "$root/src/$m" ] || continue
  for other in "${order[@]}"; do
    [ "$other" = "$m" ] && continue
    case " ${allowed[$m]} " in *" $other "*) continue;; esac
    # internal header of a forbidden module, or its public header
    hits=$(grep -nE "#include +[\"<](strata/)?$other(\.h|_[a-z0-9_]*\.h)[\">]" "$root"/src/$m/*.[ch] 2>/dev/null)
    if [ -n "$hits" ]; then echo "layering: $m must not include $other:"; echo "$hits"; bad=1; fi
  done
done
hits=$(grep -nE '#include +"(util|link|topo|sched|sim|comm|plan|probe|verdict|report)\.h"' "$root"/tools/strata/*.c 2>/dev/null)
if [ -n "$hits" ]; then echo "layering: tools/strata must use public headers only:"; echo "$hits"; bad=1; fi
[ $bad -eq 0 ] && echo "layering ok"
exit $bad
