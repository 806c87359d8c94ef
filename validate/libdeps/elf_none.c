/* ELF reading in a build without libelf (the Windows build): every call says
 * so, and the tree shows the file as unreadable with this reason instead of
 * guessing. Diagnosing Linux libraries is the Linux build's job. */
#include <string.h>

#include "validate/libdeps/elf.h"

static aitk_status unsupported(const char *name, aitk_elf_info *out, aitk_str *err)
{
    memset(out, 0, sizeof *out);
    aitk_str_appendf(err, "%s: ELF files are read by the Linux build of aitk-validate "
                          "(this build has no libelf)", name);
    return AITK_E_UNSUPPORTED;
}

aitk_status aitk_elf_read_mem(const char *name, const void *data, size_t len, aitk_elf_info *out,
                              aitk_str *err)
{
    (void)data;
    (void)len;
    return unsupported(name, out, err);
}

aitk_status aitk_elf_read_file(const char *path, aitk_elf_info *out, aitk_str *err)
{
    return unsupported(path, out, err);
}

aitk_status aitk_elf_read_fd(int fd, const char *name, aitk_elf_info *out, aitk_str *err)
{
    (void)fd;
    return unsupported(name, out, err);
}

aitk_status aitk_elf_read_defs(const char *path, aitk_elf_defs **out, aitk_str *err)
{
    aitk_elf_info none;
    *out = NULL;
    return unsupported(path, &none, err);
}

bool aitk_elf_defs_binds(const aitk_elf_defs *defs, const char *name, const char *version)
{
    (void)defs;
    (void)name;
    (void)version;
    return false;
}

void aitk_elf_defs_free(aitk_elf_defs *defs)
{
    (void)defs;
}
