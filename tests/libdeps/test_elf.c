/* The ELF reader against readelf (binutils, an independent reader) on the
 * gcc-built fixtures and real system libraries, the version needs of the
 * GLIBC_2.99 fixture, and corrupt files: each gives a message naming the
 * file and never a crash. Files without section headers are read through
 * PT_DYNAMIC; cut copies say they are cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <elf.h>

#include "fixtures.h"
#include "validate/libdeps/elf.h"

static const char *find_in(const char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

/* readelf -d: "(NEEDED) Shared library: [x]" etc., as "TAG=value\n" lines. */
static void readelf_dynamic(const char *path, aitk_str *out)
{
    aitk_str text = AITK_STR_INIT;
    const char *argv[] = {"readelf", "-dW", path, NULL};
    assert_int_equal(fx_run(argv, &text), 0);
    const char *tags[] = {"(NEEDED)", "(SONAME)", "(RPATH)", "(RUNPATH)"};
    for (const char *line = text.ptr; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        for (size_t t = 0; t < 4; t++) {
            const char *tag = find_in(line, n, tags[t]);
            const char *lb = tag ? memchr(tag, '[', n - (size_t)(tag - line)) : NULL;
            const char *rb = lb ? memchr(lb, ']', n - (size_t)(lb - line)) : NULL;
            if (rb)
                aitk_str_appendf(out, "%s=%.*s\n", tags[t], (int)(rb - lb - 1), lb + 1);
        }
        line = end ? end + 1 : NULL;
    }
    aitk_str_free(&text);
}

static void ours_dynamic(const aitk_elf_info *e, aitk_str *out)
{
    /* Compared as sorted lines: readelf prints in file order. */
    for (size_t i = 0; i < e->needed_count; i++)
        aitk_str_appendf(out, "(NEEDED)=%s\n", e->needed[i]);
    if (e->soname)
        aitk_str_appendf(out, "(SONAME)=%s\n", e->soname);
    if (e->rpath)
        aitk_str_appendf(out, "(RPATH)=%s\n", e->rpath);
    if (e->runpath)
        aitk_str_appendf(out, "(RUNPATH)=%s\n", e->runpath);
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of `s`, sorted, joined again. */
static void sort_lines(aitk_str *s)
{
    char *lines[512];
    size_t n = 0;
    for (char *p = s->ptr; p && *p && n < 512;) {
        size_t k = strcspn(p, "\n");
        lines[n++] = aitk_strndup(p, k);
        p += k + (p[k] != '\0');
    }
    qsort(lines, n, sizeof *lines, cmp_line);
    aitk_str_clear(s);
    for (size_t i = 0; i < n; i++) {
        aitk_str_appendf(s, "%s\n", lines[i]);
        aitk_free(lines[i]);
    }
}

static void test_dynamic_matches_readelf(void **state)
{
    (void)state;
    const char *files[] = {
        FX "/elf/chain/libtop.so", FX "/elf/chain/sub/libmid.so.1", FX "/elf/rpath/libold.so",
        FX "/elf/wrongclass/libuser.so", FX "/elf/wrongclass/d32/libdual.so",
        FX "/elf/missing/libneedsgone.so", FX "/elf/glibc/libtoonew.so",
        "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib64/libcublas.so.13",
        "/usr/bin/ls"};
    size_t checked = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        if (!fx_exists(files[i]))
            continue;
        aitk_elf_info e;
        aitk_str err = AITK_STR_INIT, ours = AITK_STR_INIT, theirs = AITK_STR_INIT;
        if (aitk_elf_read_file(files[i], &e, &err) != AITK_OK)
            fail_msg("%s", aitk_str_cstr(&err));
        ours_dynamic(&e, &ours);
        readelf_dynamic(files[i], &theirs);
        sort_lines(&ours);
        sort_lines(&theirs);
        if (strcmp(aitk_str_cstr(&ours), aitk_str_cstr(&theirs)) != 0)
            fail_msg("%s:\nours:\n%s\nreadelf:\n%s", files[i], aitk_str_cstr(&ours),
                     aitk_str_cstr(&theirs));
        checked++;
        aitk_elf_info_free(&e);
        aitk_str_free(&err);
        aitk_str_free(&ours);
        aitk_str_free(&theirs);
    }
    assert_true(checked >= 9);
}

static void test_fixture_facts(void **state)
{
    (void)state;
    aitk_elf_info e;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_elf_read_file(FX "/elf/wrongclass/d32/libdual.so", &e, &err), AITK_OK);
    assert_int_equal(e.elf_class, ELFCLASS32);
    assert_int_equal(e.machine, EM_386);
    aitk_elf_info_free(&e);
    int cls = 0;
    unsigned mach = 0;
    assert_int_equal(aitk_elf_peek(FX "/elf/wrongclass/d64/libdual.so", &cls, &mach, &err),
                     AITK_OK);
    assert_int_equal(cls, ELFCLASS64);
    assert_int_equal(mach, EM_X86_64);
    /* The version script gave libtoonew.so a need for GLIBC_2.99 from libc.so.6. */
    assert_int_equal(aitk_elf_read_file(FX "/elf/glibc/libtoonew.so", &e, &err), AITK_OK);
    bool found = false;
    for (size_t i = 0; i < e.verneed_count; i++)
        found |= strcmp(e.verneed[i].file, "libc.so.6") == 0 &&
                 strcmp(e.verneed[i].version, "GLIBC_2.99") == 0;
    assert_true(found);
    aitk_elf_info_free(&e);
    /* libc defines GLIBC_2.2.5 (x86-64's first) and provides many versions. */
    assert_int_equal(aitk_elf_read_file("/lib/x86_64-linux-gnu/libc.so.6", &e, &err), AITK_OK);
    found = false;
    for (size_t i = 0; i < e.verdef_count; i++)
        found |= strcmp(e.verdef[i], "GLIBC_2.2.5") == 0;
    assert_true(found);
    assert_true(e.verdef_count > 20);
    aitk_elf_info_free(&e);
    /* An executable has an interpreter. */
    assert_int_equal(aitk_elf_read_file("/usr/bin/ls", &e, &err), AITK_OK);
    assert_non_null(e.interp);
    assert_non_null(strstr(e.interp, "ld-linux"));
    aitk_elf_info_free(&e);
    aitk_str_free(&err);
}

static void expect_error(const void *data, size_t len, const char *needle)
{
    aitk_elf_info e;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_elf_read_mem("broken.so", data, len, &e, &err), AITK_E_PARSE);
    if (!strstr(aitk_str_cstr(&err), "broken.so: ") ||
        (needle && !strstr(aitk_str_cstr(&err), needle)))
        fail_msg("message '%s' lacks the file name or '%s'", aitk_str_cstr(&err), needle);
    assert_null(e.needed);
    aitk_str_free(&err);
}

/* Section header of the SHT_DYNAMIC section of a 64-bit little-endian image. */
static Elf64_Shdr *dynamic_shdr(unsigned char *img, size_t *index)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    for (size_t i = 0; i < eh->e_shnum; i++) {
        Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff + i * eh->e_shentsize);
        if (sh->sh_type == SHT_DYNAMIC) {
            *index = i;
            return sh;
        }
    }
    return NULL;
}

static void test_corrupt_inputs(void **state)
{
    (void)state;
    expect_error("", 0, "empty file");
    expect_error("hello world, not an ELF", 23, "not an ELF file");
    size_t len = 0;
    unsigned char *so = fx_read(FX "/elf/chain/sub/libmid.so.1", &len);
    assert_non_null(so);
    for (size_t cut = 1; cut < len; cut += 13) {
        aitk_elf_info e;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_elf_read_mem("cut.so", so, cut, &e, &err);
        if (st) {
            assert_int_equal(st, AITK_E_PARSE);
            assert_non_null(strstr(aitk_str_cstr(&err), "cut.so: "));
        }
        aitk_elf_info_free(&e);
        aitk_str_free(&err);
    }
    /* A dynamic section whose string-table link points at itself: ld.so
     * reads the names through DT_STRTAB, never the link, and so does the
     * reader: the same needs as the whole file's. */
    unsigned char *bad = aitk_malloc(len);
    memcpy(bad, so, len);
    size_t index = 0;
    Elf64_Shdr *dyn = dynamic_shdr(bad, &index);
    assert_non_null(dyn);
    dyn->sh_link = (Elf64_Word)index;
    aitk_elf_info linked;
    aitk_str lerr = AITK_STR_INIT;
    assert_int_equal(aitk_elf_read_mem("selflink.so", bad, len, &linked, &lerr), AITK_OK);
    assert_int_equal(linked.needed_count, 1);
    assert_string_equal(linked.needed[0], "libleaf.so.1");
    aitk_elf_info_free(&linked);
    aitk_str_free(&lerr);
    /* DT_STRTAB moved out of every load segment: ld.so would read the
     * names from memory it never mapped; the .dynstr section is intact,
     * and must not hide that. */
    memcpy(bad, so, len);
    dyn = dynamic_shdr(bad, &index);
    Elf64_Dyn *sd = (Elf64_Dyn *)(bad + dyn->sh_offset);
    for (size_t k = 0; k < dyn->sh_size / sizeof *sd; k++)
        if (sd[k].d_tag == DT_STRTAB)
            sd[k].d_un.d_ptr = 0xfffffffffffffff0ull;
    expect_error(bad, len, "corrupt dynamic section: DT_STRTAB 0xfffffffffffffff0 lies in no "
                           "loadable segment");
    /* A dynamic section with no DT_NULL: every entry but DT_STRTAB and
     * DT_STRSZ (the names need them) DT_NEEDED of offset 1. */
    memcpy(bad, so, len);
    dyn = dynamic_shdr(bad, &index);
    Elf64_Dyn *d = (Elf64_Dyn *)(bad + dyn->sh_offset);
    size_t kept = 0;
    for (size_t k = 0; k < dyn->sh_size / sizeof *d; k++) {
        if (d[k].d_tag == DT_STRTAB || d[k].d_tag == DT_STRSZ) {
            kept++;
            continue;
        }
        d[k].d_tag = DT_NEEDED;
        d[k].d_un.d_val = 1;
    }
    aitk_elf_info e;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_elf_read_mem("noend.so", bad, len, &e, &err), AITK_OK);
    assert_int_equal(e.needed_count, dyn->sh_size / sizeof *d - kept); /* bounded by the section */
    aitk_elf_info_free(&e);
    /* No DT_STRTAB at all: the names cannot be read (ld.so reads address 0). */
    for (size_t k = 0; k < dyn->sh_size / sizeof *d; k++)
        if (d[k].d_tag == DT_STRTAB)
            d[k].d_tag = DT_NEEDED;
    expect_error(bad, len, "no DT_STRTAB");
    /* String offset outside the string table. */
    memcpy(bad, so, len);
    dyn = dynamic_shdr(bad, &index);
    d = (Elf64_Dyn *)(bad + dyn->sh_offset);
    for (size_t k = 0; k < dyn->sh_size / sizeof *d; k++)
        if (d[k].d_tag == DT_NEEDED)
            d[k].d_un.d_val = 0x7fffffff;
    expect_error(bad, len, "outside string table");
    /* Random bytes, with and without a valid ELF header in front. */
    uint64_t seed = 7;
    for (int round = 0; round < 300; round++) {
        size_t n = 16 + fx_rand(&seed) % 8192;
        unsigned char *r = aitk_malloc(n);
        for (size_t k = 0; k < n; k++)
            r[k] = (unsigned char)fx_rand(&seed);
        if (round % 2)
            memcpy(r, so, n < 64 ? n : 64);
        aitk_status st = aitk_elf_read_mem("random.so", r, n, &e, &err);
        assert_true(st == AITK_OK || st == AITK_E_PARSE);
        if (st)
            assert_non_null(strstr(aitk_str_cstr(&err), "random.so: "));
        aitk_elf_info_free(&e);
        aitk_str_clear(&err);
        aitk_free(r);
    }
    aitk_str_free(&err);
    aitk_free(bad);
    aitk_free(so);
}

/* The reader's view of a copy of `so` with e_shoff, e_shnum and e_shstrndx
 * zeroed, as sstrip-like tools leave a file. */
static void read_without_sections(const unsigned char *so, size_t len, aitk_elf_info *e)
{
    unsigned char *copy = aitk_malloc(len);
    memcpy(copy, so, len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)copy;
    eh->e_shoff = 0;
    eh->e_shnum = 0;
    eh->e_shstrndx = 0;
    aitk_str err = AITK_STR_INIT;
    if (aitk_elf_read_mem("nosections.so", copy, len, e, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_str_free(&err);
    aitk_free(copy);
}

/* ld.so never reads section headers: without them the needs, soname and
 * RUNPATH come from PT_DYNAMIC, the same as with them. */
static void test_no_section_headers(void **state)
{
    (void)state;
    const char *files[] = {FX "/elf/chain/sub/libmid.so.1", FX "/elf/missing/libneedsgone.so",
                           FX "/elf/rpath/libold.so"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        size_t len = 0;
        unsigned char *so = fx_read(files[i], &len);
        assert_non_null(so);
        aitk_elf_info whole, bare;
        aitk_str err = AITK_STR_INIT, a = AITK_STR_INIT, b = AITK_STR_INIT;
        assert_int_equal(aitk_elf_read_mem("whole.so", so, len, &whole, &err), AITK_OK);
        read_without_sections(so, len, &bare);
        assert_true(whole.needed_count > 0);
        ours_dynamic(&whole, &a);
        ours_dynamic(&bare, &b);
        if (strcmp(aitk_str_cstr(&a), aitk_str_cstr(&b)) != 0)
            fail_msg("%s:\nwith sections:\n%s\nwithout:\n%s", files[i], aitk_str_cstr(&a),
                     aitk_str_cstr(&b));
        assert_false(bare.truncated);
        aitk_elf_info_free(&whole);
        aitk_elf_info_free(&bare);
        aitk_str_free(&err);
        aitk_str_free(&a);
        aitk_str_free(&b);
        aitk_free(so);
    }
}

/* A cut copy is read as cut: the sizes say by how much, and nothing else is
 * claimed about it (not "needs nothing"). */
static void test_truncated(void **state)
{
    (void)state;
    size_t len = 0;
    unsigned char *so = fx_read(FX "/elf/chain/sub/libmid.so.1", &len);
    assert_non_null(so);
    aitk_elf_info e;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_elf_read_mem("whole.so", so, len, &e, &err), AITK_OK);
    assert_false(e.truncated);
    aitk_elf_info_free(&e);
    /* gcc puts the section headers last: they describe the whole length. */
    const size_t cuts[] = {len / 2, 100, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        assert_int_equal(aitk_elf_read_mem("cut.so", so, cuts[i], &e, &err), AITK_OK);
        assert_true(e.truncated);
        assert_int_equal(e.file_size, cuts[i]);
        assert_int_equal(e.described_size, len);
        assert_int_equal(e.machine, EM_X86_64);
        assert_int_equal(e.needed_count, 0);
        aitk_elf_info_free(&e);
    }
    /* Section headers gone as well: the program headers still tell. */
    unsigned char *bare = aitk_malloc(len);
    memcpy(bare, so, len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)bare;
    eh->e_shoff = 0;
    eh->e_shnum = 0;
    eh->e_shstrndx = 0;
    assert_int_equal(aitk_elf_read_mem("cut.so", bare, len / 2, &e, &err), AITK_OK);
    assert_true(e.truncated);
    assert_true(e.described_size > len / 2 && e.described_size <= len);
    aitk_elf_info_free(&e);
    /* Cut inside the ELF header itself, down to the magic alone: cut short,
     * as ld.so says ("file too short"), not "not an ELF file". */
    const size_t stubs[] = {40, 10, 4};
    for (size_t i = 0; i < sizeof stubs / sizeof *stubs; i++) {
        assert_int_equal(aitk_elf_read_mem("stub.so", so, stubs[i], &e, &err), AITK_OK);
        assert_true(e.truncated);
        assert_int_equal(e.file_size, stubs[i]);
        assert_int_equal(e.described_size, 64);
        aitk_elf_info_free(&e);
    }
    aitk_free(bare);
    aitk_free(so);
    aitk_str_free(&err);
}

static void test_files_that_are_not_there(void **state)
{
    (void)state;
    aitk_elf_info e;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_elf_read_file(FX "/elf/nope.so", &e, &err), AITK_E_IO);
    assert_non_null(strstr(aitk_str_cstr(&err), "nope.so"));
    aitk_str_clear(&err);
    assert_int_equal(aitk_elf_read_file(FX "/elf", &e, &err), AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "not a regular file"));
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_matches_readelf),
        cmocka_unit_test(test_fixture_facts),
        cmocka_unit_test(test_corrupt_inputs),
        cmocka_unit_test(test_no_section_headers),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_files_that_are_not_there),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
