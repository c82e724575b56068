/*
 * hwloc_test.c — the local host through hwloc: this machine (checked
 * against the thread's CPU affinity mask, an independent count of usable CPUs), a
 * synthetic topology without PCI data (the container case), and a host
 * where hwloc cannot load at all; each describes and builds, none fails.
 */
#define _GNU_SOURCE
#include "topoio_test.h"

#include <pthread.h> /* pthread_getaffinity_np, CPU_COUNT */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

static topoio_cluster_t *load_local(void)
{
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    char buf[1024];
    if (topoio_hwloc_load(cat, &c, &err)) fail_msg("%s", strata_error_str(&err, buf, sizeof(buf)));
    return c;
}

/* The description builds into a finished topology with >= 1 endpoint. */
static void builds(const topoio_cluster_t *c)
{
    strata_topo_t *t = NULL;
    strata_error_t err;
    char buf[1024];
    if (topoio_instantiate(c, cat, &t, &err))
        fail_msg("%s", strata_error_str(&err, buf, sizeof(buf)));
    assert_true(strata_topo_endpoint_count(t) >= 1);
    strata_topo_destroy(t);
}

static void test_this_host(void **state)
{
    (void)state;
    unsetenv("STRATA_HWLOC_XML");
    unsetenv("STRATA_HWLOC_SYNTHETIC");
    topoio_cluster_t *c = load_local();
    long cpu = topoio_find_group(c, "cpu");
    assert_true(cpu >= 0);
    cpu_set_t set;
    assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(set), &set), 0);
    char want[32];
    snprintf(want, sizeof(want), " %d PU(s)", CPU_COUNT(&set));
    if (strstr(c->groups.v[cpu].info, want) == NULL)
        fail_msg("cpu info '%s' lacks '%s'", c->groups.v[cpu].info, want);
    assert_non_null(strstr(c->description, "this host (hwloc)"));
    builds(c);
    topoio_cluster_destroy(c);
}

static void test_no_pci_data(void **state)
{
    (void)state;
    setenv("STRATA_HWLOC_SYNTHETIC", "Package:2 L3Cache:1 L2Cache:2 Core:1 PU:2", 1);
    topoio_cluster_t *c = load_local();
    unsetenv("STRATA_HWLOC_SYNTHETIC");
    /* 2 packages × 1 L3 × 2 L2 × 1 core = 4 cores; × 2 PUs = 8 PUs. */
    const char *info = c->groups.v[topoio_find_group(c, "cpu")].info;
    assert_non_null(strstr(info, "2 package(s), 4 core(s), 8 PU(s)"));
    assert_non_null(strstr(info, "L3"));
    assert_non_null(strstr(c->description, "0 GPU(s), 0 NIC(s)"));
    assert_non_null(strstr(c->description, "no PCI devices"));
    assert_int_equal(c->groups.n, 1);
    builds(c); /* the CPU is the endpoint */
    topoio_cluster_destroy(c);
}

static void test_hwloc_unreadable(void **state)
{
    (void)state;
    setenv("STRATA_HWLOC_XML", "/nonexistent/topo.xml", 1);
    topoio_cluster_t *c = load_local();
    unsetenv("STRATA_HWLOC_XML");
    assert_non_null(strstr(c->description, "hwloc could not read the topology from /nonexistent"));
    assert_non_null(strstr(c->groups.v[0].info, "online (sysconf)"));
    builds(c);
    topoio_cluster_destroy(c);
}

/* An hwloc XML export with a GPU and a 100 GbE NIC (as lstopo writes it). */
static const char *const xml =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    " <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
    " allowed_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""
    " allowed_nodeset=\"0x00000001\" gp_index=\"1\">\n"
    "  <object type=\"Package\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\">\n"
    "   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"3\" "
    "local_memory=\"1073741824\"/>\n"
    "   <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"4\">\n"
    "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"5\"/>\n"
    "    <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\""
    " nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"6\"/>\n"
    "   </object>\n"
    "  </object>\n"
    "  <object type=\"Bridge\" gp_index=\"7\" bridge_type=\"0-1\" depth=\"0\""
    " bridge_pci=\"0000:[00-02]\">\n"
    "   <object type=\"PCIDev\" gp_index=\"8\" pci_busid=\"0000:01:00.0\""
    " pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"31.507692\"/>\n"
    "   <object type=\"PCIDev\" gp_index=\"9\" pci_busid=\"0000:02:00.0\""
    " pci_type=\"0200 [15b3:1017] [15b3:0007] 00\" pci_link_speed=\"7.876923\">\n"
    "    <object type=\"OSDev\" gp_index=\"10\" name=\"strata-test0\" osdev_type=\"2\"/>\n"
    "   </object>\n"
    "  </object>\n"
    " </object>\n"
    "</topology>\n";

static void test_xml_with_pci(void **state)
{
    (void)state;
    const char *path = test_write_tmp(".xml", xml);
    setenv("STRATA_HWLOC_XML", path, 1);
    topoio_cluster_t *c = load_local();
    unsetenv("STRATA_HWLOC_XML");
    remove(path);
    /* A 3D controller (class 0x0302) is a GPU; Ethernet (0x0200) a NIC. */
    assert_int_equal(topoio_count_kind(c, "gpu"), 1);
    assert_int_equal(topoio_count_kind(c, "nic"), 1);
    long nic = topoio_find_group(c, "strata-test0");
    assert_true(nic >= 0);
    /* No sysfs for a made-up interface: speed unknown, no network port. */
    assert_non_null(strstr(c->groups.v[nic].info, "speed unknown"));
    assert_null(c->groups.v[nic].port);
    builds(c);
    topoio_cluster_destroy(c);
}

/* The same NIC with a readable sysfs speed of 100000 Mb/s: a 100 GbE port. */
static void test_nic_speed_from_sysfs(void **state)
{
    (void)state;
    char dir[] = "/tmp/strata-sysfs-XXXXXX", sub[128], file[160];
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof(sub), "%s/strata-test0", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(file, sizeof(file), "%s/speed", sub);
    FILE *f = fopen(file, "w");
    fputs("100000\n", f);
    fclose(f);
    const char *path = test_write_tmp(".xml", xml);
    setenv("STRATA_HWLOC_XML", path, 1);
    setenv("STRATA_SYSFS_NET", dir, 1);
    topoio_cluster_t *c = load_local();
    unsetenv("STRATA_HWLOC_XML");
    unsetenv("STRATA_SYSFS_NET");
    remove(path);
    remove(file);
    rmdir(sub);
    rmdir(dir);
    long nic = topoio_find_group(c, "strata-test0");
    /* Ethernet class, no OpenFabrics device → TCP Ethernet kind of that rate. */
    assert_string_equal(c->groups.v[nic].port, "eth-100g");
    assert_null(strstr(c->groups.v[nic].info, "speed unknown"));
    topoio_cluster_destroy(c);
}

/* The GPU and the NIC behind one PCIe switch (upstream port 01:00.0 with
 * downstream ports 02:00.0 and 02:01.0) under root port 00:01.0. */
static const char *const switch_xml_io =
    "  <object type=\"Bridge\" gp_index=\"7\" bridge_type=\"0-1\" depth=\"0\""
    " bridge_pci=\"0000:[00-04]\">\n"
    "   <object type=\"Bridge\" gp_index=\"20\" bridge_type=\"1-1\" depth=\"1\""
    " bridge_pci=\"0000:[01-04]\" pci_busid=\"0000:00:01.0\""
    " pci_type=\"0604 [8086:0db0] [0000:0000] 00\" pci_link_speed=\"31.507692\">\n"
    "    <object type=\"Bridge\" gp_index=\"21\" bridge_type=\"1-1\" depth=\"2\""
    " bridge_pci=\"0000:[02-04]\" pci_busid=\"0000:01:00.0\""
    " pci_type=\"0604 [1000:c030] [0000:0000] 00\" pci_link_speed=\"31.507692\">\n"
    "     <object type=\"Bridge\" gp_index=\"22\" bridge_type=\"1-1\" depth=\"3\""
    " bridge_pci=\"0000:[03-03]\" pci_busid=\"0000:02:00.0\""
    " pci_type=\"0604 [1000:c030] [0000:0000] 00\" pci_link_speed=\"31.507692\">\n"
    "      <object type=\"PCIDev\" gp_index=\"8\" pci_busid=\"0000:03:00.0\""
    " pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"31.507692\"/>\n"
    "     </object>\n"
    "     <object type=\"Bridge\" gp_index=\"23\" bridge_type=\"1-1\" depth=\"3\""
    " bridge_pci=\"0000:[04-04]\" pci_busid=\"0000:02:01.0\""
    " pci_type=\"0604 [1000:c030] [0000:0000] 00\" pci_link_speed=\"31.507692\">\n"
    "      <object type=\"PCIDev\" gp_index=\"9\" pci_busid=\"0000:04:00.0\""
    " pci_type=\"0200 [15b3:1021] [15b3:0023] 00\" pci_link_speed=\"31.507692\">\n"
    "       <object type=\"OSDev\" gp_index=\"10\" name=\"strata-test1\" osdev_type=\"2\"/>\n"
    "      </object>\n"
    "     </object>\n"
    "    </object>\n"
    "   </object>\n"
    "  </object>\n";

static void test_pcie_switch(void **state)
{
    (void)state;
    /* The machine part of `xml` with the I/O subtree above instead of its own. */
    char text[8192];
    const char *io = strstr(xml, "  <object type=\"Bridge\"");
    const char *tail = strstr(xml, " </object>\n</topology>");
    assert_non_null(io);
    assert_non_null(tail);
    snprintf(text, sizeof(text), "%.*s%s%s", (int)(io - xml), xml, switch_xml_io, tail);
    const char *path = test_write_tmp(".xml", text);
    setenv("STRATA_HWLOC_XML", path, 1);
    topoio_cluster_t *c = load_local();
    unsetenv("STRATA_HWLOC_XML");
    remove(path);
    assert_int_equal(topoio_count_kind(c, "pcie-switch"), 1);
    strata_topo_t *t = NULL;
    strata_error_t err;
    must(topoio_instantiate(c, cat, &t, &err), &err);
    int32_t sw = strata_topo_find_device(t, "pcisw0");
    /* GPU and NIC meet at the switch; only the switch reaches the CPU. */
    assert_true(strata_topo_link_between(t, strata_topo_find_device(t, "gpu0"), sw) >= 0);
    assert_true(strata_topo_link_between(t, strata_topo_find_device(t, "strata-test1"), sw) >= 0);
    assert_true(strata_topo_link_between(t, sw, strata_topo_find_device(t, "cpu")) >= 0);
    assert_int_equal(strata_topo_link_count(t), 3);
    /* No sysfs here for these bus ids: x16 assumed, and hwloc's 31.51 GB/s
     * over 16 lanes = 1.969 GB/s per lane = PCIe Gen4 (16 GT/s × 128/130 / 8). */
    int32_t l = strata_topo_link_between(t, strata_topo_find_device(t, "gpu0"), sw);
    assert_string_equal(strata_topo_link(t, l).kind, "pcie4");
    assert_non_null(strstr(c->groups.v[topoio_find_group(c, "gpu0")].info, "x16 assumed"));
    strata_topo_destroy(t);
    topoio_cluster_destroy(c);
}

#if defined(__SANITIZE_ADDRESS__)
static void death_callback_42(void)
{
    _exit(42);
}
#endif

/* A crafted XML (tests/data/hwloc-crash.xml, from the hardening issue)
 * crashes libhwloc 2.9 with SIGSEGV: read in a child process, it becomes
 * an error naming the file and the signal, and this process lives on. */
static void test_crash_isolated(void **state)
{
    (void)state;
    const char *path = STRATA_SOURCE_DIR "/tests/data/hwloc-crash.xml";
    topoio_cluster_t *c = NULL;
    strata_error_t err;
    char want[512];
    setenv("STRATA_HWLOC_XML", path, 1);
#if defined(__SANITIZE_ADDRESS__)
    /* a host program's death callback (libFuzzer's writes a crash-* file)
     * must not run in the reader's child: this one would end the child with
     * status 42, which the error below would then name */
    __sanitizer_set_death_callback(death_callback_42);
#endif
    strata_status_t st = topoio_hwloc_load(cat, &c, &err);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_set_death_callback(NULL);
#endif
    unsetenv("STRATA_HWLOC_XML");
    if (st == STRATA_OK) { /* an hwloc that rejects the file cleanly degrades instead */
        assert_non_null(strstr(c->description, "hwloc could not read the topology"));
        topoio_cluster_destroy(c);
        return;
    }
    assert_int_equal(st, STRATA_ERR_PARSE);
#if defined(__SANITIZE_ADDRESS__)
    /* ASan sees libhwloc's double free first and ends the child: exit 1, or
     * SIGABRT where ASAN_OPTIONS has abort_on_error=1 (as .ci/run sets). */
    char alt[512];
    snprintf(want, sizeof(want), "hwloc failed reading %s (exit status 1)", path);
    snprintf(alt, sizeof(alt), "hwloc crashed reading %s (signal %d)", path, SIGABRT);
    if (strcmp(err.msg, alt) == 0) snprintf(want, sizeof(want), "%s", alt);
#else
    snprintf(want, sizeof(want), "hwloc crashed reading %s (signal %d)", path, SIGSEGV);
#endif
    assert_string_equal(err.msg, want);
    assert_null(c);
}

/* Untrusted files that are not regular (a FIFO would block hwloc's own
 * reader) or text that is not printable: refused or cleaned, never kept. */
static void test_untrusted_text(void **state)
{
    (void)state;
    char dir[] = "/tmp/strata-hwloc-XXXXXX", fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof(fifo), "%s/t.xml", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    setenv("STRATA_HWLOC_XML", fifo, 1);
    topoio_cluster_t *c = load_local();
    unsetenv("STRATA_HWLOC_XML");
    unlink(fifo);
    rmdir(dir);
    assert_non_null(strstr(c->description, "not a regular file"));
    topoio_cluster_destroy(c);
    /* the GPU's PCI name with a tab (XML attribute normalisation makes it a
     * space) and a UTF-8 e-acute (2 bytes, not ASCII: '?' each) */
    char text[8192];
    const char *gpu = strstr(xml, "pci_type=\"0302");
    assert_non_null(gpu);
    snprintf(text, sizeof(text), "%.*sname=\"H\tX\xc3\xa9\" %s", (int)(gpu - xml), xml, gpu);
    const char *path = test_write_tmp(".xml", text);
    setenv("STRATA_HWLOC_XML", path, 1);
    c = load_local();
    unsetenv("STRATA_HWLOC_XML");
    remove(path);
    long g = topoio_find_group(c, "gpu0");
    assert_true(g >= 0);
    assert_string_equal(c->groups.v[g].model, "H X??");
    topoio_cluster_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_this_host),
        cmocka_unit_test(test_no_pci_data),
        cmocka_unit_test(test_hwloc_unreadable),
        cmocka_unit_test(test_xml_with_pci),
        cmocka_unit_test(test_nic_speed_from_sysfs),
        cmocka_unit_test(test_pcie_switch),
        cmocka_unit_test(test_crash_isolated),
        cmocka_unit_test(test_untrusted_text),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
