/* The export side of the PE reader: the export directory's names and
 * forwarders (read when asked, AITK_PE_READ_EXPORTS) and the lookups the
 * missing-function checks make in them. */
#include <stdlib.h>
#include <string.h>

#include "validate/libdeps/pe_view.h"

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_forward(const void *a, const void *b)
{
    return strcmp(((const aitk_pe_forward *)a)->name, ((const aitk_pe_forward *)b)->name);
}

aitk_status aitk_pe_read_exports(const view *v, uint32_t rva, uint32_t size,
                                 aitk_pe_info *out)
{
    if (rva == 0 || size == 0)
        return AITK_OK;
    size_t off;
    uint32_t count, names_rva, funcs_rva, ords_rva;
    if (!rva_to_off(v, rva, PE_EXPORT_DIRECTORY_SIZE, &off) ||
        !rd32(v, off + PE_EXPORT_ORDINAL_BASE, &out->ordinal_base) ||
        !rd32(v, off + PE_EXPORT_ADDRESS_TABLE_ENTRIES, &out->function_count) ||
        !rd32(v, off + PE_EXPORT_NUMBER_OF_NAME_POINTERS, &count) ||
        !rd32(v, off + PE_EXPORT_ADDRESS_TABLE_RVA, &funcs_rva) ||
        !rd32(v, off + PE_EXPORT_NAME_POINTER_RVA, &names_rva) ||
        !rd32(v, off + PE_EXPORT_ORDINAL_TABLE_RVA, &ords_rva))
        return bad(v, "export directory lies outside the file");
    if (count > v->len / 4 || out->function_count > v->len / 4)
        return bad(v, "export name count larger than the file could hold");
    if (count == 0)
        return AITK_OK;
    size_t table, ords = 0, funcs = 0;
    if (!rva_to_off(v, names_rva, (size_t)count * 4, &table))
        return bad(v, "export name table lies outside the file");
    /* Forwarders: a function entry pointing inside the export directory is
     * the text "dll.function". Without readable tables there are none. */
    bool fwd_tables = out->function_count &&
                      rva_to_off(v, ords_rva, (size_t)count * 2, &ords) &&
                      rva_to_off(v, funcs_rva, (size_t)out->function_count * 4, &funcs);
    out->exports = aitk_calloc(count, sizeof *out->exports);
    if (!out->exports)
        return AITK_E_NOMEM;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t nrva;
        if (!rd32(v, table + (size_t)i * 4, &nrva))
            return bad(v, "export name table lies outside the file");
        aitk_status st =
            str_at_rva(v, nrva, PE_MAX_SYMBOL_NAME, "export name", &out->exports[i]);
        if (st)
            return st;
        out->export_count++;
        uint32_t ord = 0, frva = 0;
        if (fwd_tables && rd16(v, ords + (size_t)i * 2, &ord) && ord < out->function_count &&
            rd32(v, funcs + (size_t)ord * 4, &frva) && frva >= rva && frva - rva < size) {
            aitk_pe_forward *g =
                aitk_realloc(out->forwards, (out->forward_count + 1) * sizeof *g);
            if (!g)
                return AITK_E_NOMEM;
            out->forwards = g;
            aitk_pe_forward *f = &g[out->forward_count];
            *f = (aitk_pe_forward){0};
            if (!(f->name = aitk_strdup(out->exports[i])))
                return AITK_E_NOMEM;
            out->forward_count++;
            if ((st = str_at_rva(v, frva, PE_MAX_SYMBOL_NAME, "export forwarder", &f->target)))
                return st;
        }
    }
    if (out->forward_count)
        qsort(out->forwards, out->forward_count, sizeof *out->forwards, cmp_forward);
    /* The loader binary-searches this table, so it should be sorted
     * already; a hostile file need not be, and our lookups must not lie. */
    qsort(out->exports, out->export_count, sizeof *out->exports, cmp_name);
    return AITK_OK;
}

static int cmp_key_name(const void *key, const void *item)
{
    return strcmp((const char *)key, *(char *const *)item);
}

static int cmp_key_forward(const void *key, const void *item)
{
    return strcmp((const char *)key, ((const aitk_pe_forward *)item)->name);
}

bool aitk_pe_exports_name(const aitk_pe_info *pe, const char *name)
{
    return pe->export_count &&
           bsearch(name, pe->exports, pe->export_count, sizeof *pe->exports, cmp_key_name);
}

/* The loader indexes the export address table with ordinal - Base and fails
 * past NumberOfFunctions. */
bool aitk_pe_exports_ordinal(const aitk_pe_info *pe, uint32_t o)
{
    return o >= pe->ordinal_base && o - pe->ordinal_base < pe->function_count;
}

bool aitk_pe_exports_function(const aitk_pe_info *pe, const char *fn)
{
    if (fn[0] != '#')
        return aitk_pe_exports_name(pe, fn);
    char *end = NULL;
    unsigned long o = strtoul(fn + 1, &end, 10);
    return end != fn + 1 && !*end && o <= UINT32_MAX && aitk_pe_exports_ordinal(pe, (uint32_t)o);
}

const aitk_pe_forward *aitk_pe_find_forward(const aitk_pe_info *pe, const char *name)
{
    return pe->forward_count ? bsearch(name, pe->forwards, pe->forward_count,
                                       sizeof *pe->forwards, cmp_key_forward)
                             : NULL;
}
