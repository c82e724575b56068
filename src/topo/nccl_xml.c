/*
 * nccl_xml.c — import NCCL's topology XML (what NCCL_TOPO_DUMP_FILE writes
 * and NCCL_TOPO_FILE reads) as a one-server cluster description.
 *
 * Grammar (shared/reference/nccl.md §3.2, NVIDIA/nccl src/graph/xml.cc):
 *   system(version) > cpu(numaid, arch, vendor) > { pci*, nic* }
 *   pci(busid, class, link_speed, link_width) > { pci*, gpu, nic }
 *   gpu(dev, sm) > { nvlink(target, count, tclass)*, c2c(count, bw)* }
 *   nic > net(name, speed)*
 * Mapping: cpu → cpu<numaid>; pci class 0x0604xx → pcie-switch; a pci with
 * <gpu> → gpu<dev>; every <net> → one NIC whose port is the catalog kind of
 * its speed (Mb/s; InfiniBand when the PCI class is 0x0207xx, RoCE for a
 * verbs device such as mlx5_0, else Ethernet); each pci→parent edge → a
 * PCIe link of the generation of link_speed (GT/s) and link_width lanes
 * (NCCL's defaults when absent: Gen3, x16 — nccl.md §2.5). NVLinks: a
 * target that is a GPU's busid → GPU↔GPU; a target of class 0x068000
 * (NVSwitch) or an unknown busid ("fffffff:ffff:ff") → an NVSwitch device,
 * one per distinct target busid; the NVLink generation follows the GPU's
 * sm (60 → nvlink1 … 100 → nvlink5).
 *
 * Errors: libxml2 reports malformed XML with its line and column; every
 * attribute that must be a number is checked and a bad one is reported at
 * its element's line (xmlGetLineNo; libxml2 gives no column for elements,
 * so the column is 0). Unknown elements are skipped (NCCL adds some across
 * versions). Workload: a few hundred elements.
 */
#include "topoio.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NVL 1024

typedef struct nvl {
    long gpu;        /* group index of the source GPU */
    char target[64]; /* target busid */
    long count;
    long tclass;
} nvl_t;

typedef struct busid_map {
    char busid[64];
    long group;
} busid_map_t;

typedef struct xml_reader {
    const char *file;
    const strata_link_catalog_t *cat;
    topoio_cluster_t *c;
    strata_error_t *err;
    UTIL_VEC(nvl_t) nvls;
    UTIL_VEC(busid_map_t) gpus;     /* GPU busid → group */
    UTIL_VEC(busid_map_t) switches; /* NVSwitch busid → group */
    long ngpu_sm;                   /* sm of the GPUs (for the NVLink kind) */
    long nnic, npcisw;
    long cpu; /* group of the <cpu> being read */
} xml_reader_t;

/* ==== Attributes ==== */

static strata_status_t xerr(xml_reader_t *r, xmlNodePtr n, const char *fmt, ...)
    STRATA_PRINTF(3, 4);

/* An error at element n's line (libxml2 has no element columns: 0). */
static strata_status_t xerr(xml_reader_t *r, xmlNodePtr n, const char *fmt, ...)
{
    char msg[STRATA_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    strata_error_set_at(r->err, STRATA_ERR_PARSE, r->file, (int)xmlGetLineNo(n), 0, "%s", msg);
    return STRATA_ERR_PARSE;
}

/* The attribute's text copied into buf; false when absent. */
static bool attr(xmlNodePtr n, const char *name, char *buf, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    if (v == NULL) return false;
    snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
    return true;
}

/* An integer attribute (decimal, or hex with 0x, as NCCL writes class
 * ids) in [-1, 2^31 - 1]: anything larger (ERANGE included) is an error,
 * never clamped or truncated. Absent: *out untouched unless required. */
static strata_status_t attr_long(xml_reader_t *r, xmlNodePtr n, const char *name, bool required,
                                 long *out)
{
    char buf[64];
    if (!attr(n, name, buf, sizeof(buf))) {
        if (!required) return STRATA_OK;
        return xerr(r, n, "<%s> needs attribute '%s'", (const char *)n->name, name);
    }
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 0);
    if (buf[0] == '\0' || *end != '\0')
        return xerr(r, n, "<%s> attribute '%s': expected an integer, got \"%s\"",
                    (const char *)n->name, name, buf);
    if (errno == ERANGE || v < -1 || v > INT32_MAX)
        return xerr(r, n, "<%s> attribute '%s': %s is out of range (-1 to 2147483647)",
                    (const char *)n->name, name, buf);
    *out = v;
    return STRATA_OK;
}

static bool is(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && xmlStrcmp(n->name, (const xmlChar *)name) == 0;
}

/* ==== Devices ==== */

static long add_dev(xml_reader_t *r, const char *name, const char *kind, const char *model)
{
    long g = topoio_add_group(r->c, name, kind, 1);
    if (g >= 0) r->c->groups.v[g].model = topoio_str(r->c, model);
    return g;
}

static strata_status_t oom(xml_reader_t *r)
{
    return strata_error_set(r->err, STRATA_ERR_NOMEM, "out of memory");
}

/* PCIe generation from "32.0 GT/s PCIe": 2.5·2^(gen-1) GT/s for Gen1-2,
 * 8·2^(gen-3) from Gen3 (PCI-SIG; links.md PCIe rows). */
static strata_status_t pcie_kind(xml_reader_t *r, xmlNodePtr n, char *kind, long *lanes)
{
    char buf[64];
    long width = 16;
    strata_status_t st = attr_long(r, n, "link_width", false, &width);
    if (st) return st;
    int gen = 3; /* NCCL's default when link_speed is absent (nccl.md §2.5) */
    if (attr(n, "link_speed", buf, sizeof(buf))) {
        char *end;
        double gts = strtod(buf, &end);
        static const double rates[] = {2.5, 5, 8, 16, 32, 64, 128};
        gen = 0;
        for (int i = 0; i < 7; i++)
            if (end != buf && gts > rates[i] * 0.9 && gts < rates[i] * 1.1) gen = i + 1;
        if (gen == 0)
            return xerr(r, n,
                        "<pci> attribute 'link_speed': expected a PCIe rate such as "
                        "\"32.0 GT/s PCIe\", got \"%s\"",
                        buf);
    }
    if (width < 1 || width > 32)
        return xerr(r, n, "<pci> attribute 'link_width': expected 1..32 lanes");
    snprintf(kind, 16, "pcie%d", gen);
    *lanes = width == 16 ? 0 : width;
    return STRATA_OK;
}

static bool verbs_name(const char *name)
{
    static const char *const pre[] = {"mlx", "bnxt_re", "irdma", "qedr", "hfi", "efa", NULL};
    for (size_t i = 0; pre[i]; i++)
        if (strncmp(name, pre[i], strlen(pre[i])) == 0) return true;
    return false;
}

static strata_status_t link_to(xml_reader_t *r, long g, long parent, const char *kind, long lanes)
{
    if (parent < 0) return STRATA_OK;
    return topoio_add_conn(r->c, g, -1, parent, -1, kind, 1, lanes) ? oom(r) : STRATA_OK;
}

/* <nic> under a pci (or a cpu): one NIC device per <net>. */
static strata_status_t read_nic(xml_reader_t *r, xmlNodePtr nic, long parent, long pci_class,
                                const char *pkind, long lanes)
{
    for (xmlNodePtr n = nic->children; n; n = n->next) {
        if (!is(n, "net")) continue;
        char name[64] = "net", gname[32];
        long speed = 0;
        strata_status_t st = attr_long(r, n, "speed", true, &speed);
        if (st) return st;
        attr(n, "name", name, sizeof(name));
        const char *port = topoio_port_kind(speed, (pci_class >> 8) == 0x0207, verbs_name(name));
        if (port == NULL)
            return xerr(r, n,
                        "<net> attribute 'speed': %ld Mb/s is below every port kind of the "
                        "link catalog (10000 and up)",
                        speed);
        snprintf(gname, sizeof(gname), "nic%ld", r->nnic++);
        long g = add_dev(r, gname, "nic", name);
        if (g < 0) return oom(r);
        r->c->groups.v[g].port = topoio_str(r->c, port);
        if ((st = link_to(r, g, parent, pkind, lanes))) return st;
    }
    return STRATA_OK;
}

/* <c2c count bw> of a Grace-Hopper/Blackwell GPU: count NVLink-C2C links
 * to its CPU (nccl.md §3.2; bw, MB/s per link, is NCCL's own figure and is
 * only checked to be a number: the catalog gives the bandwidth). */
static strata_status_t read_c2c(xml_reader_t *r, xmlNodePtr gpu, long g)
{
    for (xmlNodePtr n = gpu->children; n; n = n->next) {
        if (!is(n, "c2c")) continue;
        long count = 1, bw = 0;
        strata_status_t st;
        if ((st = attr_long(r, n, "count", true, &count)) ||
            (st = attr_long(r, n, "bw", false, &bw)))
            return st;
        if (count < 1 || count > TOPOIO_COUNT_MAX)
            return xerr(r, n, "<c2c> attribute 'count' must be from 1 to 4096");
        if (topoio_add_conn(r->c, g, -1, r->cpu, -1, "nvlink-c2c", count, 0)) return oom(r);
    }
    return STRATA_OK;
}

static strata_status_t read_gpu(xml_reader_t *r, xmlNodePtr gpu, const char *busid, long parent,
                                const char *pkind, long lanes)
{
    long dev = -1, sm = 0;
    char name[32];
    strata_status_t st;
    if ((st = attr_long(r, gpu, "dev", true, &dev)) || (st = attr_long(r, gpu, "sm", true, &sm)))
        return st;
    if (dev < 0) return xerr(r, gpu, "<gpu> attribute 'dev' must be >= 0");
    snprintf(name, sizeof(name), "gpu%ld", dev);
    if (topoio_find_group(r->c, name) >= 0)
        return xerr(r, gpu, "<gpu dev=\"%ld\"> appears twice", dev);
    long g = add_dev(r, name, "gpu", NULL);
    busid_map_t m = {.group = g};
    snprintf(m.busid, sizeof(m.busid), "%s", busid);
    if (g < 0 || UTIL_VEC_PUSH(&r->gpus, m)) return oom(r);
    if (r->ngpu_sm == 0) r->ngpu_sm = sm;
    if ((st = link_to(r, g, parent, pkind, lanes))) return st;
    for (xmlNodePtr n = gpu->children; n; n = n->next) {
        if (!is(n, "nvlink")) continue;
        nvl_t v = {.gpu = g, .count = 1, .tclass = 0};
        if (!attr(n, "target", v.target, sizeof(v.target)))
            return xerr(r, n, "<nvlink> needs attribute 'target'");
        if ((st = attr_long(r, n, "count", true, &v.count)) ||
            (st = attr_long(r, n, "tclass", false, &v.tclass)))
            return st;
        if (v.count < 1 || v.count > TOPOIO_COUNT_MAX)
            return xerr(r, n, "<nvlink> attribute 'count' must be from 1 to 4096");
        if (UTIL_VEC_PUSH(&r->nvls, v)) return oom(r);
    }
    return read_c2c(r, gpu, g);
}

static strata_status_t read_pci(xml_reader_t *r, xmlNodePtr pci, long parent);

/* An NVSwitch seen as a PCI device or as an NVLink target, one per busid. */
static long nvswitch(xml_reader_t *r, const char *busid)
{
    for (size_t i = 0; i < r->switches.n; i++)
        if (strcmp(r->switches.v[i].busid, busid) == 0) return r->switches.v[i].group;
    char name[32];
    snprintf(name, sizeof(name), "nvsw%zu", r->switches.n);
    busid_map_t m = {.group = add_dev(r, name, "nvswitch", NULL)};
    snprintf(m.busid, sizeof(m.busid), "%s", busid);
    if (m.group < 0 || UTIL_VEC_PUSH(&r->switches, m)) return -1;
    return m.group;
}

static strata_status_t read_children(xml_reader_t *r, xmlNodePtr node, long parent)
{
    strata_status_t st = STRATA_OK;
    for (xmlNodePtr n = node->children; n && !st; n = n->next) {
        if (is(n, "pci"))
            st = read_pci(r, n, parent);
        else if (is(n, "nic"))
            st = read_nic(r, n, parent, 0x0200, "pcie3", 0);
    }
    return st;
}

static strata_status_t read_pci(xml_reader_t *r, xmlNodePtr pci, long parent)
{
    char busid[64], kind[16], name[32];
    long cls = 0, lanes = 0;
    strata_status_t st;
    if (!attr(pci, "busid", busid, sizeof(busid)))
        return xerr(r, pci, "<pci> needs attribute 'busid'");
    if ((st = attr_long(r, pci, "class", true, &cls)) || (st = pcie_kind(r, pci, kind, &lanes)))
        return st;
    if ((cls >> 8) == 0x0604) { /* PCI bridge: a PCIe switch (port) */
        snprintf(name, sizeof(name), "pcisw%ld", r->npcisw++);
        long g = add_dev(r, name, "pcie-switch", busid);
        if (g < 0) return oom(r);
        if ((st = link_to(r, g, parent, kind, lanes))) return st;
        return read_children(r, pci, g);
    }
    if (cls == 0x068000) return nvswitch(r, busid) < 0 ? oom(r) : STRATA_OK;
    for (xmlNodePtr n = pci->children; n; n = n->next) {
        if (is(n, "gpu") && (st = read_gpu(r, n, busid, parent, kind, lanes))) return st;
        if (is(n, "nic") && (st = read_nic(r, n, parent, cls, kind, lanes))) return st;
    }
    return STRATA_OK;
}

/* ==== NVLinks ==== */

static const char *nvlink_kind(long sm)
{
    /* NVLink generation by architecture: Pascal 1, Volta 2, Ampere 3,
     * Hopper 4, Blackwell 5 (links.md NVLink rows; sm as in nccl.md §3.2). */
    if (sm >= 100) return "nvlink5";
    if (sm >= 90) return "nvlink4";
    if (sm >= 80) return "nvlink3";
    if (sm >= 70) return "nvlink2";
    if (sm >= 60) return "nvlink1";
    return NULL;
}

static long gpu_by_busid(const xml_reader_t *r, const char *busid)
{
    for (size_t i = 0; i < r->gpus.n; i++)
        if (util_str_eq_nocase(r->gpus.v[i].busid, busid)) return r->gpus.v[i].group;
    return -1;
}

/* Does GPU group `from` list an NVLink to the GPU whose busid maps to `to`? */
static bool lists_peer(const xml_reader_t *r, long from, long to)
{
    for (size_t i = 0; i < r->nvls.n; i++)
        if (r->nvls.v[i].gpu == from && gpu_by_busid(r, r->nvls.v[i].target) == to) return true;
    return false;
}

static strata_status_t resolve_nvlinks(xml_reader_t *r, xmlNodePtr root)
{
    const char *kind = nvlink_kind(r->ngpu_sm);
    if (r->nvls.n && kind == NULL)
        return xerr(r, root,
                    "<gpu sm=\"%ld\">: no NVLink generation for this architecture "
                    "(expected sm >= 60)",
                    r->ngpu_sm);
    for (size_t i = 0; i < r->nvls.n; i++) {
        const nvl_t *v = &r->nvls.v[i];
        long peer = v->tclass == 0x068000 ? -1 : gpu_by_busid(r, v->target);
        if (peer >= 0) {
            /* Both ends list a GPU-GPU link: keep the one from the lower group. */
            if (peer == v->gpu || (peer < v->gpu && lists_peer(r, peer, v->gpu))) continue;
        } else {
            /* NVSwitch (tclass 0x068000) or a target NCCL could not see. */
            peer = nvswitch(r, v->target);
            if (peer < 0) return oom(r);
        }
        if (topoio_add_conn(r->c, v->gpu, -1, peer, -1, kind, v->count, 0)) return oom(r);
    }
    return STRATA_OK;
}

/* ==== Document ==== */

static strata_status_t read_cpu(xml_reader_t *r, xmlNodePtr cpu, long index)
{
    long numa = index;
    char name[32], arch[32] = "", vendor[48] = "", model[96];
    strata_status_t st = attr_long(r, cpu, "numaid", false, &numa);
    if (st) return st;
    attr(cpu, "arch", arch, sizeof(arch));
    attr(cpu, "vendor", vendor, sizeof(vendor));
    snprintf(name, sizeof(name), "cpu%ld", numa);
    if (topoio_find_group(r->c, name) >= 0)
        return xerr(r, cpu, "<cpu numaid=\"%ld\"> appears twice", numa);
    snprintf(model, sizeof(model), "%s%s%s", vendor, vendor[0] && arch[0] ? " " : "", arch);
    long g = add_dev(r, name, "cpu", model[0] ? model : NULL);
    if (g < 0) return oom(r);
    r->cpu = g;
    return read_children(r, cpu, g);
}

static strata_status_t read_system(xml_reader_t *r, xmlDocPtr doc)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    long version = 0, ncpu = 0;
    strata_status_t st;
    if (root == NULL || !is(root, "system"))
        return xerr(r, root ? root : (xmlNodePtr)doc,
                    "expected <system version=\"1\"> as the "
                    "root element (an NCCL topology file)");
    if ((st = attr_long(r, root, "version", true, &version))) return st;
    if (version != 1)
        return xerr(r, root, "<system> version %ld: only NCCL topology version 1 is known",
                    version);
    for (xmlNodePtr n = root->children; n; n = n->next)
        if (is(n, "cpu") && (st = read_cpu(r, n, ncpu++))) return st;
    if ((st = resolve_nvlinks(r, root))) return st;
    if (topoio_count_kind(r->c, "gpu") == 0) return xerr(r, root, "the topology holds no <gpu>");
    return topoio_validate(r->c, r->cat, r->file, r->err);
}

static strata_status_t xml_syntax_error(xmlParserCtxtPtr ctxt, const char *file,
                                        strata_error_t *err)
{
    const xmlError *e = xmlCtxtGetLastError(ctxt);
    char msg[256] = "malformed XML";
    if (e && e->message) {
        snprintf(msg, sizeof(msg), "%s", e->message);
        size_t n = strlen(msg);
        while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
            msg[--n] = '\0';
    }
    return strata_error_set_at(err, STRATA_ERR_PARSE, file, e ? e->line : 0, e ? e->int2 : 0,
                               "malformed XML: %s", msg);
}

static strata_status_t import_doc(xmlDocPtr doc, const char *file, const strata_link_catalog_t *cat,
                                  topoio_cluster_t **c_p, strata_error_t *err)
{
    xml_reader_t r = {.file = file, .cat = cat, .err = err, .c = topoio_cluster_create()};
    strata_status_t st = r.c ? read_system(&r, doc) : oom(&r);
    if (st == STRATA_OK) {
        char desc[256];
        const char *base = strrchr(file, '/');
        snprintf(desc, sizeof(desc), "imported from NCCL topology XML %s", file);
        r.c->name = topoio_str(r.c, base ? base + 1 : file);
        r.c->description = topoio_str(r.c, desc);
        *c_p = r.c;
    } else {
        topoio_cluster_destroy(r.c);
    }
    UTIL_VEC_FREE(&r.nvls);
    UTIL_VEC_FREE(&r.gpus);
    UTIL_VEC_FREE(&r.switches);
    return st;
}

/* Parse len bytes of text (name in messages) and import the document. */
static strata_status_t load(const char *text, size_t len, const char *name,
                            const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                            strata_error_t *err)
{
    if (len > INT_MAX) return strata_error_set(err, STRATA_ERR_RANGE, "%s: too large", name);
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (ctxt == NULL) return strata_error_set(err, STRATA_ERR_NOMEM, "out of memory");
    int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOBLANKS;
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, name, NULL, opts);
    strata_status_t st;
    if (doc == NULL) {
        st = xml_syntax_error(ctxt, name, err);
    } else {
        st = import_doc(doc, name, cat, c_p, err);
        xmlFreeDoc(doc);
    }
    xmlFreeParserCtxt(ctxt);
    return st;
}

strata_status_t topoio_nccl_xml_load(const char *path, const strata_link_catalog_t *cat,
                                     topoio_cluster_t **c_p, strata_error_t *err)
{
    char *text;
    size_t len;
    strata_status_t st = util_read_file(path, UTIL_FILE_MAX, &text, &len, err);
    if (st) return st;
    st = load(text, len, path, cat, c_p, err);
    util_free(text);
    return st;
}

strata_status_t topoio_nccl_xml_load_text(const char *text, const char *name,
                                          const strata_link_catalog_t *cat, topoio_cluster_t **c_p,
                                          strata_error_t *err)
{
    return load(text ? text : "", text ? strlen(text) : 0, name, cat, c_p, err);
}
