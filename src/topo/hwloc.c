/*
 * hwloc.c — describe the local host through hwloc: `strata topo local`.
 *
 * What is read (hwloc 2.x API): packages, cores, PUs, NUMA nodes with their
 * memory, caches (L1d..L3 sizes and counts) — summarised on the host's one
 * CPU device, since the link catalog holds no inter-socket link kind to join
 * several — and the PCI devices: GPUs (3D controllers, or display devices of
 * NVIDIA/AMD/Intel) become accelerators, network controllers become NICs,
 * each joined to the PCIe switch above it (an upstream-port bridge with
 * downstream-port bridges below, folded into one device) or else to the
 * CPU, by a PCIe link of the generation and width the device trained to (hwloc's linkspeed, in
 * GB/s, divided by the width from sysfs current_link_width gives the per-lane rate, hence the
 * generation). A NIC's port speed comes from /sys/class/net/<if>/speed (Mb/s); missing or -1
 * (virtual NICs, link down) is reported as "speed unknown" and the NIC gets no network port.
 *
 * Degrading: hwloc may fail to load (no /sys, unreadable XML) or find no
 * PCI devices (containers, VMs without passthrough). Neither is an error:
 * the description says what is missing and holds at least the CPU, which
 * is then the endpoint. STRATA_HWLOC_XML=FILE and STRATA_HWLOC_SYNTHETIC=DESC
 * replace this host by an hwloc XML export or a synthetic topology, and
 * STRATA_SYSFS_NET=DIR the /sys/class/net directory (tests).
 *
 * Untrusted input: an hwloc XML file (STRATA_HWLOC_XML) or synthetic
 * description is parsed by libhwloc, which a crafted file can crash
 * (hwloc 2.9, lstopo too). Those two are therefore read in a forked child
 * process — core dumps off, address space capped at 4 GiB (not under
 * ASan/TSan, whose shadow memory needs more), stopped after 20 s — which
 * sends the description back over a pipe as a cluster file (the format
 * topoio_export_json writes; strings reduced to printable ASCII), and the
 * parent reads that back with the ordinary, bounded JSON reader. A crash
 * becomes the error "hwloc crashed reading FILE (signal N)". The live
 * machine (no override) is trusted and read in-process: no fork, no cost.
 * The child is a fork of the caller: call this from a single-threaded
 * program or before starting threads (the strata command does).
 *
 * Workload: one hwloc discovery (tens of milliseconds), plus a fork and a
 * small JSON round trip for the overrides.
 */
#define _POSIX_C_SOURCE 200809L
#include "topoio.h"

#include <hwloc.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HWLOC_CHILD_TIMEOUT_S 20                 /* a 64 MiB XML parses in a few seconds */
#define HWLOC_CHILD_AS_MAX    ((rlim_t)4 << 30)  /* address space of the child */
#define HWLOC_RESULT_MAX      ((size_t)16 << 20) /* the description sent back */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HWLOC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define HWLOC_SANITIZED 1
#endif
#endif
#ifdef HWLOC_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

typedef struct switch_map {
    hwloc_obj_t obj;
    long group;
} switch_map_t;

typedef struct host {
    topoio_cluster_t *c;
    UTIL_VEC(switch_map_t) switches;
    long cpu; /* group of the host CPU */
    long ngpu, nnic, nother;
    char notes[512]; /* what could not be found, for the description */
} host_t;

/* An arena copy of s reduced to printable ASCII (other bytes become '?')
 * and at most 200 bytes: names from an XML file are untrusted text. Tab,
 * CR and LF become a space, as XML attribute-value normalisation does
 * (XML 1.0 sec. 3.3.3): libxml2's reader normalises them, hwloc's own
 * minimal parser (used when libhwloc-plugins is absent) does not, and the
 * name must not depend on which one read the file. */
static const char *clean_str(topoio_cluster_t *c, const char *s)
{
    char buf[201];
    size_t n = 0;
    if (s == NULL) return NULL;
    for (; s[n] && n < sizeof(buf) - 1; n++)
        buf[n] = s[n] == '\t' || s[n] == '\n' || s[n] == '\r' ? ' '
                 : s[n] >= 0x20 && s[n] < 0x7f                ? s[n]
                                                              : '?';
    buf[n] = '\0';
    return topoio_str(c, buf);
}

static void note(host_t *h, const char *s)
{
    size_t n = strlen(h->notes);
    snprintf(h->notes + n, sizeof(h->notes) - n, "%s%s", n ? "; " : "", s);
}

/* ==== CPU summary ==== */

static int count(hwloc_topology_t t, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(t, type);
    return n > 0 ? n : 0;
}

static void append_cache(hwloc_topology_t t, hwloc_obj_type_t type, const char *name, char *buf,
                         size_t len)
{
    int n = count(t, type);
    if (n == 0) return;
    hwloc_obj_t o = hwloc_get_obj_by_type(t, type, 0);
    char size[32];
    util_fmt_bytes((double)o->attr->cache.size, size, sizeof(size));
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, ", %s %s x%d", name, size, n);
}

static void cpu_info(hwloc_topology_t t, char *buf, size_t len)
{
    char mem[32];
    double bytes = 0;
    for (int i = 0; i < count(t, HWLOC_OBJ_NUMANODE); i++)
        bytes +=
            (double)hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i)->attr->numanode.local_memory;
    util_fmt_bytes(bytes, mem, sizeof(mem));
    snprintf(buf, len, "%d package(s), %d core(s), %d PU(s), %d NUMA node(s) with %s",
             count(t, HWLOC_OBJ_PACKAGE), count(t, HWLOC_OBJ_CORE), count(t, HWLOC_OBJ_PU),
             count(t, HWLOC_OBJ_NUMANODE), mem);
    append_cache(t, HWLOC_OBJ_L3CACHE, "L3", buf, len);
    append_cache(t, HWLOC_OBJ_L2CACHE, "L2", buf, len);
    append_cache(t, HWLOC_OBJ_L1CACHE, "L1d", buf, len);
}

static strata_status_t add_cpu(host_t *h, hwloc_topology_t t, strata_error_t *err)
{
    char info[400];
    h->cpu = topoio_add_group(h->c, "cpu", "cpu", 1);
    if (h->cpu < 0) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    hwloc_obj_t pkg = t ? hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0) : NULL;
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    if (t)
        cpu_info(t, info, sizeof(info));
    else
        snprintf(info, sizeof(info), "%ld PU(s) online (sysconf)", sysconf(_SC_NPROCESSORS_ONLN));
    h->c->groups.v[h->cpu].model = clean_str(h->c, model);
    h->c->groups.v[h->cpu].info = topoio_str(h->c, info);
    return STRATA_OK;
}

/* ==== PCI ==== */

/* A small sysfs attribute of a PCI device, or "" when unreadable. */
static void sysfs_read(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f == NULL) return;
    if (fgets(buf, (int)len, f) == NULL) buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* PCIe generation from the per-lane rate in GB/s after line coding:
 * 2.5 GT/s·8/10, 5·8/10, 8·128/130, 16·128/130, 32·128/130, 64·242/256 / 8
 * (links.md PCIe rows). 0 when it matches none within 15 %. */
static int pcie_gen(double lane_gbs)
{
    static const double lane[] = {0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    for (int g = 0; g < 6; g++)
        if (lane_gbs > lane[g] * 0.85 && lane_gbs < lane[g] * 1.15) return g + 1;
    return 0;
}

/* The PCIe link of a device: kind and lanes (0 = catalog width x16), and a
 * note on what had to be assumed ("" when nothing): without a sysfs width
 * the link is taken as x16 (hwloc's speed then gives the generation);
 * without hwloc's speed, Gen3 x16 (NCCL's defaults, nccl.md §2.5). */
static void pcie_link(const struct hwloc_pcidev_attr_s *p, char *kind, long *lanes, char *note,
                      size_t len)
{
    char path[128], buf[32];
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/current_link_width",
             (unsigned)p->domain, p->bus, p->dev, p->func);
    sysfs_read(path, buf, sizeof(buf));
    long width = atol(buf);
    bool width_known = width > 0;
    if (!width_known) width = 16;
    int gen = p->linkspeed > 0 ? pcie_gen(p->linkspeed / (double)width) : 0;
    snprintf(kind, 16, "pcie%d", gen ? gen : 3);
    *lanes = gen && width != 16 ? width : 0;
    if (gen == 0)
        snprintf(note, len, ", PCIe link unknown (Gen3 x16 assumed)");
    else if (!width_known)
        snprintf(note, len, ", PCIe width unknown (x16 assumed)");
    else
        note[0] = '\0';
}

static bool is_gpu(const struct hwloc_pcidev_attr_s *p)
{
    if (p->class_id == 0x0302) return true; /* 3D controller */
    /* Display controllers of GPU vendors (NVIDIA, AMD, Intel): not server BMC graphics. */
    return (p->class_id >> 8) == 0x03 &&
           (p->vendor_id == 0x10de || p->vendor_id == 0x1002 || p->vendor_id == 0x8086);
}

/* The interface name of a NIC (first network OS device below it). */
static const char *netdev_name(hwloc_obj_t o, bool *verbs)
{
    const char *name = NULL;
    *verbs = false;
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
        if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) *verbs = true;
        if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && name == NULL) name = c->name;
    }
    return name;
}

/* Speed in Mb/s from sysfs, or -1 when unknown (absent, unreadable, -1).
 * STRATA_SYSFS_NET replaces /sys/class/net (tests). */
static long nic_speed(const char *ifname)
{
    char path[512], buf[32];
    const char *root = getenv("STRATA_SYSFS_NET");
    if (ifname == NULL) return -1;
    snprintf(path, sizeof(path), "%s/%s/speed", root && *root ? root : "/sys/class/net", ifname);
    sysfs_read(path, buf, sizeof(buf));
    char *end;
    long v = strtol(buf, &end, 10);
    return end != buf && v > 0 ? v : -1;
}

/* ==== PCIe switches ==== */

/* A PCIe switch as hwloc shows it: its upstream port is a PCI-to-PCI bridge
 * whose parent is also PCI-to-PCI (a root port, not the host bridge) and
 * whose children are bridges (the downstream ports, folded into it). */
static bool is_switch(hwloc_obj_t a)
{
    hwloc_obj_t up = a->parent;
    if (a->type != HWLOC_OBJ_BRIDGE || a->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI)
        return false;
    if (up == NULL || up->type != HWLOC_OBJ_BRIDGE ||
        up->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI)
        return false;
    for (hwloc_obj_t c = a->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_BRIDGE) return true;
    return false;
}

static long switch_group(host_t *h, hwloc_obj_t a);

/* The group a PCI object below attaches to: the nearest PCIe switch above
 * it, else the CPU. -1 on OOM. */
static long attach_parent(host_t *h, hwloc_obj_t o)
{
    for (hwloc_obj_t a = o->parent; a && a->type == HWLOC_OBJ_BRIDGE; a = a->parent)
        if (is_switch(a)) return switch_group(h, a);
    return h->cpu;
}

/* The group of switch a, created (with its uplink) on first use. */
static long switch_group(host_t *h, hwloc_obj_t a)
{
    for (size_t i = 0; i < h->switches.n; i++)
        if (h->switches.v[i].obj == a) return h->switches.v[i].group;
    const struct hwloc_pcidev_attr_s *p = &a->attr->bridge.upstream.pci;
    char name[32], busid[32], kind[16];
    long lanes;
    snprintf(name, sizeof(name), "pcisw%zu", h->switches.n);
    snprintf(busid, sizeof(busid), "PCI %04x:%02x:%02x.%x", (unsigned)p->domain, p->bus, p->dev,
             p->func);
    switch_map_t m = {.obj = a, .group = topoio_add_group(h->c, name, "pcie-switch", 1)};
    if (m.group < 0 || UTIL_VEC_PUSH(&h->switches, m)) return -1;
    char note[64], info[128];
    pcie_link(p, kind, &lanes, note, sizeof(note));
    snprintf(info, sizeof(info), "%s%s", busid, note);
    h->c->groups.v[m.group].info = topoio_str(h->c, info);
    long up = attach_parent(h, a);
    if (up < 0 || topoio_add_conn(h->c, m.group, -1, up, -1, kind, 1, lanes)) return -1;
    return m.group;
}

/* ==== PCI devices ==== */

static strata_status_t add_pci(host_t *h, hwloc_obj_t o, strata_error_t *err)
{
    const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
    bool gpu = is_gpu(p), nic = (p->class_id >> 8) == 0x02, verbs = false;
    char name[64], kind[16], busid[32], info[160] = "";
    long lanes;
    if (!gpu && !nic) {
        h->nother++;
        return STRATA_OK;
    }
    snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%x", (unsigned)p->domain, p->bus, p->dev,
             p->func);
    const char *ifname = nic ? netdev_name(o, &verbs) : NULL;
    if (gpu)
        snprintf(name, sizeof(name), "gpu%ld", h->ngpu++);
    else
        snprintf(name, sizeof(name), "%s", ifname ? ifname : "nic");
    for (char *q = name; *q; q++) /* keep names usable in cluster files */
        if (!isalnum((unsigned char)*q) && !strchr("_.:-", *q)) *q = '_';
    if (!gpu && topoio_find_group(h->c, name) >= 0) snprintf(name, sizeof(name), "nic%ld", h->nnic);
    if (nic) h->nnic++;
    long g = topoio_add_group(h->c, name, gpu ? "gpu" : "nic", 1);
    if (g < 0) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    char note[64];
    pcie_link(p, kind, &lanes, note, sizeof(note));
    long speed = nic ? nic_speed(ifname) : 0;
    snprintf(info, sizeof(info), "PCI %s%s%s", busid, note,
             nic && speed < 0 ? ", speed unknown" : "");
    topoio_group_t *gr = &h->c->groups.v[g];
    char ids[32];
    snprintf(ids, sizeof(ids), "PCI device %04x:%04x", p->vendor_id, p->device_id);
    gr->model = clean_str(h->c, o->name ? o->name : ids);
    gr->info = topoio_str(h->c, info);
    if (nic && speed > 0)
        gr->port = topoio_str(h->c, topoio_port_kind(speed, p->class_id == 0x0207, verbs));
    long parent = attach_parent(h, o);
    if (parent < 0 || topoio_add_conn(h->c, g, -1, parent, -1, kind, 1, lanes))
        return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    return STRATA_OK;
}

static strata_status_t add_pcis(host_t *h, hwloc_topology_t t, strata_error_t *err)
{
    strata_status_t st = STRATA_OK;
    int n = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o)) != NULL && !st; n++)
        st = add_pci(h, o, err);
    if (n == 0)
        note(h, "hwloc reports no PCI devices (container or VM without PCI access): "
                "no GPU or NIC described");
    return st;
}

/* ==== Reading hwloc (in this process) ==== */

/* What to read: this host (xml and syn NULL), an XML export already in
 * memory (xml, xml_len; path names it) or a synthetic description. */
typedef struct source {
    const char *path;
    const char *xml;
    size_t xml_len;
    const char *syn;
    const char *unreadable; /* why path could not be read, or NULL */
    bool quiet;             /* silence stderr while libhwloc parses (the child) */
} source_t;

/* Point fd 2 at /dev/null (returns the saved fd) or back (saved >= 0).
 * libhwloc's complaints about a crafted file, and a sanitizer's report of
 * its memory errors, would otherwise bury the one-line error. */
static int stderr_quiet(int saved)
{
    if (saved >= 0) {
        dup2(saved, STDERR_FILENO);
        close(saved);
        return -1;
    }
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC), keep = dup(STDERR_FILENO);
    if (null >= 0 && keep >= 0) dup2(null, STDERR_FILENO);
    if (null >= 0) close(null);
    return keep;
}

/* Load hwloc's view of src; NULL on failure (noted in h). */
static hwloc_topology_t load_hwloc(host_t *h, const source_t *src)
{
    hwloc_topology_t t;
    char msg[400];
    if (src->unreadable) {
        snprintf(msg, sizeof(msg),
                 "hwloc could not read the topology from %s (%s): CPU count from sysconf only",
                 src->path, src->unreadable);
        note(h, msg);
        return NULL;
    }
    if (hwloc_topology_init(&t) != 0) {
        note(h, "hwloc could not initialise");
        return NULL;
    }
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    int rc = 0, saved = src->quiet ? stderr_quiet(-1) : -1;
    if (src->xml) /* hwloc counts the terminating NUL in the buffer size */
        rc = hwloc_topology_set_xmlbuffer(t, src->xml, (int)src->xml_len + 1);
    else if (src->syn)
        rc = hwloc_topology_set_synthetic(t, src->syn);
    if (rc == 0) rc = hwloc_topology_load(t);
    if (saved >= 0) stderr_quiet(saved);
    if (rc != 0) {
        snprintf(msg, sizeof(msg),
                 "hwloc could not read the topology%s%s: CPU count from sysconf only",
                 src->path ? " from " : "", src->path ? src->path : "");
        note(h, msg);
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}

/* Describe src (the whole importer, in the calling process). */
static strata_status_t describe(const strata_link_catalog_t *cat, const source_t *src,
                                topoio_cluster_t **c_p, strata_error_t *err)
{
    host_t h = {.c = topoio_cluster_create()};
    if (h.c == NULL) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    hwloc_topology_t t = load_hwloc(&h, src);
    strata_status_t st = add_cpu(&h, t, err);
    if (st == STRATA_OK && t) st = add_pcis(&h, t, err);
    if (t) hwloc_topology_destroy(t);
    UTIL_VEC_FREE(&h.switches);
    if (st == STRATA_OK && cat) st = topoio_validate(h.c, cat, "local", err);
    if (st) {
        topoio_cluster_destroy(h.c);
        return st;
    }
    char desc[800];
    snprintf(desc, sizeof(desc),
             "this host (hwloc): %ld GPU(s), %ld NIC(s), %ld other PCI "
             "device(s)%s%s",
             h.ngpu, h.nnic, h.nother, h.notes[0] ? "; " : "", h.notes);
    if (h.notes[0]) strata_log(STRATA_LOG_WARN, "local topology: %s", h.notes);
    h.c->name = topoio_str(h.c, "local");
    h.c->description = topoio_str(h.c, desc);
    *c_p = h.c;
    return STRATA_OK;
}

/* ==== Reading untrusted input in a child process ==== */

/* The child: describe src and write "J" + the cluster file, or "E" + the
 * error message, to fd; then _exit (no atexit handlers, no second flush
 * of the parent's stdio buffers). */
static void child_run(const strata_link_catalog_t *cat, source_t *src, int fd)
{
    src->quiet = true;
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS};
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
#ifndef HWLOC_SANITIZED
    struct rlimit as = {HWLOC_CHILD_AS_MAX, HWLOC_CHILD_AS_MAX};
    setrlimit(RLIMIT_AS, &as);
#endif
    /* a crash kills the child by its signal, whatever handlers the host
     * program (or a sanitizer runtime) installed */
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
        signal(fatal[i], SIG_DFL);
#ifdef HWLOC_SANITIZED
    /* and a memory error the sanitizer finds in libhwloc here does not run
     * the host program's sanitizer death callback in this child (libFuzzer's
     * would save the input as a crash-* finding of the fuzzer; the crash is
     * the reader's error to report). The sanitizer still ends the child:
     * exit status 1, or SIGABRT with abort_on_error=1, as before. */
    __sanitizer_set_death_callback(NULL);
#endif
    FILE *out = fdopen(fd, "w");
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    int ok = 0;
    if (out && describe(cat, src, &c, &err) == STRATA_OK) {
        fputc('J', out);
        ok = topoio_export_json(c, out, &err) == STRATA_OK;
    } else if (out) {
        char buf[1024];
        fprintf(out, "E%s", strata_error_str(&err, buf, sizeof(buf)));
        ok = 1;
    }
    ok = out && fclose(out) == 0 && ok;
    _exit(ok ? 0 : 3);
}

/* Milliseconds left until t0 + HWLOC_CHILD_TIMEOUT_S. */
static long ms_left(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return HWLOC_CHILD_TIMEOUT_S * 1000L - (now.tv_sec - t0->tv_sec) * 1000L -
           (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* Read the child's reply: everything until EOF, at most HWLOC_RESULT_MAX
 * bytes, within the deadline. 0 ok, -1 timed out, -2 too large, -3 OOM. */
static int read_reply(int fd, char **buf_p, size_t *len_p)
{
    UTIL_VEC(char) b = {0};
    struct timespec t0;
    int rc = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        long left = ms_left(&t0);
        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            rc = -1;
            break;
        }
        if (UTIL_VEC_RESERVE(&b, b.n + 65537)) {
            rc = -3;
            break;
        }
        ssize_t got = read(fd, b.v + b.n, 65536);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) break;
        b.n += (size_t)got;
        if (b.n > HWLOC_RESULT_MAX) {
            rc = -2;
            break;
        }
    }
    if (rc == 0 && UTIL_VEC_RESERVE(&b, b.n + 1)) rc = -3;
    if (rc != 0) {
        UTIL_VEC_FREE(&b);
        return rc;
    }
    b.v[b.n] = '\0';
    *buf_p = b.v;
    *len_p = b.n;
    return 0;
}

/* Turn the child's fate and reply into the description or an error. */
static strata_status_t child_result(const strata_link_catalog_t *cat, const char *what, int rr,
                                    int status, char *reply, size_t len, topoio_cluster_t **c_p,
                                    strata_error_t *err)
{
    if (rr == -1)
        return strata_error_set(err, STRATA_ERR_TIMEOUT,
                                "hwloc took longer than %d s reading %s (stopped)",
                                HWLOC_CHILD_TIMEOUT_S, what);
    if (rr == -2)
        return strata_error_set(err, STRATA_ERR_RANGE, "hwloc's description of %s is too large",
                                what);
    if (rr == -3) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    if (WIFSIGNALED(status))
        return strata_error_set(err, STRATA_ERR_PARSE, "hwloc crashed reading %s (signal %d)", what,
                                WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0)
        return strata_error_set(err, STRATA_ERR_PARSE, "hwloc failed reading %s (exit status %d)",
                                what, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (reply[0] == 'E') return strata_error_set(err, STRATA_ERR_PARSE, "%s", reply + 1);
    strata_status_t st = reply[0] == 'J' ? topoio_load_json_text(reply + 1, "local", cat, c_p, err)
                                         : STRATA_ERR_PARSE;
    if (st != STRATA_OK) /* our own writer's output: never expected */
        strata_log(STRATA_LOG_ERROR, "hwloc reader of %s sent a malformed description", what);
    return st == STRATA_ERR_PARSE && reply[0] != 'J'
               ? strata_error_set(err, st, "hwloc reader of %s sent a malformed description", what)
               : st;
}

/* Describe src in a child process (the file header says why). */
static strata_status_t describe_isolated(const strata_link_catalog_t *cat, source_t *src,
                                         const char *what, topoio_cluster_t **c_p,
                                         strata_error_t *err)
{
    int fds[2];
    if (pipe(fds) != 0)
        return strata_error_set(err, STRATA_ERR_IO, "cannot start the hwloc reader: %s",
                                strerror(errno));
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_run(cat, src, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return strata_error_set(err, STRATA_ERR_IO, "cannot start the hwloc reader: %s",
                                strerror(errno));
    }
    char *reply = NULL;
    size_t len = 0;
    int status = 0, rr = read_reply(fds[0], &reply, &len);
    close(fds[0]);
    if (rr != 0) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    strata_status_t st = child_result(cat, what, rr, status, reply, len, c_p, err);
    util_free(reply);
    return st;
}

/* ==== Entry ==== */

strata_status_t topoio_hwloc_load(const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                  strata_error_t *err)
{
    const char *xml = getenv("STRATA_HWLOC_XML"), *syn = getenv("STRATA_HWLOC_SYNTHETIC");
    source_t src = {0};
    if (!(xml && *xml) && !(syn && *syn)) return describe(cat, &src, c_p, err); /* this host */
    char *text = NULL;
    strata_error_t rerr;
    if (xml && *xml) {
        src.path = xml;
        if (util_read_file(xml, UTIL_FILE_MAX, &text, &src.xml_len, &rerr) == STRATA_OK)
            src.xml = text;
        else
            src.unreadable = rerr.msg;
    } else {
        src.syn = syn;
    }
    strata_status_t st =
        describe_isolated(cat, &src, xml && *xml ? xml : "the synthetic topology", c_p, err);
    util_free(text);
    return st;
}
