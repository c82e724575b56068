#!/usr/bin/env python3
"""The HTML report in a real browser: Debian's chromium, headless, opens
`strata report --html` and

  - --dump-dom: the page the browser built holds every chart (each id the
    report gives its figures, each with its <svg> and table) and no error
    text (no Chromium error page, no XML parse error, no "no data" in a
    chart of a cluster that has the data);
  - --screenshot --window-size=W,H: a PNG of exactly W x H pixels that is
    not blank: decoded here (zlib + struct, no imaging library), it has
    many distinct colours (the charts' palette) and a real share of
    non-white pixels.

Skips (exit 77, with the reason) only where chromium cannot run: not
installed, or `chromium --version` fails.

usage: report_browser.py STRATA_BINARY
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
W, H = 900, 1200
# Under a loaded 2-core machine chromium starts in seconds, not minutes;
# every call is bounded.
CALL_TIMEOUT = 180

FIGURES = ["tier-bandwidth", "tier-latency", "tier-staircase", "busbw", "sim-links",
           "sim-tiers", "sim-time", "topology", "plan-step", "plan-memory", "wall-step",
           "wall-share", "wall-fabric"]


def chromium_args(binary, profile):
    args = [binary, "--headless", "--disable-gpu", f"--user-data-dir={profile}",
            "--no-first-run", "--disable-extensions", "--hide-scrollbars"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")  # chromium refuses to run as root with the sandbox
    return args


def png_decode(data):
    """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB/RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unexpected PNG format depth {depth} colour type {ctype}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def check_dom(dom, fail):
    for fid in FIGURES:
        m = re.search(r'<figure id="%s" class="strata-chart[^"]*">(.*?)</figure>' % fid, dom, re.S)
        if not m:
            fail(f"dump-dom: no figure #{fid}")
            continue
        if "<svg" not in m.group(1) or "<table" not in m.group(1):
            fail(f"dump-dom: figure #{fid} lacks its svg or table")
    for marker in ("main-frame-error", "ERR_FILE", "ERR_ACCESS", "parsererror",
                   "This page contains the following errors", 'class="nodata"'):
        if marker in dom:
            fail(f"dump-dom: error text {marker!r} on the page")


def check_png(path, fail):
    w, h, rows, bpp = png_decode(open(path, "rb").read())
    if (w, h) != (W, H):
        fail(f"screenshot is {w}x{h}, want {W}x{H}")
    colours, ink = set(), 0
    for row in rows[::2]:
        for x in range(0, len(row), 2 * bpp):
            px = row[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    total = len(rows[::2]) * ((w + 1) // 2)
    # the page's first screen: title, the verdict text, two bar charts and
    # the staircase in the palette's colours, grey grids, anti-aliased text
    if len(colours) < 32:
        fail(f"screenshot has {len(colours)} distinct colours: blank or unstyled")
    if ink < total // 20:
        fail(f"screenshot is {100 * ink / total:.1f} % non-white: blank")
    print(f"screenshot {w}x{h}: {len(colours)} distinct colours, {100 * ink / total:.0f} % ink")


def main():
    strata = sys.argv[1]
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        print("SKIP: chromium is not installed (scripts/install-deps.sh installs it)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="strata-browser-")
    try:
        args = chromium_args(binary, os.path.join(tmp, "profile"))
        try:
            v = subprocess.run(args[:1] + ["--version"], capture_output=True, text=True,
                               timeout=CALL_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"SKIP: chromium cannot run here: {e}")
            return SKIP
        if v.returncode != 0:
            print(f"SKIP: chromium cannot run here: {v.stderr.strip()[:200]}")
            return SKIP
        page = os.path.join(tmp, "report.html")
        subprocess.run([strata, "report", "dgx-h100:2", "--model", "gpt-1.7b", "--html", page],
                       check=True, timeout=CALL_TIMEOUT, stdout=subprocess.DEVNULL)
        url = "file://" + page
        errors = []
        fail = errors.append
        dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True,
                             timeout=CALL_TIMEOUT)
        if dom.returncode != 0 or "<html" not in dom.stdout:
            fail(f"chromium --dump-dom failed (rc {dom.returncode}): {dom.stderr[-300:]}")
        else:
            check_dom(dom.stdout, fail)
        shot = os.path.join(tmp, "shot.png")
        r = subprocess.run(args + [f"--screenshot={shot}", f"--window-size={W},{H}", url],
                           capture_output=True, text=True, timeout=CALL_TIMEOUT)
        if r.returncode != 0 or not os.path.exists(shot):
            fail(f"chromium --screenshot failed (rc {r.returncode}): {r.stderr[-300:]}")
        else:
            check_png(shot, fail)
        for e in errors:
            print("FAIL:", e)
        return 1 if errors else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
