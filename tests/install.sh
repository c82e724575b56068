#!/usr/bin/env bash
# `cmake --install` into a fresh prefix gives a working, relocatable strata:
# the command runs from the prefix and finds its data there (not the source
# tree's), and a C program builds against the installed headers and library
# through pkg-config. Usage: install.sh BUILD_DIR
set -u
build=$1
tmp=$(mktemp -d /tmp/strata-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$tmp/p1" >/dev/null || fail "cmake --install"
mv "$tmp/p1" "$tmp/moved"   # relocatable: works after moving the prefix
p="$tmp/moved"
for f in bin/strata include/strata/strata.h include/strata/link.h share/strata/links.json \
         lib/pkgconfig/strata.pc; do
  [ -e "$p/$f" ] || fail "missing $f"
done
ls "$p"/lib/libstrata.so* "$p"/lib/libstrata.a >/dev/null 2>&1 || fail "missing libraries"
out=$(env -u STRATA_DATA_DIR "$p/bin/strata" --version) || fail "installed strata --version"
dir=$(echo "$out" | sed -n 's/^data //p')
[ "$(realpath "$dir")" = "$(realpath "$p/share/strata")" ] || fail "data dir not the prefix's: $out"
env -u STRATA_DATA_DIR "$p/bin/strata" link nvlink4 >/dev/null || fail "installed strata link"
cat > "$tmp/t.c" <<'C'
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
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
cc "$tmp/t.c" $(pkg-config --cflags --libs strata) -Wl,-rpath,"$p/lib" -o "$tmp/t" || fail "compile against pkg-config"
[ "$(env -u STRATA_DATA_DIR "$tmp/t")" = "360.0" ] || fail "program linked to installed lib"
echo "install ok"
