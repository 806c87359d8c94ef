/* ELF reading through libelf (elfutils); see elf.h for what is read and why.
 *
 * libelf bounds-checks section data and string offsets for us; what it cannot
 * know is our loops: version chains are walked with counts capped by the
 * section size and offsets that must move forward, so a hostile file cannot
 * make a walk run forever. */
#include "validate/libdeps/elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"

static aitk_status fail(aitk_str *err, const char *name, const char *what)
{
    aitk_str_appendf(err, "%s: %s", name, what);
    return AITK_E_PARSE;
}

static aitk_status fail_elf(aitk_str *err, const char *name, const char *what)
{
    aitk_str_appendf(err, "%s: %s (%s)", name, what, elf_errmsg(-1));
    return AITK_E_PARSE;
}

static aitk_status list_push(char ***items, size_t *count, const char *text)
{
    char **grown = aitk_realloc(*items, (*count + 1) * sizeof **items);
    if (!grown)
        return AITK_E_NOMEM;
    *items = grown;
    if (!(grown[*count] = aitk_strdup(text)))
        return AITK_E_NOMEM;
    (*count)++;
    return AITK_OK;
}

static aitk_status set_once(char **slot, const char *text)
{
    if (*slot) /* a repeated tag: ld.so uses the last one; keep the first, it is rare */
        return AITK_OK;
    return (*slot = aitk_strdup(text)) ? AITK_OK : AITK_E_NOMEM;
}

/* String `off` of string table section `link`; NULL with a message when the
 * link is not a string table or the offset is out of bounds. */
static const char *str_at(Elf *e, size_t link, size_t off, const char *name, aitk_str *err)
{
    const char *s = elf_strptr(e, link, off);
    if (!s)
        aitk_str_appendf(err, "%s: string offset %zu outside string table (section %zu): %s",
                         name, off, link, elf_errmsg(-1));
    return s;
}

static aitk_status read_dynamic(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, size_t index,
                                const char *name, aitk_elf_info *out, aitk_str *err)
{
    if (sh->sh_link == index || sh->sh_link == 0)
        return fail(err, name, "dynamic section's string table link points at itself or nowhere");
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return fail_elf(err, name, "unreadable dynamic section");
    size_t entsize = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
    size_t n = entsize ? d->d_size / entsize : 0;
    aitk_status st = AITK_OK;
    /* Bounded by the section size even when DT_NULL never comes. */
    for (size_t i = 0; i < n && !st; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(d, (int)i, &dyn))
            return fail_elf(err, name, "unreadable dynamic entry");
        if (dyn.d_tag == DT_NULL)
            break;
        const char *s = NULL;
        switch (dyn.d_tag) {
        case DT_NEEDED: case DT_SONAME: case DT_RPATH: case DT_RUNPATH:
            if (!(s = str_at(e, sh->sh_link, dyn.d_un.d_val, name, err)))
                return AITK_E_PARSE;
            break;
        default:
            break;
        }
        if (dyn.d_tag == DT_NEEDED)
            st = list_push(&out->needed, &out->needed_count, s);
        else if (dyn.d_tag == DT_SONAME)
            st = set_once(&out->soname, s);
        else if (dyn.d_tag == DT_RPATH)
            st = set_once(&out->rpath, s);
        else if (dyn.d_tag == DT_RUNPATH)
            st = set_once(&out->runpath, s);
        else if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_NODEFLIB))
            out->nodeflib = true;
    }
    return st;
}

static aitk_status read_verneed(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                                aitk_elf_info *out, aitk_str *err)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return fail_elf(err, name, "unreadable version-needs section");
    size_t off = 0, max = d->d_size / sizeof(GElf_Verneed) + 1;
    for (size_t i = 0; i < sh->sh_info && i < max; i++) {
        GElf_Verneed vn;
        if (!gelf_getverneed(d, (int)off, &vn))
            return fail_elf(err, name, "version-needs entry outside its section");
        const char *file = str_at(e, sh->sh_link, vn.vn_file, name, err);
        if (!file)
            return AITK_E_PARSE;
        size_t aoff = off + vn.vn_aux;
        for (size_t j = 0; j < vn.vn_cnt && j < max; j++) {
            GElf_Vernaux va;
            if (aoff > (size_t)INT32_MAX || !gelf_getvernaux(d, (int)aoff, &va))
                return fail_elf(err, name, "version-needs auxiliary entry outside its section");
            const char *ver = str_at(e, sh->sh_link, va.vna_name, name, err);
            if (!ver)
                return AITK_E_PARSE;
            aitk_elf_verneed *g = aitk_realloc(out->verneed, (out->verneed_count + 1) * sizeof *g);
            if (!g)
                return AITK_E_NOMEM;
            out->verneed = g;
            g[out->verneed_count] = (aitk_elf_verneed){aitk_strdup(file), aitk_strdup(ver)};
            out->verneed_count++;
            if (!g[out->verneed_count - 1].file || !g[out->verneed_count - 1].version)
                return AITK_E_NOMEM;
            if (va.vna_next == 0)
                break;
            aoff += va.vna_next;
        }
        if (vn.vn_next == 0)
            break;
        off += vn.vn_next;
        if (off > (size_t)INT32_MAX)
            return fail(err, name, "version-needs chain runs past its section");
    }
    return AITK_OK;
}

static aitk_status read_verdef(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                               aitk_elf_info *out, aitk_str *err)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return fail_elf(err, name, "unreadable version-definitions section");
    size_t off = 0, max = d->d_size / sizeof(GElf_Verdef) + 1;
    for (size_t i = 0; i < sh->sh_info && i < max; i++) {
        GElf_Verdef vd;
        if (!gelf_getverdef(d, (int)off, &vd))
            return fail_elf(err, name, "version definition outside its section");
        if (!(vd.vd_flags & VER_FLG_BASE) && vd.vd_cnt > 0) {
            GElf_Verdaux va;
            size_t aoff = off + vd.vd_aux;
            if (aoff > (size_t)INT32_MAX || !gelf_getverdaux(d, (int)aoff, &va))
                return fail_elf(err, name, "version definition name outside its section");
            const char *ver = str_at(e, sh->sh_link, va.vda_name, name, err);
            if (!ver)
                return AITK_E_PARSE;
            aitk_status st = list_push(&out->verdef, &out->verdef_count, ver);
            if (st)
                return st;
        }
        if (vd.vd_next == 0)
            break;
        off += vd.vd_next;
        if (off > (size_t)INT32_MAX)
            return fail(err, name, "version-definition chain runs past its section");
    }
    return AITK_OK;
}

static aitk_status read_interp(Elf *e, const char *name, aitk_elf_info *out, aitk_str *err)
{
    size_t phnum = 0, size = 0;
    if (elf_getphdrnum(e, &phnum) != 0)
        return fail_elf(err, name, "unreadable program headers");
    const char *raw = elf_rawfile(e, &size);
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph))
            return fail_elf(err, name, "unreadable program header");
        if (ph.p_type != PT_INTERP)
            continue;
        if (!raw || ph.p_offset >= size || ph.p_filesz > size - ph.p_offset || ph.p_filesz == 0)
            return fail(err, name, "interpreter path lies outside the file");
        out->interp = aitk_strndup(raw + ph.p_offset, ph.p_filesz);
        return out->interp ? AITK_OK : AITK_E_NOMEM;
    }
    return AITK_OK;
}

static aitk_status read_elf(Elf *e, const char *name, aitk_elf_info *out, aitk_str *err)
{
    if (elf_kind(e) != ELF_K_ELF)
        return fail(err, name, "not an ELF file");
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh))
        return fail_elf(err, name, "unreadable ELF header");
    out->elf_class = gelf_getclass(e);
    out->machine = eh.e_machine;
    out->osabi = eh.e_ident[EI_OSABI];
    out->type = eh.e_type;
    aitk_status st = read_interp(e, name, out, err);
    size_t shnum = 0;
    if (!st && elf_getshdrnum(e, &shnum) != 0)
        return fail_elf(err, name, "unreadable section headers");
    bool seen_dynamic = false;
    for (size_t i = 1; i < shnum && !st; i++) {
        Elf_Scn *scn = elf_getscn(e, i);
        GElf_Shdr sh;
        if (!scn || !gelf_getshdr(scn, &sh))
            return fail_elf(err, name, "unreadable section header");
        if (sh.sh_type == SHT_DYNAMIC && !seen_dynamic) {
            seen_dynamic = true;
            st = read_dynamic(e, scn, &sh, i, name, out, err);
        } else if (sh.sh_type == SHT_GNU_verneed) {
            st = read_verneed(e, scn, &sh, name, out, err);
        } else if (sh.sh_type == SHT_GNU_verdef) {
            st = read_verdef(e, scn, &sh, name, out, err);
        }
    }
    return st;
}

static aitk_status finish(aitk_status st, aitk_elf_info *out)
{
    if (st)
        aitk_elf_info_free(out);
    return st;
}

aitk_status aitk_elf_read_mem(const char *name, const void *data, size_t len, aitk_elf_info *out,
                              aitk_str *err)
{
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    if (len == 0)
        return fail(err, name, "empty file");
    /* libelf may convert in place; the caller's bytes stay untouched. */
    char *copy = aitk_malloc(len);
    if (!copy)
        return AITK_E_NOMEM;
    memcpy(copy, data, len);
    Elf *e = elf_memory(copy, len);
    aitk_status st = e ? read_elf(e, name, out, err) : fail_elf(err, name, "not readable as ELF");
    if (e)
        elf_end(e);
    aitk_free(copy);
    return finish(st, out);
}

aitk_status aitk_elf_read_file(const char *path, aitk_elf_info *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        aitk_str_appendf(err, "%s: %s", path, strerror(errno));
        return AITK_E_IO;
    }
    struct stat sb;
    aitk_status st;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = fail(err, path, "not a regular file");
    } else if (sb.st_size == 0) {
        st = fail(err, path, "empty file");
    } else {
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        st = e ? read_elf(e, path, out, err) : fail_elf(err, path, "not readable as ELF");
        if (e)
            elf_end(e);
    }
    close(fd);
    return finish(st, out);
}
