#!/usr/bin/env bash
# Check that everything the build, the tests and the benchmarks use comes from
# a Debian package that scripts/install-deps.sh installs.
#
#   scripts/check-deps.sh [--main-only] [--main "PKG..."] [--bench "PKG..."] [BUILD_DIR...]
#
# What is checked (BUILD_DIR defaults to build/release, configured and built):
#   main  - every system header any object of BUILD_DIR was compiled against
#           (ninja's record of the compiler's -MD output), every library file
#           and -l library its link lines name, the start files and runtimes
#           the compiler driver adds (`cc -###` with the build's -fsanitize
#           flags), the compiler, ninja and cmake,
#           and every program in command position in the scripts of the build
#           and tests (Makefile, .ci/run, scripts/, tests/, src/, fuzz/);
#   bench - the programs of bench/ scripts, and the headers of the MPI
#           baseline (bench/vs-mpi/vsmpi.c through each mpicc.* wrapper on
#           PATH, `cc -M -MG`: a header that no package provides is named).
# Each file is mapped with `dpkg -S` to its package. The rule: a main file's
# package is listed by `install-deps.sh --list`, a bench file's by
# `install-deps.sh --list --bench`, or is a hard dependency (Depends,
# Pre-Depends, followed recursively over installed packages) of one listed,
# or is Essential: yes or Priority: required in Debian 12 (installed on every
# Debian system, debootstrap's minbase). --main / --bench replace the lists
# (e.g. to check an older install-deps.sh); --main-only skips the bench set
# (its packages need not be installed then). Exit 0 when every file passes,
# 1 otherwise, one line per offending file.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

main_list= bench_list= builds=() main_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --main) main_list=$2; shift 2 ;;
    --bench) bench_list=$2; shift 2 ;;
    --main-only) main_only=1; shift ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) builds+=("$1"); shift ;;
    esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build/release)
[ -n "$main_list" ] || main_list=$(bash scripts/install-deps.sh --list)
[ -n "$bench_list" ] || bench_list=$(bash scripts/install-deps.sh --list --bench)
[ $main_only = 0 ] || bench_list=

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ==== Allowed packages ====

# name -> its hard dependencies, for every installed package (alternatives
# and versions dropped: "a (>= 1) | b" gives a and b), and the providers of
# virtual packages, so the closure below needs one dpkg-query call.
dpkg-query -W -f='${db:Status-Abbrev}\t${Package}\t${Essential}\t${Priority}\t${Depends}, ${Pre-Depends}\t${Provides}\n' \
    | awk -F'\t' '$1 ~ /^ii/' >"$tmp/db"
awk -F'\t' '$3 == "yes" || $4 == "required" { print $2 }' "$tmp/db" >"$tmp/base"

# closure LIST... : the listed packages and their installed hard dependencies.
closure() {
    printf '%s\n' "$@" | awk -F'\t' -v db="$tmp/db" '
        function clean(s) { sub(/^ +/, "", s); sub(/[ (:].*$/, "", s); return s }
        BEGIN {
            while ((getline l < db) > 0) {
                split(l, f, "\t"); inst[f[2]] = 1; deps[f[2]] = f[5]
                n = split(f[6], p, ","); for (i = 1; i <= n; i++) if (clean(p[i]) != "") prov[clean(p[i])] = prov[clean(p[i])] " " f[2]
            }
        }
        NF { todo[++t] = $1 }
        END {
            for (k = 1; k <= t; k++) {
                q = todo[k]
                if (q in seen) continue
                seen[q] = 1
                if (!(q in inst)) {            # virtual: its installed providers
                    if (q in prov) { m = split(prov[q], pv, " "); for (i = 1; i <= m; i++) todo[++t] = pv[i] }
                    continue
                }
                print q
                n = split(deps[q], d, /[,|]/)
                for (i = 1; i <= n; i++) { x = clean(d[i]); if (x != "") todo[++t] = x }
            }
        }' | sort -u
}
for p in $main_list $bench_list; do
    grep -q "	$p	" "$tmp/db" ||
        { echo "check-deps: $p (listed in install-deps.sh) is not installed; run scripts/install-deps.sh${bench_list:+ --bench}" >&2; exit 1; }
done
# shellcheck disable=SC2086
{ closure $main_list; cat "$tmp/base"; } | sort -u >"$tmp/allow-main"
# shellcheck disable=SC2086
{ closure $main_list $bench_list; cat "$tmp/base"; } | sort -u >"$tmp/allow-bench"

# ==== Files used ====

: >"$tmp/use-main"
: >"$tmp/use-bench"
# use SET WHAT FILE : record that WHAT (a reason) needs FILE.
use() { printf '%s\t%s\n' "$3" "$2" >>"$tmp/use-$1"; }

outside_tree() { case $1 in "$root"/*|/tmp/*) return 1 ;; *) return 0 ;; esac; }

for b in "${builds[@]}"; do
    [ -f "$b/build.ninja" ] || { echo "check-deps: $b is not a configured ninja build (run make build)" >&2; exit 1; }
    ninja -C "$b" -t deps 2>/dev/null | awk '/^    \// { print $1 }' | sort -u | while read -r h; do
        ! outside_tree "$h" || use main "header of the build ($b)" "$h"
    done
    ninja -C "$b" -t commands 2>/dev/null | tr ' ' '\n' | sort -u >"$tmp/words"
    grep -E '^/.*\.(so|a)(\.[0-9]+)*$' "$tmp/words" | while read -r f; do
        ! outside_tree "$f" || use main "library linked in $b" "$f"
    done
    cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$b/CMakeCache.txt")
    # What the driver adds to a link with this build's -fsanitize flags: start
    # files, sanitizer and libFuzzer runtimes (clang's come from a package
    # that clang only recommends).
    # shellcheck disable=SC2046
    (cd "$tmp" && "$cc" -### $(grep '^-fsanitize=' "$tmp/words" | sort -u) -x none /dev/null -o a.out 2>&1) |
        tr ' ' '\n' | tr -d '"' >"$tmp/driver"
    grep -E '^/.*\.(a|so|o)$' "$tmp/driver" | sort -u | while read -r f; do
        use main "runtime the $cc driver links in $b" "$(realpath "$f")"
    done
    grep -E '^-l' "$tmp/driver" >>"$tmp/words" || true
    for l in $(sed -n 's/^-l//p' "$tmp/words" | sort -u); do
        f=$("$cc" -print-file-name="lib$l.so")
        [ "$f" != "lib$l.so" ] || f=$("$cc" -print-file-name="lib$l.a")
        [ "${f#/}" = "$f" ] || use main "-l$l linked in $b" "$(realpath "$f")"
    done
    use main "C compiler of $b" "$(realpath "$(command -v "$cc")")"
    use main "generator of $b" "$(realpath "$(sed -n 's/^CMAKE_MAKE_PROGRAM:[A-Z]*=//p' "$b/CMakeCache.txt")")"
done
use main "the build" "$(realpath "$(command -v cmake)")"

# Programs in command position of shell code: at a line's start or after
# ; | & ( ` { $( then do else ! -- or `-c "`, skipping VAR=value words and
# prefixes (env, exec, timeout N, command, xargs, nohup, sudo). A word found
# on PATH that is a file, not a shell builtin or keyword, is a program. A
# '(' right after a word is a call in quoted code (python3 -c '...open(f)'),
# not a subshell: `open` there is not xdg-utils' program.
commands_of() {
    sed -e 's/^[[:space:]]*#.*//' -e 's/[[:space:]]#.*//' -e 's/^\t[@-]*/\t/' "$@" | awk '
        {
            line = $0
            gsub(/[A-Za-z0-9_.]\(/, "_ ", line) # a call in code quoted for python3 -c, not a subshell
            gsub(/\$\(|`|\|\||&&|[;|&({!]|[[:space:]](then|do|else|--)[[:space:]]|-c[[:space:]]+["'"'"']/, "\n", line)
            n = split(line, parts, "\n")
            for (i = 1; i <= n; i++) {
                m = split(parts[i], w, /[[:space:]]+/)
                for (j = 1; j <= m; j++) {
                    if (w[j] == "" || w[j] ~ /^[A-Za-z_][A-Za-z0-9_]*=/) continue
                    if (w[j] ~ /^(env|exec|command|xargs|nohup|sudo|time|then|do|else)$/) continue
                    if (w[j] == "timeout" || w[j] == "-v") { j++; continue }
                    if (w[j] ~ /^[A-Za-z][A-Za-z0-9_.+-]*$/) print w[j]
                    break
                }
            }
        }' | sort -u
}
# Programs resolve on Debian's default PATH, not the caller's (no ~/.local,
# no pyenv shims: CI has none).
# Optional toolkits that no Debian package install-deps.sh lists provides and
# that nothing needs: the CUDA compiler of the optional accelerator probe
# (-DSTRATA_CUDA=ON; tests/cuda_build.sh skips with its reason where none).
optional_programs=" nvcc "
programs() { # SET FILE...
    local set=$1; shift
    local w p
    for w in $(commands_of "$@"); do
        case $optional_programs in *" $w "*) continue ;; esac
        [ "$(type -t "$w" 2>/dev/null)" = file ] || continue
        p=$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin type -P "$w") || continue
        ! outside_tree "$p" || use "$set" "program '$w' ($(grep -lw -- "$w" "$@" | grep -v 'install-deps' | head -1))" "$(realpath "$p")"
    done
}
# The Makefile without its `format` rule (clang-format, git: a developer's
# tool, not the build's).
awk '/^format:/ { skip = 1; next } /^[^\t]/ { skip = 0 } !skip' Makefile >"$tmp/Makefile"
mapfile -t main_scripts < <(ls .ci/run scripts/*.sh fuzz/*.sh 2>/dev/null; find tests src -name '*.sh' | sort)
programs main "$tmp/Makefile" "${main_scripts[@]}"
mapfile -t bench_scripts < <(find bench -name '*.sh' | sort)
[ ${#bench_scripts[@]} -eq 0 ] || [ $main_only = 1 ] || programs bench "${bench_scripts[@]}"

# The MPI baseline: each wrapper the bench build would use, and its headers.
for w in mpicc.openmpi mpicc.mpich; do
    [ $main_only = 0 ] && command -v "$w" >/dev/null || continue
    use bench "MPI wrapper $w (bench/vs-mpi)" "$(realpath "$(command -v "$w")")"
    "$w" -M -MG -Iinclude bench/vs-mpi/vsmpi.c 2>/dev/null | tr ' \\' '\n\n' | awk 'NR > 1 && NF' |
        while read -r h; do
            case $h in
            /*) ! outside_tree "$h" || use bench "header of bench/vs-mpi/vsmpi.c via $w" "$h" ;;
            *) [ -e "$h" ] || use bench "header $h of bench/vs-mpi/vsmpi.c via $w: found nowhere" "MISSING:$h" ;;
            esac
        done
done

# ==== Map to packages and judge ====

# owners FILE... : "file<TAB>package" lines, one dpkg -S call for all (the
# first package where several share a directory; for a file dpkg does not
# know, its merged-/usr twin, /lib <-> /usr/lib, in a second call).
owners() {
    local f
    dpkg_owner "$@" >"$tmp/own1"
    for f in "$@"; do
        case $f in MISSING:*) ;; *) grep -q "^$f	" "$tmp/own1" || echo "$f" ;; esac
    done >"$tmp/unowned"
    cat "$tmp/own1"
    [ -s "$tmp/unowned" ] || return 0
    mapfile -t alts < <(sed -E 's|^/usr/|/|; t; s|^/|/usr/|' "$tmp/unowned")
    dpkg_owner "${alts[@]}" | while IFS=$'\t' read -r a p; do
        case $a in /usr/*) printf '%s\t%s\n' "${a#/usr}" "$p" ;; *) printf '/usr%s\t%s\n' "$a" "$p" ;; esac
    done
}
dpkg_owner() {
    { dpkg -S "$@" 2>/dev/null || true; } | awk -F': ' '
        /^diversion / { next }
        { pk = $1; sub(/,.*/, "", pk); sub(/:.*/, "", pk); p = $0; sub(/^[^:]*(:[a-z0-9]+)?: /, "", p)
          if (!(p in seen)) { seen[p] = 1; print p "\t" pk } }'
}
bad=0
sets=(main); [ $main_only = 1 ] || sets+=(bench)
for set in "${sets[@]}"; do
    mapfile -t files < <(cut -f1 "$tmp/use-$set" | sort -u)
    [ ${#files[@]} -gt 0 ] || continue
    owners "${files[@]}" >"$tmp/own-$set"
    flag=; [ $set = main ] || flag=" --bench"
    sort -t$'\t' -u -k1,1 "$tmp/use-$set" | awk -F'\t' -v own="$tmp/own-$set" -v allow="$tmp/allow-$set" \
        -v set="$set" -v flag="$flag" '
        BEGIN {
            while ((getline l < own) > 0) { split(l, f, "\t"); pkg[f[1]] = f[2] }
            while ((getline l < allow) > 0) ok[l] = 1
        }
        !($1 in pkg) { m = $1; sub(/^MISSING:/, "", m)
            print "check-deps: " set ": " m " (" $2 ") belongs to no installed package: add the package that provides it to scripts/install-deps.sh" flag; bad = 1; next }
        !(pkg[$1] in ok) {
            print "check-deps: " set ": " $1 " (" $2 ") comes from " pkg[$1] ", which scripts/install-deps.sh" flag " does not install"; bad = 1 }
        END { exit bad }' || bad=1
    echo "check-deps: $set: $(cut -f1 "$tmp/use-$set" | sort -u | wc -l) files checked" >&2
done
[ $bad -eq 0 ] && echo "check-deps: every header, library and program comes from a package install-deps.sh installs"
exit $bad
