/* Golden file reader: bounds-checked parse of the little-endian layout that
 * gen_golden.py writes. */
#include "golden.h"

#include <string.h>

#include "common/alloc.h"
#include "common/fileio.h"

typedef struct cursor {
    const unsigned char *p;
    size_t len, at;
    const char *path;
    aitk_str *err;
} cursor;

static aitk_status fail(cursor *c, const char *what)
{
    aitk_str_appendf(c->err, "%s: %s at byte %zu (file is %zu bytes)", c->path, what, c->at,
                     c->len);
    return AITK_E_PARSE;
}

static aitk_status take(cursor *c, void *dst, size_t n, const char *what)
{
    if (n > c->len - c->at)
        return fail(c, what);
    memcpy(dst, c->p + c->at, n);
    c->at += n;
    return AITK_OK;
}

static aitk_status take_u32(cursor *c, uint32_t *v, const char *what)
{
    unsigned char b[4];
    aitk_status st = take(c, b, 4, what);
    if (!st)
        *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return st;
}

static aitk_status parse(aitk_golden *g, cursor *c)
{
    char magic[8];
    uint32_t version, count;
    aitk_status st;
    if ((st = take(c, magic, 8, "expected the 8-byte magic")))
        return st;
    if (memcmp(magic, "AITKGOLD", 8) != 0)
        return fail(c, "magic is not AITKGOLD");
    if ((st = take_u32(c, &version, "expected the version")))
        return st;
    if (version != 1)
        return fail(c, "unsupported version (expected 1)");
    if ((st = take_u32(c, &count, "expected the tensor count")))
        return st;
    /* Each tensor needs at least 12 bytes: a bound that stops a corrupt count
     * from asking for a huge table. */
    if (count > (c->len - c->at) / 12)
        return fail(c, "tensor count larger than the file can hold");
    g->tensors = aitk_calloc(count ? count : 1, sizeof *g->tensors);
    if (!g->tensors)
        return AITK_E_NOMEM;
    for (uint32_t i = 0; i < count; i++) {
        aitk_golden_tensor *t = &g->tensors[i];
        uint32_t name_len, ndim;
        if ((st = take_u32(c, &name_len, "expected a name length")))
            return st;
        if (name_len == 0 || name_len > c->len - c->at)
            return fail(c, "name length out of range");
        t->name = aitk_strndup((const char *)c->p + c->at, name_len);
        if (!t->name)
            return AITK_E_NOMEM;
        c->at += name_len;
        g->count = i + 1; /* owned from here on, freed with the rest */
        if ((st = take_u32(c, &ndim, "expected ndim")))
            return st;
        if (ndim < 1 || ndim > AITK_GOLDEN_MAX_DIMS)
            return fail(c, "ndim out of range (1..8)");
        t->ndim = (int)ndim;
        size_t n = 1;
        for (uint32_t k = 0; k < ndim; k++) {
            if ((st = take_u32(c, &t->dims[k], "expected a dimension")))
                return st;
            if (t->dims[k] == 0 || n > (c->len - c->at) / 4 / t->dims[k])
                return fail(c, "dimension zero or past the end of the file");
            n *= t->dims[k];
        }
        t->count = n;
        t->data = aitk_malloc(n * sizeof *t->data);
        if (!t->data)
            return AITK_E_NOMEM;
        for (size_t k = 0; k < n; k++) {
            uint32_t bits;
            if ((st = take_u32(c, &bits, "expected tensor data")))
                return st;
            memcpy(&t->data[k], &bits, sizeof bits);
        }
    }
    if (c->at != c->len)
        return fail(c, "trailing bytes after the last tensor");
    return AITK_OK;
}

aitk_status aitk_golden_load(aitk_golden *g, const char *path, aitk_str *err)
{
    *g = (aitk_golden){0};
    char *data = NULL;
    size_t len = 0;
    aitk_status st = aitk_file_read(path, (size_t)64 << 20, &data, &len, err);
    if (st)
        return st;
    cursor c = {(const unsigned char *)data, len, 0, path, err};
    st = parse(g, &c);
    aitk_free(data);
    if (st)
        aitk_golden_free(g);
    return st;
}

const aitk_golden_tensor *aitk_golden_get(const aitk_golden *g, const char *name)
{
    for (size_t i = 0; i < g->count; i++)
        if (strcmp(g->tensors[i].name, name) == 0)
            return &g->tensors[i];
    return NULL;
}

void aitk_golden_free(aitk_golden *g)
{
    for (size_t i = 0; i < g->count; i++) {
        aitk_free(g->tensors[i].name);
        aitk_free(g->tensors[i].data);
    }
    aitk_free(g->tensors);
    *g = (aitk_golden){0};
}
