/*
 * host.c — what the probe needs to know about the host before measuring:
 * the CPUs it may use, which NUMA node each belongs to, the CPU model and
 * the memory bandwidth the firmware declares (hwloc memory attributes,
 * from ACPI HMAT where the platform has one), plus pinning and the
 * progress bar shared by the sections.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void probe_tick(probe_ctx_t *x, double plan, double frac)
{
    if (frac > 1) frac = 1;
    if (x->opts && x->opts->progress) util_progress_update(&x->bar, x->done + plan * frac);
}

int probe_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0 ? 0 : -1;
}

int probe_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n;
}

/* Group the allowed cpus by NUMA node (hwloc); without hwloc data, one
 * node 0 holding them all. Returns the number of nodes. */
int probe_numa_layout(probe_numa_cpus_t *nodes, int max, const int *allowed, int nallowed)
{
    hwloc_topology_t t;
    int nn = 0;
    if (hwloc_topology_init(&t) == 0 && hwloc_topology_load(t) == 0) {
        int count = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
        for (int i = 0; i < count && nn < max; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
            probe_numa_cpus_t nd = {.node = (int)o->os_index};
            for (int k = 0; k < nallowed; k++)
                if (o->cpuset && hwloc_bitmap_isset(o->cpuset, (unsigned)allowed[k]))
                    nd.cpus[nd.n++] = allowed[k];
            if (nd.n > 0) nodes[nn++] = nd;
        }
        hwloc_topology_destroy(t);
    }
    if (nn == 0) {
        nodes[0] = (probe_numa_cpus_t){.node = 0, .n = nallowed};
        memcpy(nodes[0].cpus, allowed, (size_t)nallowed * sizeof(int));
        nn = 1;
    }
    return nn;
}

/* Declared bandwidth of the first NUMA node as seen from its own cpus
 * (hwloc reports MiB/s), 0 when the platform declares none. */
static double declared_bw(hwloc_topology_t t)
{
    hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, 0);
    if (!node) return 0;
    struct hwloc_location loc = {.type = HWLOC_LOCATION_TYPE_CPUSET,
                                 .location.cpuset = node->cpuset};
    hwloc_uint64_t v = 0;
    if (hwloc_memattr_get_value(t, HWLOC_MEMATTR_ID_BANDWIDTH, node, &loc, 0, &v) != 0 || v == 0)
        return 0;
    return (double)v * 1048576.0;
}

void probe_host_facts(strata_probe_result_t *res)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(res->date, sizeof(res->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(res->host, sizeof(res->host) - 1) != 0) snprintf(res->host, 8, "unknown");
    res->cores = probe_cpus(res->cpus, STRATA_PROBE_CORES_MAX);
    res->packages = 1;
    snprintf(res->ceiling_source, sizeof(res->ceiling_source),
             "none: hwloc reports no memory bandwidth (no ACPI HMAT)");
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) return;
    if (hwloc_topology_load(t) == 0) {
        hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
        const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
        if (m) snprintf(res->cpu_model, sizeof(res->cpu_model), "%s", m);
        for (size_t n = strlen(res->cpu_model); n > 0 && res->cpu_model[n - 1] == ' ';)
            res->cpu_model[--n] = 0;
        res->packages = 1;
        for (int i = 0; i < res->cores; i++) {
            hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t, (unsigned)res->cpus[i]);
            hwloc_obj_t p = pu ? hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu) : NULL;
            res->package[i] = p ? (int)p->logical_index : 0;
            if (res->package[i] + 1 > res->packages) res->packages = res->package[i] + 1;
        }
        double bw = declared_bw(t);
        if (bw > 0) {
            res->bus_ceiling = bw;
            snprintf(res->ceiling_source, sizeof(res->ceiling_source),
                     "hwloc memory attribute Bandwidth of NUMA node 0");
        }
    }
    hwloc_topology_destroy(t);
}
