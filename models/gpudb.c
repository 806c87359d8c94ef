/* models/gpus.yaml -> aitk_gpudb, and name lookup tolerant of how people and
 * NVML spell GPU names ("NVIDIA GeForce RTX 4090", "rtx4090", "4090"). */
#include "models/gpudb.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/data.h"

static aitk_status get_double(const aitk_yaml_doc *doc, const aitk_yaml_node *m, const char *key,
                              bool required, double *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(m, key);
    if (!n) {
        if (!required)
            return AITK_OK;
        aitk_yaml_errorf(err, doc, m, "missing '%s'", key);
        return AITK_E_PARSE;
    }
    aitk_status st = aitk_yaml_double(doc, n, out, err);
    if (!st && *out < 0) {
        aitk_yaml_errorf(err, doc, n, "'%s' must not be negative", key);
        return AITK_E_RANGE;
    }
    return st;
}

/* Plausibility ceilings of the datasheet figures. Each is several times the
 * largest figure any GPU in the file has (B200: 180 GB, 7700 GB/s, 2250
 * dense bf16 and 4500 fp8 TFLOP/s; RTX 5090: 104.8 fp32 TFLOP/s), so no
 * real GPU comes near them and only a slip does: a unit, an exponent, a row
 * of zeros. Unbounded, bf16_tflops: 1e20 would make every prediction for
 * the GPU instant, and would lift calibrate's "at most 1.25x the datasheet"
 * check on a measured rate out of reach. */
static const struct {
    const char *key;
    double max;
    const char *why;
} figure_max[] = {
    {"vram_gb", 4096, "no GPU has 4 TB of memory"},
    {"bandwidth_gbs", 100000, "no GPU memory is near 100 TB/s"},
    {"bf16_tflops", 10000, "no GPU is anywhere near 10 PFLOP/s dense"},
    {"fp16_tflops", 10000, "no GPU is anywhere near 10 PFLOP/s dense"},
    /* fp8 runs at twice the bf16 rate on the tensor cores that have it. */
    {"fp8_tflops", 20000, "no GPU is anywhere near 20 PFLOP/s dense fp8"},
    /* The CUDA-core rate, without tensor cores. */
    {"fp32_tflops", 1000, "no GPU is near 1 PFLOP/s without tensor cores"},
};

/* get_double for a datasheet figure: also at most its ceiling. */
static aitk_status get_figure(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                              const char *name, const char *key, bool required, double *out,
                              aitk_str *err)
{
    aitk_status st = get_double(doc, m, key, required, out, err);
    for (size_t i = 0; !st && i < sizeof figure_max / sizeof *figure_max; i++)
        if (strcmp(figure_max[i].key, key) == 0 && *out > figure_max[i].max) {
            aitk_yaml_errorf(err, doc, aitk_yaml_get(m, key), "%s: %s %g is above %g: %s", name,
                             key, *out, figure_max[i].max, figure_max[i].why);
            return AITK_E_RANGE;
        }
    return st;
}

/* Compute capability "major.minor": NVIDIA's run 1.0 to 12.x so far, with
 * one-digit minors; 20 leaves room for what comes. Anything else (a number
 * with no dot, true, ~, 8.10) is no compute capability, though `gpus` would
 * print it as one. */
#define CC_MAJOR_MAX 20
static aitk_status load_cc(const aitk_yaml_doc *doc, const aitk_yaml_node *m, aitk_gpu_spec *g,
                           aitk_str *err)
{
    aitk_status st = aitk_yaml_need_string(doc, m, "cc", &g->cc, err);
    if (st)
        return st;
    const char *t = g->cc;
    size_t major = strspn(t, "0123456789");
    bool ok = (major == 1 || major == 2) && t[major] == '.' &&
              isdigit((unsigned char)t[major + 1]) && t[major + 2] == '\0';
    long v = ok ? strtol(t, NULL, 10) : 0;
    if (!ok || v < 1 || v > CC_MAJOR_MAX) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(m, "cc"), "%s: cc must be a compute capability "
                                                           "like 8.9 (major 1 to %d, minor 0 to "
                                                           "9), found '%s'",
                         g->name, CC_MAJOR_MAX, t);
        return AITK_E_RANGE;
    }
    return AITK_OK;
}

/* An optional whole number in lo..hi (0 when absent). */
static aitk_status get_ranged(const aitk_yaml_doc *doc, const aitk_yaml_node *m, const char *name,
                              const char *key, long lo, long hi, long *out, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(m, key);
    if (!n)
        return AITK_OK;
    aitk_status st = aitk_yaml_long(doc, n, out, err);
    if (!st && (*out < lo || *out > hi)) {
        aitk_yaml_errorf(err, doc, n, "%s: %s must be from %ld to %ld, found %ld", name, key, lo,
                         hi, *out);
        return AITK_E_RANGE;
    }
    return st;
}

const char *const aitk_gpu_figure_keys[AITK_GPU_FIGURE_COUNT] = {
#define AITK_X_FIGURE_KEY(id, key) [id] = key,
    AITK_GPU_FIGURES(AITK_X_FIGURE_KEY)
#undef AITK_X_FIGURE_KEY
};
_Static_assert(AITK_GPU_FIGURE_COUNT <= 32, "aitk_gpu_spec.unverified holds one bit a figure");

/* The key node of `key` in map m (the place to name for a key that must go). */
static const aitk_yaml_node *key_node(const aitk_yaml_node *m, const char *key)
{
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->pairs[i].key->text, key) == 0)
            return m->pairs[i].key;
    return NULL;
}

/* A measured rate, {value, source}: a listed rate was measured by someone
 * (or derived from such a measurement), so it never comes without saying
 * who and how: a bare number is refused, and so is the older spelling with
 * the source in a sibling key. It stays within AITK_RATE_MAX_OVER_DATASHEET
 * of the datasheet's rate for the same precision. */
static aitk_status load_rate(const aitk_yaml_doc *doc, const aitk_yaml_node *n,
                             const aitk_gpu_spec *g, const char *key, const char *datasheet_key,
                             double datasheet, double *value, const char **source, aitk_str *err)
{
    static const char *const keys[] = {"value", "source", NULL};
    if (n->kind == AITK_YAML_SCALAR) {
        aitk_yaml_errorf(err, doc, n, "%s: %s needs its source: write "
                                      "{value: %s, source: \"who measured it, how\"}",
                         g->name, key, n->text);
        return AITK_E_PARSE;
    }
    const aitk_yaml_node *v = NULL;
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_MAP, key, err);
    if (!st)
        st = aitk_yaml_check_keys(doc, n, keys, key, err);
    if (!st)
        st = aitk_yaml_need(doc, n, "value", &v, err);
    if (!st)
        st = aitk_yaml_double(doc, v, value, err);
    if (!st)
        st = aitk_yaml_need_string(doc, n, "source", source, err);
    if (!st && strspn(*source, " \t") == strlen(*source)) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(n, "source"), "%s: %s has an empty source",
                         g->name, key);
        return AITK_E_PARSE;
    }
    if (!st && !(*value > 0 && *value <= AITK_RATE_MAX_OVER_DATASHEET * datasheet)) {
        aitk_yaml_errorf(err, doc, v, "%s: %s %g is not in (0, %.2f x %s %g]", g->name, key,
                         *value, AITK_RATE_MAX_OVER_DATASHEET, datasheet_key, datasheet);
        return AITK_E_RANGE;
    }
    return st;
}

/* matmul_bf16_tflops, and matmul_fp16_tflops where the fp16 rate differs.
 * A GPU that lists no bf16 rate gets the database's default share of its
 * datasheet rate, here and nowhere else (the share is loaded before any
 * entry); one that lists no fp16 rate computes fp16 at the bf16 rate. */
static aitk_status load_matmul_rate(const aitk_gpudb *db, const aitk_yaml_node *m,
                                    aitk_gpu_spec *g, aitk_str *err)
{
    const aitk_yaml_node *n = aitk_yaml_get(m, "matmul_bf16_tflops");
    aitk_status st = AITK_OK;
    if (n) {
        st = load_rate(db->doc, n, g, "matmul_bf16_tflops", "bf16_tflops", g->bf16_tflops,
                       &g->matmul_bf16_tflops, &g->matmul_source, err);
    } else {
        g->matmul_source = NULL;
        g->matmul_bf16_tflops = db->matmul_default_fraction * g->bf16_tflops;
    }
    g->matmul_fp16_tflops = 0;
    g->matmul_fp16_source = NULL;
    n = aitk_yaml_get(m, "matmul_fp16_tflops");
    if (!st && n)
        st = load_rate(db->doc, n, g, "matmul_fp16_tflops", "fp16_tflops", g->fp16_tflops,
                       &g->matmul_fp16_tflops, &g->matmul_fp16_source, err);
    return st;
}

double aitk_gpu_matmul_tflops(const aitk_gpu_spec *g, bool fp16)
{
    return fp16 && g->matmul_fp16_tflops > 0 ? g->matmul_fp16_tflops : g->matmul_bf16_tflops;
}

double aitk_gpu_datasheet_tflops(const aitk_gpu_spec *g, bool fp16)
{
    return fp16 && g->matmul_fp16_tflops > 0 ? g->fp16_tflops : g->bf16_tflops;
}

/* unverified: a list of the entry's figure keys, read into a set. A name
 * that is no figure key (a typo) or a figure the entry does not list would
 * otherwise mark nothing, and a derived rate would pass for a measured one. */
static aitk_status load_unverified(const aitk_yaml_doc *doc, const aitk_yaml_node *m,
                                   aitk_gpu_spec *g, aitk_str *err)
{
    g->unverified = 0;
    const aitk_yaml_node *n = aitk_yaml_get(m, "unverified");
    if (!n)
        return AITK_OK;
    aitk_status st = aitk_yaml_expect(doc, n, AITK_YAML_SEQ, "unverified", err);
    for (size_t i = 0; !st && i < n->count; i++) {
        const char *key = NULL;
        st = aitk_yaml_string(doc, n->items[i], &key, err);
        if (st)
            break;
        int f = 0;
        while (f < AITK_GPU_FIGURE_COUNT && strcmp(aitk_gpu_figure_keys[f], key) != 0)
            f++;
        if (f == AITK_GPU_FIGURE_COUNT) {
            aitk_yaml_errorf(err, doc, n->items[i], "%s: unverified lists '%s', which is not a "
                                                    "figure of a GPU entry (allowed:",
                             g->name, key);
            for (f = 0; err && f < AITK_GPU_FIGURE_COUNT; f++)
                aitk_str_appendf(err, "%s %s", f ? "," : "", aitk_gpu_figure_keys[f]);
            if (err)
                aitk_str_append(err, ")");
            return AITK_E_PARSE;
        }
        if (!aitk_yaml_get(m, key)) {
            aitk_yaml_errorf(err, doc, n->items[i], "%s: unverified lists '%s', which this "
                                                    "entry does not give", g->name, key);
            return AITK_E_PARSE;
        }
        if (g->unverified & (1u << f)) {
            aitk_yaml_errorf(err, doc, n->items[i], "%s: unverified lists '%s' twice", g->name,
                             key);
            return AITK_E_PARSE;
        }
        g->unverified |= 1u << f;
    }
    return st;
}

bool aitk_gpu_is_unverified(const aitk_gpu_spec *g, aitk_gpu_figure f)
{
    return (g->unverified >> f) & 1u;
}

aitk_status aitk_gpu_unverified_text(const aitk_gpu_spec *g, aitk_str *out)
{
    bool first = true;
    for (int f = 0; f < AITK_GPU_FIGURE_COUNT; f++)
        if (aitk_gpu_is_unverified(g, (aitk_gpu_figure)f)) {
            aitk_str_appendf(out, "%s%s", first ? "" : ", ", aitk_gpu_figure_keys[f]);
            first = false;
        }
    return aitk_str_status(out);
}

char aitk_gpu_matmul_mark(const aitk_gpu_spec *g)
{
    if (!g->matmul_source)
        return '*';
    return aitk_gpu_is_unverified(g, AITK_GPU_MATMUL_BF16_TFLOPS) ? '~' : ' ';
}

const char *aitk_gpu_matmul_kind(const aitk_gpu_spec *g)
{
    switch (aitk_gpu_matmul_mark(g)) {
    case '*': return "default";
    case '~': return "derived";
    default: return "measured";
    }
}

const char *aitk_gpu_matmul_source(const aitk_gpu_spec *g)
{
    return g->matmul_source ? g->matmul_source
                            : "default: models/gpus.yaml matmul_default_fraction x bf16_tflops";
}

static aitk_status load_gpu(const aitk_gpudb *db, const aitk_yaml_node *m, aitk_gpu_spec *g,
                            const char **alias_slots, aitk_str *err)
{
    static const char *const keys[] = {"name",        "aliases",           "vram_gb",
                                       "bandwidth_gbs", "bf16_tflops",     "fp16_tflops",
                                       "fp8_tflops",  "fp32_tflops",       "matmul_bf16_tflops",
                                       "matmul_fp16_tflops", "total_memory_gib", "cc",
                                       "pcie_gen",    "tdp_w",             "nvml_shared",
                                       "unverified",  "source",            NULL};
    const aitk_yaml_doc *doc = db->doc;
    aitk_status st = aitk_yaml_expect(doc, m, AITK_YAML_MAP, "a GPU entry", err);
    const aitk_yaml_node *n = NULL;
    /* The older spelling, before check_keys calls it merely unknown. */
    if (!st && (n = key_node(m, "matmul_source"))) {
        aitk_yaml_errorf(err, doc, n, "'matmul_source' is no longer read: write the source "
                                      "inside the figure, matmul_bf16_tflops: {value: N, "
                                      "source: \"...\"}");
        return AITK_E_PARSE;
    }
    if (!st)
        st = aitk_yaml_check_keys(doc, m, keys, "a GPU entry", err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "name", &g->name, err);
    if (!st)
        st = get_figure(doc, m, g->name, "vram_gb", true, &g->vram_gb, err);
    if (!st)
        st = get_figure(doc, m, g->name, "bandwidth_gbs", true, &g->bandwidth_gbs, err);
    if (!st)
        st = get_figure(doc, m, g->name, "bf16_tflops", true, &g->bf16_tflops, err);
    if (!st)
        st = get_figure(doc, m, g->name, "fp16_tflops", true, &g->fp16_tflops, err);
    if (!st)
        st = get_figure(doc, m, g->name, "fp8_tflops", false, &g->fp8_tflops, err);
    if (!st)
        st = get_figure(doc, m, g->name, "fp32_tflops", true, &g->fp32_tflops, err);
    if (!st)
        st = load_cc(doc, m, g, err);
    if (!st)
        st = aitk_yaml_need_string(doc, m, "source", &g->source, err);
    if (!st && (n = aitk_yaml_get(m, "nvml_shared")))
        st = aitk_yaml_string(doc, n, &g->nvml_shared, err);
    /* PCIe 7.0 is the newest generation; no board draws 5 kW. */
    if (!st)
        st = get_ranged(doc, m, g->name, "pcie_gen", 1, 7, &g->pcie_gen, err);
    if (!st)
        st = get_ranged(doc, m, g->name, "tdp_w", 1, 5000, &g->tdp_w, err);
    if (!st && (g->vram_gb <= 0 || g->bandwidth_gbs <= 0 || g->bf16_tflops <= 0)) {
        aitk_yaml_errorf(err, doc, m, "%s: vram_gb, bandwidth_gbs and bf16_tflops must be > 0",
                         g->name);
        return AITK_E_RANGE;
    }
    if (!st)
        st = load_matmul_rate(db, m, g, err);
    if (!st)
        st = aitk_gpu_load_total_memory(doc, m, g, err);
    if (!st)
        st = load_unverified(doc, m, g, err);
    /* Aliases: slots were sized by the caller (count + 1 per GPU). */
    n = aitk_yaml_get(m, "aliases");
    size_t k = 0;
    if (!st && n) {
        st = aitk_yaml_expect(doc, n, AITK_YAML_SEQ, "a list of names", err);
        for (size_t i = 0; !st && i < n->count; i++)
            st = aitk_yaml_string(doc, n->items[i], &alias_slots[k++], err);
    }
    alias_slots[k] = NULL;
    g->aliases = alias_slots;
    return st;
}

static aitk_status check_names(const aitk_gpudb *db, const aitk_yaml_node *gpus, aitk_str *err);

/* matmul_default_fraction: {value, source}, the share of its datasheet rate a
 * GPU without a measurement is taken to sustain. */
static aitk_status load_default_fraction(aitk_gpudb *db, aitk_str *err)
{
    const aitk_yaml_doc *doc = db->doc;
    const aitk_yaml_node *f = aitk_yaml_get(doc->root, "matmul_default_fraction");
    if (!f) {
        aitk_yaml_errorf(err, doc, doc->root, "missing 'matmul_default_fraction' (value and "
                                              "source)");
        return AITK_E_PARSE;
    }
    static const char *const keys[] = {"value", "source", NULL};
    aitk_status st = aitk_yaml_expect(doc, f, AITK_YAML_MAP, "matmul_default_fraction", err);
    if (!st)
        st = aitk_yaml_check_keys(doc, f, keys, "matmul_default_fraction", err);
    if (!st)
        st = get_double(doc, f, "value", true, &db->matmul_default_fraction, err);
    if (!st)
        st = aitk_yaml_need_string(doc, f, "source", &db->matmul_default_source, err);
    if (!st && !(db->matmul_default_fraction > 0 && db->matmul_default_fraction <= 1)) {
        aitk_yaml_errorf(err, doc, aitk_yaml_get(f, "value"),
                         "matmul_default_fraction %g is not in (0, 1]",
                         db->matmul_default_fraction);
        return AITK_E_RANGE;
    }
    return st;
}

aitk_status aitk_gpudb_from_doc(aitk_yaml_doc *doc, aitk_gpudb **out, aitk_str *err)
{
    *out = NULL;
    aitk_gpudb *db = aitk_calloc(1, sizeof *db);
    if (!db) {
        aitk_yaml_free(doc);
        return AITK_E_NOMEM;
    }
    db->doc = doc;
    const aitk_yaml_node *gpus = aitk_yaml_get(doc->root, "gpus");
    aitk_status st = aitk_data_check_schema(doc, 1, err);
    if (!st && !gpus) {
        aitk_yaml_errorf(err, doc, doc->root, "missing 'gpus'");
        st = AITK_E_PARSE;
    }
    if (!st)
        st = aitk_yaml_expect(doc, gpus, AITK_YAML_SEQ, "a list of GPUs", err);
    /* The default share first: each entry without a listed matmul rate takes
     * it as it loads, wherever the key stands in the file. */
    if (!st)
        st = load_default_fraction(db, err);
    size_t slots = 0;
    for (size_t i = 0; !st && i < gpus->count; i++) {
        const aitk_yaml_node *a = aitk_yaml_get(gpus->items[i], "aliases");
        slots += 1 + (a && a->kind == AITK_YAML_SEQ ? a->count : 0);
    }
    if (!st && gpus->count) {
        db->gpus = aitk_calloc(gpus->count, sizeof *db->gpus);
        db->alias_store = aitk_calloc(slots, sizeof *db->alias_store);
        if (!db->gpus || !db->alias_store)
            st = AITK_E_NOMEM;
    }
    size_t used = 0;
    for (size_t i = 0; !st && i < gpus->count; i++) {
        const aitk_yaml_node *a = aitk_yaml_get(gpus->items[i], "aliases");
        st = load_gpu(db, gpus->items[i], &db->gpus[i], db->alias_store + used, err);
        used += 1 + (a && a->kind == AITK_YAML_SEQ ? a->count : 0);
        db->count = i + 1;
    }
    if (!st)
        st = check_names(db, gpus, err);
    if (st) {
        aitk_gpudb_free(db);
        return st;
    }
    *out = db;
    return AITK_OK;
}

aitk_status aitk_gpudb_load(aitk_gpudb **out, aitk_str *err)
{
    aitk_yaml_doc *doc = NULL;
    *out = NULL;
    aitk_status st = aitk_data_load_yaml("models/gpus.yaml", &doc, err);
    return st ? st : aitk_gpudb_from_doc(doc, out, err);
}

void aitk_gpudb_free(aitk_gpudb *db)
{
    if (!db)
        return;
    aitk_free(db->alias_store);
    aitk_free(db->gpus);
    aitk_yaml_free(db->doc);
    aitk_free(db);
}

static bool is_sep(char c) { return c == ' ' || c == '-' || c == '_'; }

/* Whether the words left of a name after a partial match make it another
 * product than the one asked for: "RTX 4070" is not the RTX 4070 Ti SUPER,
 * nor "RTX 6000" (a Turing Quadro) the RTX 6000 Ada, nor "H100" the H100
 * NVL; whereas "A100 80GB" is still both 80 GB A100s (PCIe, SXM). */
static bool names_another_product(const char *rest)
{
    static const char *const tiers[] = {"ti", "super", "s", "d", "ada", "laptop", "mobile",
                                        "max", "nvl", NULL};
    while (*rest) {
        size_t len = 0;
        while (rest[len] && !is_sep(rest[len]))
            len++;
        for (const char *const *w = tiers; *w; w++)
            if (strlen(*w) == len && strncasecmp(*w, rest, len) == 0)
                return true;
        rest += len;
        while (is_sep(*rest))
            rest++;
    }
    return false;
}

/* Compares with case, spaces, '-' and '_' ignored. `partial`: the query
 * within the name, as whole words: "GeForce RTX 4090" within "NVIDIA GeForce
 * RTX 4090", but not "L40" within "NVIDIA L40S" nor "H20" within "H200" --
 * those are other GPUs, whose figures must not stand in for theirs. */
static bool name_match(const char *query, const char *name, bool partial)
{
    for (const char *start = name; *start; start++) {
        if (start > name && !(is_sep(start[-1]) && !is_sep(*start)))
            continue; /* a partial match starts a word */
        const char *q = query, *n = start;
        for (;;) {
            while (is_sep(*q))
                q++;
            while (is_sep(*n))
                n++;
            if (!*q)
                break;
            if (!*n || tolower((unsigned char)*q) != tolower((unsigned char)*n))
                break;
            q++;
            n++;
        }
        /* n stands past any separators after the last matched character, so
         * the match ends a word when the name ends or a separator came. */
        if (!*q && (!*n || (partial && n > start && is_sep(n[-1]) && !names_another_product(n))))
            return true;
        if (!partial)
            return false;
    }
    return false;
}

static bool gpu_matches(const aitk_gpu_spec *g, const char *query, bool partial)
{
    if (name_match(query, g->name, partial))
        return true;
    for (const char *const *a = g->aliases; a && *a; a++)
        if (name_match(query, *a, partial))
            return true;
    return false;
}

/* Every name and alias finds one GPU: an empty name would match nothing a
 * user types, and a name two rows share would hand one row's figures to the
 * other's GPU. */
static aitk_status check_names(const aitk_gpudb *db, const aitk_yaml_node *gpus, aitk_str *err)
{
    for (size_t i = 0; i < db->count; i++) {
        const aitk_gpu_spec *g = &db->gpus[i];
        /* The name, then each alias. */
        for (const char *const *a = g->aliases, *name = g->name; name;
             name = a && *a ? *a++ : NULL) {
            if (strspn(name, " -_") == strlen(name)) {
                aitk_yaml_errorf(err, db->doc, gpus->items[i], "a GPU name is empty");
                return AITK_E_PARSE;
            }
            for (size_t j = 0; j < i; j++)
                if (gpu_matches(&db->gpus[j], name, false)) {
                    aitk_yaml_errorf(err, db->doc, gpus->items[i],
                                     "'%s' already names '%s': each name must find one GPU",
                                     name, db->gpus[j].name);
                    return AITK_E_PARSE;
                }
        }
        /* A shared NVML name finds no row: were it some row's name or
         * alias, that row would stand in for every card of the name. */
        for (size_t j = 0; g->nvml_shared && j < db->count; j++)
            if (gpu_matches(&db->gpus[j], g->nvml_shared, false)) {
                aitk_yaml_errorf(err, db->doc, gpus->items[i],
                                 "%s: nvml_shared '%s' also names '%s': a name NVML gives cards "
                                 "of more than one memory size must not find a row",
                                 g->name, g->nvml_shared, db->gpus[j].name);
                return AITK_E_PARSE;
            }
    }
    return AITK_OK;
}

static bool is_shared_nvml_name(const aitk_gpu_spec *g, const char *name)
{
    return g->nvml_shared && name_match(name, g->nvml_shared, false);
}

static aitk_status find_gpu(const aitk_gpudb *db, const char *name,
                            const aitk_gpu_spec **out, aitk_str *err)
{
    *out = NULL;
    for (size_t i = 0; i < db->count; i++) {
        if (gpu_matches(&db->gpus[i], name, false)) {
            *out = &db->gpus[i];
            return AITK_OK;
        }
    }
    size_t hits = 0;
    for (size_t i = 0; i < db->count; i++) {
        if (gpu_matches(&db->gpus[i], name, true)) {
            hits++;
            *out = &db->gpus[i];
        }
    }
    if (hits == 1)
        return AITK_OK;
    *out = NULL;
    if (hits > 1) {
        aitk_str_appendf(err, "GPU name '%s' is ambiguous: it matches", name);
        for (size_t i = 0, k = 0; i < db->count; i++)
            if (gpu_matches(&db->gpus[i], name, true))
                aitk_str_appendf(err, "%s '%s'", k++ ? "," : "", db->gpus[i].name);
        return AITK_E_INVAL;
    }
    /* "NVIDIA GeForce RTX 4060 Ti", probed: 16 GB or 8 GB? */
    size_t shared = 0;
    for (size_t i = 0; i < db->count; i++)
        if (is_shared_nvml_name(&db->gpus[i], name)) {
            if (!shared++)
                aitk_str_appendf(err, "'%s' is the name NVML gives cards of more than one "
                                      "memory size; listed:", name);
            aitk_str_appendf(err, "%s '%s'", shared > 1 ? "," : "", db->gpus[i].name);
        }
    if (shared) {
        aitk_str_append(err, " (if it is that card, give that name)");
        return AITK_E_INVAL;
    }
    aitk_str_appendf(err, "unknown GPU '%s' (see `aitk-validate gpus` for the list)", name);
    return AITK_E_NOTFOUND;
}

aitk_status aitk_gpudb_find(const aitk_gpudb *db, const char *name, const aitk_gpu_spec **out,
                            aitk_str *err)
{
    /* err may be NULL: messages then go to a scratch string. */
    aitk_str scratch = AITK_STR_INIT;
    aitk_status st = find_gpu(db, name, out, err ? err : &scratch);
    aitk_str_free(&scratch);
    return st;
}

/* The memory NVML reports for a card against its row's vram_gb: ECC on a
 * GDDR6 card keeps a 16th (an A40 shows 44.99 GiB of 48), and a virtual
 * machine or WSL may hide a little more; a card of the same name with half
 * or two thirds the memory is far outside. */
#define PROBED_VRAM_MIN_SHARE 0.85
#define PROBED_VRAM_MAX_SHARE 1.02

static double probed_share(const aitk_gpu_spec *g, double memory_bytes)
{
    return memory_bytes / (g->vram_gb * 1073741824.0);
}

bool aitk_gpudb_is_shared_name(const aitk_gpudb *db, const char *name)
{
    for (size_t i = 0; i < db->count; i++)
        if (is_shared_nvml_name(&db->gpus[i], name))
            return true;
    return false;
}

aitk_status aitk_gpudb_find_probed(const aitk_gpudb *db, const char *name, double memory_bytes,
                                   const aitk_gpu_spec **out, aitk_str *err)
{
    aitk_str why = AITK_STR_INIT;
    aitk_status st = find_gpu(db, name, out, &why);
    size_t shared = 0;
    for (size_t i = 0; st == AITK_E_INVAL && i < db->count; i++)
        shared += is_shared_nvml_name(&db->gpus[i], name);
    if (!shared || !(memory_bytes > 0)) {
        if (err)
            aitk_str_append(err, aitk_str_cstr(&why));
        aitk_str_free(&why);
        return st;
    }
    aitk_str_free(&why);
    /* The row whose memory the probed card has. */
    const aitk_gpu_spec *best = NULL;
    for (size_t i = 0; i < db->count; i++) {
        const aitk_gpu_spec *g = &db->gpus[i];
        const double share = probed_share(g, memory_bytes);
        if (is_shared_nvml_name(g, name) && share >= PROBED_VRAM_MIN_SHARE &&
            share <= PROBED_VRAM_MAX_SHARE &&
            (!best || fabs(share - 1) < fabs(probed_share(best, memory_bytes) - 1)))
            best = g;
    }
    if (best) {
        *out = best;
        return AITK_OK;
    }
    if (err) {
        aitk_str_appendf(err, "'%s' with %.1f GiB is none of the cards of that name listed:",
                         name, memory_bytes / 1073741824.0);
        for (size_t i = 0, k = 0; i < db->count; i++)
            if (is_shared_nvml_name(&db->gpus[i], name))
                aitk_str_appendf(err, "%s '%s' (%g GB)", k++ ? "," : "", db->gpus[i].name,
                                 db->gpus[i].vram_gb);
    }
    *out = NULL;
    return AITK_E_NOTFOUND;
}
