#!/usr/bin/env bash
# `cmake --install` gives a working, relocatable strata for any prefix and
# LIBDIR: the command runs from the prefix and finds its data there (not the
# source tree's); C programs build against the installed headers and
# libraries through pkg-config and through find_package(strata) (shared and
# static); the static library exports only strata_* (a program with its own
# util_malloc links against it); man pages equal --help; bash completion
# completes. Then the same for a /usr layout staged with DESTDIR, and for the
# files a -DCMAKE_INSTALL_PREFIX=/usr configure generates (Debian's
# lib/x86_64-linux-gnu). Usage: install.sh BUILD_DIR
set -u
build=$1
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/strata-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset STRATA_DATA_DIR

# ---- programs built against the installed tree ----
cat >"$tmp/t.c" <<'C'
#include <strata/strata.h>
#include <stdio.h>
int main(void)
{
    strata_link_catalog_t *c;
    strata_error_t e;
    if (strata_link_catalog_load(NULL, &c, &e) != STRATA_OK) return 1;
    /* H100: 18 NVLink4 links x 25 GB/s x 128/160 (store packets) = 360 GB/s per direction */
    printf("%.1f\n", strata_link_find(c, "nvlink4")->device_bw_dir / 1e9);
    strata_link_catalog_destroy(c);
    return 0;
}
C
# The bottleneck analysis as a C user asks for it: torus:4x4,bw=50 has
# one scale-up row of 4 links x 50 GB/s = 200 GB/s per GPU (by hand), and
# the verdict's JSON renderer writes the document.
cat >"$tmp/v.c" <<'C'
#include <strata/strata.h>
#include <stdio.h>
int main(void)
{
    strata_link_catalog_t *c;
    strata_topo_t *t;
    strata_verdict_t *v;
    if (strata_link_catalog_load(NULL, &c, NULL) != STRATA_OK) return 1;
    if (strata_topo_load_spec("torus:4x4,bw=50", c, &t, NULL) != STRATA_OK) return 1;
    strata_verdict_opts_t o = {.sections = 1u << STRATA_VERDICT_LINKS};
    if (strata_verdict_create(t, c, &o, &v, NULL) != STRATA_OK) return 1;
    FILE *null = fopen("/dev/null", "w");
    if (!null || strata_verdict_print_json(v, "torus:4x4,bw=50", null) != STRATA_OK) return 1;
    fclose(null);
    printf("%.1f %d\n", v->links.rows[0].per_gpu / 1e9, STRATA_JSON_SCHEMA_VERSION);
    strata_verdict_destroy(v);
    strata_topo_destroy(t);
    strata_link_catalog_destroy(c);
    return 0;
}
C
# A program with its own util_malloc, the name of libstrata's internal
# allocator: with the library's symbols global the static link would fail
# with a multiple definition; with them local each keeps its own. The
# program counts its own calls: exactly its one call, none from the library.
cat >"$tmp/own.c" <<'C'
#include <strata/strata.h>
#include <stdio.h>
#include <stdlib.h>
static int calls;
void *util_malloc(size_t n);
void *util_malloc(size_t n)
{
    calls++;
    return malloc(n);
}
int main(void)
{
    free(util_malloc(8));
    strata_link_catalog_t *c;
    strata_error_t e;
    if (strata_link_catalog_load(NULL, &c, &e) != STRATA_OK) return 1;
    printf("%.1f %d\n", strata_link_find(c, "nvlink4")->device_bw_dir / 1e9, calls);
    strata_link_catalog_destroy(c);
    return 0;
}
C
cat >"$tmp/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.20)
project(use_strata C)
find_package(strata 0.1 REQUIRED)
add_executable(t_shared t.c)
target_link_libraries(t_shared PRIVATE strata::strata)
add_executable(t_static own.c)
target_link_libraries(t_static PRIVATE strata::strata_static)
C

# check_tree ROOT PREFIX LIBDIR: an installed tree under ROOT (PREFIX = where
# it believes it lives, ROOT/PREFIX = where its files are), libraries in LIBDIR.
check_tree() {
  local root=$1 prefix=$2 libdir=$3 files_only=${4:-} p="$1$2" w="$tmp/w$RANDOM"
  local lib="$p/$libdir"
  # files only: libraries built for another LIBDIR, so the programs are told
  # where the data is (the library looks for it by its own configured way)
  [ -n "$files_only" ] && export STRATA_DATA_DIR="$p/share/strata"
  mkdir -p "$w"
  for f in bin/strata include/strata/strata.h share/strata/links.json \
           "$libdir/pkgconfig/strata.pc" "$libdir/cmake/strata/strataConfig.cmake" \
           "$libdir/libstrata.a" share/man/man1/strata.1 share/man/man1/strata-bench.1 \
           share/bash-completion/completions/strata; do
    [ -e "$p/$f" ] || fail "$p: missing $f"
  done
  ls "$lib"/libstrata.so.* >/dev/null 2>&1 || fail "$p: no libstrata.so in $libdir"
  # the command finds the prefix's data and library
  local out dir
  [ -z "$files_only" ] || out="data $p/share/strata"
  [ -n "$files_only" ] || out=$("$p/bin/strata" --version) || fail "$p: installed strata --version"
  dir=$(echo "$out" | sed -n 's/^data //p')
  [ "$(realpath "$dir")" = "$(realpath "$p/share/strata")" ] || fail "$p: data dir not the prefix's: $out"
  [ -n "$files_only" ] || "$p/bin/strata" link nvlink4 >/dev/null || fail "$p: installed strata link"
  # pkg-config: libdir and includedir are this tree's, wherever it is
  local pc="$lib/pkgconfig"
  [ "$(realpath "$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir strata)")" = "$(realpath "$lib")" ] ||
    fail "$p: pkg-config libdir $(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir strata), want $lib"
  cc "$tmp/t.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs strata) -Wl,-rpath,"$lib" \
    -o "$w/t" || fail "$p: compile against pkg-config"
  [ "$("$w/t")" = "360.0" ] || fail "$p: program linked to the installed shared library"
  cc "$tmp/v.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs strata) -Wl,-rpath,"$lib" \
    -o "$w/v" || fail "$p: compile the verdict program against pkg-config"
  [ "$("$w/v")" = "200.0 1" ] || fail "$p: verdict program: $("$w/v")"
  # libstrata.a itself, its dependencies (Requires.private) shared
  cc "$tmp/own.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags strata) "$lib/libstrata.a" \
    $(pkg-config --libs jansson libxml-2.0 hwloc nettle) -lpthread -lm -lrt \
    -o "$w/own" || fail "$p: a program with its own util_malloc does not link libstrata.a"
  [ "$(STRATA_DATA_DIR=$p/share/strata "$w/own")" = "360.0 1" ] || fail "$p: static program: $("$w/own")"
  # find_package(strata): both imported targets
  cmake -S "$tmp" -B "$w/cm" -G Ninja -DCMAKE_PREFIX_PATH="$p" >"$w/cm.log" 2>&1 ||
    { cat "$w/cm.log"; fail "$p: find_package(strata)"; }
  cmake --build "$w/cm" >"$w/cmb.log" 2>&1 || { cat "$w/cmb.log"; fail "$p: build with find_package"; }
  [ "$("$w/cm/t_shared")" = "360.0" ] || fail "$p: find_package program (shared)"
  [ "$(STRATA_DATA_DIR=$p/share/strata "$w/cm/t_static")" = "360.0 1" ] || fail "$p: find_package program (static)"
  unset STRATA_DATA_DIR
}

# ---- 1. a prefix, moved after install ----
cmake --install "$build" --prefix "$tmp/p1" >/dev/null || fail "cmake --install"
mv "$tmp/p1" "$tmp/moved" # relocatable: works after moving the prefix
p="$tmp/moved"
libdir=$(cd "$p" && dirname "$(find . -name libstrata.a | head -1)" | sed 's|^\./||')
check_tree "" "$p" "$libdir"

# only the public API leaves the libraries: strata_* names, nothing else
bad=$(nm -D --defined-only "$p/$libdir"/libstrata.so | awk '{print $3}' | grep -v '^strata_')
[ -z "$bad" ] || fail "libstrata.so exports internal symbols: $(echo $bad | head -c 300)"
bad=$(nm -g --defined-only "$p/$libdir/libstrata.a" | awk 'NF == 3 {print $3}' | grep -v '^strata_')
[ -z "$bad" ] || fail "libstrata.a has global internal symbols: $(echo $bad | head -c 300)"

# man pages are the --help texts: the .nf block, unescaped, is --help
for cmd in "" $("$p/bin/strata" help --commands); do
  page="$p/share/man/man1/strata${cmd:+-$cmd}.1"
  [ -s "$page" ] || fail "no man page $page"
  diff <(sed -n '/^\.nf$/,/^\.fi$/p' "$page" | sed '1d;$d' | sed 's/^\\&//; s/\\-/-/g; s/\\e/\\/g') \
       <("$p/bin/strata" $cmd --help) >/dev/null || fail "man page of '${cmd:-strata}' differs from --help"
done

# bash completion: commands and a command's options
comp() { bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _strata; echo "${COMPREPLY[*]}"' \
  _ "$p/share/bash-completion/completions/strata" "$p/bin/strata" "$@"; }
[ "$(comp ben)" = "bench" ] || fail "completion of 'ben': '$(comp ben)'"
[ "$(comp bench --minb)" = "--minbytes" ] || fail "completion of 'bench --minb': '$(comp bench --minb)'"
[ "$(comp link nvlink4 --js)" = "--json" ] || fail "completion of 'link --js': '$(comp link nvlink4 --js)'"

# ---- 2. a /usr layout staged with DESTDIR ----
DESTDIR="$tmp/root" cmake --install "$build" --prefix /usr >/dev/null || fail "DESTDIR install"
libdir=$(cd "$tmp/root/usr" && dirname "$(find . -name libstrata.a | head -1)" | sed 's|^\./||')
check_tree "$tmp/root" /usr "$libdir"

# ---- 3. what -DCMAKE_INSTALL_PREFIX=/usr generates (Debian: lib/<multiarch>) ----
# The generated files (strata.pc, strataConfig.cmake) come from a configure
# with that prefix; the libraries they describe are the ones built above,
# placed where that layout puts them.
cmake -S "$src" -B "$tmp/b2" -G Ninja -DCMAKE_INSTALL_PREFIX=/usr -DSTRATA_BUILD_TESTS=OFF \
  >"$tmp/b2.log" 2>&1 || { cat "$tmp/b2.log"; fail "configure with prefix /usr"; }
ml=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$tmp/b2/CMakeCache.txt")
r="$tmp/root2" u="$tmp/root2/usr"
mkdir -p "$u/$ml/pkgconfig" "$u/$ml/cmake/strata"
cp -a "$tmp/root/usr/bin" "$tmp/root/usr/include" "$tmp/root/usr/share" "$u/"
cp -a "$tmp/root/usr/$libdir"/libstrata.* "$u/$ml/"
cp "$tmp/b2/strata.pc" "$u/$ml/pkgconfig/"
cp "$tmp/b2/strataConfig.cmake" "$tmp/b2/strataConfigVersion.cmake" "$u/$ml/cmake/strata/"
grep -q 'lib/lib' "$u/$ml/pkgconfig/strata.pc" && fail "strata.pc for /usr: $(grep libdir "$u/$ml/pkgconfig/strata.pc")"
inc=$(PKG_CONFIG_PATH="$u/$ml/pkgconfig" pkg-config --variable=includedir strata)
[ "$(realpath "$inc")" = "$(realpath "$u/include")" ] || fail "strata.pc for /usr ($ml): includedir $inc"
check_tree "$r" /usr "$ml" files-only
echo "install ok (libdirs: $libdir; /usr configure: $ml)"
